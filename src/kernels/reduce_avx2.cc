#include "kernels/reduce_avx2.h"

#include <immintrin.h>

namespace kiln::kernels::reduce_internal {
namespace {

// lane op x as reduce.cc's Apply<kOp, float>. For max/min: lane if it is
// NaN, else x if it is NaN, else lane when lane >= x (<= for min), else x;
// max_ps(x, lane) is x when x > lane, else lane (also when either is NaN).
template <int kOp>  // 0: add, 1: max, 2: min
inline __m256 Op(__m256 lane, __m256 x) {
  if constexpr (kOp == 0) {
    return _mm256_add_ps(lane, x);
  } else {
    __m256 r = kOp == 1 ? _mm256_max_ps(x, lane) : _mm256_min_ps(x, lane);
    r = _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    return _mm256_blendv_ps(r, lane, _mm256_cmp_ps(lane, lane, _CMP_UNORD_Q));
  }
}

// Lanes a (0..7) and b (8..15) after the whole groups of sixteen up to
// x + i: the last n - i < 16 elements go to lanes 0, 1, ..., then the tree
// of reduce.cc: lane l op lane l + 8, then + 4, + 2, + 1. Each step brings
// the upper partners down to lanes 0.. (what lands above is never read).
// Always inlined: called apart, it takes vectors, so GCC ends it without
// vzeroupper, and FoldLanesF32Avx2 returned to reduce.cc's SSE code with
// the upper halves dirty: each call cost about 100 ns more on this VM.
template <int kOp>
[[gnu::always_inline]] inline float Finish(__m256 a, __m256 b, const float* x, int64_t i,
                                           int64_t n) {
  if (i < n) {
    alignas(32) float rest[16];
    _mm256_store_ps(rest, a);
    _mm256_store_ps(rest + 8, b);
    for (int64_t l = 0; i < n; ++i, ++l) {
      rest[l] = _mm256_cvtss_f32(Op<kOp>(_mm256_set1_ps(rest[l]), _mm256_set1_ps(x[i])));
    }
    a = _mm256_load_ps(rest);
    b = _mm256_load_ps(rest + 8);
  }
  const __m256 eight = Op<kOp>(a, b);
  const __m256 four = Op<kOp>(eight, _mm256_permute2f128_ps(eight, eight, 1));
  const __m256 two = Op<kOp>(four, _mm256_permute_ps(four, 0x0E));
  const __m256 one = Op<kOp>(two, _mm256_permute_ps(two, 0x01));
  return _mm256_cvtss_f32(one);
}

template <int kOp>
float Fold(const float* x, int64_t n) {
  __m256 a = _mm256_loadu_ps(x), b = _mm256_loadu_ps(x + 8);
  int64_t i = 16;
  for (; i + 16 <= n; i += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(x + i + 1024), _MM_HINT_T0);
    a = Op<kOp>(a, _mm256_loadu_ps(x + i));
    b = Op<kOp>(b, _mm256_loadu_ps(x + i + 8));
  }
  return Finish<kOp>(a, b, x, i, n);
}

// Max and min without NaNs: the same lanes, but each step is one max_ps or
// min_ps (the lane wins ties, as in Op), so a lane's chain is one
// instruction per group rather than Op's three. Whether any element seen
// is a NaN is kept apart; if one is, the fold is done again by Fold, whose
// lanes keep the first NaN as Op does. Fold's chains bounded max_rows at
// about four floats per cycle from L2.
template <int kOp>
float FoldMinMax(const float* x, int64_t n) {
  __m256 a = _mm256_loadu_ps(x), b = _mm256_loadu_ps(x + 8);
  __m256 unordered = _mm256_cmp_ps(a, b, _CMP_UNORD_Q);
  int64_t i = 16;
  for (; i + 16 <= n; i += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(x + i + 1024), _MM_HINT_T0);
    const __m256 p = _mm256_loadu_ps(x + i), q = _mm256_loadu_ps(x + i + 8);
    unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(p, q, _CMP_UNORD_Q));
    a = kOp == 1 ? _mm256_max_ps(p, a) : _mm256_min_ps(p, a);
    b = kOp == 1 ? _mm256_max_ps(q, b) : _mm256_min_ps(q, b);
  }
  if (_mm256_movemask_ps(unordered) != 0) return Fold<kOp>(x, n);
  return Finish<kOp>(a, b, x, i, n);
}

}  // namespace

float FoldLanesF32Avx2(ReduceOp op, const float* x, int64_t n) {
  switch (op) {
    case ReduceOp::kMaximum: return FoldMinMax<1>(x, n);
    case ReduceOp::kMinimum: return FoldMinMax<2>(x, n);
    default: return Fold<0>(x, n);
  }
}

}  // namespace kiln::kernels::reduce_internal
