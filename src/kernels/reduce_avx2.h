// The f32 lane folds of reduce.cc again for AVX2 (reduce_avx2.cc, built
// with -mavx2 where the compiler targets x86-64; reduce.cc calls it when
// UseAvx2Variants()). The baseline build vectorizes reduce.cc's sixteen
// lanes with SSE2 only, and max/min with NaN handling as and/andnot/or
// triples; these do the same folds eight lanes per instruction.
#pragma once

#include <cstdint>

#include "kernels/reduce.h"

namespace kiln::kernels::reduce_internal {

// For `op` kAdd, kMaximum or kMinimum and n >= 32: the fold of x[0..n) as
// reduce.cc's FoldLanes computes it, to the bit: sixteen lanes start as
// x[0..16), take the whole groups of sixteen that follow lane by lane, then
// the last n % 16 elements into lanes 0, 1, ..., and combine as a tree
// (lane l op lane l + 8, then + 4, + 2, + 1). Same NaN rule (a NaN lane
// stays, else a NaN element wins, else the lane wins ties).
float FoldLanesF32Avx2(ReduceOp op, const float* x, int64_t n);

}  // namespace kiln::kernels::reduce_internal
