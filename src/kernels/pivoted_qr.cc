// LAPACK's QR factorization with column pivoting (geqp3: fixed columns
// first with geqr2, then laqp2's pivoting by the largest partial column
// norm, downdated as LAPACK Working Note 176 does), written from the
// reference algorithm so that R, the reflectors and the pivots match what
// JAX's CPU backend gets from LAPACK up to rounding. Each matrix is copied
// into a column-major workspace and back; one batch item per ParallelFor
// item.
#include "kernels/pivoted_qr.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/householder.h"
#include "kernels/parallel.h"

namespace kiln::kernels {
namespace {

using lapack::ApplyReflector;
using lapack::ColumnMajor;
using lapack::Conj;
using lapack::Larfg;
using lapack::Norm2;
using lapack::RealOf;

// One thread's working memory, reused across the matrices it runs.
template <typename T>
struct Workspace {
  std::vector<T> matrix, reflector;
  // laqp2's partial column norms (vn1) and the norms they were last
  // computed exactly at (vn2).
  std::vector<RealOf<T>> partial, exact;
};

// geqp3's first step: fixed columns (jpvt nonzero) to the front, in order;
// jpvt becomes the 1-based column numbers. Returns how many are fixed.
template <typename T>
int64_t MoveFixedColumns(ColumnMajor<T> a, int64_t m, int64_t n, int32_t* jpvt) {
  int64_t fixed = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (jpvt[j] == 0) {
      jpvt[j] = static_cast<int32_t>(j + 1);
      continue;
    }
    if (j != fixed) {
      lapack::SwapColumns(a, j, fixed, m);
      jpvt[j] = jpvt[fixed];
      jpvt[fixed] = static_cast<int32_t>(j + 1);
    } else {
      jpvt[j] = static_cast<int32_t>(j + 1);
    }
    ++fixed;
  }
  return fixed;
}

// The reflector of column i, rows i.., applied to the columns right of it.
template <typename T>
void Reflect(ColumnMajor<T> a, int64_t m, int64_t n, int64_t i, T* taus, std::vector<T>& work) {
  taus[i] = Larfg(m - i, a(i, i), i + 1 < m ? &a(i + 1, i) : nullptr, 1);
  ApplyReflector(/*left=*/true, &a(i, i), Conj(taus[i]), a, i, i + 1, m - i, n - i - 1, work);
}

// The index in [first, n) of the first largest partial norm (idamax: a NaN
// first stays; a later NaN is never larger).
template <typename R>
int64_t LargestNorm(const std::vector<R>& norms, int64_t first, int64_t n) {
  int64_t best = first;
  for (int64_t j = first + 1; j < n; ++j) {
    if (norms[static_cast<size_t>(j)] > norms[static_cast<size_t>(best)]) best = j;
  }
  return best;
}

// laqp2's update of the partial norms of columns (i, n) after step i: the
// norm without row i, recomputed when cancellation makes the downdate
// inaccurate.
template <typename T>
void DowndateNorms(ColumnMajor<T> a, int64_t m, int64_t n, int64_t i, Workspace<T>& work) {
  using R = RealOf<T>;
  const R recompute_below = std::sqrt(lapack::UnitRoundoff<R>());
  for (int64_t j = i + 1; j < n; ++j) {
    R& partial = work.partial[static_cast<size_t>(j)];
    R& exact = work.exact[static_cast<size_t>(j)];
    if (partial == R(0)) continue;
    const R ratio = std::abs(a(i, j)) / partial;
    const R remaining = std::max(R(1) - ratio * ratio, R(0));
    const R growth = partial / exact;
    const R accuracy = remaining * (growth * growth);
    if (accuracy <= recompute_below) {
      partial = i + 1 < m ? Norm2(&a(i + 1, j), m - i - 1, 1) : R(0);
      exact = partial;
    } else {
      partial *= std::sqrt(remaining);
    }
  }
}

// geqp3 on the column-major m x n `a`, in place.
template <typename T>
void PivotedQrOne(ColumnMajor<T> a, int64_t m, int64_t n, int32_t* jpvt, T* taus,
                  Workspace<T>& work) {
  const int64_t fixed = MoveFixedColumns(a, m, n, jpvt);
  const int64_t k = std::min(m, n);
  for (int64_t i = 0; i < std::min(fixed, k); ++i) Reflect(a, m, n, i, taus, work.reflector);
  if (fixed >= k) return;
  work.partial.assign(static_cast<size_t>(n), 0);
  for (int64_t j = fixed; j < n; ++j) {
    work.partial[static_cast<size_t>(j)] = Norm2(&a(fixed, j), m - fixed, 1);
  }
  work.exact = work.partial;
  for (int64_t i = fixed; i < k; ++i) {
    const int64_t pivot = LargestNorm(work.partial, i, n);
    if (pivot != i) {
      lapack::SwapColumns(a, pivot, i, m);
      std::swap(jpvt[pivot], jpvt[i]);
      work.partial[static_cast<size_t>(pivot)] = work.partial[static_cast<size_t>(i)];
      work.exact[static_cast<size_t>(pivot)] = work.exact[static_cast<size_t>(i)];
    }
    Reflect(a, m, n, i, taus, work.reflector);
    DowndateNorms(a, m, n, i, work);
  }
}

}  // namespace

Status PivotedQr(ElementType type, const void* a, const int32_t* jpvt, void* out, int32_t* pivots,
                 void* taus, int64_t batch, int64_t m, int64_t n) {
  return DispatchLinalgType(type, "geqp3", [&]<typename T>() {
    const int64_t k = std::min(m, n);
    if (pivots != jpvt) {
      std::memmove(pivots, jpvt, static_cast<size_t>(batch * n) * sizeof(int32_t));
    }
    ParallelFor(batch, std::max<int64_t>(1, 4 * m * n * k), [&](int64_t begin, int64_t end) {
      Workspace<T> work;
      work.matrix.resize(static_cast<size_t>(m * n));
      for (int64_t item = begin; item < end; ++item) {
        lapack::ToColumnMajor(static_cast<const T*>(a) + item * m * n, work.matrix.data(), m, n);
        PivotedQrOne(ColumnMajor<T>{work.matrix.data(), m}, m, n, pivots + item * n,
                     static_cast<T*>(taus) + item * k, work);
        lapack::ToRowMajor(work.matrix.data(), static_cast<T*>(out) + item * m * n, m, n);
      }
    });
  });
}

}  // namespace kiln::kernels
