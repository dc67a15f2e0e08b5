// Copies between dense and arbitrarily strided N-d arrays of bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/element_type.h"
#include "base/status.h"
#include "runtime/device_backend.h"

namespace kiln::runtime {

// Copies every element of an array with `dims` from `src` (element at index i
// is at src + sum(i[k] * src_strides[k])) to `dst` likewise. Strides are in
// bytes and may be negative or zero. Contiguous runs use memcpy.
void CopyStrided(void* dst, std::span<const int64_t> dst_strides, const void* src,
                 std::span<const int64_t> src_strides, std::span<const int64_t> dims,
                 size_t element_bytes);

// The byte range [lowest, highest) touched by an array with these strides,
// relative to its base pointer; (0, 0) for an empty array.
struct ByteExtent {
  int64_t lowest = 0;
  int64_t highest = 0;
  bool overflow = false;  // the strides reach beyond what int64 byte offsets express
};
ByteExtent StridedExtent(std::span<const int64_t> dims, std::span<const int64_t> strides,
                         size_t element_bytes);

// True when the strides are the dense row-major strides of `dims`.
bool IsDenseRowMajor(std::span<const int64_t> dims, std::span<const int64_t> strides,
                     size_t element_bytes);

// Copies the host array `host_src` of `shape`, laid out with
// `host_strides`, into dense row-major memory at `destination` (staged
// through a host buffer when that memory is not host-addressable).
Status CopyHostArrayToDevice(DeviceBackend& backend, DeviceAddress destination,
                             const void* host_src, const Shape& shape,
                             std::span<const int64_t> host_strides);
// The same copy left on device `ordinal`'s queue
// (DeviceBackend::EnqueueHostToDevice): a dense `host_src` is read in
// place, another through `staging`; whichever it is must stay as it is
// until the device's completion.
Status EnqueueHostArrayToDevice(DeviceBackend& backend, int ordinal, DeviceAddress destination,
                                const void* host_src, const Shape& shape,
                                std::span<const int64_t> host_strides,
                                std::vector<unsigned char>& staging);

}  // namespace kiln::runtime
