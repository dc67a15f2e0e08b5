// Hermitian eigendecomposition on Eigen's SelfAdjointEigenSolver
// (Householder tridiagonalization, then implicit symmetric QR steps), one
// batch item per ParallelFor item. A file of its own: the solver's templates
// are costly to compile, and solvers.cc is already the longest.
#include "kernels/eigh.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Core>
#include <Eigen/Eigenvalues>

#include "kernels/parallel.h"
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

template <typename T>
void EighOne(const T* a, T* vectors, typename Eigen::NumTraits<T>::Real* values, int64_t n,
             bool lower) {
  using Real = typename Eigen::NumTraits<T>::Real;
  if (n == 0) return;
  const ConstRowMajorMap<T> input(a, n, n);
  // The solver reads the lower triangle; the upper one's adjoint is that.
  ColumnMajor<T> matrix(n, n);
  if (lower) {
    matrix.template triangularView<Eigen::Lower>() = input;
  } else {
    matrix.template triangularView<Eigen::Lower>() = input.adjoint();
  }
  bool finite = true;
  for (int64_t j = 0; j < n && finite; ++j) {
    for (int64_t i = j; i < n; ++i) {
      if (!std::isfinite(std::abs(matrix(i, j)))) finite = false;
    }
  }
  Eigen::SelfAdjointEigenSolver<ColumnMajor<T>> solver;
  if (finite) solver.compute(matrix, Eigen::ComputeEigenvectors);
  if (!finite || solver.info() != Eigen::Success) {
    const Real nan = std::numeric_limits<Real>::quiet_NaN();
    std::fill(vectors, vectors + n * n, T(nan));
    std::fill(values, values + n, nan);
    return;
  }
  RowMajorMap<T>(vectors, n, n) = solver.eigenvectors();
  Eigen::Map<Eigen::Matrix<Real, Eigen::Dynamic, 1>>(values, n) = solver.eigenvalues();
}

}  // namespace

Status Eigh(ElementType type, const void* a, void* vectors, void* values, int64_t batch, int64_t n,
            bool lower) {
  auto run = [&]<typename T>() {
    using Real = typename Eigen::NumTraits<T>::Real;
    ParallelFor(batch, std::max<int64_t>(1, 9 * n * n * n), [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        EighOne<T>(static_cast<const T*>(a) + item * n * n, static_cast<T*>(vectors) + item * n * n,
                   static_cast<Real*>(values) + item * n, n, lower);
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
      return Unimplemented("eigh runs in f32, f64, c64 and c128; found ",
                           GetElementTypeInfo(type).name);
  }
}

}  // namespace kiln::kernels
