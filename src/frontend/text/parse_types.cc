// Types (builtin, !stablehlo.token, !quant.uniform, dialect types as text)
// and locations.
#include "frontend/text/parser_impl.h"

namespace kiln::frontend::text {
namespace {

using ir::Type;
using ir::TypeKind;

bool IsElementSpelling(std::string_view word) {
  return ir::ParseElementTypeSpelling(word).has_value();
}

// The integer storage type of a quantized type: `i8`/`si8` signed,
// `u8`/`ui8` unsigned, widths 2 to 32.
std::optional<ElementType> QuantizedStorage(std::string_view word, bool* is_signed) {
  if (word.substr(0, 2) == "si") {
    word.remove_prefix(2);
    *is_signed = true;
  } else if (word.substr(0, 2) == "ui") {
    word.remove_prefix(2);
    *is_signed = false;
  } else if (!word.empty() && (word[0] == 'i' || word[0] == 'u')) {
    *is_signed = word[0] == 'i';
    word.remove_prefix(1);
  } else {
    return std::nullopt;
  }
  struct Entry {
    std::string_view width;
    ElementType s, u;
  };
  constexpr Entry kEntries[] = {{"2", ElementType::kS2, ElementType::kU2},
                                {"4", ElementType::kS4, ElementType::kU4},
                                {"8", ElementType::kS8, ElementType::kU8},
                                {"16", ElementType::kS16, ElementType::kU16},
                                {"32", ElementType::kS32, ElementType::kU32}};
  for (const Entry& entry : kEntries) {
    if (entry.width == word) return *is_signed ? entry.s : entry.u;
  }
  return std::nullopt;
}

}  // namespace

bool Parser::AtType() const {
  switch (token_.kind) {
    case TokenKind::kExclamation:
    case TokenKind::kLParen: return true;
    case TokenKind::kBareIdentifier: {
      std::string_view word = token_.spelling;
      return word == "tensor" || word == "tuple" || word == "none" || word == "complex" ||
             word == "memref" || word == "vector" || IsElementSpelling(word);
    }
    default: return false;
  }
}

bool Parser::ParseElementTypeToken(ElementType& element) {
  if (token_.IsKeyword("complex")) {
    Advance();
    if (!Expect(TokenKind::kLess, " after 'complex'")) return false;
    if (token_.IsKeyword("f32")) {
      element = ElementType::kC64;
    } else if (token_.IsKeyword("f64")) {
      element = ElementType::kC128;
    } else {
      return FailExpected("'f32' or 'f64' in a complex type");
    }
    Advance();
    return Expect(TokenKind::kGreater, " to close the complex type");
  }
  std::optional<ElementType> parsed;
  if (token_.Is(TokenKind::kBareIdentifier)) parsed = ir::ParseElementTypeSpelling(token_.spelling);
  if (!parsed || *parsed == ElementType::kToken) return FailExpected("an element type");
  element = *parsed;
  Advance();
  return true;
}

namespace {

// Parses `#stablehlo.bounds<?, 4>` or `#stablehlo.type_extensions<bounds = [?, 4]>`.
bool ParseBounds(Parser& p, std::vector<int64_t>& bounds) {
  std::string_view name = p.token().spelling;
  size_t offset = p.token().offset;
  p.Advance();
  if (name == "#stablehlo.type_extensions") {
    if (!p.Expect(TokenKind::kLess, " after '#stablehlo.type_extensions'") ||
        !p.ExpectKeyword("bounds", " in '#stablehlo.type_extensions'") ||
        !p.Expect(TokenKind::kEqual, " after 'bounds'") || !p.ParseI64List(bounds, true)) {
      return false;
    }
    return p.Expect(TokenKind::kGreater, " to close '#stablehlo.type_extensions'");
  }
  if (name != "#stablehlo.bounds") {
    return p.Fail(offset, "unsupported tensor encoding");
  }
  if (!p.Expect(TokenKind::kLess, " after '#stablehlo.bounds'")) return false;
  while (!p.token().Is(TokenKind::kGreater)) {
    if (!bounds.empty() && !p.Expect(TokenKind::kComma, " between bounds")) return false;
    if (p.Consume(TokenKind::kQuestion)) {
      bounds.push_back(ir::kDynamic);
      continue;
    }
    int64_t value = 0;
    if (!p.ParseInteger(value)) return false;
    bounds.push_back(value);
  }
  p.Advance();
  return true;
}

}  // namespace

bool Parser::ParseQuantizedType(ir::Type& type) {
  Advance();
  ir::QuantizedParams q;
  if (!Expect(TokenKind::kLess, " after '!quant.uniform'")) return false;
  std::optional<ElementType> storage;
  if (token_.Is(TokenKind::kBareIdentifier))
    storage = QuantizedStorage(token_.spelling, &q.is_signed);
  if (!storage) return FailExpected("a storage type such as 'i8' or 'u8'");
  q.storage_type = *storage;
  int width = GetElementTypeInfo(q.storage_type).bit_width;
  q.storage_min = q.is_signed ? -(int64_t{1} << (width - 1)) : 0;
  q.storage_max = q.is_signed ? (int64_t{1} << (width - 1)) - 1 : (int64_t{1} << width) - 1;
  Advance();
  if (Consume(TokenKind::kLess)) {
    if (!ParseInteger(q.storage_min) || !Expect(TokenKind::kColon, " in the storage range") ||
        !ParseInteger(q.storage_max) || !Expect(TokenKind::kGreater, " after the storage range")) {
      return false;
    }
  }
  if (!Expect(TokenKind::kColon, " after the storage type") ||
      !ParseElementTypeToken(q.expressed_type)) {
    return false;
  }
  if (Consume(TokenKind::kColon)) {
    int64_t dimension = 0;
    if (!ParseInteger(dimension)) return false;
    q.quantized_dimension = static_cast<int32_t>(dimension);
  }
  if (!Expect(TokenKind::kComma, " before the quantization scales")) return false;
  bool braces = Consume(TokenKind::kLBrace);
  if (braces != q.quantized_dimension.has_value()) {
    return Fail(token_.offset, braces ? "per-axis scales need a quantized dimension"
                                      : "expected '{' before per-axis scales");
  }
  do {
    bool negative = Consume(TokenKind::kMinus);
    if (!token_.Is(TokenKind::kFloat) && !token_.Is(TokenKind::kInteger)) {
      return FailExpected("a scale");
    }
    double scale = std::strtod(std::string(token_.spelling).c_str(), nullptr);
    q.scales.push_back(negative ? -scale : scale);
    Advance();
    int64_t zero_point = 0;
    if (Consume(TokenKind::kColon) && !ParseInteger(zero_point)) return false;
    q.zero_points.push_back(zero_point);
  } while (braces && Consume(TokenKind::kComma));
  if (braces && !Expect(TokenKind::kRBrace, " after the per-axis scales")) return false;
  if (!Expect(TokenKind::kGreater, " to close '!quant.uniform'")) return false;
  type = ir::QuantizedType(std::move(q));
  return true;
}

bool Parser::ParseTensorType(size_t start, ir::Type& type) {
  Advance();
  if (!token_.Is(TokenKind::kLess)) return FailExpected("'<' after 'tensor'");
  std::vector<int64_t> dims;
  bool unranked = false;
  bool overflow = false;
  int64_t dim = 0;
  while (lexer_.LexDimension(&dim, &overflow)) {
    if (overflow) return Fail(token_.offset, "tensor dimension does not fit in 64 bits");
    if (dim == -2) {
      if (!dims.empty() || unranked) return Fail(token_.offset, "'*' must be the only dimension");
      unranked = true;
      continue;
    }
    if (unranked) return Fail(token_.offset, "an unranked tensor has no dimensions");
    dims.push_back(dim == -1 ? ir::kDynamic : dim);
  }
  Advance();
  Type element;
  if (token_.Is(TokenKind::kExclamation)) {
    if (!ParseType(element)) return false;
    if (!element.Is(TypeKind::kQuantized)) {
      return Fail(start, "a tensor's elements must be of an element or quantized type");
    }
  } else {
    ElementType element_type;
    if (!ParseElementTypeToken(element_type)) return false;
    element = Type::Element(element_type);
  }
  std::vector<int64_t> static_dims;
  for (int64_t d : dims) {
    if (d != ir::kDynamic) static_dims.push_back(d);
  }
  Status valid = ValidateDims(static_dims, 1, "tensor type");
  if (!valid.ok()) return Fail(start, valid.message());
  if (unranked) {
    if (!Expect(TokenKind::kGreater, " to close the tensor type")) return false;
    type = Type::UnrankedTensor(std::move(element));
    return true;
  }
  std::vector<int64_t> bounds;
  if (Consume(TokenKind::kComma)) {
    if (!token_.Is(TokenKind::kHash)) return FailExpected("a tensor encoding attribute");
    std::string_view encoding = token_.spelling;
    if (encoding == "#stablehlo.bounds" || encoding == "#stablehlo.type_extensions") {
      if (!ParseBounds(*this, bounds)) return false;
      if (bounds.size() != dims.size()) {
        return Fail(start, StrCat("expected ", dims.size(), " bounds, one per dimension, found ",
                                  bounds.size()));
      }
    } else {
      // Encodings Kiln does not model keep the whole type as text.
      Advance();
      if (token_.Is(TokenKind::kLess)) {
        std::string ignored;
        if (!CaptureBalanced(token_.offset, ignored)) return false;
      }
      size_t end = token_.offset;
      if (!Expect(TokenKind::kGreater, " to close the tensor type")) return false;
      type = Type::Opaque(std::string(text_.substr(start, end + 1 - start)));
      return true;
    }
  }
  if (!Expect(TokenKind::kGreater, " to close the tensor type")) return false;
  type = Type::Tensor(std::move(element), std::move(dims), std::move(bounds));
  return true;
}

bool Parser::ParseType(ir::Type& type) {
  if (!EnterNesting()) return false;
  struct Leave {
    Parser* p;
    ~Leave() { p->LeaveNesting(); }
  } leave{this};
  size_t start = token_.offset;
  if (token_.Is(TokenKind::kLParen)) {
    std::vector<Type> inputs, results;
    if (!ParseFunctionType(inputs, results)) return false;
    type = Type::Function(std::move(inputs), std::move(results));
    return true;
  }
  if (token_.Is(TokenKind::kExclamation)) {
    std::string_view name = token_.spelling;
    if (name == "!stablehlo.token") {
      Advance();
      type = Type::Token();
      return true;
    }
    if (aliases_.count(std::string(name)) != 0) {
      Token alias = token_;
      Advance();
      return ResolveTypeAlias(alias, type);
    }
    if (name == "!quant.uniform") return ParseQuantizedType(type);
    // Another dialect's type: kept as its text.
    Advance();
    if (token_.Is(TokenKind::kLess) && token_.offset == start + name.size()) {
      std::string text;
      if (!CaptureBalanced(start, text)) return false;
      type = Type::Opaque(std::move(text));
    } else {
      type = Type::Opaque(std::string(name));
    }
    return true;
  }
  if (!token_.Is(TokenKind::kBareIdentifier)) return FailExpected("a type");
  std::string_view word = token_.spelling;
  if (word == "none") {
    Advance();
    type = Type::None();
    return true;
  }
  if (word == "tuple") {
    Advance();
    if (!Expect(TokenKind::kLess, " after 'tuple'")) return false;
    std::vector<Type> members;
    if (!token_.Is(TokenKind::kGreater) && !ParseTypeList(members)) return false;
    if (!Expect(TokenKind::kGreater, " to close the tuple type")) return false;
    type = Type::Tuple(std::move(members));
    return true;
  }
  if (word == "tensor") return ParseTensorType(start, type);
  if (word == "memref" || word == "vector") {
    // Builtin types StableHLO does not use, kept as text (e.g. the spec's
    // custom_call buffer examples).
    Advance();
    if (!token_.Is(TokenKind::kLess)) return FailExpected(StrCat("'<' after '", word, "'"));
    std::string text;
    if (!CaptureBalanced(start, text)) return false;
    type = Type::Opaque(std::move(text));
    return true;
  }
  ElementType element;
  if (!ParseElementTypeToken(element)) return false;
  type = Type::Element(element);
  return true;
}

bool Parser::ParseTypeList(std::vector<ir::Type>& types) {
  do {
    Type type;
    if (!ParseType(type)) return false;
    types.push_back(std::move(type));
  } while (Consume(TokenKind::kComma));
  return true;
}

bool Parser::ParseParenTypeList(std::vector<ir::Type>& types) {
  if (!Expect(TokenKind::kLParen, "")) return false;
  if (Consume(TokenKind::kRParen)) return true;
  if (!ParseTypeList(types)) return false;
  return Expect(TokenKind::kRParen, " after the types");
}

bool Parser::ParseFunctionType(std::vector<ir::Type>& inputs, std::vector<ir::Type>& results) {
  if (!ParseParenTypeList(inputs)) return false;
  if (!Expect(TokenKind::kArrow, " in a function type")) return false;
  if (token_.Is(TokenKind::kLParen)) return ParseParenTypeList(results);
  Type result;
  if (!ParseType(result)) return false;
  results.push_back(std::move(result));
  return true;
}

// ---- locations ----

namespace {

bool ParseLocationBody(Parser& p, ir::Location& location);

bool ParseLocationBodyNested(Parser& p, ir::Location& location) {
  if (!p.EnterNesting()) return false;
  bool ok = ParseLocationBody(p, location);
  p.LeaveNesting();
  return ok;
}

bool ParseLocationBody(Parser& p, ir::Location& location) {
  const Token& token = p.token();
  if (token.IsKeyword("unknown")) {
    p.Advance();
    location = ir::Location::Unknown();
    return true;
  }
  if (token.Is(TokenKind::kHash)) {
    Token name = token;
    p.Advance();
    return p.ResolveLocationAlias(name, location);
  }
  if (token.IsKeyword("callsite")) {
    p.Advance();
    ir::Location callee, caller;
    if (!p.Expect(TokenKind::kLParen, " after 'callsite'") || !ParseLocationBodyNested(p, callee) ||
        !p.ExpectKeyword("at", " in a callsite location") || !ParseLocationBodyNested(p, caller) ||
        !p.Expect(TokenKind::kRParen, " to close the callsite location")) {
      return false;
    }
    location = ir::Location::CallSite(std::move(callee), std::move(caller));
    return true;
  }
  if (token.IsKeyword("fused")) {
    p.Advance();
    ir::Attribute metadata;
    if (p.Consume(TokenKind::kLess)) {
      if (!p.ParseAttribute(metadata) || !p.Expect(TokenKind::kGreater, " after fused metadata")) {
        return false;
      }
    }
    if (!p.Expect(TokenKind::kLSquare, " after 'fused'")) return false;
    std::vector<ir::Location> parts;
    while (!p.token().Is(TokenKind::kRSquare)) {
      if (!parts.empty() && !p.Expect(TokenKind::kComma, " between fused locations")) return false;
      ir::Location part;
      if (!ParseLocationBodyNested(p, part)) return false;
      parts.push_back(std::move(part));
    }
    p.Advance();
    location = ir::Location::Fused(std::move(parts), std::move(metadata));
    return true;
  }
  if (!token.Is(TokenKind::kString)) return p.FailExpected("a location");
  std::string text = Lexer::StringValue(token.spelling);
  p.Advance();
  if (p.Consume(TokenKind::kColon)) {
    int64_t line = 0, column = 0, end_line = 0, end_column = 0;
    if (!p.ParseInteger(line) || !p.Expect(TokenKind::kColon, " after the line number") ||
        !p.ParseInteger(column)) {
      return false;
    }
    if (p.ConsumeKeyword("to")) {
      end_line = line;
      if (p.token().Is(TokenKind::kInteger) && !p.ParseInteger(end_line)) return false;
      if (!p.Expect(TokenKind::kColon, " in a location range") || !p.ParseInteger(end_column)) {
        return false;
      }
    }
    location = ir::Location::FileLineCol(std::move(text), line, column, end_line, end_column);
    return true;
  }
  ir::Location child;
  if (p.Consume(TokenKind::kLParen)) {
    if (!ParseLocationBodyNested(p, child) ||
        !p.Expect(TokenKind::kRParen, " after a name location")) {
      return false;
    }
  }
  location = ir::Location::Name(std::move(text), std::move(child));
  return true;
}

}  // namespace

bool Parser::ParseLocation(ir::Location& location) {
  if (!ExpectKeyword("loc", "") || !Expect(TokenKind::kLParen, " after 'loc'")) return false;
  if (!EnterNesting()) return false;
  bool ok = ParseLocationBody(*this, location);
  LeaveNesting();
  return ok && Expect(TokenKind::kRParen, " to close the location");
}

bool Parser::ParseOptionalLocation(ir::Location& location) {
  if (!token_.IsKeyword("loc")) return true;
  return ParseLocation(location);
}

}  // namespace kiln::frontend::text
