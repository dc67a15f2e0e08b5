// Data movement: one strided N-d copy that broadcast_in_dim, transpose,
// reverse, slice and friends are lowered to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace kiln::kernels {

// Writes the dense row-major array of shape `dims` to `dst`, reading element
// (i0, i1, ...) from src + sum(ik * src_strides[k]) elements. Strides may be
// zero (broadcast) or negative (reverse). `element_bytes` is 1, 2, 4, 8 or 16
// for the fast paths; any size works.
void CopyStrided(size_t element_bytes, std::span<const int64_t> dims, const void* src,
                 std::span<const int64_t> src_strides, void* dst);

// memcpy(dst, src, bytes), split among threads when large: an operand
// copied into its result before an in-place update (a scatter's, a
// dynamic_update_slice's, a while loop's carry) streams at one core's
// bandwidth otherwise (4 MB took about 0.1 ms on one thread of a Zen 5).
void CopyBytes(void* dst, const void* src, size_t bytes);

// One side of a bitcast_convert between bit widths: the element's width in
// bits, its storage in bytes, and whether the stored byte is sign-extended
// (the signed sub-byte integers, kept one per byte).
struct BitField {
  int bits;
  size_t storage_bytes;
  bool sign_extended;
};

// bitcast_convert between a narrow element type (under 8 bits, stored one per
// byte) and a wide one of `ratio` times its width, for `count` wide elements:
// narrow element i of a group holds bits [i * narrow.bits, (i + 1) *
// narrow.bits) of its wide element (least significant first, as XLA does).
// Pack reads count * ratio narrow elements and writes count wide ones; Unpack
// the reverse. Wide elements are at most 64 bits.
void PackBits(BitField narrow, const uint8_t* src, BitField wide, void* dst, int64_t count);
void UnpackBits(BitField wide, const void* src, BitField narrow, uint8_t* dst, int64_t count);

// Row-major strides (in elements) of a dense array of shape `dims`.
void DenseStrides(std::span<const int64_t> dims, std::span<int64_t> strides);

}  // namespace kiln::kernels
