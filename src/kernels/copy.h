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

// Row-major strides (in elements) of a dense array of shape `dims`.
void DenseStrides(std::span<const int64_t> dims, std::span<int64_t> strides);

}  // namespace kiln::kernels
