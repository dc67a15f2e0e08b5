// Hermitian eigendecomposition on LAPACK's syevd / heevd where the host
// lent them (kernels/lapack.h), else on Eigen's SelfAdjointEigenSolver
// (Householder tridiagonalization, then implicit symmetric QR steps), one
// batch item per ParallelFor item. A file of its own: the solver's templates
// are costly to compile, and solvers.cc is already the longest.
#include "kernels/eigh.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Core>
#include <Eigen/Eigenvalues>

#include "kernels/lapack.h"
#include "kernels/parallel.h"
#include "kernels/scratch.h"
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

// syevd / heevd (kernels/lapack.h) on a column-major copy of the matrix,
// reading the same triangle as asked, as XLA's CPU backend calls them: the
// same library then gives the same eigenvectors, signs included (the
// column-major view of Kiln's memory, A^T, gave other signs). NaN or
// infinity in the triangle read, or a failure, gives NaN as above.
template <typename T>
void EighLapack(void* routine, const T* a, T* vectors, typename Eigen::NumTraits<T>::Real* values,
                int64_t n, bool lower) {
  using Real = typename Eigen::NumTraits<T>::Real;
  constexpr bool kComplex = Eigen::NumTraits<T>::IsComplex;
  bool finite = true;
  for (int64_t i = 0; i < n && finite; ++i) {
    for (int64_t j = lower ? 0 : i; j < (lower ? i + 1 : n); ++j) {
      if (!std::isfinite(std::abs(a[i * n + j]))) finite = false;
    }
  }
  ScratchArray<T> z(static_cast<size_t>(n * n));
  lapack::Transpose(a, n, n, z.data());
  char jobz = 'V', uplo = lower ? 'L' : 'U';
  int size = static_cast<int>(n), lda = size, info = finite ? 0 : -1;
  // The minimum workspaces syevd / heevd document for eigenvectors.
  int lwork = kComplex ? 2 * size + size * size : 1 + 6 * size + 2 * size * size;
  int lrwork = 1 + 5 * size + 2 * size * size, liwork = 3 + 5 * size;
  ScratchArray<T> work(static_cast<size_t>(lwork));
  ScratchArray<Real> rwork(static_cast<size_t>(kComplex ? lrwork : 1));
  ScratchArray<int> iwork(static_cast<size_t>(liwork));
  if (finite) {
    if constexpr (kComplex) {
      reinterpret_cast<lapack::Heevd*>(routine)(&jobz, &uplo, &size, z.data(), &lda, values,
                                                work.data(), &lwork, rwork.data(), &lrwork,
                                                iwork.data(), &liwork, &info);
    } else {
      reinterpret_cast<lapack::Syevd*>(routine)(&jobz, &uplo, &size, z.data(), &lda, values,
                                                work.data(), &lwork, iwork.data(), &liwork, &info);
    }
  }
  if (info != 0) {
    const Real nan = std::numeric_limits<Real>::quiet_NaN();
    std::fill(vectors, vectors + n * n, T(nan));
    std::fill(values, values + n, nan);
    return;
  }
  lapack::Transpose(z.data(), n, n, vectors);
}

// Below this size Kiln's own solver wins (no copies, no library threads).
constexpr int64_t kLapackMinSize = 32;

}  // namespace

Status Eigh(ElementType type, const void* a, void* vectors, void* values, int64_t batch, int64_t n,
            bool lower) {
  void* routine = nullptr;
  // syevd's workspace, 1 + 6n + 2n^2, must fit its 32-bit length.
  if (n >= kLapackMinSize && lapack::FitsInt(1 + 6 * n + 2 * n * n)) {
    routine = type == ElementType::kC64 || type == ElementType::kC128
                  ? reinterpret_cast<void*>(lapack::GetHeevd(type))
                  : reinterpret_cast<void*>(lapack::GetSyevd(type));
  }
  const QuietPoolWorkers quiet(routine != nullptr);  // OpenBLAS's threads do the work
  auto run = [&]<typename T>() {
    using Real = typename Eigen::NumTraits<T>::Real;
    ParallelFor(batch, std::max<int64_t>(1, 9 * n * n * n), [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        if (routine != nullptr) {
          EighLapack<T>(routine, static_cast<const T*>(a) + item * n * n,
                        static_cast<T*>(vectors) + item * n * n,
                        static_cast<Real*>(values) + item * n, n, lower);
          continue;
        }
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
