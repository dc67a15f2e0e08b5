// Dense linear-algebra kernels on Eigen's blocked algorithms (LLT, the
// triangular solver, HouseholderQR and HouseholderSequence) over mapped
// row-major memory; LU with LAPACK's partial pivoting; exact top-k by a
// filter and a partial sort per slice.
#include "kernels/solvers.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Householder>
#include <Eigen/QR>

#include "kernels/copy.h"
#include "kernels/dot.h"
#include "kernels/isa_clones.h"
#include "kernels/lapack.h"
#include "kernels/parallel.h"
#include "kernels/scratch.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

template <typename T, int Order>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>;
template <typename T, int Order>
using MatrixMap = Eigen::Map<Matrix<T, Order>>;
template <typename T, int Order>
using ConstMatrixMap = Eigen::Map<const Matrix<T, Order>>;
template <typename T>
using ColumnMajor = Matrix<T, Eigen::ColMajor>;

// Rough flop counts, for ParallelFor's split.
int64_t CubicCost(int64_t n) { return std::max<int64_t>(1, n * n * n / 3); }

// --- Cholesky ---------------------------------------------------------------

// Factors one matrix in place in `out` seen in storage order `Order`: its
// lower triangle in that view is the triangle to factor (the upper triangle
// of a row-major matrix is the lower triangle of its column-major view, and
// the factor of the transpose there is U^T, i.e. U in row-major memory).
template <typename T, int Order>
void CholeskyOne(const T* a, T* out, int64_t n) {
  if (n == 0) return;
  std::copy(a, a + n * n, out);
  MatrixMap<T, Order> matrix(out, n, n);
  Eigen::LLT<Eigen::Ref<Matrix<T, Order>>, Eigen::Lower> llt(matrix);
  bool ok = llt.info() == Eigen::Success;
  for (int64_t j = 0; j < n && ok; ++j) {
    for (int64_t i = j; i < n; ++i) {
      if (!std::isfinite(std::abs(matrix(i, j)))) ok = false;
    }
  }
  if (!ok) {
    const auto nan = std::numeric_limits<typename Eigen::NumTraits<T>::Real>::quiet_NaN();
    std::fill(out, out + n * n, T(nan));
    return;
  }
  matrix.template triangularView<Eigen::StrictlyUpper>().setZero();
}

// --- Triangular solve -------------------------------------------------------

// Solves M x = B in place in `x` ([k, columns], B's values) for a
// row-major triangular M; Mode is an Eigen triangular mode.
template <typename T, int Mode>
void SolveLeft(const T* m, T* x, int64_t k, int64_t columns) {
  ConstMatrixMap<T, Eigen::RowMajor> matrix(m, k, k);
  MatrixMap<T, Eigen::RowMajor> rhs(x, k, columns);
  matrix.template triangularView<Mode>().solveInPlace(rhs);
}

template <typename T>
void SolveLeftMode(const T* m, T* x, int64_t k, int64_t columns, bool lower, bool unit) {
  if (lower) {
    unit ? SolveLeft<T, Eigen::UnitLower>(m, x, k, columns)
         : SolveLeft<T, Eigen::Lower>(m, x, k, columns);
  } else {
    unit ? SolveLeft<T, Eigen::UnitUpper>(m, x, k, columns)
         : SolveLeft<T, Eigen::Upper>(m, x, k, columns);
  }
}

// The element type MatMul takes for T (f32, f64, c64, c128).
template <typename T>
constexpr ElementType GemmTypeOf() {
  if constexpr (std::is_same_v<T, float>) return ElementType::kF32;
  if constexpr (std::is_same_v<T, double>) return ElementType::kF64;
  if constexpr (std::is_same_v<T, std::complex<float>>) return ElementType::kC64;
  return ElementType::kC128;
}

// Rows of M per diagonal block of the blocked solve, and the order from
// which it is used: below it Eigen's substitution alone is as fast.
constexpr int64_t kSolveBlock = 64;
constexpr int64_t kBlockedSolveMin = 128;

// SolveLeftMode for large M in blocks of kSolveBlock rows, as XLA's
// triangular-solve expander does: each diagonal block D is inverted (by
// substitution on the identity) and its rows of X become D^-1 X[block], a
// product; the rows it has not reached then take its contribution,
// X[rest] -= M[rest, block] X[block], another. Both products run on
// MatMul's GEMM (the machine's widest vector ISA, split across threads)
// where substitution ran on Eigen's baseline-ISA loop.
template <typename T>
void SolveLeftBlocked(const T* m, T* x, int64_t k, int64_t columns, bool lower, bool unit) {
  ScratchArray<T> inverse(static_cast<size_t>(kSolveBlock * kSolveBlock));
  ScratchArray<T> panel(static_cast<size_t>(k * kSolveBlock));
  ScratchArray<T> solved(static_cast<size_t>(kSolveBlock * columns));
  const int64_t blocks = (k + kSolveBlock - 1) / kSolveBlock;
  for (int64_t step = 0; step < blocks; ++step) {
    // Lower: blocks top to bottom, the rows below take their share; upper:
    // bottom to top, the rows above.
    const int64_t block = lower ? step : blocks - 1 - step;
    const int64_t r0 = block * kSolveBlock, r1 = std::min(k, r0 + kSolveBlock), rows = r1 - r0;
    for (int64_t i = 0; i < rows; ++i) {  // the diagonal block, dense, into panel
      std::copy_n(m + (r0 + i) * k + r0, rows, panel.data() + i * rows);
    }
    std::fill_n(inverse.data(), rows * rows, T(0));
    for (int64_t i = 0; i < rows; ++i) inverse[static_cast<size_t>(i * rows + i)] = T(1);
    SolveLeftMode<T>(panel.data(), inverse.data(), rows, rows, lower, unit);
    MatMulShape shape;
    shape.m = rows;
    shape.n = columns;
    shape.k = rows;
    T* x_block = x + r0 * columns;
    // MatMul fails only for types it does not take, and it takes T.
    (void)MatMul(GemmTypeOf<T>(), shape, inverse.data(), x_block, solved.data());
    std::copy_n(solved.data(), rows * columns, x_block);
    const int64_t rest0 = lower ? r1 : 0, rest1 = lower ? k : r0;
    if (rest1 <= rest0) continue;
    for (int64_t i = rest0; i < rest1; ++i) {  // -M[rest, block], dense
      const T* from = m + i * k + r0;
      T* to = panel.data() + (i - rest0) * rows;
      for (int64_t j = 0; j < rows; ++j) to[j] = -from[j];
    }
    shape.m = rest1 - rest0;
    shape.accumulate = true;
    (void)MatMul(GemmTypeOf<T>(), shape, panel.data(), x_block, x + rest0 * columns);
  }
}

// SolveLeftMode, blocked where M is large enough to gain from it. The
// right-hand sides' columns are independent: each thread solves a band of
// them, copied dense, with its products on its own thread. With each
// product split across threads instead, a 256 x 256 f64 solve with 256
// right-hand sides took 0.33 ms through JAX (a wake-up and a wait per
// product; 0.37 ms with the diagonal blocks solved by substitution on
// Eigen's baseline-ISA loop rather than inverted and multiplied); in
// bands 0.22-0.24 ms, against 0.21 in the host's dtrsm (on a 2-core
// Zen 5).
template <typename T>
void SolveLeftLarge(const T* m, T* x, int64_t k, int64_t columns, bool lower, bool unit) {
  if (k < kBlockedSolveMin || columns < kSolveBlock) {
    SolveLeftMode<T>(m, x, k, columns, lower, unit);
    return;
  }
  const int64_t bands = std::min<int64_t>(NumThreads(), columns / kSolveBlock);
  if (bands <= 1) {
    SolveLeftBlocked<T>(m, x, k, columns, lower, unit);
    return;
  }
  ParallelFor(bands, CubicCost(k) / bands * columns / k, [&](int64_t begin, int64_t end) {
    const SerialKernelsScope serial;
    for (int64_t band = begin; band < end; ++band) {
      const int64_t c0 = columns * band / bands, c1 = columns * (band + 1) / bands;
      const int64_t width = c1 - c0;
      ScratchArray<T> dense(static_cast<size_t>(k * width));
      for (int64_t i = 0; i < k; ++i) {
        std::copy_n(x + i * columns + c0, width, dense.data() + i * width);
      }
      SolveLeftBlocked<T>(m, dense.data(), k, width, lower, unit);
      for (int64_t i = 0; i < k; ++i) {
        std::copy_n(dense.data() + i * width, width, x + i * columns + c0);
      }
    }
  });
}

struct TriangularProblem {
  int64_t m, n;
  bool left_side, lower, unit_diagonal;
  TriangularTranspose transpose;
};

// Per-thread scratch for TriangularSolveOne.
template <typename T>
struct TriangularScratch {
  std::vector<T> matrix, rhs;
};

// to = from^T for a rows x cols row-major `from` (kernels::CopyStrided's
// blocked transpose, split across threads when large).
template <typename T>
void Transpose(const T* from, int64_t rows, int64_t cols, T* to) {
  const int64_t dims[] = {cols, rows};
  const int64_t strides[] = {1, cols};
  CopyStrided(sizeof(T), dims, from, strides, to);
}

// Every case becomes one left-side solve M x = B with a row-major M (so
// Eigen's solver is instantiated 4 times per type, not 24): M = op(A) on
// the left; on the right x op(A) = B is op(A)^T x^T = B^T, M = op(A)^T. M
// is copied (transposed and/or conjugated) when it is not A itself, and
// B^T when solving on the right: both O(k^2) or O(mn) against the solve's
// O(k^2 n).
template <typename T>
void TriangularSolveOne(const T* a, const T* b, T* out, TriangularScratch<T>& scratch,
                        const TriangularProblem& p) {
  const int64_t k = p.left_side ? p.m : p.n;
  if (p.m * p.n == 0) return;
  bool transposed = p.transpose != TriangularTranspose::kNoTranspose;
  if (!p.left_side) transposed = !transposed;
  const bool conjugate = kIsComplex<T> && p.transpose == TriangularTranspose::kAdjoint;
  const T* m = a;
  if (transposed || conjugate) {
    scratch.matrix.resize(static_cast<size_t>(k * k));
    if (transposed) {
      Transpose(a, k, k, scratch.matrix.data());
    } else {
      std::copy_n(a, k * k, scratch.matrix.data());
    }
    if constexpr (kIsComplex<T>) {
      if (conjugate) {
        for (T& value : scratch.matrix) value = std::conj(value);
      }
    }
    m = scratch.matrix.data();
  }
  const bool lower = transposed ? !p.lower : p.lower;  // the triangle of M
  if (p.left_side) {
    std::copy(b, b + p.m * p.n, out);
    SolveLeftLarge<T>(m, out, k, p.n, lower, p.unit_diagonal);
    return;
  }
  scratch.rhs.resize(static_cast<size_t>(p.m * p.n));
  T* rhs = scratch.rhs.data();  // B^T: [n, m]
  Transpose(b, p.m, p.n, rhs);
  SolveLeftLarge<T>(m, rhs, k, p.m, lower, p.unit_diagonal);
  Transpose(rhs, p.n, p.m, out);
}

// --- QR ---------------------------------------------------------------------

template <typename T>
void QrOne(const T* a, T* out, T* taus, int64_t m, int64_t n) {
  if (m == 0 || n == 0) return;
  // Eigen factors column-major matrices fastest; its reflectors are
  // LAPACK's with tau conjugated (it applies H_i, LAPACK H_i^H).
  ColumnMajor<T> matrix = ConstMatrixMap<T, Eigen::RowMajor>(a, m, n);
  Eigen::HouseholderQR<Eigen::Ref<ColumnMajor<T>>> qr(matrix);
  MatrixMap<T, Eigen::RowMajor>(out, m, n) = matrix;
  const auto& coefficients = qr.hCoeffs();
  for (int64_t i = 0; i < std::min(m, n); ++i) {
    if constexpr (kIsComplex<T>) {
      taus[i] = std::conj(coefficients(i));
    } else {
      taus[i] = coefficients(i);
    }
  }
}

template <typename T>
void HouseholderProductOne(const T* a, const T* taus, T* out, int64_t m, int64_t n, int64_t k) {
  const ColumnMajor<T> vectors = ConstMatrixMap<T, Eigen::RowMajor>(a, m, n).leftCols(k);
  using Coefficients = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>;
  const Coefficients coefficients(taus, k);
  ColumnMajor<T> q = ColumnMajor<T>::Identity(m, n);
  // Eigen's H_i = I - h_i v_i v_i^H with h_i = LAPACK's tau_i.
  Eigen::HouseholderSequence<ColumnMajor<T>, Coefficients> sequence(vectors, coefficients);
  sequence.setLength(k);
  sequence.applyThisOnTheLeft(q);
  MatrixMap<T, Eigen::RowMajor>(out, m, n) = q;
}

// --- Top-k ------------------------------------------------------------------

// A key's rank in `order` as a signed integer, larger first: 32 bits for
// keys of up to 32 (floats through float, exact), 64 for the rest (floats
// by the total order after `order`'s canonicalization; kApproxMin reversed
// by ~, which reverses a signed integer's order).
template <typename T>
using RankType = std::conditional_t<(sizeof(T) <= 4), int32_t, int64_t>;

template <typename T>
RankType<T> OrderKey(T value, TopKOrder order) {
  using R = RankType<T>;
  R key = 0;
  if constexpr (std::is_same_v<T, bool>) {
    key = value ? 1 : 0;
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T> && sizeof(T) >= 4) {
    key = static_cast<R>(value ^ (T{1} << (8 * sizeof(T) - 1)));
  } else if constexpr (std::is_integral_v<T>) {
    key = static_cast<R>(value);
  } else if constexpr (kIsFloat<T>) {
    using F = std::conditional_t<(sizeof(T) <= 4), float, double>;
    auto x = static_cast<F>(static_cast<ComputeType<T>>(value));
    if (order != TopKOrder::kTotalOrderDescending) {
      if (std::isnan(x)) x = std::numeric_limits<F>::quiet_NaN();
      if (x == 0) x = 0;
    }
    const auto bits = std::bit_cast<R>(x);
    key = bits < 0 ? bits ^ std::numeric_limits<R>::max() : bits;
  }
  return order == TopKOrder::kApproxMin ? ~key : key;
}

// A candidate of top-k: better ranks first, ties by position.
template <typename R>
struct Ranked {
  R key;
  int64_t index;
  bool operator<(const Ranked& other) const {  // "comes before"
    return key != other.key ? key > other.key : index < other.index;
  }
};

// The k best of one slice (`size` keys `stride` apart) into `best`, in
// order. Where k is small beside the slice (the usual top-k), a filter:
// candidates beating the k-th best seen so far are kept, and cut back to
// the k best when `best` fills; on random data few elements pass after the
// first ones, so the slice costs about one comparison per element. Else a
// partial sort of every element.
template <typename T, typename R>
void SelectBest(const T* keys, int64_t size, int64_t stride, int64_t k, TopKOrder order,
                std::span<Ranked<R>> best) {
  const auto capacity = static_cast<int64_t>(best.size());
  if (capacity >= size) {
    for (int64_t j = 0; j < size; ++j)
      best[static_cast<size_t>(j)] = {OrderKey(keys[j * stride], order), j};
    std::partial_sort(best.begin(), best.begin() + k, best.begin() + size);
    return;
  }
  int64_t count = k;
  for (int64_t j = 0; j < k; ++j)
    best[static_cast<size_t>(j)] = {OrderKey(keys[j * stride], order), j};
  // Every candidate still wanted ranks above the k-th best; one equal to it
  // comes later, so ranks below it.
  R threshold = std::min_element(best.begin(), best.begin() + k, [](const auto& a, const auto& b) {
                  return a.key < b.key;
                })->key;
  for (int64_t j = k; j < size; ++j) {
    const R key = OrderKey(keys[j * stride], order);
    if (key <= threshold) continue;
    best[static_cast<size_t>(count++)] = {key, j};
    if (count == capacity) {
      std::nth_element(best.begin(), best.begin() + (k - 1), best.begin() + count);
      threshold = best[static_cast<size_t>(k - 1)].key;
      count = k;
    }
  }
  std::partial_sort(best.begin(), best.begin() + k, best.begin() + count);
}

template <typename T>
void TopKTyped(const T* keys, T* out_keys, int64_t outer, int64_t size, int64_t inner, int64_t k,
               TopKOrder order, const void* const* payloads, void* const* out_payloads,
               const int64_t* payload_bytes, int64_t num_payloads, int32_t* out_indices) {
  using R = RankType<T>;
  // Room for the filter's candidates: twice k and 256 more,
  // or every element when k is a large part of the slice.
  const int64_t capacity = 2 * k + 256 >= size / 2 ? size : 2 * k + 256;
  ParallelFor(outer * inner, size * 2, [&](int64_t begin, int64_t end) {
    ScratchArray<Ranked<R>> scratch(static_cast<size_t>(capacity));
    const std::span<Ranked<R>> best(scratch.begin(), scratch.end());
    for (int64_t slice = begin; slice < end; ++slice) {
      const int64_t o = slice / inner, i = slice % inner;
      const int64_t in_base = o * size * inner + i, out_base = o * k * inner + i;
      SelectBest<T, R>(keys + in_base, size, inner, k, order, best);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t from = in_base + best[static_cast<size_t>(j)].index * inner;
        const int64_t to = out_base + j * inner;
        out_keys[to] = keys[from];
        if (out_indices != nullptr) {
          out_indices[to] = static_cast<int32_t>(best[static_cast<size_t>(j)].index);
        }
        for (int64_t p = 0; p < num_payloads; ++p) {
          const auto bytes = static_cast<size_t>(payload_bytes[p]);
          std::memcpy(static_cast<uint8_t*>(out_payloads[p]) + static_cast<size_t>(to) * bytes,
                      static_cast<const uint8_t*>(payloads[p]) + static_cast<size_t>(from) * bytes,
                      bytes);
        }
      }
    }
  });
}

// --- LU ----------------------------------------------------------------------

// LAPACK's pivot measure: |x| for reals, |re| + |im| for complex (icamax).
template <typename T>
auto PivotMeasure(const T& x) {
  if constexpr (Eigen::NumTraits<T>::IsComplex) {
    return std::abs(x.real()) + std::abs(x.imag());
  } else {
    return std::abs(x);
  }
}

// LU with partial pivoting of one m x n row-major matrix in place (LAPACK
// getf2's order of swaps and updates): the first largest pivot per column,
// rows swapped whole, no scaling below a zero pivot.
template <typename T>
void LuOne(T* a, int32_t* pivots, int32_t* permutation, int64_t m, int64_t n) {
  MatrixMap<T, Eigen::RowMajor> lu(a, m, n);
  for (int64_t i = 0; i < m; ++i) permutation[i] = static_cast<int32_t>(i);
  const int64_t k_end = std::min(m, n);
  for (int64_t k = 0; k < k_end; ++k) {
    int64_t pivot = k;
    auto best = PivotMeasure(lu(k, k));
    for (int64_t i = k + 1; i < m; ++i) {
      const auto measure = PivotMeasure(lu(i, k));
      if (measure > best) {
        best = measure;
        pivot = i;
      }
    }
    pivots[k] = static_cast<int32_t>(pivot);
    if (pivot != k) {
      lu.row(k).swap(lu.row(pivot));
      std::swap(permutation[k], permutation[pivot]);
    }
    const T diagonal = lu(k, k);
    const int64_t below = m - k - 1;
    const int64_t right = n - k - 1;
    if (below == 0) continue;
    if (diagonal != T(0)) lu.col(k).tail(below) /= diagonal;
    if (right > 0) {
      lu.bottomRightCorner(below, right).noalias() -= lu.col(k).tail(below) * lu.row(k).tail(right);
    }
  }
}

// out[r * ldo + j] -= col[r * ldc] * row[j] for r < rows, j < len: the
// rank-1 updates of the blocked LU's panels and of its rows of U, one plain
// function per type built per ISA (the templates compile for baseline
// x86-64).
#define KILN_SUBTRACT_OUTER(name, T)                                                      \
  KILN_ISA_CLONES void name(T* out, int64_t ldo, const T* col, int64_t ldc, const T* row, \
                            int64_t rows, int64_t len) {                                  \
    for (int64_t r = 0; r < rows; ++r) {                                                  \
      const T c = col[r * ldc];                                                           \
      T* o = out + r * ldo;                                                               \
      for (int64_t j = 0; j < len; ++j) o[j] -= c * row[j];                               \
    }                                                                                     \
  }
KILN_SUBTRACT_OUTER(SubtractOuterF32, float)
KILN_SUBTRACT_OUTER(SubtractOuterF64, double)
#undef KILN_SUBTRACT_OUTER

template <typename T>
void SubtractOuter(T* out, int64_t ldo, const T* col, int64_t ldc, const T* row, int64_t rows,
                   int64_t len) {
  if constexpr (std::is_same_v<T, float>) {
    SubtractOuterF32(out, ldo, col, ldc, row, rows, len);
  } else if constexpr (std::is_same_v<T, double>) {
    SubtractOuterF64(out, ldo, col, ldc, row, rows, len);
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      const T c = col[r * ldc];
      for (int64_t j = 0; j < len; ++j) out[r * ldo + j] -= c * row[j];
    }
  }
}

// Columns per panel of the blocked LU, the order from which it is used,
// and the rows of the trailing matrix each product updates (its scratch
// stays a slice of the matrix, not a copy of it: kernel scratch is kept).
constexpr int64_t kLuBlock = 32;
constexpr int64_t kBlockedLuMin = 96;
constexpr int64_t kLuUpdateRows = 256;

// LU with partial pivoting of one m x n row-major matrix in place, blocked
// as LAPACK's getrf is: a panel of kLuBlock columns is factored as LuOne
// factors a matrix (the same pivots: the first largest per column, whole
// rows swapped, no scaling below a zero pivot; each column scaled by its
// pivot's reciprocal as getf2 does), the panel's rows of U solved to its
// right, and the rest of the matrix updated by one product on MatMul's
// GEMM. The panel is factored in a column-major copy, so pivot searches,
// scaling and updates run along contiguous columns. For runs without the
// host's getrf (LuDecomposition); on a 2-core Zen 5, 256 x 256 in f64 took
// 0.35 ms through JAX against 0.41 in getrf.
template <typename T>
void LuBlocked(T* a, int32_t* pivots, int32_t* permutation, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i) permutation[i] = static_cast<int32_t>(i);
  const int64_t k_end = std::min(m, n);
  ScratchArray<T> lower(static_cast<size_t>(std::min(m, kLuUpdateRows) * kLuBlock));
  ScratchArray<T> upper(static_cast<size_t>(kLuBlock * n));
  ScratchArray<T> rest(static_cast<size_t>(std::min(m, kLuUpdateRows) * n));
  ScratchArray<T> panel(static_cast<size_t>(m * kLuBlock));  // column-major
  for (int64_t j0 = 0; j0 < k_end; j0 += kLuBlock) {
    const int64_t j1 = std::min(k_end, j0 + kLuBlock), width = j1 - j0, rows = m - j0;
    // The panel's columns from row j0 down, each contiguous: pivot
    // searches, scaling and updates then run along columns.
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < width; ++c) {
        panel[static_cast<size_t>(c * rows + r)] = a[(j0 + r) * n + j0 + c];
      }
    }
    for (int64_t c = 0; c < width; ++c) {
      T* column = panel.data() + c * rows;
      int64_t pivot = c;
      auto best = PivotMeasure(column[c]);
      for (int64_t r = c + 1; r < rows; ++r) {
        const auto measure = PivotMeasure(column[r]);
        if (measure > best) {
          best = measure;
          pivot = r;
        }
      }
      pivots[j0 + c] = static_cast<int32_t>(j0 + pivot);
      if (pivot != c) {
        for (int64_t c2 = 0; c2 < width; ++c2) {
          std::swap(panel[static_cast<size_t>(c2 * rows + c)],
                    panel[static_cast<size_t>(c2 * rows + pivot)]);
        }
        std::swap(permutation[j0 + c], permutation[j0 + pivot]);
      }
      const T diagonal = column[c];
      if (diagonal != T(0)) {
        // As getf2: times the reciprocal unless it would overflow.
        if (std::abs(diagonal) >= std::numeric_limits<typename Eigen::NumTraits<T>::Real>::min()) {
          const T reciprocal = T(1) / diagonal;
          for (int64_t r = c + 1; r < rows; ++r) column[r] *= reciprocal;
        } else {
          for (int64_t r = c + 1; r < rows; ++r) column[r] /= diagonal;
        }
      }
      for (int64_t c2 = c + 1; c2 < width; ++c2) {
        T* other = panel.data() + c2 * rows;
        const T factor = other[c];
        SubtractOuter<T>(other + c + 1, 0, &factor, 0, column + c + 1, 1, rows - c - 1);
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < width; ++c) {
        a[(j0 + r) * n + j0 + c] = panel[static_cast<size_t>(c * rows + r)];
      }
    }
    // The panel's row swaps in the columns left and right of it.
    for (int64_t k = j0; k < j1; ++k) {
      const int64_t p = pivots[k];
      if (p == k) continue;
      std::swap_ranges(a + k * n, a + k * n + j0, a + p * n);
      std::swap_ranges(a + k * n + j1, a + (k + 1) * n, a + p * n + j1);
    }
    const int64_t right = n - j1, below = m - j1;
    if (right <= 0) continue;
    // U's rows of the panel right of it: L11^-1 A12 (L11 unit lower).
    for (int64_t p = j0; p + 1 < j1; ++p) {
      SubtractOuter<T>(a + (p + 1) * n + j1, n, a + (p + 1) * n + p, n, a + p * n + j1, j1 - p - 1,
                       right);
    }
    if (below <= 0) continue;
    // A22 -= L21 U12, kLuUpdateRows rows at a time through dense copies
    // (MatMul takes dense operands).
    for (int64_t i = 0; i < width; ++i) {
      std::copy_n(a + (j0 + i) * n + j1, right, upper.data() + i * right);
    }
    for (int64_t r0 = 0; r0 < below; r0 += kLuUpdateRows) {
      const int64_t rows_now = std::min(kLuUpdateRows, below - r0);
      for (int64_t i = 0; i < rows_now; ++i) {
        const T* from = a + (j1 + r0 + i) * n + j0;
        for (int64_t j = 0; j < width; ++j) lower[static_cast<size_t>(i * width + j)] = -from[j];
        std::copy_n(a + (j1 + r0 + i) * n + j1, right, rest.data() + i * right);
      }
      MatMulShape shape;
      shape.m = rows_now;
      shape.n = right;
      shape.k = width;
      shape.accumulate = true;
      // MatMul fails only for types it does not take, and it takes T.
      (void)MatMul(GemmTypeOf<T>(), shape, lower.data(), upper.data(), rest.data());
      for (int64_t i = 0; i < rows_now; ++i) {
        std::copy_n(rest.data() + i * right, right, a + (j1 + r0 + i) * n + j1);
      }
    }
  }
}

}  // namespace

// --- LAPACK from the host process (kernels/lapack.h) -------------------------

// Below this size Kiln's own factorizations win (no copies, no call into a
// library that wakes its threads).
constexpr int64_t kLapackMinSize = 32;

// Whether a factorization whose smallest side is `side` runs on the lent
// routine: large enough, and every matrix's element count in LAPACK's
// 32-bit integers, which it indexes with (else Kiln's own kernels, which
// take any size).
bool UseLapack(int64_t side, std::initializer_list<int64_t> sizes) {
  if (side < kLapackMinSize) return false;
  for (int64_t size : sizes) {
    if (!lapack::FitsInt(size)) return false;
  }
  return true;
}

// A row-major matrix is the column-major view of its transpose: potrf and
// trsm run on Kiln's memory as it is, with triangles and sides exchanged.

// Cholesky through potrf: row-major L (A = L L^H) is the column-major U of
// A^T = conj(A), whose upper triangle is A's lower one; likewise for U.
template <typename T>
bool CholeskyLapack(lapack::Potrf* potrf, const T* a, T* out, int64_t n, bool lower) {
  std::copy(a, a + n * n, out);
  char uplo = lower ? 'U' : 'L';
  int size = static_cast<int>(n), lda = size, info = 0;
  potrf(&uplo, &size, out, &lda, &info);
  bool ok = info == 0;
  for (int64_t i = 0; i < n * n && ok; ++i) ok = std::isfinite(std::abs(out[i]));
  if (!ok) {
    const auto nan = std::numeric_limits<typename Eigen::NumTraits<T>::Real>::quiet_NaN();
    std::fill(out, out + n * n, T(nan));
    return true;
  }
  for (int64_t i = 0; i < n; ++i) {  // the other triangle, which potrf leaves as it was
    if (lower) {
      std::fill(out + i * n + i + 1, out + (i + 1) * n, T(0));
    } else {
      std::fill(out + i * n, out + i * n + i, T(0));
    }
  }
  return true;
}

Status Cholesky(ElementType type, const void* a, void* out, int64_t batch, int64_t n, bool lower) {
  lapack::Potrf* potrf = UseLapack(n, {n * n}) ? lapack::GetPotrf(type) : nullptr;
  const QuietPoolWorkers quiet(potrf != nullptr);  // OpenBLAS's threads do the work
  return DispatchLinalgType(type, "cholesky", [&]<typename T>() {
    ParallelFor(batch, CubicCost(n), [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const T* from = static_cast<const T*>(a) + item * n * n;
        T* to = static_cast<T*>(out) + item * n * n;
        if (potrf != nullptr) {
          CholeskyLapack<T>(potrf, from, to, n, lower);
        } else if (lower) {
          CholeskyOne<T, Eigen::RowMajor>(from, to, n);
        } else {
          CholeskyOne<T, Eigen::ColMajor>(from, to, n);
        }
      }
    });
  });
}

Status TriangularSolve(ElementType type, const void* a, const void* b, void* out, int64_t batch,
                       int64_t m, int64_t n, bool left_side, bool lower, bool unit_diagonal,
                       TriangularTranspose transpose) {
  const int64_t order = left_side ? m : n;
  // The host's dtrsm where it was lent (XLA's CPU backend's library);
  // without it, Eigen's substitution, blocked on Kiln's GEMM for large
  // left-side solves (SolveLeftLarge).
  lapack::Trsm* trsm = UseLapack(order, {order * order, m * n}) ? lapack::GetTrsm(type) : nullptr;
  const QuietPoolWorkers quiet(trsm != nullptr);  // OpenBLAS's threads do the work
  return DispatchLinalgType(type, "triangular_solve", [&]<typename T>() {
    const TriangularProblem problem{m, n, left_side, lower, unit_diagonal, transpose};
    const int64_t k = left_side ? m : n;
    if (trsm != nullptr) {
      // op(A) X = B in row-major memory is X^T op(A)^T = B^T in the
      // column-major view (A^T there): the other side and triangle, the
      // same transposition.
      char side = left_side ? 'R' : 'L';
      char uplo = lower ? 'U' : 'L';
      char trans = transpose == TriangularTranspose::kNoTranspose ? 'N'
                   : transpose == TriangularTranspose::kTranspose ? 'T'
                                                                  : 'C';
      char diag = unit_diagonal ? 'U' : 'N';
      const T one(1);
      ParallelFor(batch, std::max<int64_t>(1, k * m * n), [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
          T* x = static_cast<T*>(out) + item * m * n;
          std::copy_n(static_cast<const T*>(b) + item * m * n, m * n, x);
          int rows = static_cast<int>(n), cols = static_cast<int>(m);
          int lda = static_cast<int>(k), ldb = static_cast<int>(n);
          if (m * n > 0) {
            trsm(&side, &uplo, &trans, &diag, &rows, &cols, &one,
                 static_cast<const T*>(a) + item * k * k, &lda, x, &ldb);
          }
        }
      });
      return;
    }
    ParallelFor(batch, std::max<int64_t>(1, k * k * (m * n / std::max<int64_t>(k, 1))),
                [&](int64_t begin, int64_t end) {
                  TriangularScratch<T> scratch;
                  for (int64_t item = begin; item < end; ++item) {
                    TriangularSolveOne<T>(static_cast<const T*>(a) + item * k * k,
                                          static_cast<const T*>(b) + item * m * n,
                                          static_cast<T*>(out) + item * m * n, scratch, problem);
                  }
                });
  });
}

// geqrf and orgqr/ungqr factor column-major memory: transposed into scratch
// and back. Their workspace is asked for first (lwork = -1).
template <typename T>
int WorkspaceOf(const T& query) {
  return static_cast<int>(std::clamp<double>(std::real(query), 1, INT32_MAX));
}

template <typename T>
void QrLapack(lapack::Geqrf* geqrf, const T* a, T* out, T* taus, int64_t m, int64_t n) {
  ScratchArray<T> column_major(static_cast<size_t>(m * n));
  lapack::Transpose(a, m, n, column_major.data());
  int rows = static_cast<int>(m), cols = static_cast<int>(n), lda = std::max(rows, 1), info = 0;
  T query{};
  int lwork = -1;
  geqrf(&rows, &cols, column_major.data(), &lda, taus, &query, &lwork, &info);
  lwork = WorkspaceOf(query);
  ScratchArray<T> work(static_cast<size_t>(lwork));
  geqrf(&rows, &cols, column_major.data(), &lda, taus, work.data(), &lwork, &info);
  lapack::Transpose(column_major.data(), n, m, out);
}

template <typename T>
void HouseholderProductLapack(lapack::Orgqr* orgqr, const T* a, const T* taus, T* out, int64_t m,
                              int64_t n, int64_t k) {
  ScratchArray<T> column_major(static_cast<size_t>(m * n));
  lapack::Transpose(a, m, n, column_major.data());
  int rows = static_cast<int>(m), cols = static_cast<int>(n), reflectors = static_cast<int>(k);
  int lda = std::max(rows, 1), info = 0;
  T query{};
  int lwork = -1;
  orgqr(&rows, &cols, &reflectors, column_major.data(), &lda, taus, &query, &lwork, &info);
  lwork = WorkspaceOf(query);
  ScratchArray<T> work(static_cast<size_t>(lwork));
  orgqr(&rows, &cols, &reflectors, column_major.data(), &lda, taus, work.data(), &lwork, &info);
  lapack::Transpose(column_major.data(), n, m, out);
}

Status HouseholderQr(ElementType type, const void* a, void* out, void* taus, int64_t batch,
                     int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  lapack::Geqrf* geqrf = UseLapack(k, {m * n}) ? lapack::GetGeqrf(type) : nullptr;
  const QuietPoolWorkers quiet(geqrf != nullptr);  // OpenBLAS's threads do the work
  return DispatchLinalgType(type, "Qr", [&]<typename T>() {
    ParallelFor(batch, std::max<int64_t>(1, 2 * m * n * k), [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        if (geqrf != nullptr) {
          QrLapack<T>(geqrf, static_cast<const T*>(a) + item * m * n,
                      static_cast<T*>(out) + item * m * n, static_cast<T*>(taus) + item * k, m, n);
          continue;
        }
        QrOne<T>(static_cast<const T*>(a) + item * m * n, static_cast<T*>(out) + item * m * n,
                 static_cast<T*>(taus) + item * k, m, n);
      }
    });
  });
}

Status HouseholderProduct(ElementType type, const void* a, const void* taus, void* out,
                          int64_t batch, int64_t m, int64_t n, int64_t k) {
  if (m < n || n < k) {
    return InvalidArgument("ProductOfElementaryHouseholderReflectors needs rows >= columns >= "
                           "reflectors; found ",
                           m, " x ", n, " with ", k, " reflectors");
  }
  lapack::Orgqr* orgqr = UseLapack(n, {m * n}) ? lapack::GetOrgqr(type) : nullptr;
  const QuietPoolWorkers quiet(orgqr != nullptr);  // OpenBLAS's threads do the work
  return DispatchLinalgType(type, "ProductOfElementaryHouseholderReflectors", [&]<typename T>() {
    ParallelFor(batch, std::max<int64_t>(1, 2 * m * n * k), [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        if (orgqr != nullptr) {
          HouseholderProductLapack<T>(orgqr, static_cast<const T*>(a) + item * m * n,
                                      static_cast<const T*>(taus) + item * k,
                                      static_cast<T*>(out) + item * m * n, m, n, k);
          continue;
        }
        HouseholderProductOne<T>(static_cast<const T*>(a) + item * m * n,
                                 static_cast<const T*>(taus) + item * k,
                                 static_cast<T*>(out) + item * m * n, m, n, k);
      }
    });
  });
}

// LU through getrf, which factors column-major memory: the matrix is
// transposed into scratch and back (LU of A^T is not A's). Its pivots are
// 1-based; the permutation is their swaps applied in order. `out` may be `a`.
template <typename T>
void LuLapack(lapack::Getrf* getrf, const T* a, T* out, int32_t* pivots, int32_t* permutation,
              int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  ScratchArray<T> column_major(static_cast<size_t>(m * n));
  ScratchArray<int> ipiv(static_cast<size_t>(k));
  lapack::Transpose(a, m, n, column_major.data());
  int rows = static_cast<int>(m), cols = static_cast<int>(n), lda = rows, info = 0;
  getrf(&rows, &cols, column_major.data(), &lda, ipiv.data(), &info);  // info > 0: a zero pivot
  lapack::Transpose(column_major.data(), n, m, out);
  for (int64_t i = 0; i < m; ++i) permutation[i] = static_cast<int32_t>(i);
  for (int64_t i = 0; i < k; ++i) {
    pivots[i] = static_cast<int32_t>(ipiv[static_cast<size_t>(i)] - 1);
    std::swap(permutation[i], permutation[pivots[i]]);
  }
}

Status LuDecomposition(ElementType type, const void* a, void* out, int32_t* pivots,
                       int32_t* permutation, int64_t batch, int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  // The host's getrf where it was lent: XLA's CPU backend's library, so
  // the same pivots and factors bit for bit (tests/python/
  // test_host_lapack.py). Without it (no SciPy: PyTorch/XLA, the kiln
  // tool; KILN_LAPACK=0), matrices from kBlockedLuMin on factor blocked on
  // Kiln's GEMM (LuBlocked), smaller ones column by column (LuOne).
  lapack::Getrf* getrf = UseLapack(k, {m * n}) ? lapack::GetGetrf(type) : nullptr;
  const QuietPoolWorkers quiet(getrf != nullptr);  // OpenBLAS's threads do the work
  return DispatchLinalgType(type, "LuDecomposition", [&]<typename T>() {
    ParallelFor(batch, std::max<int64_t>(1, m * n * k), [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        T* to = static_cast<T*>(out) + item * m * n;
        if (getrf != nullptr) {
          LuLapack<T>(getrf, static_cast<const T*>(a) + item * m * n, to, pivots + item * k,
                      permutation + item * m, m, n);
          continue;
        }
        if (to != static_cast<const T*>(a) + item * m * n) {
          std::memcpy(to, static_cast<const T*>(a) + item * m * n,
                      static_cast<size_t>(m * n) * sizeof(T));
        }
        if (k >= kBlockedLuMin) {
          LuBlocked<T>(to, pivots + item * k, permutation + item * m, m, n);
        } else {
          LuOne<T>(to, pivots + item * k, permutation + item * m, m, n);
        }
      }
    });
  });
}

Status TopK(ElementType key_type, const void* keys, void* out_keys, int64_t outer, int64_t size,
            int64_t inner, int64_t k, TopKOrder order, const void* const* payloads,
            void* const* out_payloads, const int64_t* payload_bytes, int64_t num_payloads,
            int32_t* out_indices) {
  if (k < 0 || k > size) return InvalidArgument("top-k of ", k, " out of ", size, " elements");
  if (key_type == ElementType::kC64 || key_type == ElementType::kC128) {
    return Unimplemented("top-k of complex keys (they have no order)");
  }
  if (outer * inner * k == 0) return Status::Ok();
  return DispatchType(key_type, [&]<typename T>() {
    TopKTyped<T>(static_cast<const T*>(keys), static_cast<T*>(out_keys), outer, size, inner, k,
                 order, payloads, out_payloads, payload_bytes, num_payloads, out_indices);
  });
}

}  // namespace kiln::kernels
