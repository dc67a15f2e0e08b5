// Regions, blocks, SSA values and MLIR's generic op form. Nesting is walked
// with `stack_`: a region frame reads ops one by one; an op with regions
// stays on the stack (as an op frame) while each region is read, and its
// form's Continue function resumes it when the region closes.
#include "frontend/text/parser_impl.h"
#include "ir/printer.h"

namespace kiln::frontend::text {
namespace {

// Ops whose regions cannot see values from outside (IsolatedFromAbove).
bool IsIsolated(std::string_view name) {
  return name == "func.func" || name == "builtin.module" || name == "sdy.manual_computation" ||
         name == "sdy.named_computation";
}

}  // namespace

bool Parser::Run() {
  while (!stack_.empty()) {
    bool ok = stack_.back().is_region ? StepRegion() : ResumeOp();
    if (!ok) return false;
  }
  return !failed();
}

bool Parser::StepRegion() {
  RegionFrame& frame = stack_.back().region;
  if (frame.top_level) {
    if (!SkipAliasDefinitions()) return FailExpected("an operation");
    if (token_.Is(TokenKind::kEof)) return CloseRegion();
  } else if (token_.Is(TokenKind::kRBrace)) {
    return CloseRegion();
  }
  if (token_.Is(TokenKind::kEof)) {
    return Fail(token_.offset, StrCat("expected '}' to close the region opened at ",
                                      Position(frame.open_offset), ", found end of input"));
  }
  if (token_.Is(TokenKind::kCaret)) return ParseBlockHeader(frame);
  if (frame.block == nullptr) frame.block = &frame.region->AddBlock();
  ir::Block* block = frame.block;
  std::string dialect = frame.default_dialect;
  return ParseOperation(block, dialect);
}

bool Parser::CloseRegion() {
  Scope& scope = scopes_.back();
  const std::string* undefined = nullptr;
  size_t offset = 0;
  for (auto& [name, reference] : scope.forward) {
    if (undefined == nullptr || reference.offset < offset) {
      undefined = &name;
      offset = reference.offset;
    }
  }
  if (undefined != nullptr)
    return Fail(offset, StrCat("use of undefined value '%", *undefined, "'"));
  bool top_level = stack_.back().region.top_level;
  scopes_.pop_back();
  if (!top_level) Advance();  // '}'
  stack_.pop_back();
  return true;
}

bool Parser::ParseBlockHeader(RegionFrame& frame) {
  size_t offset = token_.offset;
  Advance();
  ir::Region& region = *frame.region;
  if (frame.block != nullptr && frame.named_arguments && frame.block == &region.block(0) &&
      frame.block->operations().empty()) {
    return Fail(offset, "a region whose arguments the op declares cannot start with a block label");
  }
  frame.block = &region.AddBlock();
  ir::Block* block = frame.block;
  std::vector<ArgumentDecl> arguments;
  if (Consume(TokenKind::kLParen)) {
    while (!token_.Is(TokenKind::kRParen)) {
      if (!arguments.empty() && !Expect(TokenKind::kComma, " or ')' in the block arguments"))
        return false;
      arguments.emplace_back();
      if (!ParseArgumentDecl(arguments.back(), false)) return false;
    }
    Advance();
  }
  if (!Expect(TokenKind::kColon, " after the block label")) return false;
  return DefineArguments(*block, arguments);
}

bool Parser::ParseArgumentDecl(ArgumentDecl& argument, bool allow_attributes) {
  argument.offset = token_.offset;
  if (!token_.Is(TokenKind::kPercent) || token_.spelling.find('#') != std::string_view::npos) {
    return FailExpected("an argument name (%...)");
  }
  argument.name = std::string(token_.spelling.substr(1));
  Advance();
  if (!Expect(TokenKind::kColon, " after the argument name") || !ParseType(argument.type))
    return false;
  if (allow_attributes && token_.Is(TokenKind::kLBrace)) {
    std::vector<ir::NamedAttribute> entries;
    if (!ParseDictionary(entries)) return false;
    argument.attributes = ir::Attribute::Dictionary(std::move(entries));
  }
  return ParseOptionalLocation(argument.location);
}

bool Parser::DefineArguments(ir::Block& block, const std::vector<ArgumentDecl>& arguments) {
  for (const ArgumentDecl& argument : arguments) {
    ir::Location location = argument.location ? argument.location : ir::Location::Unknown();
    ir::Value* value = block.AddArgument(argument.type, location);
    if (!Define(argument.name, {value}, argument.offset)) return false;
  }
  return true;
}

bool Parser::ParseResultBindings(std::vector<ResultBinding>& results) {
  do {
    if (!token_.Is(TokenKind::kPercent) || token_.spelling.find('#') != std::string_view::npos) {
      return FailExpected("a result name (%...)");
    }
    ResultBinding binding;
    binding.name = std::string(token_.spelling.substr(1));
    binding.offset = token_.offset;
    Advance();
    if (Consume(TokenKind::kColon)) {
      int64_t count = 0;
      size_t offset = token_.offset;
      if (!ParseInteger(count)) return false;
      if (count < 1) return Fail(offset, "a result group needs at least one result");
      binding.count = static_cast<size_t>(count);
    }
    results.push_back(std::move(binding));
  } while (Consume(TokenKind::kComma));
  return Expect(TokenKind::kEqual, " after the result names");
}

bool Parser::ParseOperation(ir::Block* block, std::string_view default_dialect) {
  OpFrame frame;
  frame.offset = token_.offset;
  if (token_.Is(TokenKind::kPercent) && !ParseResultBindings(frame.results)) return false;
  std::string name;
  size_t name_offset = token_.offset;
  if (token_.Is(TokenKind::kString)) {
    name = Lexer::StringValue(token_.spelling);
    frame.generic = true;
  } else if (token_.Is(TokenKind::kBareIdentifier)) {
    name = std::string(token_.spelling);
    if (name.find('.') == std::string::npos) {
      if (name == "module" || name == "unrealized_conversion_cast") {
        name = "builtin." + name;
      } else if (!default_dialect.empty()) {
        name = StrCat(default_dialect, ".", name);
      } else {
        return Fail(name_offset,
                    StrCat("unknown operation '", name,
                           "'; expected a name with its dialect, e.g. 'stablehlo.", name, "'"));
      }
    }
  } else {
    return FailExpected("an operation");
  }
  Advance();
  auto owned = std::make_unique<ir::Operation>(name, ir::Location::Unknown());
  if (block != nullptr) {
    frame.op = block->Append(std::move(owned));
  } else {
    root_ = std::move(owned);
    frame.op = root_.get();
  }
  if (!frame.generic) {
    frame.form = ir::GetPrettyForm(name);
    if (frame.form == ir::PrettyForm::kNone) {
      return Fail(name_offset, StrCat("'", name, "' has no custom form Kiln reads; write it in ",
                                      "the generic form \"", name, "\"(...) : (...) -> ..."));
    }
  }
  bool ok = frame.generic ? BeginGeneric(frame) : BeginPretty(frame);
  if (!ok) return false;
  if (!frame.next_region) return FinishOperation(frame);
  Frame pending;
  pending.op = std::move(frame);
  stack_.push_back(std::move(pending));
  return PushRegion(stack_.back().op);
}

bool Parser::ResumeOp() {
  OpFrame& frame = stack_.back().op;
  bool ok = frame.generic ? ContinueGeneric(frame) : ContinuePretty(frame);
  if (!ok) return false;
  if (frame.next_region) return PushRegion(frame);
  OpFrame done = std::move(frame);
  stack_.pop_back();
  return FinishOperation(done);
}

bool Parser::RequestRegion(OpFrame& frame, std::vector<ArgumentDecl> arguments, bool named) {
  if (!token_.Is(TokenKind::kLBrace)) return FailExpected("'{' to start a region");
  RegionRequest request;
  request.region = &frame.op->AddRegion();
  request.arguments = std::move(arguments);
  request.named_arguments = named;
  frame.next_region = std::move(request);
  return true;  // PushRegion consumes the '{'
}

bool Parser::PushRegion(OpFrame& frame) {
  RegionRequest request = std::move(*frame.next_region);
  frame.next_region.reset();
  Frame region;
  region.is_region = true;
  region.region.region = request.region;
  region.region.named_arguments = request.named_arguments;
  region.region.default_dialect = std::string(ir::DefaultDialect(frame.op->name()));
  region.region.open_offset = token_.offset;
  Scope scope;
  scope.isolated = IsIsolated(frame.op->name());
  scopes_.push_back(std::move(scope));
  Advance();  // '{'
  if (request.named_arguments) {
    region.region.block = &request.region->AddBlock();
    if (!DefineArguments(*region.region.block, request.arguments)) return false;
  }
  stack_.push_back(std::move(region));
  return true;
}

bool Parser::FinishOperation(OpFrame& frame) {
  ir::Operation& op = *frame.op;
  if (token_.IsKeyword("loc")) {
    ir::Location location;
    if (!ParseLocation(location)) return false;
    op.set_location(std::move(location));
  }
  if (frame.form == ir::PrettyForm::kReduce && !frame.inner_op.empty() &&
      !FinishCompactReduce(frame)) {
    return false;
  }
  size_t named = 0;
  for (const ResultBinding& binding : frame.results) named += binding.count;
  if (named != op.num_results()) {
    return Fail(frame.offset, StrCat("expected ", op.num_results(), " result names for '",
                                     op.name(), "' (as its type gives), found ", named));
  }
  size_t next = 0;
  for (const ResultBinding& binding : frame.results) {
    std::vector<ir::Value*> values;
    for (size_t i = 0; i < binding.count; ++i) values.push_back(op.result(next++));
    if (!Define(binding.name, std::move(values), binding.offset)) return false;
  }
  return true;
}

// ---- values ----

bool Parser::ParseValueUse(ValueUse& use) {
  if (!token_.Is(TokenKind::kPercent)) return FailExpected("a value (%...)");
  use.offset = token_.offset;
  std::string_view text = token_.spelling.substr(1);
  size_t hash = text.find('#');
  use.name = std::string(text.substr(0, hash));
  use.number = 0;
  if (hash != std::string_view::npos) {
    std::string_view digits = text.substr(hash + 1);
    if (digits.size() > 9) return Fail(use.offset, "result number too large");
    for (char c : digits) use.number = use.number * 10 + static_cast<size_t>(c - '0');
  }
  Advance();
  return true;
}

bool Parser::ParseValueUseList(std::vector<ValueUse>& uses) {
  if (!token_.Is(TokenKind::kPercent)) return true;
  while (true) {
    uses.emplace_back();
    if (!ParseValueUse(uses.back())) return false;
    // Stop before a ',' that does not lead to another value (`%a, %b, dim = 0`).
    if (!token_.Is(TokenKind::kComma) || PeekKind() != TokenKind::kPercent) return true;
    Advance();
  }
}

bool Parser::Define(const std::string& name, std::vector<ir::Value*> values, size_t offset) {
  Scope& scope = scopes_.back();
  if (scope.values.count(name) != 0)
    return Fail(offset, StrCat("redefinition of value '%", name, "'"));
  auto forward = scope.forward.find(name);
  if (forward != scope.forward.end()) {
    for (auto& [number, placeholder] : forward->second.placeholders) {
      if (number >= values.size()) {
        return Fail(forward->second.offset,
                    StrCat("'%", name, "#", number, "' uses a result '%", name, "' does not have"));
      }
      if (values[number]->type() != placeholder->type()) {
        return Fail(forward->second.offset,
                    StrCat("expected '%", name, "' to have type ",
                           ir::PrintType(placeholder->type()), ", found it defined with type ",
                           ir::PrintType(values[number]->type())));
      }
    }
    for (auto& [op, index] : forward->second.uses) {
      ir::Value* placeholder = op->operand(index);
      for (auto& [number, owned] : forward->second.placeholders) {
        if (owned.get() == placeholder) op->SetOperand(index, values[number]);
      }
    }
    scope.forward.erase(forward);
  }
  scope.values.emplace(name, std::move(values));
  return true;
}

ir::Value* Parser::Lookup(const ValueUse& use, const ir::Type& type, bool& forward) {
  forward = false;
  for (size_t i = scopes_.size(); i-- > 0;) {
    auto it = scopes_[i].values.find(use.name);
    if (it != scopes_[i].values.end()) {
      const std::vector<ir::Value*>& group = it->second;
      if (use.number >= group.size()) {
        Fail(use.offset,
             StrCat("'%", use.name, "' has ", group.size(), " results; there is no #", use.number));
        return nullptr;
      }
      ir::Value* value = group[use.number];
      if (value->type() != type) {
        Fail(use.offset, StrCat("expected '%", use.name, use.number ? StrCat("#", use.number) : "",
                                "' to have type ", ir::PrintType(type), ", found ",
                                ir::PrintType(value->type())));
        return nullptr;
      }
      return value;
    }
    if (scopes_[i].isolated) break;
  }
  ForwardReference& reference = scopes_.back().forward[use.name];
  if (reference.placeholders.empty()) reference.offset = use.offset;
  std::unique_ptr<ir::Value>& placeholder = reference.placeholders[use.number];
  if (!placeholder) {
    placeholder = std::make_unique<ir::Value>(type, nullptr, nullptr, -1);
  } else if (placeholder->type() != type) {
    Fail(use.offset, StrCat("expected '%", use.name, "' to have type ", ir::PrintType(type),
                            " as in its earlier uses, found ", ir::PrintType(placeholder->type())));
    return nullptr;
  }
  forward = true;
  return placeholder.get();
}

bool Parser::ResolveOperands(ir::Operation& op, const std::vector<ValueUse>& uses,
                             const std::vector<ir::Type>& types, size_t offset) {
  if (uses.size() != types.size()) {
    return Fail(offset, StrCat("expected ", types.size(), " operands for '", op.name(),
                               "' (as its type lists), found ", uses.size()));
  }
  for (size_t i = 0; i < uses.size(); ++i) {
    bool forward = false;
    ir::Value* value = Lookup(uses[i], types[i], forward);
    if (value == nullptr) return false;
    op.AddOperand(value);
    if (forward)
      scopes_.back().forward[uses[i].name].uses.emplace_back(&op, op.operands().size() - 1);
  }
  return true;
}

void Parser::AddResults(ir::Operation& op, const std::vector<ir::Type>& types) {
  for (const ir::Type& type : types) op.AddResult(type);
}

// ---- the generic form ----

bool Parser::BeginGeneric(OpFrame& frame) {
  ir::Operation& op = *frame.op;
  if (!Expect(TokenKind::kLParen, StrCat(" after the op name \"", op.name(), "\"")) ||
      !ParseValueUseList(frame.operands) || !Expect(TokenKind::kRParen, " after the operands")) {
    return false;
  }
  if (token_.Is(TokenKind::kLSquare)) {
    return Fail(token_.offset, "successor blocks (branch targets) are not supported");
  }
  if (Consume(TokenKind::kLess)) {
    if (!token_.Is(TokenKind::kLBrace))
      return FailExpected("'{' starting the properties '<{...}>'");
    if (!ParseOptionalAttrDict(op) || !Expect(TokenKind::kGreater, " after the properties"))
      return false;
  }
  if (Consume(TokenKind::kLParen)) return RequestRegion(frame, {}, false);
  return FinishGeneric(frame);
}

bool Parser::ContinueGeneric(OpFrame& frame) {
  if (Consume(TokenKind::kComma)) return RequestRegion(frame, {}, false);
  if (!Expect(TokenKind::kRParen, " or ',' after a region")) return false;
  return FinishGeneric(frame);
}

bool Parser::FinishGeneric(OpFrame& frame) {
  ir::Operation& op = *frame.op;
  if (!ParseOptionalAttrDict(op) || !Expect(TokenKind::kColon, " and the op's type")) return false;
  std::vector<ir::Type> inputs, results;
  if (!ParseFunctionType(inputs, results) ||
      !ResolveOperands(op, frame.operands, inputs, frame.offset)) {
    return false;
  }
  AddResults(op, results);
  return true;
}

}  // namespace kiln::frontend::text
