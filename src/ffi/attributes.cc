#include "ffi/attributes.h"

#include <algorithm>
#include <cstring>

#include "base/element_type.h"

namespace kiln::ffi {
namespace {

// The FFI data type of an attribute's integer or float element, as XLA's
// attribute conversion accepts them: 8-64 bit integers, f32, f64.
StatusOr<XLA_FFI_DataType> AttributeDataType(ElementType type, const std::string& path) {
  switch (type) {
    case ElementType::kS8: return XLA_FFI_DataType_S8;
    case ElementType::kS16: return XLA_FFI_DataType_S16;
    case ElementType::kS32: return XLA_FFI_DataType_S32;
    case ElementType::kS64: return XLA_FFI_DataType_S64;
    case ElementType::kU8: return XLA_FFI_DataType_U8;
    case ElementType::kU16: return XLA_FFI_DataType_U16;
    case ElementType::kU32: return XLA_FFI_DataType_U32;
    case ElementType::kU64: return XLA_FFI_DataType_U64;
    case ElementType::kF32: return XLA_FFI_DataType_F32;
    case ElementType::kF64: return XLA_FFI_DataType_F64;
    default:
      return InvalidArgument("FFI attribute `", path, "`: element type ",
                             GetElementTypeInfo(type).name,
                             " cannot be passed (XLA's FFI takes 8-64 bit integers, f32, f64)");
  }
}

size_t ByteWidth(XLA_FFI_DataType type) {
  switch (type) {
    case XLA_FFI_DataType_PRED:
    case XLA_FFI_DataType_S8:
    case XLA_FFI_DataType_U8: return 1;
    case XLA_FFI_DataType_S16:
    case XLA_FFI_DataType_U16: return 2;
    case XLA_FFI_DataType_S32:
    case XLA_FFI_DataType_U32:
    case XLA_FFI_DataType_F32: return 4;
    default: return 8;
  }
}

// Writes `value` (an integer or float attribute's value) as `type`.
void StoreScalar(XLA_FFI_DataType type, int64_t integer, double real, void* out) {
  switch (type) {
    case XLA_FFI_DataType_PRED: {
      const uint8_t v = integer != 0;
      std::memcpy(out, &v, 1);
      return;
    }
    case XLA_FFI_DataType_F32: {
      const auto v = static_cast<float>(real);
      std::memcpy(out, &v, 4);
      return;
    }
    case XLA_FFI_DataType_F64: std::memcpy(out, &real, 8); return;
    default:
      // Little-endian two's complement: the low bytes are the narrow value.
      std::memcpy(out, &integer, ByteWidth(type));
      return;
  }
}

const char* KindName(ir::AttrKind kind) {
  switch (kind) {
    case ir::AttrKind::kUnit: return "a unit attribute";
    case ir::AttrKind::kType: return "a type";
    case ir::AttrKind::kArray: return "an array attribute ([...])";
    case ir::AttrKind::kSymbolRef: return "a symbol reference";
    case ir::AttrKind::kEnum: return "an enum attribute";
    case ir::AttrKind::kStruct: return "a struct attribute";
    case ir::AttrKind::kOpaque: return "an opaque attribute";
    default: return "an attribute";
  }
}

}  // namespace

StatusOr<std::unique_ptr<EncodedAttributes>> EncodedAttributes::Encode(
    const ir::Attribute& dictionary) {
  std::unique_ptr<EncodedAttributes> encoded(new EncodedAttributes());
  static const std::vector<ir::NamedAttribute> kNone;
  if (dictionary && !dictionary.Is(ir::AttrKind::kDictionary)) {
    return InvalidArgument("FFI attributes come in a dictionary (backend_config = {...}), found ",
                           KindName(dictionary.kind()));
  }
  KILN_RETURN_IF_ERROR(
      encoded->AddDictionary(dictionary ? dictionary->fields : kNone, 0, "").status());
  return encoded;
}

StatusOr<XLA_FFI_Attrs*> EncodedAttributes::AddDictionary(
    const std::vector<ir::NamedAttribute>& fields, int depth, const std::string& path) {
  if (depth > kMaxDepth) {
    return InvalidArgument("FFI attribute `", path, "`: dictionaries nest more than ", kMaxDepth,
                           " deep");
  }
  std::vector<const ir::NamedAttribute*> sorted;
  for (const ir::NamedAttribute& field : fields) sorted.push_back(&field);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->name < b->name; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i]->name == sorted[i - 1]->name) {
      return InvalidArgument("FFI attributes: `", path.empty() ? "" : path + ".", sorted[i]->name,
                             "` appears twice");
    }
  }
  XLA_FFI_Attrs& attrs = dictionaries_.emplace_back();
  std::vector<XLA_FFI_AttrType>& types = types_.emplace_back(sorted.size());
  std::vector<XLA_FFI_ByteSpan*>& names = name_lists_.emplace_back(sorted.size());
  std::vector<void*>& values = value_lists_.emplace_back(sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    const std::string& name = texts_.emplace_back(sorted[i]->name);
    names[i] = &spans_.emplace_back(XLA_FFI_ByteSpan{name.data(), name.size()});
    const std::string field_path = path.empty() ? name : path + "." + name;
    KILN_RETURN_IF_ERROR(AddValue(sorted[i]->value, field_path, depth, types[i], values[i]));
  }
  attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  attrs.extension_start = nullptr;
  attrs.size = static_cast<int64_t>(sorted.size());
  attrs.types = types.data();
  attrs.names = names.data();
  attrs.attrs = values.data();
  return &attrs;
}

Status EncodedAttributes::AddValue(const ir::Attribute& value, const std::string& path, int depth,
                                   XLA_FFI_AttrType& type, void*& encoded) {
  if (!value) return InvalidArgument("FFI attribute `", path, "` has no value");
  auto scalar = [&](XLA_FFI_DataType dtype, int64_t integer, double real) {
    std::vector<uint64_t>& payload = payloads_.emplace_back(1, 0);
    StoreScalar(dtype, integer, real, payload.data());
    type = XLA_FFI_AttrType_SCALAR;
    encoded = &scalars_.emplace_back(XLA_FFI_Scalar{dtype, payload.data()});
  };
  auto array = [&](XLA_FFI_DataType dtype, size_t count) -> uint8_t* {
    const size_t bytes = count * ByteWidth(dtype);
    std::vector<uint64_t>& payload = payloads_.emplace_back((bytes + 7) / 8 + 1, 0);
    type = XLA_FFI_AttrType_ARRAY;
    encoded = &arrays_.emplace_back(XLA_FFI_Array{dtype, count, payload.data()});
    return reinterpret_cast<uint8_t*>(payload.data());
  };
  switch (value.kind()) {
    case ir::AttrKind::kBool:
      scalar(XLA_FFI_DataType_PRED, value->bool_value ? 1 : 0, 0);
      return Status::Ok();
    case ir::AttrKind::kInteger: {
      const ElementType element = value->type.element_type();
      if (element == ElementType::kPred) {
        scalar(XLA_FFI_DataType_PRED, value->int_value, 0);
        return Status::Ok();
      }
      KILN_ASSIGN_OR_RETURN(XLA_FFI_DataType dtype, AttributeDataType(element, path));
      if (dtype == XLA_FFI_DataType_F32 || dtype == XLA_FFI_DataType_F64) {
        return InvalidArgument("FFI attribute `", path, "`: an integer of a float type");
      }
      scalar(dtype, value->int_value, 0);
      return Status::Ok();
    }
    case ir::AttrKind::kFloat: {
      const ElementType element = value->type.element_type();
      if (element != ElementType::kF32 && element != ElementType::kF64) {
        return InvalidArgument("FFI attribute `", path, "`: float scalars are f32 or f64, found ",
                               GetElementTypeInfo(element).name);
      }
      scalar(element == ElementType::kF32 ? XLA_FFI_DataType_F32 : XLA_FFI_DataType_F64, 0,
             value->float_value);
      return Status::Ok();
    }
    case ir::AttrKind::kString: {
      const std::string& text = texts_.emplace_back(value->text);
      type = XLA_FFI_AttrType_STRING;
      encoded = &spans_.emplace_back(XLA_FFI_ByteSpan{text.data(), text.size()});
      return Status::Ok();
    }
    case ir::AttrKind::kDenseArray: {
      const ElementType element = value->type.element_type();
      KILN_ASSIGN_OR_RETURN(XLA_FFI_DataType dtype, AttributeDataType(element, path));
      const bool real = dtype == XLA_FFI_DataType_F32 || dtype == XLA_FFI_DataType_F64;
      const size_t count = real ? value->float_values.size() : value->int_values.size();
      uint8_t* out = array(dtype, count);
      for (size_t i = 0; i < count; ++i) {
        StoreScalar(dtype, real ? 0 : value->int_values[i], real ? value->float_values[i] : 0,
                    out + i * ByteWidth(dtype));
      }
      return Status::Ok();
    }
    case ir::AttrKind::kDenseElements: {
      const ir::Type& tensor = value->type;
      if (!tensor.Is(ir::TypeKind::kTensor) || !tensor.HasStaticShape()) {
        return InvalidArgument("FFI attribute `", path,
                               "`: a dense attribute needs a static shape");
      }
      KILN_ASSIGN_OR_RETURN(XLA_FFI_DataType dtype,
                            AttributeDataType(tensor.element().element_type(), path));
      const auto count = static_cast<size_t>(tensor.NumElements());
      const size_t width = ByteWidth(dtype);
      const size_t stored = value->splat ? width : count * width;
      if (value->data.size() != stored) {
        return InvalidArgument("FFI attribute `", path, "`: dense data of ", value->data.size(),
                               " bytes for ", value->splat ? 1 : count, " elements of ", width,
                               " bytes");
      }
      uint8_t* out = array(dtype, count);
      for (size_t i = 0; i < count; ++i) {
        std::memcpy(out + i * width, value->data.data() + (value->splat ? 0 : i * width), width);
      }
      return Status::Ok();
    }
    case ir::AttrKind::kDictionary: {
      KILN_ASSIGN_OR_RETURN(XLA_FFI_Attrs * nested, AddDictionary(value->fields, depth + 1, path));
      type = XLA_FFI_AttrType_DICTIONARY;
      encoded = nested;
      return Status::Ok();
    }
    default:
      return InvalidArgument("FFI attribute `", path, "` is ", KindName(value.kind()),
                             ", which XLA's FFI cannot pass (it takes scalars, dense arrays, "
                             "strings and dictionaries)");
  }
}

Status EncodedAttributes::Validate(const XLA_FFI_Attrs& root) {
  // An explicit stack of the dictionaries still to check, with their depth.
  std::vector<std::pair<const XLA_FFI_Attrs*, int>> pending{{&root, 0}};
  while (!pending.empty()) {
    auto [attrs, depth] = pending.back();
    pending.pop_back();
    if (depth > kMaxDepth) return Internal("FFI attributes nest deeper than ", kMaxDepth);
    if (attrs->struct_size < XLA_FFI_Attrs_STRUCT_SIZE) {
      return Internal("XLA_FFI_Attrs of ", attrs->struct_size, " bytes");
    }
    if (attrs->size < 0) return Internal("FFI attributes of size ", attrs->size);
    if (attrs->size > 0 &&
        (attrs->types == nullptr || attrs->names == nullptr || attrs->attrs == nullptr)) {
      return Internal("FFI attributes with null lists");
    }
    for (int64_t i = 0; i < attrs->size; ++i) {
      const XLA_FFI_ByteSpan* name = attrs->names[i];
      if (name == nullptr || (name->len > 0 && name->ptr == nullptr) ||
          attrs->attrs[i] == nullptr) {
        return Internal("FFI attribute ", i, " has a null name or value");
      }
      if (i > 0) {
        const XLA_FFI_ByteSpan* previous = attrs->names[i - 1];
        if (std::string_view(previous->ptr, previous->len) >=
            std::string_view(name->ptr, name->len)) {
          return Internal("FFI attribute names are not strictly sorted at ", i);
        }
      }
      switch (attrs->types[i]) {
        case XLA_FFI_AttrType_SCALAR:
          if (static_cast<const XLA_FFI_Scalar*>(attrs->attrs[i])->value == nullptr) {
            return Internal("FFI scalar attribute ", i, " has no value");
          }
          break;
        case XLA_FFI_AttrType_ARRAY: {
          const auto* array = static_cast<const XLA_FFI_Array*>(attrs->attrs[i]);
          if (array->size > 0 && array->data == nullptr) {
            return Internal("FFI array attribute ", i, " has no data");
          }
          break;
        }
        case XLA_FFI_AttrType_STRING: {
          const auto* text = static_cast<const XLA_FFI_ByteSpan*>(attrs->attrs[i]);
          if (text->len > 0 && text->ptr == nullptr) {
            return Internal("FFI string attribute ", i, " has no bytes");
          }
          break;
        }
        case XLA_FFI_AttrType_DICTIONARY:
          pending.emplace_back(static_cast<const XLA_FFI_Attrs*>(attrs->attrs[i]), depth + 1);
          break;
        default: return Internal("FFI attribute ", i, " has unknown type ", attrs->types[i]);
      }
    }
  }
  return Status::Ok();
}

}  // namespace kiln::ffi
