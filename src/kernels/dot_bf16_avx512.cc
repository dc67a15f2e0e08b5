// bf16 products with AVX512_BF16's VDPBF16PS (compiled with -mavx512bf16,
// called only where CPUID reports it, which dot.cc checks in baseline
// code): each instruction multiplies sixteen pairs of bf16 from each
// operand and adds both products of a pair to one f32 lane, twice the
// multiply-adds of an f32 FMA. The products of two bf16 are exact in f32,
// so the sums differ from the widened f32 GEMM's only in their order. The
// instruction treats denormal inputs as zero and flushes denormal results,
// as Kiln's programs run anyway.
//
// B is packed into panels of 32 columns: for each pair of depths (2p, 2p+1)
// the panel holds, per column, B[2p][c] then B[2p+1][c], so one 64-byte
// load gives sixteen columns' pairs. A needs no packing: a row-major row
// already holds the pair A[r][2p], A[r][2p+1] as one 32-bit word, which
// the kernel broadcasts. Depth must be even (MatMul falls back otherwise).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/dot_internal.h"

namespace kiln::kernels::dot_internal::avx512bf16 {
namespace {

constexpr int64_t kRows = 12;  // rows per register block: 24 accumulators

// Rows [0, R) of a register block: out[r][0, columns) = the rows of `a`
// (row stride lda, bf16 bits) times the panel, over `pairs` depth pairs,
// rounded to bf16 (nearest even).
template <int R>
void Block(const uint16_t* a, int64_t lda, const uint16_t* panel, int64_t pairs, uint16_t* out,
           int64_t ldo, int64_t columns) {
  __m512 low[R], high[R];
  for (int r = 0; r < R; ++r) low[r] = high[r] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(panel + p * 64);
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512(panel + p * 64 + 32);
    for (int r = 0; r < R; ++r) {
      int32_t pair;
      std::memcpy(&pair, a + r * lda + 2 * p, sizeof(pair));
      const __m512bh x = (__m512bh)_mm512_set1_epi32(pair);
      low[r] = _mm512_dpbf16_ps(low[r], x, b0);
      high[r] = _mm512_dpbf16_ps(high[r], x, b1);
    }
  }
  const __mmask16 mask_low = LaneMask(columns, 0);
  const __mmask16 mask_high = LaneMask(columns, 16);
  for (int r = 0; r < R; ++r) {
    uint16_t* row = out + r * ldo;
    _mm256_mask_storeu_epi16(row, mask_low, (__m256i)_mm512_cvtneps_pbh(low[r]));
    _mm256_mask_storeu_epi16(row + 16, mask_high, (__m256i)_mm512_cvtneps_pbh(high[r]));
  }
}

using BlockFn = void (*)(const uint16_t*, int64_t, const uint16_t*, int64_t, uint16_t*, int64_t,
                         int64_t);
constexpr BlockFn kBlocks[kRows + 1] = {nullptr,   Block<1>,  Block<2>, Block<3>, Block<4>,
                                        Block<5>,  Block<6>,  Block<7>, Block<8>, Block<9>,
                                        Block<10>, Block<11>, Block<12>};

}  // namespace

void PackPanels(const uint16_t* b, int64_t ldb, bool b_transposed, int64_t k, int64_t n,
                int64_t first, int64_t last, uint16_t* packed) {
  const int64_t pairs = k / 2;
  for (int64_t panel = first; panel < last; ++panel) {
    uint16_t* to = packed + panel * pairs * kPanelColumns * 2;
    const int64_t c0 = panel * kPanelColumns;
    const int64_t width = std::min(kPanelColumns, n - c0);
    for (int64_t p = 0; p < pairs; ++p) {
      uint16_t* pair_row = to + p * kPanelColumns * 2;
      for (int64_t c = 0; c < width; ++c) {
        const int64_t column = c0 + c;
        pair_row[2 * c] = b_transposed ? b[column * ldb + 2 * p] : b[2 * p * ldb + column];
        pair_row[2 * c + 1] = b_transposed ? b[column * ldb + 2 * p + 1]
                                           : b[(2 * p + 1) * ldb + column];
      }
      std::fill(pair_row + 2 * width, pair_row + 2 * kPanelColumns, uint16_t{0});
    }
  }
}

void Multiply(const uint16_t* a, int64_t lda, const uint16_t* packed, int64_t k, int64_t n,
              int64_t m0, int64_t m1, int64_t first, int64_t last, uint16_t* out, int64_t ldo) {
  const int64_t pairs = k / 2;
  for (int64_t panel = first; panel < last; ++panel) {
    const uint16_t* from = packed + panel * pairs * kPanelColumns * 2;
    const int64_t c0 = panel * kPanelColumns;
    const int64_t columns = std::min(kPanelColumns, n - c0);
    for (int64_t r = m0; r < m1; r += kRows) {
      const int64_t rows = std::min(kRows, m1 - r);
      kBlocks[rows](a + r * lda, lda, from, pairs, out + r * ldo + c0, ldo, columns);
    }
  }
}

}  // namespace kiln::kernels::dot_internal::avx512bf16
