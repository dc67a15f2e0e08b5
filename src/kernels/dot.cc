// Batched matrix products. f32/f64/complex go to Eigen's GEMM (dot_eigen.inc,
// compiled here for the baseline instruction set and in dot_avx2.cc /
// dot_avx512.cc for wider vectors, chosen once by CPUID); the other types run
// a plain loop. Every path is one call per (batch, row or column block), and
// the blocks are split over kernels::ParallelFor.
#include "kernels/dot.h"

#include <algorithm>
#include <cstring>
#if defined(KILN_DOT_ISA_VARIANTS) || defined(KILN_DOT_BF16_NATIVE)
#include <cpuid.h>
#endif
#include <type_traits>
#include <vector>

#include "kernels/parallel.h"
#include "kernels/scratch.h"
#include "kernels/types.h"

#define KILN_DOT_VARIANT baseline
#define KILN_DOT_COMPLEX
#include "kernels/dot_eigen.inc"

namespace kiln::kernels {
namespace {

using dot_internal::GemmArgs;

enum class Isa : uint8_t { kBaseline, kAvx2, kAvx512 };

Isa DetectIsa() {
#if defined(KILN_DOT_ISA_VARIANTS)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma")) {
    return Isa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kBaseline;
}

Isa GetIsa() {
  static const Isa isa = DetectIsa();
  return isa;
}

// The accumulator of the loop paths: integers in unsigned arithmetic at least
// 32 bits wide (wrapping, with no promotion to signed int), pred as bool,
// floats in their compute type.
template <typename T>
struct Accumulator {
  using type = ComputeType<T>;
};
template <>
struct Accumulator<bool> {
  using type = bool;
};
template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
struct Accumulator<T> {
  using type = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
};

template <typename T, typename Acc>
inline Acc MulAdd(Acc acc, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return acc || (a && b);
  } else {
    return acc + static_cast<Acc>(a) * static_cast<Acc>(b);
  }
}

// c = a x b by loops: row by row as axpys when b's rows are contiguous, as
// dot products when b is stored transposed.
template <typename T>
void LoopGemm(const GemmArgs<T>& g) {
  using Acc = typename Accumulator<T>::type;
  auto a_at = [&](int64_t i, int64_t p) {
    return g.a_transposed ? g.a[p * g.lda + i] : g.a[i * g.lda + p];
  };
  if (g.b_transposed) {
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        const T* b_row = g.b + j * g.ldb;
        Acc acc = g.accumulate ? static_cast<Acc>(g.c[i * g.ldc + j]) : Acc{};
        for (int64_t p = 0; p < g.k; ++p) acc = MulAdd<T, Acc>(acc, a_at(i, p), b_row[p]);
        g.c[i * g.ldc + j] = static_cast<T>(acc);
      }
    }
    return;
  }
  ScratchArray<Acc> row(static_cast<size_t>(g.n));
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      row[static_cast<size_t>(j)] = g.accumulate ? static_cast<Acc>(g.c[i * g.ldc + j]) : Acc{};
    }
    for (int64_t p = 0; p < g.k; ++p) {
      const T a = a_at(i, p);
      const T* b_row = g.b + p * g.ldb;
      for (int64_t j = 0; j < g.n; ++j)
        row[static_cast<size_t>(j)] = MulAdd<T, Acc>(row[static_cast<size_t>(j)], a, b_row[j]);
    }
    for (int64_t j = 0; j < g.n; ++j)
      g.c[i * g.ldc + j] = static_cast<T>(row[static_cast<size_t>(j)]);
  }
}

template <typename T>
void Gemm(const GemmArgs<T>& g) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    switch (GetIsa()) {
#if defined(KILN_DOT_ISA_VARIANTS)
      case Isa::kAvx512: return dot_internal::avx512::Gemm(g);
      case Isa::kAvx2: return dot_internal::avx2::Gemm(g);
#endif
      default: return dot_internal::baseline::Gemm(g);
    }
  } else if constexpr (kIsComplex<T>) {
    dot_internal::baseline::Gemm(g);
  } else {
    LoopGemm(g);
  }
}

// The GemmArgs of the block rows [m0, m1) x columns [n0, n1) of product b.
template <typename T>
GemmArgs<T> Block(const MatMulShape& s, const T* lhs, const T* rhs, T* out, int64_t b, int64_t m0,
                  int64_t m1, int64_t n0, int64_t n1) {
  GemmArgs<T> g{};
  g.m = m1 - m0;
  g.n = n1 - n0;
  g.k = s.k;
  const T* a = lhs + b * s.m * s.k;
  const T* rb = rhs + b * s.k * s.n;
  g.a_transposed = s.lhs_transposed;
  g.a = s.lhs_transposed ? a + m0 : a + m0 * s.k;
  g.lda = s.lhs_transposed ? s.m : s.k;
  g.b_transposed = s.rhs_transposed;
  g.b = s.rhs_transposed ? rb + n0 * s.k : rb + n0;
  g.ldb = s.rhs_transposed ? s.k : s.n;
  g.c = out + b * s.m * s.n + m0 * s.n + n0;
  g.ldc = s.n;
  g.accumulate = s.accumulate;
  return g;
}

// Rows (or columns) below which a block is not split further: smaller blocks
// waste Eigen's packing.
constexpr int64_t kMinBlockSide = 16;

template <typename T>
void RunMatMul(const MatMulShape& s, const T* lhs, const T* rhs, T* out) {
  const int64_t product_cost = std::max<int64_t>(1, s.m * s.n * s.k);
  const int64_t threads = NumThreads();
  if (s.batch >= threads || s.m * s.n == 0) {
    ParallelFor(s.batch, product_cost, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) Gemm(Block(s, lhs, rhs, out, b, 0, s.m, 0, s.n));
    });
    return;
  }
  // Fewer products than threads: split each along its larger side too.
  const bool split_rows = s.m >= s.n;
  const int64_t side = split_rows ? s.m : s.n;
  const int64_t parts = std::max<int64_t>(1, std::min((threads + s.batch - 1) / s.batch,
                                                      side / kMinBlockSide));
  ParallelFor(s.batch * parts, product_cost / parts, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / parts;
      const int64_t part = task % parts;
      const int64_t lo = side * part / parts;
      const int64_t hi = side * (part + 1) / parts;
      Gemm(split_rows ? Block(s, lhs, rhs, out, b, lo, hi, 0, s.n)
                      : Block(s, lhs, rhs, out, b, 0, s.m, lo, hi));
    }
  });
}

// bf16 and f16 products in f32, tile by tile: each task widens a block of
// A's rows and a block of B's columns, one depth panel at a time, into this
// thread's scratch, accumulates their f32 product in a scratch tile, and
// rounds the tile once into `out`. The f32 copies of the operands and of the
// product never exist whole (converting around one f32 GEMM needed 12 MiB
// beside the 6 MiB of a 1024^3 product's operands and result); each element
// of A is widened once per column block and each of B once per row block.
constexpr int64_t kWideTile = 256;   // rows and columns of a tile (at most)
constexpr int64_t kWidePanel = 256;  // depth of a panel

#if defined(KILN_DOT_ISA_VARIANTS)
// Whether the CPU converts f16 in hardware (F16C) and runs the AVX2
// variant, which holds the F16C conversions. CPUID leaf 1, ECX bit 29:
// GCC 12's __builtin_cpu_supports("f16c") answered false on a machine whose
// /proc/cpuinfo lists f16c.
bool HasF16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return GetIsa() != Isa::kBaseline && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
           (ecx & (1u << 29)) != 0;
  }();
  return has;
}
#endif

// dst[r * cols + c] = float(src[r * stride + c]) for r < rows, c < cols.
void Widen(const bfloat16* src, int64_t stride, int64_t rows, int64_t cols, float* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const auto* in = reinterpret_cast<const uint16_t*>(src + r * stride);
    float* row = dst + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const uint32_t bits = static_cast<uint32_t>(in[c]) << 16;
      std::memcpy(row + c, &bits, sizeof(bits));
    }
  }
}

void Widen(const half* src, int64_t stride, int64_t rows, int64_t cols, float* dst) {
#if defined(KILN_DOT_ISA_VARIANTS)
  if (HasF16c()) {
    return dot_internal::avx2::WidenHalfRows(reinterpret_cast<const uint16_t*>(src), stride, rows,
                                             cols, dst);
  }
#endif
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = static_cast<float>(src[r * stride + c]);
  }
}

// dst[r * stride + c] = src[r * cols + c] rounded to nearest even.
template <typename Narrow>
void NarrowRows(const float* src, int64_t rows, int64_t cols, Narrow* dst, int64_t stride) {
#if defined(KILN_DOT_ISA_VARIANTS)
  if constexpr (std::is_same_v<Narrow, half>) {
    if (HasF16c()) {
      return dot_internal::avx2::NarrowHalfRows(src, rows, cols, reinterpret_cast<uint16_t*>(dst),
                                                stride);
    }
  }
#endif
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) dst[r * stride + c] = static_cast<Narrow>(src[r * cols + c]);
  }
}

template <typename Narrow>
void RunWidened(const MatMulShape& s, const Narrow* lhs, const Narrow* rhs, Narrow* out) {
  // Smaller tiles when there are fewer than threads (down to 32).
  int64_t side = kWideTile;
  auto count = [&](int64_t t) { return s.batch * ((s.m + t - 1) / t) * ((s.n + t - 1) / t); };
  while (side > 32 && count(side) < NumThreads()) side /= 2;
  const int64_t row_tiles = (s.m + side - 1) / side;
  const int64_t column_tiles = (s.n + side - 1) / side;
  const int64_t tiles = s.batch * row_tiles * column_tiles;
  const int64_t tile_cost = side * side * std::max<int64_t>(1, s.k);
  ParallelFor(tiles, tile_cost, [&](int64_t begin, int64_t end) {
    const auto panel_rows = static_cast<size_t>(std::min(side, s.m));
    const auto panel_columns = static_cast<size_t>(std::min(side, s.n));
    const auto depth = static_cast<size_t>(std::min(kWidePanel, s.k));
    ScratchArray<float> a(panel_rows * depth), b(depth * panel_columns),
        c(panel_rows * panel_columns);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t item = task / (row_tiles * column_tiles);
      const int64_t m0 = task / column_tiles % row_tiles * side;
      const int64_t n0 = task % column_tiles * side;
      const int64_t rows = std::min(side, s.m - m0);
      const int64_t columns = std::min(side, s.n - n0);
      const Narrow* a_item = lhs + item * s.m * s.k;
      const Narrow* b_item = rhs + item * s.k * s.n;
      GemmArgs<float> g{};
      g.m = rows;
      g.n = columns;
      g.c = c.data();
      g.ldc = columns;
      g.a_transposed = s.lhs_transposed;
      g.b_transposed = s.rhs_transposed;
      g.a = a.data();
      g.b = b.data();
      if (s.k == 0) Gemm(g);
      for (int64_t p0 = 0; p0 < s.k; p0 += kWidePanel) {
        const int64_t p = std::min(kWidePanel, s.k - p0);
        // Each block is widened in its stored orientation: rows of the
        // operand as stored, so every copied run is contiguous.
        if (s.lhs_transposed) {
          Widen(a_item + p0 * s.m + m0, s.m, p, rows, a.data());
          g.lda = rows;
        } else {
          Widen(a_item + m0 * s.k + p0, s.k, rows, p, a.data());
          g.lda = p;
        }
        if (s.rhs_transposed) {
          Widen(b_item + n0 * s.k + p0, s.k, columns, p, b.data());
          g.ldb = p;
        } else {
          Widen(b_item + p0 * s.n + n0, s.n, p, columns, b.data());
          g.ldb = columns;
        }
        g.k = p;
        g.accumulate = p0 > 0;
        Gemm(g);
      }
      NarrowRows(c.data(), rows, columns, out + item * s.m * s.n + m0 * s.n + n0, s.n);
    }
  });
}

// The packed copies the native paths hold at most (in the calling thread's
// scratch, which keeps its largest size); larger products take the others.
constexpr int64_t kMaxPackedBytes = int64_t{32} << 20;

// The packing of B's panels across the threads: `body(item, first, last)`
// for runs of panels [first, last) of one batch item; `cost` is a panel's.
template <typename Body>
void ForPanelRuns(int64_t batch, int64_t panels, int64_t cost, const Body& body) {
  ParallelFor(batch * panels, cost, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end;) {
      const int64_t item = t / panels, first = t % panels;
      const int64_t last = std::min(panels, first + (end - t));
      body(item, first, last);
      t += last - first;
    }
  });
}

// The products on packed panels of B (bf16, 8-bit): `body(item, m0, m1,
// p0, p1)` for tiles of rows [m0, m1) of A times groups of panels [p0, p1)
// of each batch item, over the threads. Tiles start at 96 rows (which stay
// in L2 across a group) and 8 panels, halved until every thread has one;
// `cost` is one row's work on one panel.
template <typename Body>
void ForPanelTiles(int64_t batch, int64_t m, int64_t panels, int64_t cost, const Body& body) {
  int64_t tile_rows = 96, tile_panels = 8;
  auto count = [&] {
    return batch * ((m + tile_rows - 1) / tile_rows) * ((panels + tile_panels - 1) / tile_panels);
  };
  while (count() < NumThreads() && tile_panels > 1) tile_panels /= 2;
  while (count() < NumThreads() && tile_rows > 12) tile_rows /= 2;
  const int64_t row_tiles = (m + tile_rows - 1) / tile_rows;
  const int64_t panel_tiles = (panels + tile_panels - 1) / tile_panels;
  ParallelFor(count(), tile_rows * tile_panels * cost, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t item = task / (row_tiles * panel_tiles);
      const int64_t m0 = task / panel_tiles % row_tiles * tile_rows;
      const int64_t p0 = task % panel_tiles * tile_panels;
      body(item, m0, std::min(m, m0 + tile_rows), p0, std::min(panels, p0 + tile_panels));
    }
  });
}

#if defined(KILN_DOT_BF16_NATIVE)
// Whether the CPU runs dot_bf16_avx512.cc: AVX512_BF16 (CPUID leaf 7,
// subleaf 1, EAX bit 5) with AVX512F, BW and VL. Checked here, in code
// compiled for the baseline instruction set.
bool HasAvx512Bf16() {
  static const bool has = [] {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl")) {
      return false;
    }
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0 && (eax & (1u << 5)) != 0;
  }();
  return has;
}

// bf16 products on VDPBF16PS where the CPU has it (dot_bf16_avx512.cc),
// for A stored row-major, an even depth and at least 8 columns (B's panels
// are padded to 32 columns: a matrix-vector product widened faster, 3.1
// against 3.8 ms at 2048 x 4096); false leaves the product to RunWidened.
// B is packed once, by panels across the threads, into scratch the tasks
// share; a task is a tile of rows times a group of panels (96 rows of A,
// 2 KiB each at depth 1024, stay in L2 across the group).
bool RunNativeBf16(const MatMulShape& s, const bfloat16* lhs, const bfloat16* rhs, bfloat16* out) {
  namespace native = dot_internal::avx512bf16;
  if (s.lhs_transposed || s.k % 2 != 0 || s.n < 8 || !HasAvx512Bf16()) return false;
  const int64_t panels = (s.n + native::kPanelColumns - 1) / native::kPanelColumns;
  const int64_t panel_elements = s.k * native::kPanelColumns;
  if (s.batch * panels * panel_elements * 2 > kMaxPackedBytes) return false;
  const auto* a = reinterpret_cast<const uint16_t*>(lhs);
  const auto* b = reinterpret_cast<const uint16_t*>(rhs);
  auto* c = reinterpret_cast<uint16_t*>(out);
  ScratchArray<uint16_t> packed(static_cast<size_t>(s.batch * panels * panel_elements));
  ForPanelRuns(s.batch, panels, panel_elements, [&](int64_t item, int64_t first, int64_t last) {
    native::PackPanels(b + item * s.k * s.n, s.rhs_transposed ? s.k : s.n, s.rhs_transposed, s.k,
                       s.n, first, last, packed.data() + item * panels * panel_elements);
  });
  ForPanelTiles(s.batch, s.m, panels, native::kPanelColumns * std::max<int64_t>(1, s.k),
                [&](int64_t item, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
                  native::Multiply(a + item * s.m * s.k, s.k,
                                   packed.data() + item * panels * panel_elements, s.k, s.n, m0, m1,
                                   p0, p1, c + item * s.m * s.n, s.n);
                });
  return true;
}
#endif

// 8-bit products (MatMulInt8). The native path computes P = (A + a_off) x
// (B - b_off) on VPDPBUSD, A + a_off unsigned bytes and B - b_off signed
// ones (a_off = 128 for a signed A, b_off = 128 for an unsigned B, else
// 0), then A x B = P + b_off * rowsum(A) - a_off * colsum(B) + a_off *
// b_off * k, all wrapping in 32 bits.
#if defined(KILN_DOT_INT8_NATIVE)
uint32_t WrapMul(int64_t a, int64_t b) {
  return static_cast<uint32_t>(a) * static_cast<uint32_t>(b);
}

// Whether the CPU runs dot_int8_avx512.cc: AVX512_VNNI with AVX512F, BW
// and VL. Checked here, in code compiled for the baseline instruction set.
bool HasAvx512Vnni() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  }();
  return has;
}

bool RunNativeInt8(bool a_signed, bool b_unsigned, const MatMulShape& s, const uint8_t* a,
                   const uint8_t* b, int32_t* c) {
  namespace native = dot_internal::avx512vnni;
  if (!HasAvx512Vnni()) return false;
  const int64_t quads = (s.k + 3) / 4;
  const int64_t depth = quads * 4;
  const int64_t panels = (s.n + native::kPanelColumns - 1) / native::kPanelColumns;
  const int64_t panel_bytes = quads * native::kPanelColumns * 4;
  if (s.batch * (panels * panel_bytes + s.m * depth) > kMaxPackedBytes) return false;
  const uint32_t a_off = a_signed ? 128 : 0;
  const uint32_t b_off = b_unsigned ? 128 : 0;
  ScratchArray<uint8_t> packed_a(static_cast<size_t>(s.batch * s.m * depth));
  ScratchArray<int8_t> packed_b(static_cast<size_t>(s.batch * panels * panel_bytes));
  ScratchArray<int32_t> row_add(static_cast<size_t>(s.batch * s.m));
  ScratchArray<int32_t> column_add(static_cast<size_t>(s.batch * s.n));
  // A's rows as unsigned bytes, each row's sum of A as it is.
  const uint8_t flip = a_signed ? 0x80 : 0;
  ParallelFor(s.batch * s.m, s.k, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t item = row / s.m, i = row % s.m;
      const uint8_t* from = a + item * s.m * s.k;
      uint8_t* to = packed_a.data() + row * depth;
      int64_t sum = 0;
      if (s.lhs_transposed) {
        for (int64_t p = 0; p < s.k; ++p) to[p] = from[p * s.m + i];
      } else {
        std::memcpy(to, from + i * s.k, static_cast<size_t>(s.k));
      }
      // (Separate loops for each sign, so that they vectorize.)
      if (a_signed) {
        for (int64_t p = 0; p < s.k; ++p) {
          sum += static_cast<int8_t>(to[p]);
          to[p] ^= flip;
        }
      } else {
        for (int64_t p = 0; p < s.k; ++p) sum += to[p];
      }
      std::fill(to + s.k, to + depth, uint8_t{0});
      row_add.data()[row] = static_cast<int32_t>(WrapMul(b_off, sum));
    }
  });
  ForPanelRuns(s.batch, panels, panel_bytes, [&](int64_t item, int64_t first, int64_t last) {
    int32_t* sums = column_add.data() + item * s.n;
    native::PackPanels(b + item * s.k * s.n, s.rhs_transposed ? s.k : s.n, s.rhs_transposed,
                       b_unsigned, s.k, s.n, first, last,
                       packed_b.data() + item * panels * panel_bytes, sums);
    const int64_t c0 = first * native::kPanelColumns;
    const int64_t c1 = std::min(s.n, last * native::kPanelColumns);
    for (int64_t col = c0; col < c1; ++col) {
      sums[col] = static_cast<int32_t>(WrapMul(a_off, b_off) * static_cast<uint32_t>(s.k) -
                                       WrapMul(a_off, sums[col]));
    }
  });
  ForPanelTiles(s.batch, s.m, panels, native::kPanelColumns * std::max<int64_t>(1, quads),
                [&](int64_t item, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
                  native::Multiply(packed_a.data() + item * s.m * depth, depth,
                                   packed_b.data() + item * panels * panel_bytes, s.k, s.n, m0, m1,
                                   p0, p1, row_add.data() + item * s.m,
                                   column_add.data() + item * s.n, c + item * s.m * s.n, s.n);
                });
  return true;
}

// s16 x s16 -> s32 on VPDPWSSD (MatMulInt16).
bool RunNativeInt16(const MatMulShape& s, const int16_t* a, const int16_t* b, int32_t* c) {
  namespace native = dot_internal::avx512vnni;
  if (!HasAvx512Vnni()) return false;
  const int64_t pairs = (s.k + 1) / 2;
  const int64_t depth = pairs * 2;
  const int64_t panels = (s.n + native::kPanelColumns - 1) / native::kPanelColumns;
  const int64_t panel_elements = pairs * native::kPanelColumns * 2;
  if (s.batch * (panels * panel_elements + s.m * depth) * 2 > kMaxPackedBytes) return false;
  ScratchArray<int16_t> packed_a(static_cast<size_t>(s.batch * s.m * depth));
  ScratchArray<int16_t> packed_b(static_cast<size_t>(s.batch * panels * panel_elements));
  ParallelFor(s.batch * s.m, s.k, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t item = row / s.m, i = row % s.m;
      const int16_t* from = a + item * s.m * s.k;
      int16_t* to = packed_a.data() + row * depth;
      if (s.lhs_transposed) {
        for (int64_t p = 0; p < s.k; ++p) to[p] = from[p * s.m + i];
      } else {
        std::memcpy(to, from + i * s.k, static_cast<size_t>(s.k) * sizeof(int16_t));
      }
      std::fill(to + s.k, to + depth, int16_t{0});
    }
  });
  ForPanelRuns(s.batch, panels, panel_elements, [&](int64_t item, int64_t first, int64_t last) {
    native::PackPanels16(b + item * s.k * s.n, s.rhs_transposed ? s.k : s.n, s.rhs_transposed, s.k,
                         s.n, first, last, packed_b.data() + item * panels * panel_elements);
  });
  ForPanelTiles(s.batch, s.m, panels, native::kPanelColumns * std::max<int64_t>(1, pairs),
                [&](int64_t item, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
                  native::Multiply16(packed_a.data() + item * s.m * depth, depth,
                                     packed_b.data() + item * panels * panel_elements, s.k, s.n, m0,
                                     m1, p0, p1, c + item * s.m * s.n, s.n);
                });
  return true;
}

// s32 x s32 -> s32 (wrapping, as the spec's products) as s16 products on
// VPDPWSSD, where there is no 32-bit multiply-add: with x = xh * 2^16 + xl
// (xl the signed low half, xh the rest wrapped to 16 bits), a * b =
// al * bl + 2^16 * (ah * bl + al * bh) modulo 2^32, and the two cross
// terms are one product of depth 2k ([ah al] x [bl; bh]). 512^3: 1.25-1.37
// ms on two Zen 4 cores; Eigen 3.4 has no AVX int packets (its GEMM took
// 9.8 ms) and the loop 8.9 ms. False where the s16 kernel would not take
// the operands (no VNNI, or too big for its packing), and for products too
// small to repay the splitting (the loop's).
bool RunInt32OnInt16(const MatMulShape& s, const int32_t* a, const int32_t* b, int32_t* c) {
  constexpr int64_t kMinProduct = 16 * 16 * 16;
  if (!HasAvx512Vnni() || s.accumulate || s.k == 0 || s.m * s.n * s.k < kMinProduct) {
    return false;
  }
  const int64_t k = s.k, m = s.m, n = s.n;
  // The halves (three s16 copies of each operand) and the cross sums, under
  // the packing cap the s16 kernel applies after: scratch grows to the
  // largest demand and stays, so a product the kernel would refuse must not
  // be split first.
  if (s.batch * (6 * (m * k + k * n) + 4 * m * n) > kMaxPackedBytes) return false;
  ScratchArray<int16_t> low_a(static_cast<size_t>(s.batch * m * k));
  ScratchArray<int16_t> both_a(static_cast<size_t>(s.batch * m * 2 * k));
  ScratchArray<int16_t> low_b(static_cast<size_t>(s.batch * k * n));
  ScratchArray<int16_t> both_b(static_cast<size_t>(s.batch * 2 * k * n));
  ScratchArray<int32_t> cross(static_cast<size_t>(s.batch * m * n));
  const auto low = [](int32_t x) { return static_cast<int16_t>(static_cast<uint16_t>(x)); };
  const auto high = [](int32_t x, int16_t l) {
    return static_cast<int16_t>(
        static_cast<uint16_t>((static_cast<uint32_t>(x) - static_cast<uint32_t>(l)) >> 16));
  };
  ParallelFor(s.batch * m, 2 * k, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t item = row / m, i = row % m;
      const int32_t* from = a + item * m * k;
      int16_t* l = low_a.data() + row * k;
      int16_t* both = both_a.data() + row * 2 * k;
      for (int64_t p = 0; p < k; ++p) {
        const int32_t x = s.lhs_transposed ? from[p * m + i] : from[i * k + p];
        l[p] = both[k + p] = low(x);
        both[p] = high(x, l[p]);
      }
    }
  });
  ParallelFor(s.batch * k, 2 * n, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t item = row / k, p = row % k;
      const int32_t* from = b + item * k * n;
      int16_t* l = low_b.data() + row * n;
      int16_t* upper = both_b.data() + (item * 2 * k + p) * n;
      int16_t* lower = upper + k * n;
      for (int64_t j = 0; j < n; ++j) {
        const int32_t x = s.rhs_transposed ? from[j * k + p] : from[p * n + j];
        l[j] = upper[j] = low(x);
        lower[j] = high(x, l[j]);
      }
    }
  });
  MatMulShape lows{s.batch, m, n, k, false, false, false};
  MatMulShape crosses{s.batch, m, n, 2 * k, false, false, false};
  if (!RunNativeInt16(crosses, both_a.data(), both_b.data(), cross.data()) ||
      !RunNativeInt16(lows, low_a.data(), low_b.data(), c)) {
    return false;
  }
  ParallelFor(s.batch * m, n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin * n; i < end * n; ++i) {
      c[i] = static_cast<int32_t>(static_cast<uint32_t>(c[i]) +
                                  (static_cast<uint32_t>(cross.data()[i]) << 16));
    }
  });
  return true;
}
#endif

// The portable form of the integer products: rows of 32-bit sums of
// operands of any integer types, wrapping (in per-thread scratch: steady
// calls allocate nothing).
template <typename A, typename B>
void RunWideningLoop(const MatMulShape& s, const A* a, const B* b, int32_t* c) {
  auto wide = [](auto x) { return static_cast<uint32_t>(static_cast<int32_t>(x)); };
  ParallelFor(s.batch * s.m, s.n * s.k, [&](int64_t begin, int64_t end) {
    ScratchArray<uint32_t> row(static_cast<size_t>(s.n));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t item = r / s.m, i = r % s.m;
      const A* x = a + item * s.m * s.k;
      const B* y = b + item * s.k * s.n;
      std::fill(row.data(), row.data() + s.n, 0u);
      for (int64_t p = 0; p < s.k; ++p) {
        const uint32_t left = wide(s.lhs_transposed ? x[p * s.m + i] : x[i * s.k + p]);
        for (int64_t j = 0; j < s.n; ++j) {
          row.data()[j] += left * wide(s.rhs_transposed ? y[j * s.k + p] : y[p * s.n + j]);
        }
      }
      std::memcpy(c + r * s.n, row.data(), static_cast<size_t>(s.n) * sizeof(int32_t));
    }
  });
}

template <typename T>
void RunReference(const MatMulShape& s, const T* lhs, const T* rhs, T* out) {
  using Acc = typename Accumulator<T>::type;
  for (int64_t b = 0; b < s.batch; ++b) {
    const T* a = lhs + b * s.m * s.k;
    const T* r = rhs + b * s.k * s.n;
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        Acc acc{};
        for (int64_t p = 0; p < s.k; ++p) {
          const T x = s.lhs_transposed ? a[p * s.m + i] : a[i * s.k + p];
          const T y = s.rhs_transposed ? r[j * s.k + p] : r[p * s.n + j];
          acc = MulAdd<T, Acc>(acc, x, y);
        }
        out[(b * s.m + i) * s.n + j] = static_cast<T>(acc);
      }
    }
  }
}

}  // namespace

bool MatMulAccepts(ElementType type) {
  bool accepted = false;
  Status status = DispatchType(type, [&]<typename T>() { accepted = true; });
  return status.ok() && accepted;
}

Status MatMul(ElementType type, const MatMulShape& shape, const void* lhs, const void* rhs,
              void* out) {
  if (shape.accumulate && (type == ElementType::kBF16 || type == ElementType::kF16)) {
    return InvalidArgument("MatMul accumulates into ", GetElementTypeInfo(type).name,
                           " only by rounding each product once: not supported");
  }
  // No products (a batch of 0, as torch's samples of batched linear algebra
  // have): nothing to write, and the row split below divides by the batch.
  if (shape.batch == 0 || shape.m == 0 || shape.n == 0) return Status::Ok();
  if (type == ElementType::kBF16) {
#if defined(KILN_DOT_BF16_NATIVE)
    if (RunNativeBf16(shape, static_cast<const bfloat16*>(lhs), static_cast<const bfloat16*>(rhs),
                      static_cast<bfloat16*>(out))) {
      return Status::Ok();
    }
#endif
    RunWidened(shape, static_cast<const bfloat16*>(lhs), static_cast<const bfloat16*>(rhs),
               static_cast<bfloat16*>(out));
    return Status::Ok();
  }
  if (type == ElementType::kF16) {
    RunWidened(shape, static_cast<const half*>(lhs), static_cast<const half*>(rhs),
               static_cast<half*>(out));
    return Status::Ok();
  }
#if defined(KILN_DOT_INT8_NATIVE)
  if (type == ElementType::kS32 &&
      RunInt32OnInt16(shape, static_cast<const int32_t*>(lhs), static_cast<const int32_t*>(rhs),
                      static_cast<int32_t*>(out))) {
    return Status::Ok();
  }
#endif
  return DispatchType(type, [&]<typename T>() {
    RunMatMul<T>(shape, static_cast<const T*>(lhs), static_cast<const T*>(rhs),
                 static_cast<T*>(out));
  });
}

namespace {

Status MatMulInt8On(bool native, ElementType lhs_type, ElementType rhs_type,
                    const MatMulShape& shape, const void* lhs, const void* rhs, void* out) {
  auto byte = [](ElementType type) { return type == ElementType::kS8 || type == ElementType::kU8; };
  if (!byte(lhs_type) || !byte(rhs_type)) {
    return InvalidArgument("MatMulInt8 multiplies s8 and u8 matrices, found ",
                           GetElementTypeInfo(lhs_type).name, " x ",
                           GetElementTypeInfo(rhs_type).name);
  }
  if (shape.accumulate) return InvalidArgument("MatMulInt8 does not accumulate into its output");
  if (shape.batch == 0 || shape.m == 0 || shape.n == 0) return Status::Ok();
  if (shape.k == 0) {  // sums of nothing (the panels' kernels would write nothing)
    std::memset(out, 0, static_cast<size_t>(shape.batch * shape.m * shape.n) * sizeof(int32_t));
    return Status::Ok();
  }
  const bool a_signed = lhs_type == ElementType::kS8;
  const bool b_signed = rhs_type == ElementType::kS8;
  const auto* a = static_cast<const uint8_t*>(lhs);
  const auto* b = static_cast<const uint8_t*>(rhs);
  auto* c = static_cast<int32_t*>(out);
#if defined(KILN_DOT_INT8_NATIVE)
  if (native && RunNativeInt8(a_signed, !b_signed, shape, a, b, c)) return Status::Ok();
#else
  (void)native;
#endif
  auto rows = [&](const auto* x) {
    if (b_signed) {
      RunWideningLoop(shape, x, reinterpret_cast<const int8_t*>(b), c);
    } else {
      RunWideningLoop(shape, x, b, c);
    }
  };
  if (a_signed) {
    rows(reinterpret_cast<const int8_t*>(a));
  } else {
    rows(a);
  }
  return Status::Ok();
}

}  // namespace

Status MatMulInt8(ElementType lhs_type, ElementType rhs_type, const MatMulShape& shape,
                  const void* lhs, const void* rhs, void* out) {
  return MatMulInt8On(/*native=*/true, lhs_type, rhs_type, shape, lhs, rhs, out);
}

Status MatMulInt8Portable(ElementType lhs_type, ElementType rhs_type, const MatMulShape& shape,
                          const void* lhs, const void* rhs, void* out) {
  return MatMulInt8On(/*native=*/false, lhs_type, rhs_type, shape, lhs, rhs, out);
}

namespace {

Status MatMulInt16On(bool native, const MatMulShape& shape, const void* lhs, const void* rhs,
                     void* out) {
  if (shape.accumulate) return InvalidArgument("MatMulInt16 does not accumulate into its output");
  if (shape.batch == 0 || shape.m == 0 || shape.n == 0) return Status::Ok();
  if (shape.k == 0) {  // sums of nothing (the panels' kernels would write nothing)
    std::memset(out, 0, static_cast<size_t>(shape.batch * shape.m * shape.n) * sizeof(int32_t));
    return Status::Ok();
  }
  const auto* a = static_cast<const int16_t*>(lhs);
  const auto* b = static_cast<const int16_t*>(rhs);
  auto* c = static_cast<int32_t*>(out);
#if defined(KILN_DOT_INT8_NATIVE)
  if (native && RunNativeInt16(shape, a, b, c)) return Status::Ok();
#else
  (void)native;
#endif
  RunWideningLoop(shape, a, b, c);
  return Status::Ok();
}

}  // namespace

Status MatMulInt16(const MatMulShape& shape, const void* lhs, const void* rhs, void* out) {
  return MatMulInt16On(/*native=*/true, shape, lhs, rhs, out);
}

Status MatMulInt16Portable(const MatMulShape& shape, const void* lhs, const void* rhs, void* out) {
  return MatMulInt16On(/*native=*/false, shape, lhs, rhs, out);
}

bool MatMulInt8Native() {
#if defined(KILN_DOT_INT8_NATIVE)
  return HasAvx512Vnni();
#else
  return false;
#endif
}

Status MatMulReference(ElementType type, const MatMulShape& shape, const void* lhs, const void* rhs,
                       void* out) {
  return DispatchType(type, [&]<typename T>() {
    RunReference<T>(shape, static_cast<const T*>(lhs), static_cast<const T*>(rhs),
                    static_cast<T*>(out));
  });
}

bool MatMulBf16Native() {
#if defined(KILN_DOT_BF16_NATIVE)
  return HasAvx512Bf16();
#else
  return false;
#endif
}

const char* MatMulIsa() {
  switch (GetIsa()) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx2: return "avx2";
    default: return "baseline";
  }
}

}  // namespace kiln::kernels
