#include "kernels/svd.h"

#include <algorithm>
#include <complex>
#include <limits>

#include "kernels/householder.h"
#include "kernels/lapack.h"
#include "kernels/parallel.h"
#include "kernels/scratch.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

// One matrix through gesdd on a column-major copy, as XLA's CPU backend
// calls it (so the same library gives the same factors, signs included);
// the workspace asked for first.
template <typename T>
void SvdOne(void* routine, const T* a, lapack::RealOf<T>* s, T* u, T* vt, int64_t m, int64_t n,
            SvdJob job) {
  using Real = lapack::RealOf<T>;
  constexpr bool kComplex = !std::is_same_v<T, Real>;
  const int64_t k = std::min(m, n);
  const int64_t u_cols = job == SvdJob::kFull ? m : k;
  const int64_t vt_rows = job == SvdJob::kFull ? n : k;
  const bool vectors = job != SvdJob::kValuesOnly;
  ScratchArray<T> column_major(static_cast<size_t>(m * n));
  ScratchArray<T> u_column(static_cast<size_t>(vectors ? m * u_cols : 1));
  ScratchArray<T> vt_column(static_cast<size_t>(vectors ? vt_rows * n : 1));
  ScratchArray<int> iwork(static_cast<size_t>(std::max<int64_t>(1, 8 * k)));
  const int64_t big = std::max(m, n);
  const int64_t rwork_size = vectors ? std::max(5 * k * k + 5 * k, 2 * big * k + 2 * k * k + k)
                                     : 7 * k;
  ScratchArray<Real> rwork(static_cast<size_t>(kComplex ? std::max<int64_t>(1, rwork_size) : 1));
  lapack::Transpose(a, m, n, column_major.data());
  char jobz = job == SvdJob::kFull ? 'A' : job == SvdJob::kReduced ? 'S' : 'N';
  int rows = static_cast<int>(m), cols = static_cast<int>(n), lda = std::max(rows, 1);
  int ldu = vectors ? std::max(rows, 1) : 1, ldvt = vectors ? std::max<int>(vt_rows, 1) : 1;
  int info = 0, lwork = -1;
  auto call = [&](T* work) {
    if constexpr (kComplex) {
      reinterpret_cast<lapack::GesddComplex*>(routine)(&jobz, &rows, &cols, column_major.data(),
                                                       &lda, s, u_column.data(), &ldu,
                                                       vt_column.data(), &ldvt, work, &lwork,
                                                       rwork.data(), iwork.data(), &info);
    } else {
      reinterpret_cast<lapack::Gesdd*>(routine)(&jobz, &rows, &cols, column_major.data(), &lda, s,
                                                u_column.data(), &ldu, vt_column.data(), &ldvt,
                                                work, &lwork, iwork.data(), &info);
    }
  };
  T query{};
  call(&query);
  lwork = static_cast<int>(std::clamp<double>(std::real(query), 1, INT32_MAX));
  ScratchArray<T> work(static_cast<size_t>(lwork));
  info = 0;
  call(work.data());
  if (info != 0) {
    const Real nan = std::numeric_limits<Real>::quiet_NaN();
    std::fill(s, s + k, nan);
    if (vectors) {
      std::fill(u, u + m * u_cols, T(nan));
      std::fill(vt, vt + vt_rows * n, T(nan));
    }
    return;
  }
  if (vectors) {
    lapack::Transpose(u_column.data(), u_cols, m, u);
    lapack::Transpose(vt_column.data(), n, vt_rows, vt);
  }
}

void* Routine(ElementType type) {
  return type == ElementType::kC64 || type == ElementType::kC128
             ? reinterpret_cast<void*>(lapack::GetGesddComplex(type))
             : reinterpret_cast<void*>(lapack::GetGesdd(type));
}

}  // namespace

bool SvdAvailable(ElementType type) { return Routine(type) != nullptr; }

Status Svd(ElementType type, const void* a, void* s, void* u, void* vt, int64_t batch, int64_t m,
           int64_t n, SvdJob job) {
  void* routine = Routine(type);
  if (routine == nullptr) {
    return Unimplemented("Svd of ", GetElementTypeInfo(type).name,
                         " runs on LAPACK's gesdd, which the host process did not lend Kiln "
                         "(kiln_pjrt lends SciPy's under JAX; KILN_LAPACK=0 turns that off)");
  }
  if (m == 0 || n == 0 || batch == 0) return Status::Ok();
  const QuietPoolWorkers quiet;  // OpenBLAS's threads do the work
  const int64_t k = std::min(m, n);
  if (!lapack::FitsInt(m * std::max(m, n)) || !lapack::FitsInt(n * std::max(m, n))) {
    return InvalidArgument("Svd of ", m, " x ", n, " matrices: gesdd's sizes and workspace ",
                           "must fit 32-bit integers");
  }
  const int64_t u_size = m * (job == SvdJob::kFull ? m : k);
  const int64_t vt_size = n * (job == SvdJob::kFull ? n : k);
  return DispatchLinalgType(type, "Svd", [&]<typename T>() {
    using Real = lapack::RealOf<T>;
    ParallelFor(batch, std::max<int64_t>(1, 8 * m * n * k), [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        SvdOne<T>(routine, static_cast<const T*>(a) + item * m * n,
                  static_cast<Real*>(s) + item * k,
                  u == nullptr ? nullptr : static_cast<T*>(u) + item * u_size,
                  vt == nullptr ? nullptr : static_cast<T*>(vt) + item * vt_size, m, n, job);
      }
    });
  });
}

}  // namespace kiln::kernels
