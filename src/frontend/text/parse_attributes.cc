// Attributes: builtin ones (integers, floats, strings, arrays, dictionaries,
// symbols, types, array<...>), StableHLO's enums and structs, and other
// dialects' attributes kept as text. Dense literals are in parse_dense.cc.
#include <algorithm>
#include <cmath>

#include "frontend/text/parser_impl.h"
#include "ir/float_format.h"
#include "ir/printer.h"

namespace kiln::frontend::text {
namespace {

using ir::Attribute;
using ir::NamedAttribute;

bool IsUnsignedElement(ElementType type) {
  return type >= ElementType::kU1 && type <= ElementType::kU64;
}

bool IsIntegerElement(ElementType type) {
  return (type >= ElementType::kPred && type <= ElementType::kU64) || type == ElementType::kIndex;
}

}  // namespace

bool IntegerMagnitude(std::string_view spelling, uint64_t& value) {
  value = 0;
  bool hex = spelling.size() > 2 && spelling[0] == '0' && spelling[1] == 'x';
  for (char c : spelling.substr(hex ? 2 : 0)) {
    uint64_t digit = c >= '0' && c <= '9'   ? static_cast<uint64_t>(c - '0')
                     : c >= 'a' && c <= 'f' ? static_cast<uint64_t>(c - 'a' + 10)
                                            : static_cast<uint64_t>(c - 'A' + 10);
    uint64_t base = hex ? 16 : 10;
    if (value > (UINT64_MAX - digit) / base) return false;
    value = value * base + digit;
  }
  return true;
}

bool Parser::ParseInteger(int64_t& value) {
  bool negative = Consume(TokenKind::kMinus);
  if (!token_.Is(TokenKind::kInteger)) return FailExpected("an integer");
  uint64_t magnitude = 0;
  bool fits = IntegerMagnitude(token_.spelling, magnitude) &&
              magnitude <= (negative ? uint64_t{1} << 63 : uint64_t{INT64_MAX});
  if (!fits)
    return Fail(token_.offset, StrCat("integer ", token_.spelling, " does not fit in 64 bits"));
  value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  Advance();
  return true;
}

bool Parser::ParseI64List(std::vector<int64_t>& values, bool allow_dynamic) {
  if (!Expect(TokenKind::kLSquare, "")) return false;
  while (!token_.Is(TokenKind::kRSquare)) {
    if (!values.empty() && !Expect(TokenKind::kComma, " or ']' in the list")) return false;
    if (allow_dynamic && Consume(TokenKind::kQuestion)) {
      values.push_back(ir::kDynamic);
      continue;
    }
    int64_t value = 0;
    if (!ParseInteger(value)) return false;
    values.push_back(value);
  }
  Advance();
  return true;
}

bool Parser::CaptureBalanced(size_t start, std::string& text) {
  size_t cursor = token_.offset;
  std::vector<size_t> openers;  // offsets of the open brackets
  auto closer = [&](size_t opener) {
    char c = text_[opener];
    return c == '<' ? '>' : c == '(' ? ')' : c == '[' ? ']' : '}';
  };
  while (cursor < text_.size()) {
    char c = text_[cursor];
    if (c == '"') {
      // Skip a string literal, escapes included; like the lexer, a string
      // ends on its line.
      size_t string_start = cursor;
      for (++cursor; cursor < text_.size() && text_[cursor] != '"' && text_[cursor] != '\n';
           ++cursor) {
        if (text_[cursor] == '\\' && cursor + 1 < text_.size() && text_[cursor + 1] != '\n')
          ++cursor;
      }
      if (cursor >= text_.size() || text_[cursor] != '"') {
        return Fail(string_start, "unterminated string (a string ends on its line)");
      }
      ++cursor;
      continue;
    }
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      openers.push_back(cursor);
    } else if (c == '>' && cursor > 0 && text_[cursor - 1] == '-') {
      // `->` inside the text.
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (openers.empty() || closer(openers.back()) != c) {
        if (openers.empty()) return Fail(cursor, StrCat("unbalanced '", std::string(1, c), "'"));
        return Fail(cursor,
                    StrCat("expected '", std::string(1, closer(openers.back())), "' to close the '",
                           std::string(1, text_[openers.back()]), "' at ", Position(openers.back()),
                           ", found '", std::string(1, c), "'"));
      }
      openers.pop_back();
      if (openers.empty()) {
        text = std::string(text_.substr(start, cursor + 1 - start));
        lexer_.Reset(cursor + 1);
        Advance();
        return true;
      }
    }
    ++cursor;
  }
  size_t open = openers.empty() ? token_.offset : openers.back();
  return Fail(open, StrCat("expected '", std::string(1, closer(open)), "' to close this '",
                           std::string(1, text_[open]), "', found end of input"));
}

bool Parser::ParseDictionary(std::vector<NamedAttribute>& entries) {
  if (!Expect(TokenKind::kLBrace, "")) return false;
  while (!token_.Is(TokenKind::kRBrace)) {
    if (!entries.empty() && !Expect(TokenKind::kComma, " or '}' in the dictionary")) return false;
    std::string name;
    size_t offset = token_.offset;
    if (token_.Is(TokenKind::kBareIdentifier)) {
      name = std::string(token_.spelling);
    } else if (token_.Is(TokenKind::kString)) {
      name = Lexer::StringValue(token_.spelling);
    } else {
      return FailExpected("an attribute name");
    }
    Advance();
    for (const NamedAttribute& entry : entries) {
      if (entry.name == name) return Fail(offset, StrCat("duplicate attribute '", name, "'"));
    }
    Attribute value = Attribute::Unit();
    if (Consume(TokenKind::kEqual) && !ParseAttribute(value)) return false;
    entries.push_back({std::move(name), std::move(value)});
  }
  Advance();
  return true;
}

bool Parser::ParseOptionalAttrDict(ir::Operation& op) {
  if (!token_.Is(TokenKind::kLBrace)) return true;
  size_t offset = token_.offset;
  std::vector<NamedAttribute> entries;
  if (!ParseDictionary(entries)) return false;
  for (NamedAttribute& entry : entries) {
    if (op.GetAttr(entry.name)) {
      return Fail(offset, StrCat("attribute '", entry.name, "' is given twice"));
    }
    op.SetAttr(std::move(entry.name), std::move(entry.value));
  }
  return true;
}

bool Parser::ParseOptionalAttrDictWithKeyword(ir::Operation& op) {
  if (!ConsumeKeyword("attributes")) return true;
  if (!token_.Is(TokenKind::kLBrace)) return FailExpected("'{' after 'attributes'");
  return ParseOptionalAttrDict(op);
}

namespace {

// `array<i64: 1, 2>`, `array<i1: true>`, `array<f32: 1.0>`, `array<i64>`.
bool ParseDenseArray(Parser& p, Attribute& attribute) {
  p.Advance();
  if (!p.Expect(TokenKind::kLess, " after 'array'")) return false;
  ElementType element;
  size_t type_offset = p.token().offset;
  if (!p.ParseElementTypeToken(element)) return false;
  std::optional<ir::FloatSemantics> semantics = ir::GetFloatSemantics(element);
  if (!semantics && !IsIntegerElement(element)) {
    return p.Fail(type_offset, "array<...> holds integers or floats");
  }
  std::vector<int64_t> ints;
  std::vector<double> floats;
  if (p.Consume(TokenKind::kColon)) {
    do {
      if (element == ElementType::kPred &&
          (p.token().IsKeyword("true") || p.token().IsKeyword("false"))) {
        ints.push_back(p.token().IsKeyword("true") ? 1 : 0);
        p.Advance();
        continue;
      }
      bool negative = p.Consume(TokenKind::kMinus);
      if (semantics && (p.token().Is(TokenKind::kFloat) || p.token().Is(TokenKind::kInteger))) {
        double value = std::strtod(std::string(p.token().spelling).c_str(), nullptr);
        value = negative ? -value : value;
        floats.push_back(ir::FloatBitsToDouble(*semantics,
                                               ir::DoubleToFloatBits(*semantics, value)));
        p.Advance();
        continue;
      }
      if (semantics || !p.token().Is(TokenKind::kInteger)) {
        return p.FailExpected(StrCat("an element of ", ir::ElementTypeSpelling(element)));
      }
      uint64_t magnitude = 0;
      if (!IntegerMagnitude(p.token().spelling, magnitude) ||
          magnitude > (negative ? uint64_t{1} << 63 : UINT64_MAX)) {
        return p.Fail(p.token().offset, "integer does not fit in 64 bits");
      }
      ints.push_back(negative ? static_cast<int64_t>(0 - magnitude)
                              : static_cast<int64_t>(magnitude));
      p.Advance();
    } while (p.Consume(TokenKind::kComma));
  }
  if (!p.Expect(TokenKind::kGreater, " to close array<...>")) return false;
  attribute = Attribute::DenseArray(ir::Type::Element(element), std::move(ints), std::move(floats));
  return true;
}

// A number with an optional `: type`: Integer, Float or Bool.
bool ParseNumber(Parser& p, Attribute& attribute) {
  bool negative = p.Consume(TokenKind::kMinus);
  Token number = p.token();
  if (!number.Is(TokenKind::kInteger) && !number.Is(TokenKind::kFloat)) {
    return p.FailExpected("a number after '-'");
  }
  p.Advance();
  ir::Type type;
  if (p.Consume(TokenKind::kColon)) {
    if (!p.ParseType(type)) return false;
  } else {
    type = ir::Type::Element(number.Is(TokenKind::kFloat) ? ElementType::kF64 : ElementType::kS64);
  }
  if (!type.Is(ir::TypeKind::kElement))
    return p.Fail(number.offset, "a number's type must be an element type");
  ElementType element = type.element_type();
  std::optional<ir::FloatSemantics> semantics = ir::GetFloatSemantics(element);
  bool hex = number.spelling.size() > 2 && number.spelling[1] == 'x';
  if (semantics) {
    double value = 0;
    if (hex) {
      uint64_t bits = 0;
      if (negative || !IntegerMagnitude(number.spelling, bits) ||
          (semantics->bit_width() < 64 && bits >> semantics->bit_width() != 0)) {
        return p.Fail(number.offset, StrCat("hexadecimal float literal does not fit ",
                                            ir::ElementTypeSpelling(element)));
      }
      value = ir::FloatBitsToDouble(*semantics, bits);
    } else {
      value = std::strtod(std::string(number.spelling).c_str(), nullptr);
      if (negative) value = -value;
      value = ir::FloatBitsToDouble(*semantics, ir::DoubleToFloatBits(*semantics, value));
    }
    attribute = Attribute::Float(value, type);
    return true;
  }
  if (!IsIntegerElement(element) || number.Is(TokenKind::kFloat)) {
    return p.Fail(number.offset,
                  StrCat("expected a value of type ", ir::ElementTypeSpelling(element), ", found ",
                         DescribeToken(number)));
  }
  uint64_t magnitude = 0;
  int width = element == ElementType::kIndex ? 64 : GetElementTypeInfo(element).bit_width;
  bool is_unsigned = IsUnsignedElement(element);
  bool fits = IntegerMagnitude(number.spelling, magnitude);
  if (fits && width < 64) {
    fits = negative ? !is_unsigned && magnitude <= (uint64_t{1} << (width - 1))
                    : magnitude < (uint64_t{1} << width);
  } else if (fits && negative) {
    fits = !is_unsigned && magnitude <= (uint64_t{1} << 63);
  }
  if (!fits) {
    return p.Fail(number.offset, StrCat("integer ", negative ? "-" : "", number.spelling,
                                        " does not fit in ", ir::ElementTypeSpelling(element)));
  }
  uint64_t bits = negative ? 0 - magnitude : magnitude;
  if (element == ElementType::kPred) {
    attribute = Attribute::Bool(bits != 0);
    return true;
  }
  if (width < 64) {
    bits &= (uint64_t{1} << width) - 1;
    if (!is_unsigned && (bits >> (width - 1)) != 0) bits |= ~uint64_t{0} << width;
  }
  attribute = Attribute::Integer(static_cast<int64_t>(bits), type);
  return true;
}

}  // namespace

bool Parser::ParseAttribute(Attribute& attribute) {
  if (!EnterNesting()) return false;
  struct Leave {
    Parser* p;
    ~Leave() { p->LeaveNesting(); }
  } leave{this};
  size_t start = token_.offset;
  switch (token_.kind) {
    case TokenKind::kLSquare: {
      Advance();
      std::vector<Attribute> elements;
      while (!token_.Is(TokenKind::kRSquare)) {
        if (!elements.empty() && !Expect(TokenKind::kComma, " or ']' in the array")) return false;
        Attribute element;
        if (!ParseAttribute(element)) return false;
        elements.push_back(std::move(element));
      }
      Advance();
      attribute = Attribute::Array(std::move(elements));
      return true;
    }
    case TokenKind::kLBrace: {
      std::vector<NamedAttribute> entries;
      if (!ParseDictionary(entries)) return false;
      attribute = Attribute::Dictionary(std::move(entries));
      return true;
    }
    case TokenKind::kString:
      attribute = Attribute::String(Lexer::StringValue(token_.spelling));
      Advance();
      return true;
    case TokenKind::kAt: {
      std::vector<std::string> path;
      do {
        if (!token_.Is(TokenKind::kAt)) return FailExpected("a symbol after '::'");
        path.push_back(Lexer::SymbolValue(token_.spelling));
        Advance();
      } while (Consume(TokenKind::kColonColon));
      attribute = Attribute::SymbolRef(std::move(path));
      return true;
    }
    case TokenKind::kInteger:
    case TokenKind::kFloat:
    case TokenKind::kMinus: return ParseNumber(*this, attribute);
    case TokenKind::kHash: {
      Token name = token_;
      Advance();
      if (aliases_.count(std::string(name.spelling)) != 0)
        return ResolveAttributeAlias(name, attribute);
      if (!token_.Is(TokenKind::kLess) || token_.offset != name.offset + name.spelling.size()) {
        return Fail(name.offset, StrCat("undefined attribute alias '", name.spelling, "'"));
      }
      return ParseDialectAttributeBody(name.spelling, name.offset, attribute);
    }
    case TokenKind::kBareIdentifier: {
      std::string_view word = token_.spelling;
      if (word == "true" || word == "false") {
        attribute = Attribute::Bool(word == "true");
        Advance();
        return true;
      }
      if (word == "unit") {
        attribute = Attribute::Unit();
        Advance();
        return true;
      }
      if (word == "dense") return ParseDenseElements(attribute);
      if (word == "array") return ParseDenseArray(*this, attribute);
      if (!AtType()) {
        // Other builtin attributes (dense_resource<...>, affine_map<...>): text.
        Advance();
        if (!token_.Is(TokenKind::kLess))
          return Fail(start, StrCat("unknown attribute '", word, "'"));
        std::string text;
        if (!CaptureBalanced(start, text)) return false;
        if (token_.Is(TokenKind::kColon)) {
          // The type belongs to the attribute (`dense_resource<blob> : tensor<2xf32>`).
          Advance();
          ir::Type type;
          if (!ParseType(type)) return false;
          text += " : ";
          text += ir::PrintType(type);
        }
        attribute = Attribute::Opaque(std::move(text));
        return true;
      }
      [[fallthrough]];
    }
    case TokenKind::kExclamation:
    case TokenKind::kLParen: {
      ir::Type type;
      if (!ParseType(type)) return false;
      attribute = Attribute::TypeAttr(std::move(type));
      return true;
    }
    default: return FailExpected("an attribute");
  }
}

bool Parser::ParseDialectAttributeBody(std::string_view name, size_t start, Attribute& attribute) {
  // token_ is the '<' right after the name.
  if (name == "#stablehlo" || name == "#chlo") {
    // `#stablehlo<comparison_direction LT>`: an enum.
    size_t saved_position = lexer_.position();
    Token saved = token_;
    Advance();
    if (token_.Is(TokenKind::kBareIdentifier)) {
      std::string family(token_.spelling);
      Advance();
      if (token_.Is(TokenKind::kBareIdentifier)) {
        std::string value(token_.spelling);
        Advance();
        if (Consume(TokenKind::kGreater)) {
          attribute = Attribute::Enum(StrCat(name.substr(1), ".", family), std::move(value));
          return true;
        }
      }
    }
    lexer_.Reset(saved_position);
    token_ = saved;
  } else if (name == "#stablehlo.result_accuracy_mode") {
    Advance();
    if (!token_.Is(TokenKind::kBareIdentifier)) return FailExpected("a result accuracy mode");
    std::string value(token_.spelling);
    Advance();
    if (!Expect(TokenKind::kGreater, " to close the result accuracy mode")) return false;
    attribute = Attribute::Enum("stablehlo.result_accuracy_mode", std::move(value));
    return true;
  } else if (name == "#stablehlo.conv") {
    Advance();
    if (token_.IsKeyword("raw")) {
      Advance();
      std::vector<NamedAttribute> fields;
      while (!token_.Is(TokenKind::kGreater)) {
        if (!fields.empty() &&
            !Expect(TokenKind::kComma, " or '>' in '#stablehlo.conv<raw ...>'")) {
          return false;
        }
        std::span<const std::string_view> known = ir::ConvDimensionFields();
        auto it = std::find(known.begin(), known.end(), token_.spelling);
        if (!token_.Is(TokenKind::kBareIdentifier) || it == known.end()) {
          return FailExpected("a convolution dimension field");
        }
        std::string field(*it);
        Advance();
        if (!Expect(TokenKind::kEqual, " after the field name")) return false;
        if (token_.Is(TokenKind::kLSquare)) {
          std::vector<int64_t> values;
          if (!ParseI64List(values)) return false;
          fields.push_back({field, Attribute::DenseI64Array(std::move(values))});
        } else {
          int64_t value = 0;
          if (!ParseInteger(value)) return false;
          fields.push_back({field,
                            Attribute::Integer(value, ir::Type::Element(ElementType::kS64))});
        }
      }
      Advance();
      std::vector<NamedAttribute> ordered;
      for (std::string_view field : ir::ConvDimensionFields()) {
        for (NamedAttribute& entry : fields) {
          if (entry.name == field) ordered.push_back(entry);
        }
      }
      attribute = Attribute::Struct("stablehlo.conv", std::move(ordered));
      return true;
    }
    if (!ParseConvDimensions(attribute)) return false;
    return Expect(TokenKind::kGreater, " to close '#stablehlo.conv'");
  } else if (name.substr(0, 11) == "#stablehlo." && !ir::GetStructFields(name.substr(1)).empty() &&
             name != "#stablehlo.type_extensions") {
    return ParseStructBody(name.substr(1), attribute);
  }
  // Any other dialect attribute (sdy, mhlo, ...) is kept as its text.
  std::string text;
  if (!CaptureBalanced(start, text)) return false;
  attribute = Attribute::Opaque(std::move(text));
  return true;
}

bool Parser::ParseStructBody(std::string_view name, Attribute& attribute) {
  std::span<const ir::StructField> fields = ir::GetStructFields(name);
  std::vector<Attribute> values(fields.size());
  if (!Expect(TokenKind::kLess, StrCat(" after '#", name, "'"))) return false;
  bool first = true;
  while (!token_.Is(TokenKind::kGreater)) {
    if (!first && !Expect(TokenKind::kComma, StrCat(" or '>' in '#", name, "'"))) return false;
    first = false;
    if (token_.Is(TokenKind::kGreater)) break;  // upstream accepts a trailing comma
    size_t index = fields.size();
    for (size_t i = 0; i < fields.size(); ++i) {
      if (token_.IsKeyword(fields[i].name)) index = i;
    }
    if (index == fields.size()) {
      std::string names;
      for (const ir::StructField& field : fields)
        names += StrCat(names.empty() ? "" : ", ", "'", field.name, "'");
      return FailExpected(StrCat("one of ", names, " in '#", name, "'"));
    }
    if (values[index])
      return Fail(token_.offset, StrCat("duplicate field '", fields[index].name, "'"));
    Advance();
    if (!Expect(TokenKind::kEqual, StrCat(" after '", fields[index].name, "'"))) return false;
    Attribute value;
    switch (fields[index].kind) {
      case ir::StructFieldKind::kDims: {
        std::vector<int64_t> list;
        if (!ParseI64List(list, /*allow_dynamic=*/true)) return false;
        value = Attribute::DenseI64Array(std::move(list));
        break;
      }
      case ir::StructFieldKind::kInteger: {
        int64_t number = 0;
        if (!ParseInteger(number)) return false;
        value = Attribute::Integer(number, ir::Type::Element(ElementType::kS64));
        break;
      }
      case ir::StructFieldKind::kFloat: {
        bool negative = Consume(TokenKind::kMinus);
        if (!token_.Is(TokenKind::kFloat) && !token_.Is(TokenKind::kInteger))
          return FailExpected("a number");
        double number = std::strtod(std::string(token_.spelling).c_str(), nullptr);
        Advance();
        value = Attribute::Float(negative ? -number : number, ir::Type::Element(ElementType::kF64));
        break;
      }
      case ir::StructFieldKind::kBool:
        if (!token_.IsKeyword("true") && !token_.IsKeyword("false"))
          return FailExpected("'true' or 'false'");
        value = Attribute::Bool(token_.IsKeyword("true"));
        Advance();
        break;
      case ir::StructFieldKind::kType: {
        ir::Type type;
        if (!ParseType(type)) return false;
        value = Attribute::TypeAttr(std::move(type));
        break;
      }
      case ir::StructFieldKind::kAttribute:
        if (!ParseAttribute(value)) return false;
        break;
    }
    values[index] = std::move(value);
  }
  Advance();
  attribute = ir::StructOfFields(name, std::move(values));
  return true;
}

bool Parser::ParseConvDimensions(Attribute& attribute) {
  // One `[...]` group: letters at their positions, spatial numbers elsewhere.
  auto group = [&](char first, char second, int64_t& first_position, int64_t& second_position,
                   std::vector<int64_t>& spatial) {
    size_t open = token_.offset;
    if (!Expect(TokenKind::kLSquare, " to start convolution dimensions")) return false;
    first_position = second_position = -1;
    std::vector<std::pair<int64_t, int64_t>> numbered;  // (spatial number, position)
    int64_t position = 0;
    do {
      if (token_.Is(TokenKind::kInteger)) {
        int64_t number = 0;
        size_t offset = token_.offset;
        if (!ParseInteger(number)) return false;
        for (auto& [seen, unused] : numbered) {
          if (seen == number) return Fail(offset, StrCat("duplicate spatial dimension ", number));
        }
        numbered.emplace_back(number, position);
      } else if (token_.Is(TokenKind::kBareIdentifier) && token_.spelling.size() == 1 &&
                 (token_.spelling[0] == first || token_.spelling[0] == second)) {
        int64_t& slot = token_.spelling[0] == first ? first_position : second_position;
        if (slot != -1)
          return Fail(token_.offset, StrCat("duplicate dimension '", token_.spelling, "'"));
        slot = position;
        Advance();
      } else {
        return FailExpected(StrCat("a spatial dimension number, '", std::string(1, first), "' or '",
                                   std::string(1, second), "'"));
      }
      ++position;
    } while (Consume(TokenKind::kComma));
    if (!Expect(TokenKind::kRSquare, " to close convolution dimensions")) return false;
    if (first_position == -1 || second_position == -1) {
      return Fail(open, StrCat("expected dimensions '", std::string(1, first), "' and '",
                               std::string(1, second), "' in this group"));
    }
    spatial.assign(numbered.size(), -1);
    for (auto& [number, at] : numbered) {
      if (number < 0 || static_cast<size_t>(number) >= numbered.size()) {
        return Fail(open, StrCat("spatial dimensions must be numbered 0 to ", numbered.size() - 1,
                                 "; found ", number));
      }
      spatial[static_cast<size_t>(number)] = at;
    }
    return true;
  };
  int64_t input_batch, input_feature, kernel_input, kernel_output, output_batch, output_feature;
  std::vector<int64_t> input_spatial, kernel_spatial, output_spatial;
  if (!group('b', 'f', input_batch, input_feature, input_spatial) ||
      !ExpectKeyword("x", " between input and kernel dimensions") ||
      !group('i', 'o', kernel_input, kernel_output, kernel_spatial) ||
      !Expect(TokenKind::kArrow, " before output dimensions") ||
      !group('b', 'f', output_batch, output_feature, output_spatial)) {
    return false;
  }
  auto integer = [](int64_t value) {
    return Attribute::Integer(value, ir::Type::Element(ElementType::kS64));
  };
  attribute = Attribute::Struct(
      "stablehlo.conv",
      {{"input_batch_dimension", integer(input_batch)},
       {"input_feature_dimension", integer(input_feature)},
       {"input_spatial_dimensions", Attribute::DenseI64Array(std::move(input_spatial))},
       {"kernel_input_feature_dimension", integer(kernel_input)},
       {"kernel_output_feature_dimension", integer(kernel_output)},
       {"kernel_spatial_dimensions", Attribute::DenseI64Array(std::move(kernel_spatial))},
       {"output_batch_dimension", integer(output_batch)},
       {"output_feature_dimension", integer(output_feature)},
       {"output_spatial_dimensions", Attribute::DenseI64Array(std::move(output_spatial))}});
  return true;
}

}  // namespace kiln::frontend::text
