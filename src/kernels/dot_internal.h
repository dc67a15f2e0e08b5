// Shared between dot.cc and its instruction-set variants (dot_avx2.cc,
// dot_avx512.cc): one GEMM call on strided row-major matrices. Plain data
// only, so nothing here is compiled differently per variant.
#pragma once

#include <complex>
#include <cstdint>

namespace kiln::kernels::dot_internal {

// c (m x n, row stride ldc) = a (m x k) x b (k x n), or c += a x b when
// `accumulate`. `a` is stored row-major with row stride lda, or, when
// a_transposed, as its k x m transpose; `b` likewise (n x k when
// b_transposed).
template <typename T>
struct GemmArgs {
  int64_t m, n, k;
  const T* a;
  int64_t lda;
  bool a_transposed;
  const T* b;
  int64_t ldb;
  bool b_transposed;
  T* c;
  int64_t ldc;
  bool accumulate;
};

// The mask of the sixteen 32-bit lanes from column `first` of a row of
// `columns` (the panels' kernels store 32-column rows as two halves).
inline uint16_t LaneMask(int64_t columns, int64_t first) {
  const int64_t count = columns - first;
  if (count >= 16) return 0xFFFF;
  return count <= 0 ? uint16_t{0} : static_cast<uint16_t>((1u << count) - 1);
}

}  // namespace kiln::kernels::dot_internal

// Each variant defines, in namespace kiln::kernels::dot_internal::<variant>:
//   void Gemm(const GemmArgs<float>&);  void Gemm(const GemmArgs<double>&);
// and the baseline also the complex ones.
namespace kiln::kernels::dot_internal {
namespace baseline {
void Gemm(const GemmArgs<float>& args);
void Gemm(const GemmArgs<double>& args);
void Gemm(const GemmArgs<std::complex<float>>& args);
void Gemm(const GemmArgs<std::complex<double>>& args);
}  // namespace baseline
namespace avx2 {
void Gemm(const GemmArgs<float>& args);
void Gemm(const GemmArgs<double>& args);
// f16 rows (bits) to f32 and back, rounding to nearest even, with F16C:
// dst[r * cols + c] = src[r * stride + c], and the reverse.
void WidenHalfRows(const uint16_t* src, int64_t stride, int64_t rows, int64_t cols, float* dst);
void NarrowHalfRows(const float* src, int64_t rows, int64_t cols, uint16_t* dst, int64_t stride);
}  // namespace avx2
namespace avx512 {
void Gemm(const GemmArgs<float>& args);
void Gemm(const GemmArgs<double>& args);
}  // namespace avx512
// bf16 products on AVX512_BF16 (dot_bf16_avx512.cc, built where
// KILN_DOT_BF16_NATIVE is defined). Matrices are bf16 bits.
namespace avx512bf16 {
constexpr int64_t kPanelColumns = 32;
// Only where the CPU has AVX512_BF16 with AVX512F, BW and VL (dot.cc asks).
// Packs panels [first, last) of b (k x n, row stride ldb; n x k when
// b_transposed), k even, into `packed`: panel j at j * k * kPanelColumns,
// its columns past n zero.
void PackPanels(const uint16_t* b, int64_t ldb, bool b_transposed, int64_t k, int64_t n,
                int64_t first, int64_t last, uint16_t* packed);
// out[m0, m1) x panels [first, last) = a (row-major, row stride lda, k
// even) times the packed b, rounded to bf16 (nearest even); out has row
// stride ldo and n columns.
void Multiply(const uint16_t* a, int64_t lda, const uint16_t* packed, int64_t k, int64_t n,
              int64_t m0, int64_t m1, int64_t first, int64_t last, uint16_t* out, int64_t ldo);
}  // namespace avx512bf16
// 8-bit integer products on AVX512_VNNI (dot_int8_avx512.cc, built where
// KILN_DOT_INT8_NATIVE is defined).
namespace avx512vnni {
constexpr int64_t kPanelColumns = 32;
// Only where the CPU has AVX512_VNNI with AVX512F and BW (dot.cc asks).
// Packs panels [first, last) of b (k x n bytes, row stride ldb; n x k when
// b_transposed; unsigned when b_unsigned, else signed) into `packed` as
// signed bytes (an unsigned b less 128): panel j at j * quads * 128 bytes
// (quads = k rounded up to 4, over 4), depths past k and columns past n
// zero; column_sums[c] = the column's sum of b as it is (for the columns
// of those panels).
void PackPanels(const uint8_t* b, int64_t ldb, bool b_transposed, bool b_unsigned, int64_t k,
                int64_t n, int64_t first, int64_t last, int8_t* packed, int32_t* column_sums);
// out[m0, m1) x panels [first, last) = a (unsigned bytes, row-major, row
// stride lda, depth padded to a multiple of 4) times the packed b, plus
// row_add[r] + column_add[c], wrapping; out has row stride ldo and n
// columns.
void Multiply(const uint8_t* a, int64_t lda, const int8_t* packed, int64_t k, int64_t n, int64_t m0,
              int64_t m1, int64_t first, int64_t last, const int32_t* row_add,
              const int32_t* column_add, int32_t* out, int64_t ldo);
// 16-bit products: b (k x n int16, row stride ldb; n x k when
// b_transposed) packed into panels of pairs of depths (pairs = k rounded up
// to 2, over 2; a depth past k zero); out[m0, m1) x panels [first, last) =
// a (row-major, row stride lda, depth padded to even) times them, 32-bit
// sums wrapping.
void PackPanels16(const int16_t* b, int64_t ldb, bool b_transposed, int64_t k, int64_t n,
                  int64_t first, int64_t last, int16_t* packed);
void Multiply16(const int16_t* a, int64_t lda, const int16_t* packed, int64_t k, int64_t n,
                int64_t m0, int64_t m1, int64_t first, int64_t last, int32_t* out, int64_t ldo);
}  // namespace avx512vnni
}  // namespace kiln::kernels::dot_internal
