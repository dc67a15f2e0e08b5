// Entry points, token helpers, errors and `#alias` / `!alias` definitions.
#include "frontend/text/parser.h"

#include <algorithm>

#include "frontend/text/parser_impl.h"

namespace kiln::frontend::text {

Parser::Parser(std::string_view text, int64_t first_line)
    : text_(text),
      first_line_(first_line),
      lexer_(text),
      expansion_budget_(64 * static_cast<uint64_t>(text.size()) + (uint64_t{1} << 20)) {}

Parser::~Parser() {
  // An op tree left by an error is freed without recursion.
  if (root_) ir::DestroyTree(std::move(root_));
}

std::string Parser::Position(size_t offset) const {
  int64_t line = 0;
  int64_t column = 0;
  LineAndColumn(text_, offset, &line, &column);
  return StrCat(line + first_line_ - 1, ":", column);
}

bool Parser::Fail(size_t offset, const std::string& message) {
  if (error_.ok()) error_ = InvalidArgument(Position(offset), ": ", message);
  return false;
}

bool Parser::FailExpected(const std::string& what) {
  if (token_.kind == TokenKind::kError) {
    if (token_.spelling.substr(0, 1) == "\"") {
      return Fail(token_.offset,
                  StrCat("expected ", what, ", found an unterminated or malformed ",
                         "string (a string ends on its line; escapes are \\\\, \\\", ",
                         "\\n, \\t and \\XX)"));
    }
    return Fail(token_.offset,
                StrCat("expected ", what, ", found an invalid character ", DescribeToken(token_)));
  }
  return Fail(token_.offset, StrCat("expected ", what, ", found ", DescribeToken(token_)));
}

bool Parser::Consume(TokenKind kind) {
  if (token_.kind != kind) return false;
  Advance();
  return true;
}

bool Parser::ConsumeKeyword(std::string_view word) {
  if (!token_.IsKeyword(word)) return false;
  Advance();
  return true;
}

bool Parser::Expect(TokenKind kind, std::string_view context) {
  if (Consume(kind)) return true;
  return FailExpected(StrCat(DescribeKind(kind), context));
}

bool Parser::ExpectKeyword(std::string_view word, std::string_view context) {
  if (ConsumeKeyword(word)) return true;
  return FailExpected(StrCat("'", word, "'", context));
}

bool Parser::EnterNesting() {
  if (++depth_ > kMaxNesting) {
    --depth_;
    return Fail(token_.offset,
                StrCat("types, attributes or locations nest deeper than ", kMaxNesting, " levels"));
  }
  max_depth_ = std::max(max_depth_, depth_);
  return CountExpansion(1);
}

bool Parser::CountExpansion(uint64_t nodes) {
  expanded_ += nodes;
  if (expanded_ <= expansion_budget_) return true;
  return Fail(token_.offset, StrCat("aliases expand to more than ", expansion_budget_,
                                    " attributes, types and locations, too many for an input of ",
                                    text_.size(), " bytes"));
}

bool Parser::UseAlias(const Token& name, const Alias& alias) {
  if (depth_ + alias.height > kMaxNesting) {
    return Fail(name.offset, StrCat("types, attributes or locations nest deeper than ", kMaxNesting,
                                    " levels through alias '", name.spelling, "'"));
  }
  max_depth_ = std::max(max_depth_, depth_ + alias.height);
  return CountExpansion(alias.expanded);
}

// ---- aliases ----

bool Parser::CollectAliases() {
  // Definitions sit at the top level (outside any bracket); collect them,
  // then parse them in file order. A definition may use a later one.
  std::vector<std::string> order;
  int depth = 0;
  Token previous;
  for (Advance(); !token_.Is(TokenKind::kEof); Advance()) {
    switch (token_.kind) {
      case TokenKind::kLParen:
      case TokenKind::kLSquare:
      case TokenKind::kLBrace: ++depth; break;
      case TokenKind::kRParen:
      case TokenKind::kRSquare:
      case TokenKind::kRBrace: --depth; break;
      case TokenKind::kFileMetadataBegin:
        return Fail(token_.offset, "resource sections ('{-# ... #-}') are not supported; "
                                   "inline the data as dense<...> literals");
      default: break;
    }
    bool is_alias = depth == 0 &&
                    (previous.Is(TokenKind::kHash) || previous.Is(TokenKind::kExclamation)) &&
                    token_.Is(TokenKind::kEqual);
    if (is_alias) {
      std::string name(previous.spelling);
      size_t value_offset = lexer_.position();
      if (aliases_.count(name) != 0) {
        return Fail(previous.offset, StrCat("redefinition of alias '", name, "'"));
      }
      Alias alias;
      alias.name_offset = previous.offset;
      alias.value_offset = value_offset;
      alias.is_type = previous.Is(TokenKind::kExclamation);
      aliases_.emplace(name, alias);
      order.push_back(name);
    }
    previous = token_;
  }
  for (const std::string& name : order) {
    if (!ParseAlias(name, aliases_[name])) return false;
  }
  return true;
}

bool Parser::ParseAlias(const std::string& name, Alias& alias) {
  if (alias.state == 2) return true;
  if (alias.state == 1) {
    return Fail(alias.value_offset, StrCat("alias '", name, "' is defined in terms of itself"));
  }
  alias.state = 1;
  size_t saved_position = lexer_.position();
  Token saved_token = token_;
  int base_depth = depth_;
  int saved_max_depth = max_depth_;
  uint64_t saved_expanded = expanded_;
  max_depth_ = depth_;
  lexer_.Reset(alias.value_offset);
  Advance();
  bool ok;
  // `aliases_` may rehash while nested aliases are parsed: keep results local.
  ir::Attribute attribute;
  ir::Type type;
  ir::Location location;
  bool is_location = false;
  if (alias.is_type) {
    ok = ParseType(type);
  } else if (token_.IsKeyword("loc")) {
    is_location = true;
    ok = ParseLocation(location);
  } else {
    ok = ParseAttribute(attribute);
  }
  Alias& stored = aliases_[name];
  stored.end_offset = token_.offset;
  stored.attribute = attribute;
  stored.type = type;
  stored.location = location;
  stored.is_location = is_location;
  stored.state = 2;
  stored.height = max_depth_ - base_depth;
  stored.expanded = expanded_ - saved_expanded + 1;
  max_depth_ = std::max(saved_max_depth, max_depth_);
  lexer_.Reset(saved_position);
  token_ = saved_token;
  return ok;
}

bool Parser::SkipAliasDefinitions() {
  // Only definitions themselves are skipped; the name used elsewhere is not.
  while (token_.Is(TokenKind::kHash) || token_.Is(TokenKind::kExclamation)) {
    auto it = aliases_.find(std::string(token_.spelling));
    if (it == aliases_.end() || it->second.name_offset != token_.offset) return false;
    lexer_.Reset(it->second.end_offset);
    Advance();
  }
  return true;
}

bool Parser::ResolveAttributeAlias(const Token& name, ir::Attribute& attribute) {
  auto it = aliases_.find(std::string(name.spelling));
  if (it == aliases_.end() || it->second.is_type) {
    return Fail(name.offset, StrCat("undefined attribute alias '", name.spelling, "'"));
  }
  if (!ParseAlias(it->first, it->second)) return false;
  Alias& alias = aliases_[std::string(name.spelling)];
  if (alias.is_location) {
    return Fail(name.offset,
                StrCat("expected an attribute, found the location alias '", name.spelling, "'"));
  }
  attribute = alias.attribute;
  return UseAlias(name, alias);
}

bool Parser::ResolveTypeAlias(const Token& name, ir::Type& type) {
  auto it = aliases_.find(std::string(name.spelling));
  if (it == aliases_.end() || !it->second.is_type) {
    return Fail(name.offset, StrCat("undefined type alias '", name.spelling, "'"));
  }
  if (!ParseAlias(it->first, it->second)) return false;
  const Alias& alias = aliases_[std::string(name.spelling)];
  type = alias.type;
  return UseAlias(name, alias);
}

bool Parser::ResolveLocationAlias(const Token& name, ir::Location& location) {
  auto it = aliases_.find(std::string(name.spelling));
  if (it == aliases_.end() || it->second.is_type) {
    return Fail(name.offset, StrCat("undefined location alias '", name.spelling, "'"));
  }
  if (!ParseAlias(it->first, it->second)) return false;
  Alias& alias = aliases_[std::string(name.spelling)];
  if (!alias.is_location) {
    return Fail(name.offset,
                StrCat("expected a location, found the attribute alias '", name.spelling, "'"));
  }
  location = alias.location;
  return UseAlias(name, alias);
}

// ---- the module ----

StatusOr<ir::Module> Parser::Parse() {
  if (!CollectAliases()) return error_;
  lexer_.Reset(0);
  Advance();
  scopes_.push_back(Scope{});
  scopes_.back().isolated = true;
  SkipAliasDefinitions();
  bool explicit_module = token_.IsKeyword("module") ||
                         (token_.Is(TokenKind::kString) &&
                          Lexer::StringValue(token_.spelling) == "builtin.module");
  if (explicit_module) {
    if (!ParseOperation(nullptr, "") || !Run()) return error_;
    SkipAliasDefinitions();
    if (!token_.Is(TokenKind::kEof)) {
      FailExpected("end of input after the module");
      return error_;
    }
    return ir::Module(std::move(root_));
  }
  implicit_ = std::make_unique<ir::Module>();
  Frame frame;
  frame.is_region = true;
  frame.region.region = &implicit_->op().region(0);
  frame.region.block = &implicit_->body();
  frame.region.top_level = true;
  stack_.push_back(std::move(frame));
  if (!Run()) return error_;
  ir::Module module = std::move(*implicit_);
  implicit_.reset();
  return module;
}

StatusOr<ir::Attribute> Parser::ParseWholeAttribute() {
  Advance();
  ir::Attribute attribute;
  if (!ParseAttribute(attribute) || !Expect(TokenKind::kEof, " after the attribute")) return error_;
  return attribute;
}

StatusOr<ir::Type> Parser::ParseWholeType() {
  Advance();
  ir::Type type;
  if (!ParseType(type) || !Expect(TokenKind::kEof, " after the type")) return error_;
  return type;
}

StatusOr<ir::Attribute> ParseAttribute(std::string_view text) {
  Parser parser(text, 1);
  return parser.ParseWholeAttribute();
}

StatusOr<ir::Type> ParseType(std::string_view text) {
  Parser parser(text, 1);
  return parser.ParseWholeType();
}

StatusOr<ir::Module> ParseModule(std::string_view text) {
  Parser parser(text, 1);
  return parser.Parse();
}

StatusOr<std::vector<ir::Module>> ParseChunks(std::string_view text) {
  std::vector<ir::Module> modules;
  size_t chunk_start = 0;
  int64_t chunk_line = 1;
  int64_t line = 1;
  size_t position = 0;
  auto flush = [&](size_t end) -> Status {
    Parser parser(text.substr(chunk_start, end - chunk_start), chunk_line);
    StatusOr<ir::Module> module = parser.Parse();
    if (!module.ok()) return module.status();
    modules.push_back(std::move(module).value());
    return Status::Ok();
  };
  while (position <= text.size()) {
    size_t end = text.find('\n', position);
    if (end == std::string_view::npos) end = text.size();
    std::string_view content = text.substr(position, end - position);
    // MLIR splits at the marker wherever it appears (`// // -----` splits
    // too, upstream's triangular_solve.mlir has one); the line's rest goes.
    const size_t marker = content.find("// -----");
    if (marker != std::string_view::npos) {
      KILN_RETURN_IF_ERROR(flush(position + marker));
      chunk_start = end + 1 < text.size() ? end + 1 : text.size();
      chunk_line = line + 1;
    }
    position = end + 1;
    ++line;
  }
  KILN_RETURN_IF_ERROR(flush(text.size()));
  return modules;
}

}  // namespace kiln::frontend::text
