#include "frontend/vhlo/text.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace kiln::frontend::vhlo {
namespace {

// MLIR's float formatting for attributes: scientific with 6 digits when that
// round-trips, else 17 significant digits.
std::string FloatText(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.6e", value);
  if (std::strtod(buffer, nullptr) != value) std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text;
  for (int64_t dim : dims) text += dim == ir::kDynamic ? "?x" : StrCat(dim, "x");
  return text;
}

void AppendType(const ir::Type& type, std::string& out);

void AppendTypes(const std::vector<ir::Type>& types, std::string& out) {
  for (size_t i = 0; i < types.size() && out.size() < kMaxTextLength; ++i) {
    if (i > 0) out += ", ";
    AppendType(types[i], out);
  }
}

std::string QuantizedText(const ir::QuantizedParams& params) {
  std::string storage(ElementTypeText(params.storage_type));
  if (!params.is_signed && storage.front() == 'i') storage = "u" + storage;
  std::string text = StrCat("!quant.uniform<", storage);
  // MLIR leaves out a range that is the storage type's whole range.
  const int width = GetElementTypeInfo(params.storage_type).bit_width;
  const int64_t full_min = params.is_signed ? -(int64_t{1} << (width - 1)) : 0;
  const int64_t full_max = params.is_signed ? (int64_t{1} << (width - 1)) - 1
                                            : static_cast<int64_t>((uint64_t{1} << width) - 1);
  if (width < 64 && (params.storage_min != full_min || params.storage_max != full_max)) {
    text += StrCat("<", params.storage_min, ":", params.storage_max, ">");
  }
  text += StrCat(":", ElementTypeText(params.expressed_type));
  if (params.quantized_dimension) text += StrCat(":", *params.quantized_dimension);
  text += params.quantized_dimension ? ", {" : ", ";
  for (size_t i = 0; i < params.scales.size(); ++i) {
    if (i > 0) text += ",";
    text += FloatText(params.scales[i]);
    if (i < params.zero_points.size() && params.zero_points[i] != 0) {
      text += StrCat(":", params.zero_points[i]);
    }
  }
  return text + (params.quantized_dimension ? "}>" : ">");
}

}  // namespace

std::string_view ElementTypeText(ElementType type) {
  switch (type) {
    case ElementType::kPred: return "i1";
    case ElementType::kS1: return "i1";
    case ElementType::kS2: return "i2";
    case ElementType::kS4: return "i4";
    case ElementType::kS8: return "i8";
    case ElementType::kS16: return "i16";
    case ElementType::kS32: return "i32";
    case ElementType::kS64: return "i64";
    default: return GetElementTypeInfo(type).name;
  }
}

namespace {

void AppendType(const ir::Type& type, std::string& out) {
  if (out.size() >= kMaxTextLength) return;
  if (!type) {
    out += "<null type>";
    return;
  }
  switch (type.kind()) {
    case ir::TypeKind::kElement: out += ElementTypeText(type.element_type()); return;
    case ir::TypeKind::kQuantized: out += QuantizedText(ir::GetQuantizedParams(type)); return;
    case ir::TypeKind::kTensor: {
      out += "tensor<" + DimsText(type.dims());
      AppendType(type.element(), out);
      if (!type.bounds().empty()) {
        out += ", #stablehlo.bounds<";
        for (size_t i = 0; i < type.bounds().size(); ++i) {
          int64_t bound = type.bounds()[i];
          out += (i ? ", " : "") + (bound == ir::kDynamic ? std::string("?") : StrCat(bound));
        }
        out += ">";
      }
      out += ">";
      return;
    }
    case ir::TypeKind::kUnrankedTensor:
      out += "tensor<*x";
      AppendType(type.element(), out);
      out += ">";
      return;
    case ir::TypeKind::kToken: out += "!stablehlo.token"; return;
    case ir::TypeKind::kTuple:
      out += "tuple<";
      AppendTypes(type.members(), out);
      out += ">";
      return;
    case ir::TypeKind::kFunction: {
      const bool wrap = type.results().size() != 1 || type.results()[0].Is(ir::TypeKind::kFunction);
      out += "(";
      AppendTypes(type.members(), out);
      out += wrap ? ") -> (" : ") -> ";
      AppendTypes(type.results(), out);
      if (wrap) out += ")";
      return;
    }
    case ir::TypeKind::kNone: out += "none"; return;
    case ir::TypeKind::kOpaque: out += type.text(); return;
  }
}

}  // namespace

std::string TypeText(const ir::Type& type) {
  std::string text;
  AppendType(type, text);
  if (text.size() > kMaxTextLength) text.resize(kMaxTextLength);
  if (text.size() == kMaxTextLength) text += "...";
  return text;
}

std::string QuotedString(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string quoted = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (byte >= 0x20 && byte < 0x7F) {
      quoted += c;
    } else {
      quoted += '\\';
      quoted += kHex[byte >> 4];
      quoted += kHex[byte & 15];
    }
  }
  return quoted + "\"";
}

std::string AttrText(const ir::Attribute& attribute) {
  if (!attribute) return "<null>";
  // Deep values are rare in messages; nesting is bounded by the decoder
  // (AttrTypeTable::kMaxNesting) and each level's text by kMaxTextLength.
  const ir::AttributeStorage& s = attribute.storage();
  switch (s.kind) {
    case ir::AttrKind::kUnit: return "unit";
    case ir::AttrKind::kBool: return s.bool_value ? "true" : "false";
    case ir::AttrKind::kInteger: return StrCat(s.int_value, " : ", TypeText(s.type));
    case ir::AttrKind::kFloat: return StrCat(FloatText(s.float_value), " : ", TypeText(s.type));
    case ir::AttrKind::kString: return QuotedString(s.text);
    case ir::AttrKind::kType: return TypeText(s.type);
    case ir::AttrKind::kArray: {
      std::string text = "[";
      for (size_t i = 0; i < s.elements.size() && text.size() < kMaxTextLength; ++i) {
        text += (i ? ", " : "") + AttrText(s.elements[i]);
      }
      return text + "]";
    }
    case ir::AttrKind::kDenseArray: {
      std::string text = StrCat("array<", TypeText(s.type));
      for (size_t i = 0; i < s.int_values.size(); ++i) {
        text += (i ? ", " : ": ") + StrCat(s.int_values[i]);
      }
      for (size_t i = 0; i < s.float_values.size(); ++i) {
        text += (i ? ", " : ": ") + FloatText(s.float_values[i]);
      }
      return text + ">";
    }
    case ir::AttrKind::kDenseElements: {
      // Integer data only (Shardy device ids); other data is summarized.
      std::string text = "dense<";
      const ir::Type& element = s.type.element();
      const size_t bytes = element.Is(ir::TypeKind::kElement)
                               ? GetElementTypeInfo(element.element_type()).storage_bytes
                               : 0;
      const bool integer = bytes == 8 || bytes == 4;
      const int64_t count = s.splat ? 1 : s.type.NumElements();
      if (!s.splat && count != 1) text += "[";
      for (int64_t i = 0; integer && i < count && text.size() < kMaxTextLength; ++i) {
        int64_t value = 0;
        if (bytes == 8) {
          std::memcpy(&value, &s.data[static_cast<size_t>(i) * 8], 8);
        } else {
          int32_t narrow;
          std::memcpy(&narrow, &s.data[static_cast<size_t>(i) * 4], 4);
          value = narrow;
        }
        text += (i ? ", " : "") + StrCat(value);
      }
      if (!integer) text += "...";
      if (!s.splat && count != 1) text += "]";
      return StrCat(text, "> : ", TypeText(s.type));
    }
    case ir::AttrKind::kDictionary:
    case ir::AttrKind::kStruct: {
      std::string text = s.kind == ir::AttrKind::kStruct ? StrCat("#", s.text, "<") : "{";
      for (size_t i = 0; i < s.fields.size() && text.size() < kMaxTextLength; ++i) {
        text += StrCat(i ? ", " : "", s.fields[i].name, " = ", AttrText(s.fields[i].value));
      }
      return text + (s.kind == ir::AttrKind::kStruct ? ">" : "}");
    }
    case ir::AttrKind::kSymbolRef: {
      std::string text;
      for (size_t i = 0; i < s.symbol_path.size(); ++i) {
        text += (i ? "::@" : "@") + s.symbol_path[i];
      }
      return text;
    }
    case ir::AttrKind::kEnum: {
      size_t dot = s.text.find('.');
      return StrCat("#", s.text.substr(0, dot), "<", s.text.substr(dot + 1), " ", s.enum_value,
                    ">");
    }
    case ir::AttrKind::kOpaque: return s.text;
  }
  return "<unknown attribute>";
}

std::string LocationText(const ir::Location& location) {
  // Iterative: locations come from input and may nest deeply. Each frame is
  // a location still to print or a piece of text.
  struct Item {
    const ir::LocationStorage* location;
    std::string text;
  };
  std::string out;
  std::vector<Item> stack{{&location.storage(), ""}};
  while (!stack.empty()) {
    if (out.size() >= kMaxTextLength) {
      out += "...";
      break;
    }
    Item item = std::move(stack.back());
    stack.pop_back();
    if (item.location == nullptr) {
      out += item.text;
      continue;
    }
    const ir::LocationStorage& s = *item.location;
    switch (s.kind) {
      case ir::LocationKind::kUnknown: out += "unknown"; break;
      case ir::LocationKind::kFileLineCol:
        out += StrCat(QuotedString(s.text), ":", s.line, ":", s.column);
        if (s.end_line != 0 || s.end_column != 0) {
          out += s.end_line == s.line ? StrCat(" to :", s.end_column)
                                      : StrCat(" to ", s.end_line, ":", s.end_column);
        }
        break;
      case ir::LocationKind::kName:
        out += QuotedString(s.text);
        if (!s.children.empty() && s.children[0].kind() != ir::LocationKind::kUnknown) {
          stack.push_back({nullptr, ")"});
          stack.push_back({&s.children[0].storage(), ""});
          out += "(";
        }
        break;
      case ir::LocationKind::kCallSite:
        out += "callsite(";
        stack.push_back({nullptr, ")"});
        stack.push_back({&s.children[1].storage(), ""});
        stack.push_back({nullptr, " at "});
        stack.push_back({&s.children[0].storage(), ""});
        break;
      case ir::LocationKind::kFused:
        out += s.metadata ? StrCat("fused<", AttrText(s.metadata), ">[") : "fused[";
        stack.push_back({nullptr, "]"});
        for (size_t i = s.children.size(); i-- > 0;) {
          stack.push_back({&s.children[i].storage(), ""});
          if (i > 0) stack.push_back({nullptr, ", "});
        }
        break;
    }
  }
  return StrCat("loc(", out, ")");
}

}  // namespace kiln::frontend::vhlo
