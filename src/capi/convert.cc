#include "capi/convert.h"

#include <algorithm>
#include <string>

#include "capi/call.h"

namespace kiln::capi {
namespace {

struct TypePair {
  PJRT_Buffer_Type pjrt;
  ElementType kiln;
};

constexpr TypePair kTypes[] = {
    {PJRT_Buffer_Type_PRED, ElementType::kPred},
    {PJRT_Buffer_Type_S1, ElementType::kS1},
    {PJRT_Buffer_Type_S2, ElementType::kS2},
    {PJRT_Buffer_Type_S4, ElementType::kS4},
    {PJRT_Buffer_Type_S8, ElementType::kS8},
    {PJRT_Buffer_Type_S16, ElementType::kS16},
    {PJRT_Buffer_Type_S32, ElementType::kS32},
    {PJRT_Buffer_Type_S64, ElementType::kS64},
    {PJRT_Buffer_Type_U1, ElementType::kU1},
    {PJRT_Buffer_Type_U2, ElementType::kU2},
    {PJRT_Buffer_Type_U4, ElementType::kU4},
    {PJRT_Buffer_Type_U8, ElementType::kU8},
    {PJRT_Buffer_Type_U16, ElementType::kU16},
    {PJRT_Buffer_Type_U32, ElementType::kU32},
    {PJRT_Buffer_Type_U64, ElementType::kU64},
    {PJRT_Buffer_Type_F16, ElementType::kF16},
    {PJRT_Buffer_Type_BF16, ElementType::kBF16},
    {PJRT_Buffer_Type_F32, ElementType::kF32},
    {PJRT_Buffer_Type_F64, ElementType::kF64},
    {PJRT_Buffer_Type_C64, ElementType::kC64},
    {PJRT_Buffer_Type_C128, ElementType::kC128},
    {PJRT_Buffer_Type_F8E5M2, ElementType::kF8E5M2},
    {PJRT_Buffer_Type_F8E4M3FN, ElementType::kF8E4M3FN},
    {PJRT_Buffer_Type_F8E4M3B11FNUZ, ElementType::kF8E4M3B11FNUZ},
    {PJRT_Buffer_Type_F8E5M2FNUZ, ElementType::kF8E5M2FNUZ},
    {PJRT_Buffer_Type_F8E4M3FNUZ, ElementType::kF8E4M3FNUZ},
    {PJRT_Buffer_Type_F8E4M3, ElementType::kF8E4M3},
    {PJRT_Buffer_Type_F8E3M4, ElementType::kF8E3M4},
    {PJRT_Buffer_Type_F8E8M0FNU, ElementType::kF8E8M0FNU},
    {PJRT_Buffer_Type_F4E2M1FN, ElementType::kF4E2M1FN},
    {PJRT_Buffer_Type_F6E2M3FN, ElementType::kF6E2M3FN},
    {PJRT_Buffer_Type_F6E3M2FN, ElementType::kF6E3M2FN},
    {PJRT_Buffer_Type_TOKEN, ElementType::kToken},
};

}  // namespace

StatusOr<ElementType> FromPjrtType(PJRT_Buffer_Type type) {
  for (const TypePair& pair : kTypes) {
    if (pair.pjrt == type) {
      if (pair.kiln == ElementType::kToken) {
        return InvalidArgument(CurrentFunction(), ": a buffer cannot have element type TOKEN");
      }
      return pair.kiln;
    }
  }
  return InvalidArgument(CurrentFunction(), ": unknown PJRT_Buffer_Type ", static_cast<int>(type),
                         "; expected one of the array element types of pjrt_c_api.h");
}

PJRT_Buffer_Type ToPjrtType(ElementType type) {
  for (const TypePair& pair : kTypes) {
    if (pair.kiln == type) return pair.pjrt;
  }
  return PJRT_Buffer_Type_INVALID;
}

StatusOr<Shape> MakeShape(PJRT_Buffer_Type type, const int64_t* dims, size_t num_dims) {
  KILN_ASSIGN_OR_RETURN(ElementType element_type, FromPjrtType(type));
  if (num_dims > 0 && dims == nullptr) {
    return InvalidArgument(CurrentFunction(), ": dims is null but num_dims is ", num_dims);
  }
  constexpr size_t kMaxRank = 64;
  if (num_dims > kMaxRank) {
    return InvalidArgument(CurrentFunction(), ": rank ", num_dims, " exceeds Kiln's limit of ",
                           kMaxRank);
  }
  Shape shape{element_type, std::vector<int64_t>(dims, dims + num_dims)};
  KILN_RETURN_IF_ERROR(ValidateDims(shape.dims, GetElementTypeInfo(element_type).storage_bytes,
                                    CurrentFunction()));
  return shape;
}

StatusOr<runtime::HostBufferSemantics> FromPjrtSemantics(PJRT_HostBufferSemantics semantics) {
  switch (semantics) {
    case PJRT_HostBufferSemantics_kImmutableOnlyDuringCall:
      return runtime::HostBufferSemantics::kImmutableOnlyDuringCall;
    case PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes:
      return runtime::HostBufferSemantics::kImmutableUntilTransferCompletes;
    case PJRT_HostBufferSemantics_kImmutableZeroCopy:
      return runtime::HostBufferSemantics::kImmutableZeroCopy;
    case PJRT_HostBufferSemantics_kMutableZeroCopy:
      return runtime::HostBufferSemantics::kMutableZeroCopy;
  }
  return InvalidArgument(CurrentFunction(), ": unknown host_buffer_semantics ",
                         static_cast<int>(semantics));
}

StatusOr<std::vector<runtime::Attribute>> FromNamedValues(const PJRT_NamedValue* values,
                                                          size_t count) {
  std::vector<runtime::Attribute> result;
  if (count > 0 && values == nullptr) {
    return InvalidArgument(CurrentFunction(), ": the options array is null but its size is ",
                           count);
  }
  for (size_t i = 0; i < count; ++i) {
    const PJRT_NamedValue& value = values[i];
    if (value.name == nullptr) {
      return InvalidArgument(CurrentFunction(), ": option ", i, " has a null name");
    }
    runtime::Attribute attribute;
    attribute.name.assign(value.name, value.name_size);
    switch (value.type) {
      case PJRT_NamedValue_kString:
        attribute.value = value.string_value == nullptr
                              ? std::string()
                              : std::string(value.string_value, value.value_size);
        break;
      case PJRT_NamedValue_kInt64: attribute.value = value.int64_value; break;
      case PJRT_NamedValue_kInt64List:
        if (value.value_size > 0 && value.int64_array_value == nullptr) {
          return InvalidArgument(CurrentFunction(), ": option \"", attribute.name,
                                 "\" is an int64 list with a null array");
        }
        attribute.value = std::vector<int64_t>(value.int64_array_value,
                                               value.int64_array_value + value.value_size);
        break;
      case PJRT_NamedValue_kFloat: attribute.value = value.float_value; break;
      case PJRT_NamedValue_kBool: attribute.value = value.bool_value; break;
      default:
        return InvalidArgument(CurrentFunction(), ": option \"", attribute.name,
                               "\" has unknown value type ", static_cast<int>(value.type));
    }
    result.push_back(std::move(attribute));
  }
  return result;
}

namespace {

// Strides of a dense array whose dimensions are ordered by `minor_to_major`.
StatusOr<std::vector<int64_t>> StridesFromMinorToMajor(std::span<const int64_t> minor_to_major,
                                                       const Shape& shape) {
  const size_t rank = shape.dims.size();
  if (minor_to_major.size() != rank) {
    return InvalidArgument(CurrentFunction(), ": the layout's minor_to_major has ",
                           minor_to_major.size(), " entries; expected ", rank, " for ",
                           shape.ToString());
  }
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = static_cast<int64_t>(GetElementTypeInfo(shape.element_type).storage_bytes);
  for (int64_t dim : minor_to_major) {
    if (dim < 0 || dim >= static_cast<int64_t>(rank) || seen[dim]) {
      return InvalidArgument(CurrentFunction(),
                             ": the layout's minor_to_major is not a "
                             "permutation of 0..",
                             rank - 1);
    }
    seen[dim] = true;
    strides[dim] = stride;
    stride *= shape.dims[dim];
  }
  return strides;
}

}  // namespace

StatusOr<std::vector<int64_t>> HostLayoutStrides(const PJRT_Buffer_MemoryLayout* layout,
                                                 const Shape& shape) {
  const size_t element_bytes = GetElementTypeInfo(shape.element_type).storage_bytes;
  if (layout == nullptr) return DenseByteStrides(shape.dims, element_bytes);
  if (layout->type == PJRT_Buffer_MemoryLayout_Type_Strides) {
    const auto& strides = layout->strides;
    if (strides.num_byte_strides != shape.dims.size() ||
        (strides.num_byte_strides > 0 && strides.byte_strides == nullptr)) {
      return InvalidArgument(CurrentFunction(), ": the layout has ", strides.num_byte_strides,
                             " byte strides; expected ", shape.dims.size(), " for ",
                             shape.ToString());
    }
    return std::vector<int64_t>(strides.byte_strides,
                                strides.byte_strides + strides.num_byte_strides);
  }
  if (layout->type != PJRT_Buffer_MemoryLayout_Type_Tiled) {
    return InvalidArgument(CurrentFunction(), ": unknown layout type ",
                           static_cast<int>(layout->type));
  }
  const auto& tiled = layout->tiled;
  if (tiled.minor_to_major_size > 0 && tiled.minor_to_major == nullptr) {
    return InvalidArgument(CurrentFunction(), ": the layout's minor_to_major is null");
  }
  if (tiled.num_tiles > 0) {
    return Unimplemented(CurrentFunction(), ": tiled host layouts (", tiled.num_tiles,
                         " tiles) are not supported; Kiln accepts minor_to_major "
                         "permutations and byte strides");
  }
  return StridesFromMinorToMajor({tiled.minor_to_major, tiled.minor_to_major_size}, shape);
}

Status CheckDeviceLayout(const PJRT_Buffer_MemoryLayout* layout, const Shape& shape) {
  if (layout == nullptr) return Status::Ok();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> strides, HostLayoutStrides(layout, shape));
  const size_t element_bytes = GetElementTypeInfo(shape.element_type).storage_bytes;
  std::vector<int64_t> dense = DenseByteStrides(shape.dims, element_bytes);
  for (size_t i = 0; i < strides.size(); ++i) {
    if (shape.dims[i] > 1 && strides[i] != dense[i]) {
      return Unimplemented(CurrentFunction(),
                           ": Kiln keeps device arrays in the dense row-major "
                           "layout; the requested device layout for ",
                           shape.ToString(), " differs");
    }
  }
  return Status::Ok();
}

}  // namespace kiln::capi
