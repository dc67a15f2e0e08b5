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

// Copies `count` elements of `Size` bytes with the given byte strides; a typed
// loop the compiler unrolls, instead of a memcpy call per element.
template <size_t Size>
void CopyElements(unsigned char* dst, int64_t dst_stride, const unsigned char* src,
                  int64_t src_stride, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst, src, Size);
    dst += dst_stride;
    src += src_stride;
  }
}

using RowCopy = void (*)(unsigned char*, int64_t, const unsigned char*, int64_t, int64_t);

RowCopy RowCopyFor(size_t element_bytes) {
  switch (element_bytes) {
    case 1: return &CopyElements<1>;
    case 2: return &CopyElements<2>;
    case 4: return &CopyElements<4>;
    case 8: return &CopyElements<8>;
    case 16: return &CopyElements<16>;
    default: return nullptr;
  }
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
  // The innermost dimension is one memcpy when both sides are contiguous there,
  // else a typed strided loop; the odometer walks the dimensions outside it.
  int64_t run_bytes = elem;
  int64_t row_count = 1, row_dst_stride = 0, row_src_stride = 0;
  RowCopy row_copy = nullptr;
  if (!shape.empty()) {
    const Dim inner = shape.back();
    if (inner.dst_stride == elem && inner.src_stride == elem) {
      run_bytes = inner.size * elem;
      shape.pop_back();
    } else if ((row_copy = RowCopyFor(element_bytes)) != nullptr) {
      row_count = inner.size;
      row_dst_stride = inner.dst_stride;
      row_src_stride = inner.src_stride;
      shape.pop_back();
    }
  }
  auto copy_row = [&](unsigned char* to, const unsigned char* from) {
    if (row_copy != nullptr) {
      row_copy(to, row_dst_stride, from, row_src_stride, row_count);
    } else {
      std::memcpy(to, from, static_cast<size_t>(run_bytes));
    }
  };
  if (shape.empty()) {
    copy_row(dst_bytes, src_bytes);
    return;
  }
  // Odometer over the remaining dimensions, innermost fastest.
  std::vector<int64_t> index(shape.size(), 0);
  int64_t dst_offset = 0;
  int64_t src_offset = 0;
  const size_t last = shape.size() - 1;
  for (;;) {
    copy_row(dst_bytes + dst_offset, src_bytes + src_offset);
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

namespace {

// Copies `host_src` into `destination` when that is host memory (null), or
// returns the dense bytes to copy there: `host_src` itself, or `staging`.
const void* DenseHostSource(const DeviceBackend& backend, DeviceAddress destination,
                            const void* host_src, const Shape& shape,
                            std::span<const int64_t> host_strides,
                            std::vector<unsigned char>& staging) {
  const size_t element_bytes = GetElementTypeInfo(shape.element_type).storage_bytes;
  const std::vector<int64_t> dense = DenseByteStrides(shape.dims, element_bytes);
  if (backend.IsHostAddressable(destination.kind)) {
    CopyStrided(static_cast<unsigned char*>(destination.handle) + destination.offset, dense,
                host_src, host_strides, shape.dims, element_bytes);
    return nullptr;
  }
  if (IsDenseRowMajor(shape.dims, host_strides, element_bytes)) return host_src;
  staging.resize(shape.ByteSize());
  CopyStrided(staging.data(), dense, host_src, host_strides, shape.dims, element_bytes);
  return staging.data();
}

}  // namespace

Status CopyHostArrayToDevice(DeviceBackend& backend, DeviceAddress destination,
                             const void* host_src, const Shape& shape,
                             std::span<const int64_t> host_strides) {
  std::vector<unsigned char> staging;
  const void* dense = DenseHostSource(backend, destination, host_src, shape, host_strides, staging);
  if (dense == nullptr) return Status::Ok();
  return backend.CopyHostToDevice(destination, dense, shape.ByteSize());
}

Status EnqueueHostArrayToDevice(DeviceBackend& backend, int ordinal, DeviceAddress destination,
                                const void* host_src, const Shape& shape,
                                std::span<const int64_t> host_strides,
                                std::vector<unsigned char>& staging) {
  const void* dense = DenseHostSource(backend, destination, host_src, shape, host_strides, staging);
  if (dense == nullptr) return Status::Ok();
  return backend.EnqueueHostToDevice(ordinal, destination, dense, shape.ByteSize());
}

}  // namespace kiln::runtime
