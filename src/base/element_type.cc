#include "base/element_type.h"

#include <array>
#include <limits>

namespace kiln {
namespace {

constexpr ElementTypeInfo kInfos[] = {
    {"i1", 1, 1},         {"si1", 1, 1},           {"si2", 2, 1},
    {"si4", 4, 1},        {"si8", 8, 1},           {"si16", 16, 2},
    {"si32", 32, 4},      {"si64", 64, 8},         {"ui1", 1, 1},
    {"ui2", 2, 1},        {"ui4", 4, 1},           {"ui8", 8, 1},
    {"ui16", 16, 2},      {"ui32", 32, 4},         {"ui64", 64, 8},
    {"f16", 16, 2},       {"bf16", 16, 2},         {"f32", 32, 4},
    {"f64", 64, 8},       {"complex<f32>", 64, 8}, {"complex<f64>", 128, 16},
    {"f8E5M2", 8, 1},     {"f8E4M3FN", 8, 1},      {"f8E4M3B11FNUZ", 8, 1},
    {"f8E5M2FNUZ", 8, 1}, {"f8E4M3FNUZ", 8, 1},    {"f8E4M3", 8, 1},
    {"f8E3M4", 8, 1},     {"f8E8M0FNU", 8, 1},     {"f4E2M1FN", 4, 1},
    {"f6E2M3FN", 6, 1},   {"f6E3M2FN", 6, 1},      {"token", 0, 0},
    {"tf32", 19, 4},      {"index", 64, 8},
};
static_assert(std::size(kInfos) == static_cast<size_t>(ElementType::kIndex) + 1);

}  // namespace

const ElementTypeInfo& GetElementTypeInfo(ElementType type) {
  return kInfos[static_cast<size_t>(type)];
}

int64_t Shape::NumElements() const {
  int64_t count = 1;
  for (int64_t dim : dims) count *= dim;
  return count;
}

size_t Shape::ByteSize() const {
  return static_cast<size_t>(NumElements()) * GetElementTypeInfo(element_type).storage_bytes;
}

std::string Shape::ToString() const {
  std::string text(GetElementTypeInfo(element_type).name);
  text += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

Status ValidateDims(std::span<const int64_t> dims, size_t element_bytes, std::string_view what) {
  // Limit sizes to what a pointer difference can express, so byte arithmetic never overflows.
  constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max() / 4;
  int64_t bytes = static_cast<int64_t>(element_bytes == 0 ? 1 : element_bytes);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return InvalidArgument(what, ": dimension ", i, " has size ", dims[i],
                             "; expected a size >= 0");
    }
    if (dims[i] != 0 && bytes > kMaxBytes / dims[i]) {
      return InvalidArgument(what, ": the array is too large (dimension ", i, " of size ", dims[i],
                             " overflows the addressable size)");
    }
    bytes *= dims[i] == 0 ? 1 : dims[i];
  }
  return Status::Ok();
}

std::vector<int64_t> DenseByteStrides(std::span<const int64_t> dims, size_t element_bytes) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = static_cast<int64_t>(element_bytes);
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

}  // namespace kiln
