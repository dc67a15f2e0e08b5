// The f32 lane folds of reduce.cc again for AVX2 (reduce_avx2.cc, built
// with -mavx2 where the compiler targets x86-64; reduce.cc calls it when
// UseAvx2Variants()). The baseline build vectorizes reduce.cc's sixteen
// lanes with SSE2 only, and max/min with NaN handling as and/andnot/or
// triples; these do the same folds eight lanes per instruction.
#pragma once

#include <cstdint>

#include "kernels/reduce.h"

namespace kiln::kernels::reduce_internal {

// For `op` kAdd, kMaximum or kMinimum and n >= 32: lanes[l] = x[l], then
// lanes[l] = lanes[l] op x[i + l] for every whole group of sixteen at i =
// 16, 32, ...; returns the index after the last whole group. The values
// are those of reduce.cc's own loop to the bit: same order, same NaN rule
// (a NaN lane stays, else a NaN element wins, else the lane wins ties).
int64_t FoldLanesF32Avx2(ReduceOp op, const float* x, int64_t n, float* lanes);

}  // namespace kiln::kernels::reduce_internal
