// 8-bit integer products with AVX512_VNNI's VPDPBUSD (compiled with
// -mavx512vnni, called only where CPUID reports it, which dot.cc checks in
// baseline code): each instruction multiplies 64 unsigned bytes of one
// operand by 64 signed bytes of the other and adds each group of four
// products to one 32-bit lane, four times the multiply-adds of a 32-bit
// integer multiply.
//
// The instruction takes one operand unsigned and the other signed, so A
// is packed as unsigned bytes (a signed A shifted by 128, the sign bit
// flipped) and B as signed bytes (an unsigned B shifted by -128), and the
// shifts are taken back out of the sums with the rows' sums of A and the
// columns' sums of B (dot.cc's MatMulInt8 says how). Sums wrap in 32 bits,
// as the product of XLA's CPU backend does.
//
// A is packed row-major with the depth padded to a multiple of 4, so a
// row's four bytes at depth 4q are one 32-bit word the kernel broadcasts.
// B is packed into panels of 32 columns: for each quad of depths the panel
// holds, per column, the four bytes B[4q..4q+3][c], so one 64-byte load
// gives sixteen columns' quads; depths past k and columns past n are zero.
//
// The loops over a block's rows are unrolled before GCC (12) would keep the
// accumulators' array in memory, and the file is built with -fno-tree-pre:
// otherwise each step stores every accumulator to the stack (1.13 ms for a
// 512^3 product against 0.35 without the stores, on an AMD EPYC).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/dot_internal.h"

namespace kiln::kernels::dot_internal::avx512vnni {
namespace {

constexpr int64_t kRows = 12;  // rows per register block: 24 accumulators

// Rows [0, R) of a register block: out[r][0, columns) = the packed rows of
// `a` (row stride lda bytes) times the panel over `quads` depth quads, plus
// `row_add[r]` and `column_add[c]`.
template <int R>
void Block(const uint8_t* a, int64_t lda, const int8_t* panel, int64_t quads,
           const int32_t* row_add, const int32_t* column_add, int32_t* out, int64_t ldo,
           int64_t columns, bool accumulate) {
  __m512i low[R], high[R];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) low[r] = high[r] = _mm512_setzero_si512();
  for (int64_t q = 0; q < quads; ++q) {
    const __m512i b0 = _mm512_loadu_si512(panel + q * 128);
    const __m512i b1 = _mm512_loadu_si512(panel + q * 128 + 64);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      int32_t quad;
      std::memcpy(&quad, a + r * lda + 4 * q, sizeof(quad));
      const __m512i x = _mm512_set1_epi32(quad);
      low[r] = _mm512_dpbusd_epi32(low[r], x, b0);
      high[r] = _mm512_dpbusd_epi32(high[r], x, b1);
    }
  }
  const __mmask16 mask_low = LaneMask(columns, 0);
  const __mmask16 mask_high = LaneMask(columns, 16);
  if (accumulate) {
    // A later part of the depth: onto what the earlier parts wrote.
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      int32_t* to = out + r * ldo;
      _mm512_mask_storeu_epi32(to, mask_low,
                               _mm512_add_epi32(low[r], _mm512_maskz_loadu_epi32(mask_low, to)));
      _mm512_mask_storeu_epi32(to + 16, mask_high,
                               _mm512_add_epi32(high[r],
                                                _mm512_maskz_loadu_epi32(mask_high, to + 16)));
    }
    return;
  }
  const __m512i add_low = _mm512_maskz_loadu_epi32(mask_low, column_add);
  const __m512i add_high = _mm512_maskz_loadu_epi32(mask_high, column_add + 16);
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    const __m512i row = _mm512_set1_epi32(row_add[r]);
    int32_t* to = out + r * ldo;
    _mm512_mask_storeu_epi32(to, mask_low,
                             _mm512_add_epi32(_mm512_add_epi32(low[r], add_low), row));
    _mm512_mask_storeu_epi32(to + 16, mask_high,
                             _mm512_add_epi32(_mm512_add_epi32(high[r], add_high), row));
  }
}

using BlockFn = void (*)(const uint8_t*, int64_t, const int8_t*, int64_t, const int32_t*,
                         const int32_t*, int32_t*, int64_t, int64_t, bool);

// Depth quads per pass over a panel: 64 quads of a panel are 8 KiB, which
// stay in L1 while the block rows of a task stream past them.
constexpr int64_t kQuadsPerPass = 128;
constexpr BlockFn kBlocks[kRows + 1] = {nullptr,   Block<1>,  Block<2>, Block<3>, Block<4>,
                                        Block<5>,  Block<6>,  Block<7>, Block<8>, Block<9>,
                                        Block<10>, Block<11>, Block<12>};

}  // namespace

void PackPanels(const uint8_t* b, int64_t ldb, bool b_transposed, bool b_unsigned, int64_t k,
                int64_t n, int64_t first, int64_t last, int8_t* packed, int32_t* column_sums) {
  const int64_t quads = (k + 3) / 4;
  const uint8_t flip = b_unsigned ? 0x80 : 0;  // u8 - 128 as s8: the sign bit flipped
  for (int64_t panel = first; panel < last; ++panel) {
    int8_t* to = packed + panel * quads * kPanelColumns * 4;
    const int64_t c0 = panel * kPanelColumns;
    const int64_t width = std::min(kPanelColumns, n - c0);
    std::memset(to, 0, static_cast<size_t>(quads * kPanelColumns * 4));
    int32_t sums[kPanelColumns] = {};
    if (b_transposed) {
      // Each column's depths are contiguous.
      for (int64_t c = 0; c < width; ++c) {
        const uint8_t* column = b + (c0 + c) * ldb;
        for (int64_t p = 0; p < k; ++p) {
          sums[c] += b_unsigned ? static_cast<int32_t>(column[p]) : static_cast<int8_t>(column[p]);
          to[(p / 4) * kPanelColumns * 4 + c * 4 + p % 4] = static_cast<int8_t>(column[p] ^ flip);
        }
      }
    } else {
      // Each depth's columns are contiguous: four depths at a time, each
      // column's quad written as one 32-bit word.
      const uint32_t flips = flip * 0x01010101u;
      for (int64_t p0 = 0; p0 < k; p0 += 4) {
        const uint8_t* rows[4];
        for (int64_t i = 0; i < 4; ++i) rows[i] = p0 + i < k ? b + (p0 + i) * ldb + c0 : nullptr;
        uint32_t* words = reinterpret_cast<uint32_t*>(to + (p0 / 4) * kPanelColumns * 4);
        for (int64_t c = 0; c < width; ++c) {
          uint32_t word = 0;
          for (int64_t i = 0; i < 4; ++i) {
            if (rows[i] == nullptr) continue;
            const uint8_t bits = rows[i][c];
            sums[c] += b_unsigned ? static_cast<int32_t>(bits) : static_cast<int8_t>(bits);
            word |= static_cast<uint32_t>(bits) << (8 * i);
          }
          // (Depths past k stay zero: their bytes are not flipped.)
          uint32_t mask = 0;
          for (int64_t i = 0; i < 4; ++i) mask |= rows[i] != nullptr ? 0xFFu << (8 * i) : 0;
          words[c] = word ^ (flips & mask);
        }
      }
    }
    std::copy(sums, sums + width, column_sums + c0);
  }
}

void Multiply(const uint8_t* a, int64_t lda, const int8_t* packed, int64_t k, int64_t n, int64_t m0,
              int64_t m1, int64_t first, int64_t last, const int32_t* row_add,
              const int32_t* column_add, int32_t* out, int64_t ldo) {
  const int64_t quads = (k + 3) / 4;
  for (int64_t q0 = 0; q0 < quads; q0 += kQuadsPerPass) {
    const int64_t pass = std::min(kQuadsPerPass, quads - q0);
    for (int64_t panel = first; panel < last; ++panel) {
      const int8_t* from = packed + (panel * quads + q0) * kPanelColumns * 4;
      const int64_t c0 = panel * kPanelColumns;
      const int64_t columns = std::min(kPanelColumns, n - c0);
      for (int64_t r = m0; r < m1; r += kRows) {
        const int64_t rows = std::min(kRows, m1 - r);
        kBlocks[rows](a + r * lda + 4 * q0, lda, from, pass, row_add + r, column_add + c0,
                      out + r * ldo + c0, ldo, columns, /*accumulate=*/q0 > 0);
      }
    }
  }
}

// 16-bit products on VPDPWSSD: each instruction multiplies 32 pairs of
// signed 16-bit integers and adds both products of a pair to one 32-bit
// lane. A is packed row-major with the depth padded to even (a row's pair
// at depth 2p is one 32-bit word); B in panels of 32 columns, per pair of
// depths the two values of each column side by side.
namespace {

template <int R>
void Block16(const int16_t* a, int64_t lda, const int16_t* panel, int64_t pairs, int32_t* out,
             int64_t ldo, int64_t columns, bool accumulate) {
  __m512i low[R], high[R];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) low[r] = high[r] = _mm512_setzero_si512();
  for (int64_t p = 0; p < pairs; ++p) {
    const __m512i b0 = _mm512_loadu_si512(panel + p * 64);
    const __m512i b1 = _mm512_loadu_si512(panel + p * 64 + 32);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      int32_t pair;
      std::memcpy(&pair, a + r * lda + 2 * p, sizeof(pair));
      const __m512i x = _mm512_set1_epi32(pair);
      low[r] = _mm512_dpwssd_epi32(low[r], x, b0);
      high[r] = _mm512_dpwssd_epi32(high[r], x, b1);
    }
  }
  const __mmask16 mask_low = LaneMask(columns, 0);
  const __mmask16 mask_high = LaneMask(columns, 16);
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    int32_t* to = out + r * ldo;
    const __m512i add_low = accumulate ? _mm512_maskz_loadu_epi32(mask_low, to)
                                       : _mm512_setzero_si512();
    const __m512i add_high = accumulate ? _mm512_maskz_loadu_epi32(mask_high, to + 16)
                                        : _mm512_setzero_si512();
    _mm512_mask_storeu_epi32(to, mask_low, _mm512_add_epi32(low[r], add_low));
    _mm512_mask_storeu_epi32(to + 16, mask_high, _mm512_add_epi32(high[r], add_high));
  }
}

using Block16Fn = void (*)(const int16_t*, int64_t, const int16_t*, int64_t, int32_t*, int64_t,
                           int64_t, bool);
constexpr Block16Fn kBlocks16[kRows + 1] = {
    nullptr,    Block16<1>, Block16<2>, Block16<3>,  Block16<4>,  Block16<5>, Block16<6>,
    Block16<7>, Block16<8>, Block16<9>, Block16<10>, Block16<11>, Block16<12>};

// Depth pairs per pass over a panel: 128 pairs of a panel are 16 KiB.
constexpr int64_t kPairsPerPass = 128;

}  // namespace

void PackPanels16(const int16_t* b, int64_t ldb, bool b_transposed, int64_t k, int64_t n,
                  int64_t first, int64_t last, int16_t* packed) {
  const int64_t pairs = (k + 1) / 2;
  for (int64_t panel = first; panel < last; ++panel) {
    int16_t* to = packed + panel * pairs * kPanelColumns * 2;
    const int64_t c0 = panel * kPanelColumns;
    const int64_t width = std::min(kPanelColumns, n - c0);
    std::memset(to, 0, static_cast<size_t>(pairs * kPanelColumns * 2) * sizeof(int16_t));
    for (int64_t p = 0; p < k; ++p) {
      int16_t* row = to + (p / 2) * kPanelColumns * 2 + p % 2;
      for (int64_t c = 0; c < width; ++c) {
        row[2 * c] = b_transposed ? b[(c0 + c) * ldb + p] : b[p * ldb + c0 + c];
      }
    }
  }
}

void Multiply16(const int16_t* a, int64_t lda, const int16_t* packed, int64_t k, int64_t n,
                int64_t m0, int64_t m1, int64_t first, int64_t last, int32_t* out, int64_t ldo) {
  const int64_t pairs = (k + 1) / 2;
  for (int64_t p0 = 0; p0 < pairs; p0 += kPairsPerPass) {
    const int64_t pass = std::min(kPairsPerPass, pairs - p0);
    for (int64_t panel = first; panel < last; ++panel) {
      const int16_t* from = packed + (panel * pairs + p0) * kPanelColumns * 2;
      const int64_t c0 = panel * kPanelColumns;
      const int64_t columns = std::min(kPanelColumns, n - c0);
      for (int64_t r = m0; r < m1; r += kRows) {
        const int64_t rows = std::min(kRows, m1 - r);
        kBlocks16[rows](a + r * lda + 2 * p0, lda, from, pass, out + r * ldo + c0, ldo, columns,
                        /*accumulate=*/p0 > 0);
      }
    }
  }
}

}  // namespace kiln::kernels::dot_internal::avx512vnni
