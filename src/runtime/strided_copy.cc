#include "runtime/strided_copy.h"

#include <cstring>
#include <vector>

namespace kiln::runtime {
namespace {

struct Dim {
  int64_t size;
  int64_t dst_stride;
  int64_t src_stride;
};

// Drops size-1 dimensions and merges neighbours that are contiguous in both arrays.
std::vector<Dim> Coalesce(std::span<const int64_t> dims, std::span<const int64_t> dst_strides,
                          std::span<const int64_t> src_strides) {
  std::vector<Dim> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    Dim dim{dims[i], dst_strides[i], src_strides[i]};
    if (!out.empty() && out.back().dst_stride == dim.dst_stride * dim.size &&
        out.back().src_stride == dim.src_stride * dim.size) {
      out.back() = Dim{out.back().size * dim.size, dim.dst_stride, dim.src_stride};
    } else {
      out.push_back(dim);
    }
  }
  return out;
}

}  // namespace

void CopyStrided(void* dst, std::span<const int64_t> dst_strides, const void* src,
                 std::span<const int64_t> src_strides, std::span<const int64_t> dims,
                 size_t element_bytes) {
  for (int64_t dim : dims) {
    if (dim == 0) return;
  }
  std::vector<Dim> shape = Coalesce(dims, dst_strides, src_strides);
  auto* dst_bytes = static_cast<unsigned char*>(dst);
  const auto* src_bytes = static_cast<const unsigned char*>(src);
  const auto elem = static_cast<int64_t>(element_bytes);
  // The innermost run is one memcpy when both sides are contiguous there.
  int64_t run_bytes = elem;
  if (!shape.empty() && shape.back().dst_stride == elem && shape.back().src_stride == elem) {
    run_bytes = shape.back().size * elem;
    shape.pop_back();
  }
  if (shape.empty()) {
    std::memcpy(dst_bytes, src_bytes, static_cast<size_t>(run_bytes));
    return;
  }
  // Odometer over the remaining dimensions, innermost fastest.
  std::vector<int64_t> index(shape.size(), 0);
  int64_t dst_offset = 0;
  int64_t src_offset = 0;
  const size_t last = shape.size() - 1;
  for (;;) {
    std::memcpy(dst_bytes + dst_offset, src_bytes + src_offset, static_cast<size_t>(run_bytes));
    size_t axis = last;
    for (;;) {
      ++index[axis];
      dst_offset += shape[axis].dst_stride;
      src_offset += shape[axis].src_stride;
      if (index[axis] < shape[axis].size) break;
      dst_offset -= shape[axis].dst_stride * shape[axis].size;
      src_offset -= shape[axis].src_stride * shape[axis].size;
      index[axis] = 0;
      if (axis == 0) return;
      --axis;
    }
  }
}

ByteExtent StridedExtent(std::span<const int64_t> dims, std::span<const int64_t> strides,
                         size_t element_bytes) {
  ByteExtent extent;
  for (int64_t dim : dims) {
    if (dim == 0) return extent;
  }
  int64_t lowest = 0;
  int64_t highest = static_cast<int64_t>(element_bytes);
  constexpr int64_t kLimit = INT64_MAX / 4;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t reach = 0;
    int64_t& side = strides[i] < 0 ? lowest : highest;
    if (__builtin_mul_overflow(dims[i] - 1, strides[i], &reach) ||
        __builtin_add_overflow(side, reach, &side) || side > kLimit || side < -kLimit) {
      extent.overflow = true;
      return extent;
    }
  }
  extent.lowest = lowest;
  extent.highest = highest;
  return extent;
}

bool IsDenseRowMajor(std::span<const int64_t> dims, std::span<const int64_t> strides,
                     size_t element_bytes) {
  int64_t expected = static_cast<int64_t>(element_bytes);
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] != 1 && strides[i] != expected) return false;
    expected *= dims[i];
  }
  return true;
}

}  // namespace kiln::runtime
