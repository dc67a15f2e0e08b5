// LAPACK's scalar helpers and elementary reflectors (lapy2/lapy3, nrm2,
// larfg, larf1f), written from the reference algorithms for the kernels that
// follow LAPACK step by step so that their results match what JAX's CPU
// backend gets from LAPACK up to rounding: tridiagonal.cc (sytrd, gtsv),
// schur.cc (gehrd, gees) and pivoted_qr.cc (geqp3). Header-only templates
// over float, double, complex64 and complex128.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/types.h"

namespace kiln::kernels::lapack {

template <typename T>
struct Real {
  using type = T;
};
template <typename R>
struct Real<std::complex<R>> {
  using type = R;
};
// The real type of T: T itself, or R for std::complex<R>.
template <typename T>
using RealOf = typename Real<T>::type;

template <typename T>
T Conj(T x) {
  if constexpr (kIsComplex<T>) {
    return std::conj(x);
  } else {
    return x;
  }
}
template <typename T>
RealOf<T> RealPart(T x) {
  if constexpr (kIsComplex<T>) {
    return x.real();
  } else {
    return x;
  }
}
template <typename T>
RealOf<T> ImagPart(T x) {
  if constexpr (kIsComplex<T>) {
    return x.imag();
  } else {
    return RealOf<T>(0);
  }
}
// LAPACK's cabs1 for complex (|re| + |im|), |x| for real.
template <typename T>
RealOf<T> Abs1(T x) {
  return std::fabs(RealPart(x)) + std::fabs(ImagPart(x));
}

// dlamch: 'S' (the safe minimum), 'P' (epsilon times the base: numeric
// epsilon) and 'E' (the unit roundoff, half of it).
template <typename R>
constexpr R SafeMinimum() {
  return std::numeric_limits<R>::min();
}
template <typename R>
constexpr R Precision() {
  return std::numeric_limits<R>::epsilon();
}
template <typename R>
constexpr R UnitRoundoff() {
  return std::numeric_limits<R>::epsilon() / 2;
}

// dlapy2: sqrt(x^2 + y^2) without overflow; NaN when either is NaN.
template <typename R>
R Lapy2(R x, R y) {
  if (std::isnan(x)) return x;
  if (std::isnan(y)) return y;
  const R w = std::max(std::fabs(x), std::fabs(y));
  const R z = std::min(std::fabs(x), std::fabs(y));
  if (z == R(0) || w > std::numeric_limits<R>::max()) return w;
  return w * std::sqrt(R(1) + (z / w) * (z / w));
}

// dlapy3: sqrt(x^2 + y^2 + z^2) without overflow.
template <typename R>
R Lapy3(R x, R y, R z) {
  const R w = std::max({std::fabs(x), std::fabs(y), std::fabs(z)});
  if (w == R(0) || w > std::numeric_limits<R>::max()) {
    return std::fabs(x) + std::fabs(y) + std::fabs(z);
  }
  return w * std::sqrt((x / w) * (x / w) + (y / w) * (y / w) + (z / w) * (z / w));
}

// The Euclidean norm of x[0], x[stride], ... (count elements), scaled so
// that no square overflows (nrm2).
template <typename T>
RealOf<T> Norm2(const T* x, int64_t count, int64_t stride) {
  using R = RealOf<T>;
  if constexpr (std::is_same_v<R, float>) {
    // In double, where no square of a float overflows or underflows, as
    // OpenBLAS's snrm2/scnrm2 (what JAX's CPU backend runs) compute it: the
    // correctly rounded norm, so that the Householder vectors round as theirs.
    double sum = 0;
    for (int64_t k = 0; k < count; ++k) {
      const double re = RealPart(x[k * stride]), im = ImagPart(x[k * stride]);
      sum += re * re + im * im;
    }
    return static_cast<float>(std::sqrt(sum));
  }
  R scale = 0;
  for (int64_t k = 0; k < count; ++k) {
    const R re = std::fabs(RealPart(x[k * stride])), im = std::fabs(ImagPart(x[k * stride]));
    if (std::isnan(re) || std::isnan(im)) return std::numeric_limits<R>::quiet_NaN();
    scale = std::max({scale, re, im});
  }
  if (scale == R(0) || !std::isfinite(scale)) return scale;
  R sum = 0;
  for (int64_t k = 0; k < count; ++k) {
    const R re = RealPart(x[k * stride]) / scale, im = ImagPart(x[k * stride]) / scale;
    sum += re * re + im * im;
  }
  return scale * std::sqrt(sum);
}

// larfg: the reflector H = I - tau v v^H with H^H (alpha, x) = (beta, 0),
// v = (1, x'), beta real. Overwrites alpha with beta and x with x'; returns
// tau. `size` counts alpha and x together (x has size - 1 elements).
template <typename T>
T Larfg(int64_t size, T& alpha, T* x, int64_t stride) {
  using R = RealOf<T>;
  // dlarfg needs two elements to reflect; zlarfg makes a lone complex alpha
  // real with one.
  if (size <= (kIsComplex<T> ? 0 : 1)) return T(0);
  R xnorm = Norm2(x, size - 1, stride);
  R alpha_re = RealPart(alpha), alpha_im = ImagPart(alpha);
  if (xnorm == R(0) && alpha_im == R(0)) return T(0);
  R beta = -std::copysign(Lapy3(alpha_re, alpha_im, xnorm), alpha_re);
  const R safe_min = SafeMinimum<R>() / UnitRoundoff<R>();
  int rescaled = 0;
  if (std::fabs(beta) < safe_min) {
    // beta and xnorm may be inaccurate: scale x up and compute them again.
    const R up = R(1) / safe_min;
    do {
      ++rescaled;
      for (int64_t k = 0; k + 1 < size; ++k) x[k * stride] *= up;
      beta *= up;
      alpha_re *= up;
      alpha_im *= up;
    } while (std::fabs(beta) < safe_min && rescaled < 20);
    xnorm = Norm2(x, size - 1, stride);
    beta = -std::copysign(Lapy3(alpha_re, alpha_im, xnorm), alpha_re);
  }
  T tau;
  T scaled_alpha;
  if constexpr (kIsComplex<T>) {
    tau = T((beta - alpha_re) / beta, -alpha_im / beta);
    scaled_alpha = T(alpha_re, alpha_im);
  } else {
    tau = (beta - alpha_re) / beta;
    scaled_alpha = alpha_re;
  }
  const T factor = T(1) / (scaled_alpha - T(beta));
  for (int64_t k = 0; k + 1 < size; ++k) x[k * stride] *= factor;
  for (int i = 0; i < rescaled; ++i) beta *= safe_min;
  alpha = T(beta);
  return tau;
}

// A column-major matrix in LAPACK's layout: element (r, c) at
// data[r + c * ld]. Does not own data.
template <typename T>
struct ColumnMajor {
  T* data;
  int64_t ld;
  T& operator()(int64_t r, int64_t c) const { return data[r + c * ld]; }
};

// Copies the rows x cols row-major `source` into the column-major `target`
// (ld = rows).
template <typename T>
void ToColumnMajor(const T* source, T* target, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) target[r + c * rows] = source[r * cols + c];
  }
}

// Copies the column-major rows x cols `source` (ld = rows) into the
// row-major `target`.
template <typename T>
void ToRowMajor(const T* source, T* target, int64_t rows, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) target[r * cols + c] = source[r + c * rows];
  }
}

// Swaps columns x and y of a in rows [0, rows).
template <typename T>
void SwapColumns(ColumnMajor<T> a, int64_t x, int64_t y, int64_t rows) {
  for (int64_t r = 0; r < rows; ++r) std::swap(a(r, x), a(r, y));
}

// larf1f: applies H = I - tau v v^H to the rows x cols block of `c` whose
// first element is (row, col), from the left (H C) or the right (C H). v has
// rows (left) or cols (right) elements, v[0] = 1 implied (not read). As
// LAPACK, trailing zeros of v and zero columns (left) or rows (right) of the
// block are skipped, so they keep infinities and NaN elsewhere out.
template <typename T>
void ApplyReflector(bool left, const T* v, T tau, ColumnMajor<T> c, int64_t row, int64_t col,
                    int64_t rows, int64_t cols, std::vector<T>& work) {
  if (tau == T(0) || rows == 0 || cols == 0) return;
  int64_t last_v = left ? rows : cols;
  while (last_v > 1 && v[last_v - 1] == T(0)) --last_v;
  auto at = [&](int64_t r, int64_t k) -> T& { return c(row + r, col + k); };
  if (left) {
    // The last column of C(0:last_v, :) with a nonzero element.
    int64_t last_c = cols;
    for (; last_c > 0; --last_c) {
      bool zero = true;
      for (int64_t r = 0; r < last_v && zero; ++r) zero = at(r, last_c - 1) == T(0);
      if (!zero) break;
    }
    work.assign(static_cast<size_t>(last_c), T(0));
    for (int64_t k = 0; k < last_c; ++k) {
      T sum = T(0);
      for (int64_t r = 1; r < last_v; ++r) sum += Conj(at(r, k)) * v[r];
      work[static_cast<size_t>(k)] = sum + Conj(at(0, k));
    }
    for (int64_t k = 0; k < last_c; ++k) {
      const T w = Conj(work[static_cast<size_t>(k)]);
      at(0, k) -= tau * w;
      const T scaled = -tau * w;
      for (int64_t r = 1; r < last_v; ++r) at(r, k) += v[r] * scaled;
    }
  } else {
    // The last row of C(:, 0:last_v) with a nonzero element.
    int64_t last_c = rows;
    for (; last_c > 0; --last_c) {
      bool zero = true;
      for (int64_t k = 0; k < last_v && zero; ++k) zero = at(last_c - 1, k) == T(0);
      if (!zero) break;
    }
    work.assign(static_cast<size_t>(last_c), T(0));
    for (int64_t k = 1; k < last_v; ++k) {
      for (int64_t r = 0; r < last_c; ++r) work[static_cast<size_t>(r)] += at(r, k) * v[k];
    }
    for (int64_t r = 0; r < last_c; ++r) {
      work[static_cast<size_t>(r)] += at(r, 0);
      at(r, 0) -= tau * work[static_cast<size_t>(r)];
    }
    for (int64_t k = 1; k < last_v; ++k) {
      const T scaled = -tau * Conj(v[k]);
      for (int64_t r = 0; r < last_c; ++r) at(r, k) += work[static_cast<size_t>(r)] * scaled;
    }
  }
}

}  // namespace kiln::kernels::lapack
