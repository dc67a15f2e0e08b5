// The f32/f64 GEMM compiled for AVX2 + FMA (CMake adds -mavx2 -mfma to this
// file only); dot.cc calls it when the CPU has them.
#define Eigen KilnEigenAvx2
#define KILN_DOT_VARIANT avx2
#include "kernels/dot_eigen.inc"

// f16 <-> f32 conversions of the GEMM's widening tiles (dot.cc), with F16C
// (CMake adds -mf16c to this file): dot.cc calls them when CPUID reports it.
#include <immintrin.h>

namespace kiln::kernels::dot_internal::avx2 {

void WidenHalfRows(const uint16_t* src, int64_t stride, int64_t rows, int64_t cols, float* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* in = src + r * stride;
    float* out = dst + r * cols;
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + c));
      _mm256_storeu_ps(out + c, _mm256_cvtph_ps(halves));
    }
    for (; c < cols; ++c) out[c] = _cvtsh_ss(in[c]);
  }
}

void NarrowHalfRows(const float* src, int64_t rows, int64_t cols, uint16_t* dst, int64_t stride) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = src + r * cols;
    uint16_t* out = dst + r * stride;
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      const __m128i halves = _mm256_cvtps_ph(_mm256_loadu_ps(in + c), _MM_FROUND_TO_NEAREST_INT);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), halves);
    }
    for (; c < cols; ++c) out[c] = _cvtss_sh(in[c], _MM_FROUND_TO_NEAREST_INT);
  }
}

}  // namespace kiln::kernels::dot_internal::avx2
