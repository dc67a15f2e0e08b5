#include "kernels/reduce_avx2.h"

#include <immintrin.h>

namespace kiln::kernels::reduce_internal {
namespace {

// lane op x as reduce.cc's Apply<kMaximum / kMinimum, float>: lane if it is
// NaN, else x if it is NaN, else lane when lane >= x (<= for min), else x.
template <bool kMax>
inline __m256 Extreme(__m256 lane, __m256 x) {
  // max_ps(x, lane) is x when x > lane, else lane (also when either is NaN).
  __m256 r = kMax ? _mm256_max_ps(x, lane) : _mm256_min_ps(x, lane);
  r = _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  return _mm256_blendv_ps(r, lane, _mm256_cmp_ps(lane, lane, _CMP_UNORD_Q));
}

template <int kOp>  // 0: add, 1: max, 2: min
int64_t Fold(const float* x, int64_t n, float* lanes) {
  __m256 a = _mm256_loadu_ps(x), b = _mm256_loadu_ps(x + 8);
  int64_t i = 16;
  for (; i + 16 <= n; i += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(x + i + 1024), _MM_HINT_T0);
    const __m256 u = _mm256_loadu_ps(x + i), v = _mm256_loadu_ps(x + i + 8);
    if constexpr (kOp == 0) {
      a = _mm256_add_ps(a, u);
      b = _mm256_add_ps(b, v);
    } else {
      a = Extreme<kOp == 1>(a, u);
      b = Extreme<kOp == 1>(b, v);
    }
  }
  _mm256_storeu_ps(lanes, a);
  _mm256_storeu_ps(lanes + 8, b);
  return i;
}

}  // namespace

int64_t FoldLanesF32Avx2(ReduceOp op, const float* x, int64_t n, float* lanes) {
  switch (op) {
    case ReduceOp::kMaximum: return Fold<1>(x, n, lanes);
    case ReduceOp::kMinimum: return Fold<2>(x, n, lanes);
    default: return Fold<0>(x, n, lanes);
  }
}

}  // namespace kiln::kernels::reduce_internal
