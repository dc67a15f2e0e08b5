// General eigendecomposition on Eigen's EigenSolver (real input: real Schur
// form, conjugate pairs with the positive imaginary part first, as LAPACK
// orders them) and, for complex input, on Kiln's LAPACK-style Schur
// decomposition (schur.h) with eigenvectors by back substitution as zgeev
// computes them (trevc), so that the eigenvalues come in LAPACK's order; one
// batch item per ParallelFor item.
#include "kernels/eig.h"

#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>

#include "kernels/parallel.h"
#include "kernels/schur.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

template <typename T>
using ColumnMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <typename T>
using RowMajorMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <typename T>
using ConstRowMajorMap =
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

// Unit 2-norm, largest-magnitude component real and positive.
template <typename C>
void Normalize(ColumnMajor<C>& vectors) {
  for (Eigen::Index j = 0; j < vectors.cols(); ++j) {
    auto column = vectors.col(j);
    const auto norm = column.norm();
    if (norm == 0 || !std::isfinite(norm)) continue;
    Eigen::Index largest = 0;
    column.cwiseAbs().maxCoeff(&largest);
    const C phase = std::conj(column(largest)) / std::abs(column(largest));
    column *= phase / norm;
    column(largest) = C(column(largest).real(), 0);
  }
}

// zgeev's eigenvalues and right eigenvectors of the row-major n x n
// complex `a`: the diagonal of the Schur form T = Z^H A Z in its order, and
// Z x_k with x_k solving (T - T(k, k)) x_k = 0, x_k(k) = 1 (ztrevc, a tiny
// divisor raised to its smallest safe value). False when the Schur
// iteration fails or the matrix has NaN or infinity.
template <typename C>
bool ComplexEig(const C* a, int64_t n, bool want_vectors,
                Eigen::Matrix<C, Eigen::Dynamic, 1>& eigenvalues, ColumnMajor<C>& vectors) {
  using Real = typename C::value_type;
  const ElementType type = std::is_same_v<C, complex64> ? ElementType::kC64 : ElementType::kC128;
  std::vector<C> t(static_cast<size_t>(n * n)), z(t.size());
  if (!Schur(type, a, t.data(), z.data(), 1, n).ok()) return false;
  auto at = [n](std::vector<C>& m, int64_t r, int64_t c) -> C& {
    return m[static_cast<size_t>(r * n + c)];
  };
  eigenvalues.resize(n);
  for (int64_t k = 0; k < n; ++k) eigenvalues(k) = at(t, k, k);
  if (!eigenvalues.allFinite()) return false;
  if (!want_vectors) return true;
  const Real ulp = std::numeric_limits<Real>::epsilon();
  const Real small = std::numeric_limits<Real>::min() * (Real(n) / ulp);
  const auto abs1 = [](C x) { return std::fabs(x.real()) + std::fabs(x.imag()); };
  vectors.setZero(n, n);
  std::vector<C> x(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const C w = at(t, k, k);
    const Real smallest = std::max(ulp * abs1(w), small);
    x[static_cast<size_t>(k)] = C(1);
    for (int64_t i = k - 1; i >= 0; --i) {
      C sum = -at(t, i, k);
      for (int64_t j = i + 1; j < k; ++j) sum -= at(t, i, j) * x[static_cast<size_t>(j)];
      C divisor = at(t, i, i) - w;
      if (abs1(divisor) < smallest) divisor = C(smallest);
      x[static_cast<size_t>(i)] = sum / divisor;
    }
    for (int64_t r = 0; r < n; ++r) {
      C sum(0);
      for (int64_t j = 0; j <= k; ++j) sum += at(z, r, j) * x[static_cast<size_t>(j)];
      vectors(r, k) = sum;
    }
  }
  return vectors.allFinite();
}

template <typename T, typename C>
void EigOne(const T* a, C* values, C* left, C* right, int64_t n) {
  using Real = typename Eigen::NumTraits<T>::Real;
  if (n == 0) return;
  const ConstRowMajorMap<T> input(a, n, n);
  ColumnMajor<C> vectors;
  Eigen::Matrix<C, Eigen::Dynamic, 1> eigenvalues;
  bool ok = input.allFinite();
  const bool want_vectors = left != nullptr || right != nullptr;
  if (ok) {
    if constexpr (kIsComplex<T>) {
      ok = ComplexEig(a, n, want_vectors, eigenvalues, vectors);
    } else {
      Eigen::EigenSolver<ColumnMajor<T>> solver(input, want_vectors);
      ok = solver.info() == Eigen::Success;
      if (ok) {
        eigenvalues = solver.eigenvalues();
        if (want_vectors) vectors = solver.eigenvectors();
      }
    }
  }
  if (ok && left != nullptr) {
    // Rows of V^-1 are the left eigenvectors' adjoints: V^-1 A = W V^-1.
    Eigen::FullPivLU<ColumnMajor<C>> lu(vectors);
    ColumnMajor<C> lefts = lu.inverse().adjoint();
    ok = lu.isInvertible() && lefts.allFinite();
    if (ok) {
      Normalize(lefts);
      RowMajorMap<C>(left, n, n) = lefts;
    }
  }
  if (!ok) {
    const Real nan = std::numeric_limits<Real>::quiet_NaN();
    const C not_a_number(nan, nan);
    std::fill(values, values + n, not_a_number);
    if (left != nullptr) std::fill(left, left + n * n, not_a_number);
    if (right != nullptr) std::fill(right, right + n * n, not_a_number);
    return;
  }
  Eigen::Map<Eigen::Matrix<C, Eigen::Dynamic, 1>>(values, n) = eigenvalues;
  if (right != nullptr) {
    Normalize(vectors);
    RowMajorMap<C>(right, n, n) = vectors;
  }
}

}  // namespace

Status Eig(ElementType type, const void* a, void* values, void* left, void* right, int64_t batch,
           int64_t n) {
  auto run = [&]<typename T>() {
    using C = std::complex<typename Eigen::NumTraits<T>::Real>;
    ParallelFor(batch, std::max<int64_t>(1, 25 * n * n * n), [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t matrix = item * n * n;
        EigOne<T, C>(static_cast<const T*>(a) + matrix, static_cast<C*>(values) + item * n,
                     left == nullptr ? nullptr : static_cast<C*>(left) + matrix,
                     right == nullptr ? nullptr : static_cast<C*>(right) + matrix, n);
      }
    });
    return Status::Ok();
  };
  switch (type) {
    case ElementType::kF32: return run.template operator()<float>();
    case ElementType::kF64: return run.template operator()<double>();
    case ElementType::kC64: return run.template operator()<complex64>();
    case ElementType::kC128: return run.template operator()<complex128>();
    default:
      return Unimplemented("eig runs in f32, f64, c64 and c128; found ",
                           GetElementTypeInfo(type).name);
  }
}

}  // namespace kiln::kernels
