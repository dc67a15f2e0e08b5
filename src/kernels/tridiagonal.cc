// LAPACK's unblocked tridiagonal reduction (sytd2/hetd2, with larfg) and
// tridiagonal solver (gtsv), written from the reference algorithms so that
// results match what JAX's CPU backend gets from LAPACK up to rounding.
#include "kernels/tridiagonal.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/householder.h"
#include "kernels/parallel.h"

namespace kiln::kernels {
namespace {

using lapack::Abs1;
using lapack::Conj;
using lapack::Larfg;
using lapack::RealOf;
using lapack::RealPart;

// sytd2/hetd2 on one n x n row-major matrix `a` (in place).
template <typename T>
void TridiagonalizeOne(T* a, RealOf<T>* d, RealOf<T>* e, T* taus, int64_t n, bool lower,
                       std::vector<T>& work) {
  using R = RealOf<T>;
  if (n == 0) return;
  auto at = [&](int64_t r, int64_t c) -> T& { return a[r * n + c]; };
  // The Hermitian matrix's element (r, c) of the block starting at `first`,
  // read from the stored triangle (its diagonal real).
  auto hermitian = [&](int64_t r, int64_t c) -> T {
    if (r == c) return T(RealPart(at(r, r)));
    const bool stored = lower ? r > c : r < c;
    return stored ? at(r, c) : Conj(at(c, r));
  };
  // One step: v (length m, at rows `first`.. of column `column` (lower) or
  // rows 0.. of column `column` (upper)) reflects the trailing (lower) or
  // leading (upper) m x m block, whose rows start at `first`.
  auto apply = [&](T tau, int64_t first, int64_t m, int64_t column) {
    auto v = [&](int64_t k) -> T& { return at(first + k, column); };
    work.assign(static_cast<size_t>(m), T(0));
    // x := tau * H v (hemv).
    for (int64_t r = 0; r < m; ++r) {
      T sum = T(0);
      for (int64_t c = 0; c < m; ++c) sum += hermitian(first + r, first + c) * v(c);
      work[static_cast<size_t>(r)] = tau * sum;
    }
    // w := x - 1/2 tau (x^H v) v.
    T dot = T(0);
    for (int64_t k = 0; k < m; ++k) dot += Conj(work[static_cast<size_t>(k)]) * v(k);
    const T alpha = R(-0.5) * tau * dot;
    for (int64_t k = 0; k < m; ++k) work[static_cast<size_t>(k)] += alpha * v(k);
    // A := A - v w^H - w v^H on the stored triangle (her2), diagonal real.
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < m; ++c) {
        if (lower ? r < c : r > c) continue;
        T& element = at(first + r, first + c);
        const T update = -(v(r) * Conj(work[static_cast<size_t>(c)]) +
                           work[static_cast<size_t>(r)] * Conj(v(c)));
        element = r == c ? T(RealPart(element) + RealPart(update)) : element + update;
      }
    }
  };
  if (lower) {
    at(0, 0) = T(RealPart(at(0, 0)));
    for (int64_t i = 0; i + 1 < n; ++i) {
      T alpha = at(i + 1, i);
      const T tau = Larfg(n - 1 - i, alpha, i + 2 < n ? &at(i + 2, i) : nullptr, n);
      e[i] = RealPart(alpha);
      if (tau != T(0)) {
        at(i + 1, i) = T(1);
        apply(tau, i + 1, n - 1 - i, i);
      } else {
        at(i + 1, i + 1) = T(RealPart(at(i + 1, i + 1)));
      }
      at(i + 1, i) = T(e[i]);
      d[i] = RealPart(at(i, i));
      taus[i] = tau;
    }
    d[n - 1] = RealPart(at(n - 1, n - 1));
  } else {
    at(n - 1, n - 1) = T(RealPart(at(n - 1, n - 1)));
    for (int64_t i = n - 2; i >= 0; --i) {
      T alpha = at(i, i + 1);
      const T tau = Larfg(i + 1, alpha, i > 0 ? &at(0, i + 1) : nullptr, n);
      e[i] = RealPart(alpha);
      if (tau != T(0)) {
        at(i, i + 1) = T(1);
        apply(tau, 0, i + 1, i + 1);
      } else {
        at(i, i) = T(RealPart(at(i, i)));
      }
      at(i, i + 1) = T(e[i]);
      d[i + 1] = RealPart(at(i + 1, i + 1));
      taus[i] = tau;
    }
    d[0] = RealPart(at(0, 0));
  }
}

// gtsv on one system: sub[k] = A(k+1, k), diag[k] = A(k, k), super[k] =
// A(k, k+1), all overwritten; b [n, nrhs] becomes x. False when singular.
template <typename T>
bool SolveOne(T* sub, T* diag, T* super, T* b, int64_t n, int64_t nrhs) {
  if (n == 0) return true;
  auto row = [&](int64_t k) { return b + k * nrhs; };
  for (int64_t k = 0; k + 1 < n; ++k) {
    if (sub[k] == T(0)) {
      if (diag[k] == T(0)) return false;
    } else if (Abs1(diag[k]) >= Abs1(sub[k])) {
      const T mult = sub[k] / diag[k];
      diag[k + 1] -= mult * super[k];
      for (int64_t j = 0; j < nrhs; ++j) row(k + 1)[j] -= mult * row(k)[j];
      if (k + 2 < n) sub[k] = T(0);
    } else {
      // Swap rows k and k + 1; sub[k] then holds the fill-in above.
      const T mult = diag[k] / sub[k];
      diag[k] = sub[k];
      const T next = diag[k + 1];
      diag[k + 1] = super[k] - mult * next;
      if (k + 2 < n) {
        sub[k] = super[k + 1];
        super[k + 1] = -mult * sub[k];
      }
      super[k] = next;
      for (int64_t j = 0; j < nrhs; ++j) {
        const T top = row(k)[j];
        row(k)[j] = row(k + 1)[j];
        row(k + 1)[j] = top - mult * row(k + 1)[j];
      }
    }
  }
  if (diag[n - 1] == T(0)) return false;
  for (int64_t j = 0; j < nrhs; ++j) {
    row(n - 1)[j] /= diag[n - 1];
    if (n > 1) row(n - 2)[j] = (row(n - 2)[j] - super[n - 2] * row(n - 1)[j]) / diag[n - 2];
    for (int64_t k = n - 3; k >= 0; --k) {
      row(k)[j] = (row(k)[j] - super[k] * row(k + 1)[j] - sub[k] * row(k + 2)[j]) / diag[k];
    }
  }
  return true;
}

}  // namespace

Status Tridiagonalize(ElementType type, const void* a, void* out, void* d, void* e, void* taus,
                      int64_t batch, int64_t n, bool lower) {
  return DispatchLinalgType(type, "tridiagonal", [&]<typename T>() {
    using R = RealOf<T>;
    if (out != a) std::memmove(out, a, static_cast<size_t>(batch * n * n) * sizeof(T));
    const int64_t off = std::max<int64_t>(n - 1, 0);
    ParallelFor(batch, std::max<int64_t>(1, 4 * n * n * n / 3), [&](int64_t begin, int64_t end) {
      std::vector<T> work;
      for (int64_t i = begin; i < end; ++i) {
        TridiagonalizeOne(static_cast<T*>(out) + i * n * n, static_cast<R*>(d) + i * n,
                          static_cast<R*>(e) + i * off, static_cast<T*>(taus) + i * off, n, lower,
                          work);
      }
    });
  });
}

Status TridiagonalSolve(ElementType type, const void* dl, const void* d, const void* du,
                        const void* b, void* out, int64_t batch, int64_t n, int64_t nrhs) {
  return DispatchLinalgType(type, "tridiagonal_solve", [&]<typename T>() {
    if (out != b) std::memmove(out, b, static_cast<size_t>(batch * n * nrhs) * sizeof(T));
    ParallelFor(batch, std::max<int64_t>(1, 8 * n * (nrhs + 1)), [&](int64_t begin, int64_t end) {
      std::vector<T> sub, diag, super;
      for (int64_t i = begin; i < end; ++i) {
        const T* lower = static_cast<const T*>(dl) + i * n;
        const T* middle = static_cast<const T*>(d) + i * n;
        const T* upper = static_cast<const T*>(du) + i * n;
        // A's sub-diagonal is dl[1:], its super-diagonal du[:-1].
        sub.assign(lower + std::min<int64_t>(1, n), lower + n);
        sub.push_back(T(0));
        diag.assign(middle, middle + n);
        super.assign(upper, upper + n);
        T* x = static_cast<T*>(out) + i * n * nrhs;
        if (!SolveOne(sub.data(), diag.data(), super.data(), x, n, nrhs)) {
          std::fill(x, x + n * nrhs, T(std::numeric_limits<RealOf<T>>::quiet_NaN()));
        }
      }
    });
  });
}

}  // namespace kiln::kernels
