// `dense<...> : tensor<...>` literals: nested lists (walked without
// recursion), splats, complex pairs, booleans and the `"0x..."` hex form.
// Element bytes follow docs/ir.md: little-endian, one byte per i1 and
// sub-byte element (its low bits), complex as (real, imaginary).
#include <cstring>

#include "frontend/text/parser_impl.h"
#include "ir/float_format.h"

namespace kiln::frontend::text {
namespace {

// One scalar as written.
struct Scalar {
  enum Kind : uint8_t { kInteger, kFloat, kBool } kind = kInteger;
  bool negative = false;
  bool hex = false;
  uint64_t magnitude = 0;
  double value = 0;
  size_t offset = 0;
};

// One element: a scalar, or a complex pair.
struct Element {
  Scalar real, imaginary;
  bool complex = false;
};

bool ParseScalar(Parser& p, Scalar& scalar) {
  scalar.offset = p.token().offset;
  if (p.token().IsKeyword("true") || p.token().IsKeyword("false")) {
    scalar.kind = Scalar::kBool;
    scalar.magnitude = p.token().IsKeyword("true") ? 1 : 0;
    p.Advance();
    return true;
  }
  scalar.negative = p.Consume(TokenKind::kMinus);
  const Token& token = p.token();
  if (token.Is(TokenKind::kFloat)) {
    scalar.kind = Scalar::kFloat;
    scalar.value = std::strtod(std::string(token.spelling).c_str(), nullptr);
    if (scalar.negative) scalar.value = -scalar.value;
  } else if (token.Is(TokenKind::kInteger)) {
    scalar.kind = Scalar::kInteger;
    scalar.hex = token.spelling.size() > 2 && token.spelling[1] == 'x';
    if (!IntegerMagnitude(token.spelling, scalar.magnitude)) {
      return p.Fail(token.offset, StrCat("integer ", token.spelling, " does not fit in 64 bits"));
    }
  } else {
    return p.FailExpected("an element (a number, 'true', 'false' or a complex pair)");
  }
  p.Advance();
  return true;
}

bool ParseElement(Parser& p, Element& element) {
  if (!p.Consume(TokenKind::kLParen)) return ParseScalar(p, element.real);
  element.complex = true;
  return ParseScalar(p, element.real) && p.Expect(TokenKind::kComma, " in a complex pair") &&
         ParseScalar(p, element.imaginary) &&
         p.Expect(TokenKind::kRParen, " to close a complex pair");
}

void Store(uint64_t bits, size_t bytes, uint8_t* out) {
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(bits >> (8 * i));
}

// Writes a real scalar as a float of `semantics`.
bool StoreFloat(Parser& p, const Scalar& scalar, const ir::FloatSemantics& semantics, size_t bytes,
                uint8_t* out) {
  if (scalar.kind == Scalar::kBool)
    return p.Fail(scalar.offset, "expected a float element, found a boolean");
  uint64_t bits;
  if (scalar.kind == Scalar::kInteger && scalar.hex) {
    bits = scalar.magnitude;
    if (scalar.negative || (semantics.bit_width() < 64 && bits >> semantics.bit_width() != 0)) {
      return p.Fail(scalar.offset, "hexadecimal float element does not fit the element type");
    }
  } else {
    double value = scalar.kind == Scalar::kFloat ? scalar.value
                                                 : static_cast<double>(scalar.magnitude);
    if (scalar.kind == Scalar::kInteger && scalar.negative) value = -value;
    bits = ir::DoubleToFloatBits(semantics, value);
  }
  Store(bits, bytes, out);
  return true;
}

// Writes an integer scalar with `width` bits (masked, as Kiln stores them).
bool StoreInteger(Parser& p, const Scalar& scalar, int width, bool is_unsigned, size_t bytes,
                  uint8_t* out) {
  if (scalar.kind == Scalar::kFloat)
    return p.Fail(scalar.offset, "expected an integer element, found a float");
  uint64_t magnitude = scalar.magnitude;
  bool fits = scalar.negative
                  ? !is_unsigned && (width >= 64 ? magnitude <= uint64_t{1} << 63
                                                 : magnitude <= uint64_t{1} << (width - 1))
                  : (width >= 64 || magnitude < uint64_t{1} << width);
  if (!fits) {
    return p.Fail(scalar.offset, StrCat("element ", scalar.negative ? "-" : "", magnitude,
                                        " does not fit in ", width, " bits"));
  }
  uint64_t bits = scalar.negative ? 0 - magnitude : magnitude;
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  Store(bits, bytes, out);
  return true;
}

bool StoreElement(Parser& p, const Element& element, const ir::Type& element_type, uint8_t* out) {
  ElementType type = element_type.Is(ir::TypeKind::kQuantized)
                         ? ir::GetQuantizedParams(element_type).storage_type
                         : element_type.element_type();
  const ElementTypeInfo& info = GetElementTypeInfo(type);
  if (type == ElementType::kC64 || type == ElementType::kC128) {
    if (!element.complex)
      return p.Fail(element.real.offset, "expected a complex element '(real, imaginary)'");
    ElementType part = type == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64;
    size_t bytes = GetElementTypeInfo(part).storage_bytes;
    ir::FloatSemantics semantics = *ir::GetFloatSemantics(part);
    return StoreFloat(p, element.real, semantics, bytes, out) &&
           StoreFloat(p, element.imaginary, semantics, bytes, out + bytes);
  }
  if (element.complex) return p.Fail(element.real.offset, "complex element for a non-complex type");
  if (type == ElementType::kPred) {
    if (element.real.kind == Scalar::kFloat || element.real.magnitude > 1 ||
        element.real.negative) {
      return p.Fail(element.real.offset, "expected 'true', 'false', 0 or 1 for an i1 element");
    }
    out[0] = static_cast<uint8_t>(element.real.magnitude);
    return true;
  }
  if (std::optional<ir::FloatSemantics> semantics = ir::GetFloatSemantics(type)) {
    return StoreFloat(p, element.real, *semantics, info.storage_bytes, out);
  }
  if (type == ElementType::kToken)
    return p.Fail(element.real.offset, "a token tensor has no elements");
  bool is_unsigned = type >= ElementType::kU1 && type <= ElementType::kU64;
  if (element_type.Is(ir::TypeKind::kQuantized))
    is_unsigned = !ir::GetQuantizedParams(element_type).is_signed;
  if (element.real.kind == Scalar::kBool)
    return p.Fail(element.real.offset, "expected an integer element, found a boolean");
  int width = type == ElementType::kIndex ? 64 : info.bit_width;
  return StoreInteger(p, element.real, width, is_unsigned, info.storage_bytes, out);
}

// `[[1, 2], [3, 4]]`: the elements and the lists' shape, walked with an
// explicit stack of element counts (one per open list).
bool ParseNestedLists(Parser& p, std::vector<Element>& elements, std::vector<int64_t>& shape) {
  std::vector<int64_t> counts;
  std::vector<int64_t> sizes;  // per depth, fixed by the first list closed there
  size_t leaf_depth = 0;       // 0 while unknown
  counts.push_back(0);
  p.Advance();
  while (!counts.empty()) {
    if (p.token().Is(TokenKind::kRSquare)) {
      size_t depth = counts.size() - 1;
      if (sizes.size() <= depth) sizes.resize(depth + 1, -1);
      if (sizes[depth] == -1) {
        sizes[depth] = counts.back();
      } else if (sizes[depth] != counts.back()) {
        return p.Fail(p.token().offset,
                      StrCat("dense literal has lists of different sizes (", sizes[depth], " and ",
                             counts.back(), ") at depth ", depth));
      }
      counts.pop_back();
      p.Advance();
      if (counts.empty()) break;
      ++counts.back();
    } else if (p.token().Is(TokenKind::kLSquare)) {
      if (leaf_depth != 0 && counts.size() >= leaf_depth) {
        return p.Fail(p.token().offset, "dense literal mixes elements and nested lists");
      }
      counts.push_back(0);
      p.Advance();
      continue;
    } else {
      if (leaf_depth == 0) leaf_depth = counts.size();
      if (leaf_depth != counts.size() || (!sizes.empty() && sizes.size() > counts.size())) {
        return p.Fail(p.token().offset, "dense literal mixes elements and nested lists");
      }
      elements.emplace_back();
      if (!ParseElement(p, elements.back())) return false;
      ++counts.back();
    }
    if (p.Consume(TokenKind::kComma)) {
      if (p.token().Is(TokenKind::kRSquare)) return p.FailExpected("an element after ','");
    } else if (!p.token().Is(TokenKind::kRSquare)) {
      return p.FailExpected("',' or ']' in the dense literal");
    }
  }
  shape = sizes;
  return true;
}

bool DecodeHex(std::string_view hex, std::vector<uint8_t>& bytes) {
  if (hex.size() % 2 != 0) return false;
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  bytes.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int high = value(hex[i]);
    int low = value(hex[i + 1]);
    if (high < 0 || low < 0) return false;
    bytes.push_back(static_cast<uint8_t>(high * 16 + low));
  }
  return true;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += StrCat(i ? ", " : "", shape[i]);
  return text + "]";
}

}  // namespace

bool Parser::ParseDenseElements(ir::Attribute& attribute) {
  size_t start = token_.offset;
  Advance();
  if (!Expect(TokenKind::kLess, " after 'dense'")) return false;
  std::vector<Element> elements;
  std::vector<int64_t> shape;  // of the nested lists; empty for a scalar splat
  bool splat = false;
  bool hex = false;
  std::vector<uint8_t> hex_bytes;
  bool empty = false;
  if (token_.Is(TokenKind::kGreater)) {
    empty = true;
  } else if (token_.Is(TokenKind::kString)) {
    std::string value = Lexer::StringValue(token_.spelling);
    if (value.rfind("0x", 0) != 0 || !DecodeHex(std::string_view(value).substr(2), hex_bytes)) {
      return Fail(token_.offset, "expected a hexadecimal string \"0x...\" of whole bytes");
    }
    hex = true;
    Advance();
  } else if (!token_.Is(TokenKind::kLSquare)) {
    splat = true;
    elements.emplace_back();
    if (!ParseElement(*this, elements.back())) return false;
  } else {
    if (!ParseNestedLists(*this, elements, shape)) return false;
  }
  if (!Expect(TokenKind::kGreater, " to close the dense literal") ||
      !Expect(TokenKind::kColon, " and a type after the dense literal")) {
    return false;
  }
  size_t type_offset = token_.offset;
  ir::Type type;
  if (!ParseType(type)) return false;
  if (!type.Is(ir::TypeKind::kTensor) || !type.HasStaticShape()) {
    return Fail(type_offset, "expected a statically shaped tensor type for the dense literal");
  }
  ir::Type element_type = type.element();
  ElementType storage = element_type.Is(ir::TypeKind::kQuantized)
                            ? ir::GetQuantizedParams(element_type).storage_type
                            : element_type.element_type();
  size_t bytes = GetElementTypeInfo(storage).storage_bytes;
  if (bytes == 0) return Fail(type_offset, "this element type cannot hold dense elements");
  int64_t count = type.NumElements();
  if (empty) {
    if (count != 0)
      return Fail(start, StrCat("dense<> is empty but the type has ", count, " elements"));
    attribute = ir::Attribute::DenseElements(type, {}, false);
    return true;
  }
  std::vector<uint8_t> data;
  if (hex) {
    if (hex_bytes.size() == bytes) {
      splat = true;
    } else if (hex_bytes.size() != bytes * static_cast<size_t>(count)) {
      return Fail(start, StrCat("hex data has ", hex_bytes.size(), " bytes; the type needs ",
                                bytes * static_cast<size_t>(count), " (", count, " elements of ",
                                bytes, " bytes)"));
    }
    data = std::move(hex_bytes);
  } else {
    if (!splat && shape != type.dims()) {
      return Fail(start, StrCat("the literal's shape ", ShapeText(shape),
                                " does not match the type's shape ", ShapeText(type.dims())));
    }
    data.resize(bytes * elements.size());
    for (size_t i = 0; i < elements.size(); ++i) {
      if (!StoreElement(*this, elements[i], element_type, data.data() + i * bytes)) return false;
    }
  }
  // MLIR keeps a literal whose elements are all equal as a splat.
  if (!splat && count > 0) {
    bool same = true;
    for (int64_t i = 1; i < count && same; ++i) {
      same = std::memcmp(data.data(), data.data() + i * bytes, bytes) == 0;
    }
    if (same) {
      data.resize(bytes);
      splat = true;
    }
  }
  if (count == 0) {
    data.clear();
    splat = false;
  }
  attribute = ir::Attribute::DenseElements(type, std::move(data), splat);
  return true;
}

}  // namespace kiln::frontend::text
