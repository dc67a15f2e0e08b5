// Types, attributes and locations in MLIR's syntax (AsmPrinter), with the
// StableHLO dialect's spellings of its attributes; struct attributes are in
// printer_structs.cc.
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "ir/float_format.h"
#include "ir/op_syntax.h"
#include "ir/printer_internal.h"

namespace kiln::ir::print_internal {
namespace {

// Bounds recursion over nested types, attributes and locations. Readers
// already bound nesting (the text parser at 100 levels); this only stops
// malformed IR from exhausting the stack.
constexpr int kMaxPrintDepth = 1000;
thread_local int print_depth = 0;

struct DepthGuard {
  bool ok;
  DepthGuard() : ok(++print_depth <= kMaxPrintDepth) {}
  ~DepthGuard() { --print_depth; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
};

constexpr std::string_view kTooDeep = "<<nesting too deep>>";

void AppendDim(std::string& out, int64_t dim) {
  if (dim == kDynamic) {
    out += '?';
  } else {
    AppendInt(out, dim);
  }
}

void AppendQuantized(std::string& out, const QuantizedParams& q) {
  const ElementTypeInfo& storage = GetElementTypeInfo(q.storage_type);
  int width = storage.bit_width;
  out += "!quant.uniform<";
  out += q.is_signed ? 'i' : 'u';
  AppendInt(out, width);
  int64_t default_min = 0;
  int64_t default_max = 0;
  if (width > 0 && width < 64) {
    default_min = q.is_signed ? -(int64_t{1} << (width - 1)) : 0;
    default_max = q.is_signed ? (int64_t{1} << (width - 1)) - 1 : (int64_t{1} << width) - 1;
  }
  if (q.storage_min != default_min || q.storage_max != default_max) {
    out += '<';
    AppendInt(out, q.storage_min);
    out += ':';
    AppendInt(out, q.storage_max);
    out += '>';
  }
  out += ':';
  out += ElementTypeSpelling(q.expressed_type);
  auto append_param = [&](size_t i) {
    out += FormatDoubleExponent(i < q.scales.size() ? q.scales[i] : 0.0);
    int64_t zero = i < q.zero_points.size() ? q.zero_points[i] : 0;
    if (zero != 0) {
      out += ':';
      AppendInt(out, zero);
    }
  };
  if (q.quantized_dimension.has_value()) {
    out += ':';
    AppendInt(out, *q.quantized_dimension);
    out += ", {";
    for (size_t i = 0; i < q.scales.size(); ++i) {
      if (i > 0) out += ',';
      append_param(i);
    }
    out += "}>";
    return;
  }
  out += ", ";
  append_param(0);
  out += '>';
}

bool IsUnsigned(ElementType type) { return type >= ElementType::kU1 && type <= ElementType::kU64; }

// Reads one stored element as a 64-bit integer (sign- or zero-extended from
// its bit width; i1 as 0/1).
int64_t ReadInteger(const uint8_t* data, ElementType type, bool is_unsigned) {
  const ElementTypeInfo& info = GetElementTypeInfo(type);
  uint64_t raw = 0;
  std::memcpy(&raw, data, info.storage_bytes);
  if (type == ElementType::kPred) return raw != 0 ? 1 : 0;
  int width = info.bit_width;
  if (width < 64) {
    raw &= (uint64_t{1} << width) - 1;
    if (!is_unsigned && (raw >> (width - 1)) != 0) raw |= ~uint64_t{0} << width;
  }
  return static_cast<int64_t>(raw);
}

void AppendHex(std::string& out, const std::vector<uint8_t>& data) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  out += "\"0x";
  for (uint8_t byte : data) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  out += '"';
}

void AppendEnum(std::string& out, const AttributeStorage& s) {
  std::string_view family = s.text;
  std::string_view dialect = "stablehlo";
  size_t dot = family.find('.');
  if (dot != std::string_view::npos) {
    dialect = family.substr(0, dot);
    family = family.substr(dot + 1);
  }
  if (family == "result_accuracy_mode") {
    out += '#';
    out += dialect;
    out += '.';
    out += family;
    out += '<';
    out += s.enum_value;
    out += '>';
    return;
  }
  out += '#';
  out += dialect;
  out += '<';
  out += family;
  out += ' ';
  out += s.enum_value;
  out += '>';
}

void AppendDenseArray(std::string& out, const AttributeStorage& s) {
  out += "array<";
  ElementType element = s.type ? s.type.element_type() : ElementType::kS64;
  out += ElementTypeSpelling(element);
  bool first = true;
  auto separator = [&] {
    out += first ? ": " : ", ";
    first = false;
  };
  if (std::optional<FloatSemantics> semantics = GetFloatSemantics(element)) {
    for (double value : s.float_values) {
      separator();
      out += FormatFloat(*semantics, DoubleToFloatBits(*semantics, value));
    }
  } else {
    for (int64_t value : s.int_values) {
      separator();
      if (element == ElementType::kPred) {
        out += value != 0 ? "true" : "false";
      } else if (IsUnsigned(element)) {
        out += std::to_string(static_cast<uint64_t>(value));
      } else {
        AppendInt(out, value);
      }
    }
  }
  out += '>';
}

bool IsIdentifierStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsIdentifierChar(char c) {
  return IsIdentifierStart(c) || (c >= '0' && c <= '9') || c == '$' || c == '.';
}

}  // namespace

void AppendInt(std::string& out, int64_t value) { out += std::to_string(value); }

void AppendElement(std::string& out, const uint8_t* data, const Type& element) {
  if (element.Is(TypeKind::kQuantized)) {
    const QuantizedParams& q = GetQuantizedParams(element);
    int64_t value = ReadInteger(data, q.storage_type, !q.is_signed);
    if (q.is_signed) {
      AppendInt(out, value);
    } else {
      out += std::to_string(static_cast<uint64_t>(value));
    }
    return;
  }
  ElementType type = element.element_type();
  if (type == ElementType::kPred) {
    out += data[0] != 0 ? "true" : "false";
    return;
  }
  if (type == ElementType::kC64 || type == ElementType::kC128) {
    ElementType part = type == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64;
    FloatSemantics semantics = *GetFloatSemantics(part);
    size_t bytes = GetElementTypeInfo(part).storage_bytes;
    uint64_t real = 0;
    uint64_t imaginary = 0;
    std::memcpy(&real, data, bytes);
    std::memcpy(&imaginary, data + bytes, bytes);
    out += '(';
    out += FormatFloat(semantics, real);
    out += ',';
    out += FormatFloat(semantics, imaginary);
    out += ')';
    return;
  }
  if (std::optional<FloatSemantics> semantics = GetFloatSemantics(type)) {
    uint64_t bits = 0;
    std::memcpy(&bits, data, GetElementTypeInfo(type).storage_bytes);
    out += FormatFloat(*semantics, bits);
    return;
  }
  bool is_unsigned = IsUnsigned(type);
  int64_t value = ReadInteger(data, type, is_unsigned);
  if (is_unsigned) {
    out += std::to_string(static_cast<uint64_t>(value));
  } else {
    AppendInt(out, value);
  }
}

size_t ElementBytes(const Type& element) {
  if (element.Is(TypeKind::kQuantized)) {
    return GetElementTypeInfo(GetQuantizedParams(element).storage_type).storage_bytes;
  }
  if (element.Is(TypeKind::kElement))
    return GetElementTypeInfo(element.element_type()).storage_bytes;
  return 0;
}

bool IsBareIdentifier(std::string_view text) {
  if (text.empty() || !IsIdentifierStart(text[0])) return false;
  for (char c : text) {
    if (!IsIdentifierChar(c)) return false;
  }
  return true;
}

const std::vector<int64_t>* AsI64Array(const Attribute& attribute) {
  if (!attribute.Is(AttrKind::kDenseArray) || !attribute->type ||
      attribute->type.element_type() != ElementType::kS64) {
    return nullptr;
  }
  return &attribute->int_values;
}

void AppendDims(std::string& out, std::span<const int64_t> dims) {
  out += '[';
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    AppendDim(out, dims[i]);
  }
  out += ']';
}

void AppendQuoted(std::string& out, std::string_view text) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  out += '"';
  for (unsigned char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7F && c != '"') {
      out += static_cast<char>(c);
    } else {
      out += '\\';
      out += kDigits[c >> 4];
      out += kDigits[c & 15];
    }
  }
  out += '"';
}

void AppendKeywordOrString(std::string& out, std::string_view text) {
  if (IsBareIdentifier(text)) {
    out += text;
  } else {
    AppendQuoted(out, text);
  }
}

void AppendSymbol(std::string& out, std::string_view name) {
  out += '@';
  AppendKeywordOrString(out, name);
}

void AppendType(std::string& out, const Type& type) {
  DepthGuard guard;
  if (!guard.ok) {
    out += kTooDeep;
    return;
  }
  if (!type) {
    out += "<<null type>>";
    return;
  }
  switch (type.kind()) {
    case TypeKind::kElement: out += ElementTypeSpelling(type.element_type()); return;
    case TypeKind::kQuantized: AppendQuantized(out, GetQuantizedParams(type)); return;
    case TypeKind::kTensor: {
      out += "tensor<";
      for (int64_t dim : type.dims()) {
        AppendDim(out, dim);
        out += 'x';
      }
      AppendType(out, type.element());
      const std::vector<int64_t>& bounds = type.bounds();
      if (!bounds.empty()) {
        out += ", #stablehlo.bounds<";
        for (size_t i = 0; i < bounds.size(); ++i) {
          if (i > 0) out += ", ";
          AppendDim(out, bounds[i]);
        }
        out += '>';
      }
      out += '>';
      return;
    }
    case TypeKind::kUnrankedTensor:
      out += "tensor<*x";
      AppendType(out, type.element());
      out += '>';
      return;
    case TypeKind::kToken: out += "!stablehlo.token"; return;
    case TypeKind::kTuple: {
      out += "tuple<";
      const std::vector<Type>& members = type.members();
      for (size_t i = 0; i < members.size(); ++i) {
        if (i > 0) out += ", ";
        AppendType(out, members[i]);
      }
      out += '>';
      return;
    }
    case TypeKind::kFunction: {
      out += '(';
      const std::vector<Type>& inputs = type.members();
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (i > 0) out += ", ";
        AppendType(out, inputs[i]);
      }
      out += ") -> ";
      const std::vector<Type>& results = type.results();
      bool parens = results.size() != 1 || results[0].Is(TypeKind::kFunction);
      if (parens) out += '(';
      for (size_t i = 0; i < results.size(); ++i) {
        if (i > 0) out += ", ";
        AppendType(out, results[i]);
      }
      if (parens) out += ')';
      return;
    }
    case TypeKind::kNone: out += "none"; return;
    case TypeKind::kOpaque: out += type.text(); return;
  }
}

void AppendFloatValue(std::string& out, double value, const Type& type) {
  ElementType element = type && type.Is(TypeKind::kElement) ? type.element_type()
                                                            : ElementType::kF64;
  std::optional<FloatSemantics> semantics = GetFloatSemantics(element);
  if (!semantics) semantics = GetFloatSemantics(ElementType::kF64);
  out += FormatFloat(*semantics, DoubleToFloatBits(*semantics, value));
}

void AppendIntegerValue(std::string& out, const Attribute& integer) {
  const AttributeStorage& s = integer.storage();
  bool is_unsigned = s.type && s.type.Is(TypeKind::kElement) && IsUnsigned(s.type.element_type());
  if (is_unsigned) {
    out += std::to_string(static_cast<uint64_t>(s.int_value));
  } else {
    AppendInt(out, s.int_value);
  }
}

void AppendDenseLiteral(std::string& out, const Attribute& dense) {
  const AttributeStorage& s = dense.storage();
  out += "dense<";
  const Type& type = s.type;
  Type element = type ? type.element() : Type();
  size_t bytes = element ? ElementBytes(element) : 0;
  int64_t count = type && type.HasStaticShape() ? type.NumElements() : 0;
  if (bytes == 0 || count <= 0 || s.data.size() < bytes) {
    out += '>';
    return;
  }
  bool splat = s.splat || count == 1;
  if (!splat && s.data.size() == bytes * static_cast<size_t>(count)) {
    splat = true;
    for (int64_t i = 1; i < count && splat; ++i) {
      splat = std::memcmp(s.data.data(), s.data.data() + i * bytes, bytes) == 0;
    }
  }
  if (splat) {
    AppendElement(out, s.data.data(), element);
    out += '>';
    return;
  }
  if (s.data.size() != bytes * static_cast<size_t>(count)) {
    out += '>';
    return;
  }
  if (count > 100) {
    AppendHex(out, s.data);
    out += '>';
    return;
  }
  // Nested brackets, one level per dimension, walked without recursion.
  const std::vector<int64_t>& dims = type.dims();
  size_t rank = dims.size();
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    // Open the brackets of the dimensions whose index is zero, outermost first.
    size_t opening = rank;
    while (opening > 0 && index[opening - 1] == 0) --opening;
    if (i > 0) out += ", ";
    for (size_t d = opening; d < rank; ++d) out += '[';
    AppendElement(out, s.data.data() + i * bytes, element);
    // Advance, closing the brackets of the dimensions that wrap.
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
      out += ']';
    }
  }
  out += '>';
}

void AppendDictionary(std::string& out, std::span<const NamedAttribute> entries) {
  out += '{';
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out += ", ";
    AppendKeywordOrString(out, entries[i].name);
    if (entries[i].value.Is(AttrKind::kUnit)) continue;
    out += " = ";
    AppendAttribute(out, entries[i].value);
  }
  out += '}';
}

namespace {

// An integer attribute and its type (` : i32`; i64's is dropped when
// `elide_default_type`); i1 prints as true / false.
void AppendIntegerAttribute(std::string& out, const Attribute& attribute, bool elide_default_type) {
  const AttributeStorage& s = attribute.storage();
  bool is_i1 = s.type && s.type.Is(TypeKind::kElement) &&
               s.type.element_type() == ElementType::kPred;
  if (is_i1) {
    out += s.int_value != 0 ? "true" : "false";
    return;
  }
  AppendIntegerValue(out, attribute);
  bool is_i64 = s.type && s.type.Is(TypeKind::kElement) &&
                s.type.element_type() == ElementType::kS64;
  if (elide_default_type && is_i64) return;
  out += " : ";
  AppendType(out, s.type ? s.type : Type::Element(ElementType::kS64));
}

// A float attribute and its type (` : f32`; f64's is dropped when
// `elide_default_type`, unless the value is printed in hexadecimal).
void AppendFloatAttribute(std::string& out, const Attribute& attribute, bool elide_default_type) {
  const AttributeStorage& s = attribute.storage();
  Type type = s.type ? s.type : Type::Element(ElementType::kF64);
  std::optional<FloatSemantics> semantics = type.Is(TypeKind::kElement)
                                                ? GetFloatSemantics(type.element_type())
                                                : std::nullopt;
  if (!semantics) semantics = GetFloatSemantics(ElementType::kF64);
  bool hex = false;
  out += FormatFloat(*semantics, DoubleToFloatBits(*semantics, s.float_value), &hex);
  bool is_f64 = type.Is(TypeKind::kElement) && type.element_type() == ElementType::kF64;
  if (elide_default_type && is_f64 && !hex) return;
  out += " : ";
  AppendType(out, type);
}

}  // namespace

void AppendAttribute(std::string& out, const Attribute& attribute, bool elide_default_type) {
  DepthGuard guard;
  if (!guard.ok) {
    out += kTooDeep;
    return;
  }
  if (!attribute) {
    out += "<<null attribute>>";
    return;
  }
  const AttributeStorage& s = attribute.storage();
  switch (s.kind) {
    case AttrKind::kUnit: out += "unit"; return;
    case AttrKind::kBool: out += s.bool_value ? "true" : "false"; return;
    case AttrKind::kInteger: AppendIntegerAttribute(out, attribute, elide_default_type); return;
    case AttrKind::kFloat: AppendFloatAttribute(out, attribute, elide_default_type); return;
    case AttrKind::kString: AppendQuoted(out, s.text); return;
    case AttrKind::kType: AppendType(out, s.type); return;
    case AttrKind::kArray:
      out += '[';
      for (size_t i = 0; i < s.elements.size(); ++i) {
        if (i > 0) out += ", ";
        AppendAttribute(out, s.elements[i], /*elide_default_type=*/true);
      }
      out += ']';
      return;
    case AttrKind::kDenseArray: AppendDenseArray(out, s); return;
    case AttrKind::kDenseElements:
      AppendDenseLiteral(out, attribute);
      out += " : ";
      AppendType(out, s.type);
      return;
    case AttrKind::kDictionary: AppendDictionary(out, s.fields); return;
    case AttrKind::kSymbolRef:
      for (size_t i = 0; i < s.symbol_path.size(); ++i) {
        if (i > 0) out += "::";
        AppendSymbol(out, s.symbol_path[i]);
      }
      return;
    case AttrKind::kEnum: AppendEnum(out, s); return;
    case AttrKind::kStruct: AppendStructAttribute(out, attribute); return;
    case AttrKind::kOpaque: out += s.text; return;
  }
}

void AppendLocationBody(std::string& out, const Location& location) {
  DepthGuard guard;
  if (!guard.ok) {
    out += kTooDeep;
    return;
  }
  if (!location) {
    out += "unknown";
    return;
  }
  const LocationStorage& s = location.storage();
  switch (s.kind) {
    case LocationKind::kUnknown: out += "unknown"; return;
    case LocationKind::kFileLineCol:
      AppendQuoted(out, s.text);
      out += ':';
      AppendInt(out, s.line);
      out += ':';
      AppendInt(out, s.column);
      if (s.end_line != 0 || s.end_column != 0) {
        out += " to ";
        if (s.end_line != s.line) AppendInt(out, s.end_line);
        out += ':';
        AppendInt(out, s.end_column);
      }
      return;
    case LocationKind::kName:
      AppendQuoted(out, s.text);
      if (!s.children.empty() && s.children[0].kind() != LocationKind::kUnknown) {
        out += '(';
        AppendLocationBody(out, s.children[0]);
        out += ')';
      }
      return;
    case LocationKind::kCallSite:
      out += "callsite(";
      AppendLocationBody(out, s.children.empty() ? Location() : s.children[0]);
      out += " at ";
      AppendLocationBody(out, s.children.size() < 2 ? Location() : s.children[1]);
      out += ')';
      return;
    case LocationKind::kFused:
      out += "fused";
      if (s.metadata) {
        out += '<';
        AppendAttribute(out, s.metadata);
        out += '>';
      }
      out += '[';
      for (size_t i = 0; i < s.children.size(); ++i) {
        if (i > 0) out += ", ";
        AppendLocationBody(out, s.children[i]);
      }
      out += ']';
      return;
  }
}

}  // namespace kiln::ir::print_internal

namespace kiln::ir {

std::string PrintType(const Type& type) {
  std::string out;
  print_internal::AppendType(out, type);
  return out;
}

std::string PrintAttribute(const Attribute& attribute) {
  std::string out;
  print_internal::AppendAttribute(out, attribute);
  return out;
}

std::string PrintLocation(const Location& location) {
  std::string out = "loc(";
  print_internal::AppendLocationBody(out, location);
  return out + ")";
}

std::string PrintInterpreterTensor(const Type& type, std::span<const uint8_t> data) {
  using print_internal::AppendElement;
  std::string out;
  print_internal::AppendType(out, type);
  out += " {";
  const Type element = type.element();
  const size_t bytes = print_internal::ElementBytes(element);
  const bool complex = element.Is(TypeKind::kElement) &&
                       (element.element_type() == ElementType::kC64 ||
                        element.element_type() == ElementType::kC128);
  const std::vector<int64_t> dims = type.dims();
  // An element: a complex one as [re, im] (the interpreter's form).
  auto append_element = [&](size_t index) {
    const uint8_t* at = data.data() + index * bytes;
    if (!complex) {
      AppendElement(out, at, element);
      return;
    }
    const Type part = Type::Element(element.element_type() == ElementType::kC64
                                        ? ElementType::kF32
                                        : ElementType::kF64);
    out += '[';
    AppendElement(out, at, part);
    out += ", ";
    AppendElement(out, at + bytes / 2, part);
    out += ']';
  };
  auto newline = [&](size_t indent) {
    out += '\n';
    out.append(2 * indent, ' ');
  };
  // Nested lists, each on its own line, as the interpreter prints them:
  // the walk keeps the index of every dimension entered, iteratively.
  if (dims.empty()) {
    if (bytes <= data.size()) append_element(0);
    return out + "}";
  }
  std::vector<int64_t> index;
  size_t flat = 0;
  auto at_last = [&](size_t depth) {
    return depth == 0 || index[depth - 1] == dims[depth - 1] - 1;
  };
  // Enter dimension 0.
  newline(1);
  out += '[';
  index.push_back(0);
  while (!index.empty()) {
    const size_t depth = index.size();  // dimensions entered
    if (index.back() >= dims[depth - 1]) {
      // This dimension is done: close it.
      out += ']';
      index.pop_back();
      if (!at_last(index.size())) {
        out += ',';
      } else {
        newline(index.size());
      }
      if (!index.empty()) ++index.back();
      continue;
    }
    if (depth == dims.size()) {
      append_element(flat++);
      if (index.back() != dims[depth - 1] - 1) out += ", ";
      ++index.back();
      continue;
    }
    newline(depth + 1);
    out += '[';
    index.push_back(0);
  }
  return out + "}";
}

}  // namespace kiln::ir
