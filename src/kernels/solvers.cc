// Dense linear-algebra kernels on Eigen's blocked algorithms (LLT, the
// triangular solver, HouseholderQR and HouseholderSequence) over mapped
// row-major memory; LU with LAPACK's partial pivoting; exact top-k by a
// filter and a partial sort per slice.
#include "kernels/solvers.h"

#include <algorithm>
#include <bit>
#include <cmath>
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
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        T value = transposed ? a[j * k + i] : a[i * k + j];
        if constexpr (kIsComplex<T>) {
          if (conjugate) value = std::conj(value);
        }
        scratch.matrix[static_cast<size_t>(i * k + j)] = value;
      }
    }
    m = scratch.matrix.data();
  }
  const bool lower = transposed ? !p.lower : p.lower;  // the triangle of M
  if (p.left_side) {
    std::copy(b, b + p.m * p.n, out);
    SolveLeftMode<T>(m, out, k, p.n, lower, p.unit_diagonal);
    return;
  }
  scratch.rhs.resize(static_cast<size_t>(p.m * p.n));
  T* rhs = scratch.rhs.data();  // B^T: [n, m]
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) rhs[j * p.m + i] = b[i * p.n + j];
  }
  SolveLeftMode<T>(m, rhs, k, p.m, lower, p.unit_diagonal);
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) out[i * p.n + j] = rhs[j * p.m + i];
  }
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
        LuOne<T>(to, pivots + item * k, permutation + item * m, m, n);
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
