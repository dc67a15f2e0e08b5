// Scalar special functions behind the chlo ops JAX's text output names
// (chlo.erf_inv, chlo.digamma, chlo.lgamma, chlo.next_after): what the
// standard library lacks, with XLA's CPU results at the edges (erf_inv(+-1)
// = +-inf, digamma of a non-positive integer = NaN, lgamma of one = +inf).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <type_traits>

namespace kiln::kernels {

// Inverse error function: a first guess from the logarithmic form of the
// tails, then Newton steps on std::erf (quadratic convergence; three reach
// the last bit of double).
template <typename C>
C ErfInv(C y) {
  if (std::isnan(y) || y < C(-1) || y > C(1)) return std::numeric_limits<C>::quiet_NaN();
  if (y == C(1)) return std::numeric_limits<C>::infinity();
  if (y == C(-1)) return -std::numeric_limits<C>::infinity();
  if (y == C(0)) return y;
  // Winitzki's approximation as the start (relative error ~2e-3).
  const double a = 0.147;
  const double yy = static_cast<double>(y);
  const double ln = std::log1p(-yy * yy);
  const double first = 2.0 / (std::numbers::pi * a) + ln / 2.0;
  double x = std::copysign(std::sqrt(std::sqrt(first * first - ln / a) - first), yy);
  const double scale = 2.0 / std::sqrt(std::numbers::pi);
  for (int step = 0; step < 3; ++step) {
    const double error = std::erf(x) - yy;
    const double slope = scale * std::exp(-x * x);
    if (slope == 0.0) break;
    x -= error / slope;
  }
  return static_cast<C>(x);
}

// Digamma (psi): reflection for negative arguments, recurrence up to 6, then
// the asymptotic series. NaN at 0 and negative integers, as XLA's CPU.
template <typename C>
C Digamma(C value) {
  double x = static_cast<double>(value);
  if (std::isnan(x) || x == -std::numeric_limits<double>::infinity()) {
    return std::numeric_limits<C>::quiet_NaN();
  }
  if (x == std::numeric_limits<double>::infinity()) return value;
  double result = 0.0;
  if (x <= 0.0) {
    if (x == std::floor(x)) return std::numeric_limits<C>::quiet_NaN();
    // psi(1 - x) - psi(x) = pi / tan(pi x)
    result = -std::numbers::pi / std::tan(std::numbers::pi * x);
    x = 1.0 - x;
  }
  while (x < 6.0) {
    result -= 1.0 / x;
    x += 1.0;
  }
  const double inverse = 1.0 / x;
  const double square = inverse * inverse;
  // ln x - 1/(2x) - sum B_2k / (2k x^2k)
  const double series =
      square *
      (1.0 / 12 -
       square * (1.0 / 120 - square * (1.0 / 252 - square * (1.0 / 240 - square * (1.0 / 132)))));
  result += std::log(x) - 0.5 * inverse - series;
  return static_cast<C>(result);
}

// Hurwitz zeta, sum over k >= 0 of (q + k)^-s: terms summed directly until
// the base reaches 9, then the Euler-Maclaurin tail (six Bernoulli terms).
// +inf at s = 1 and at non-positive integer q; NaN for s < 1 and for a
// negative q with non-integer s (the sum is not real there).
template <typename C>
C HurwitzZeta(C s_value, C q_value) {
  const double s = static_cast<double>(s_value);
  double q = static_cast<double>(q_value);
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (std::isnan(s) || std::isnan(q)) return static_cast<C>(kNaN);
  if (s == 1.0) return static_cast<C>(kInf);
  if (s < 1.0) return static_cast<C>(kNaN);
  if (q <= 0.0) {
    if (q == std::floor(q)) return static_cast<C>(kInf);
    if (s != std::floor(s) || q < -1e6) return static_cast<C>(kNaN);
  }
  double sum = 0.0;
  while (q < 9.0) {
    sum += std::pow(q, -s);
    q += 1.0;
  }
  // B_2j / (2j)! for j = 1..6.
  constexpr double kBernoulli[] = {1.0 / 12,       -1.0 / 720,     1.0 / 30240,
                                   -1.0 / 1209600, 1.0 / 47900160, -691.0 / 1307674368000.0};
  double tail = std::pow(q, 1.0 - s) / (s - 1.0) + 0.5 * std::pow(q, -s);
  double rising = s;                   // s (s + 1) ... (s + 2j - 2)
  double power = std::pow(q, -s - 1);  // q^(-s - 2j + 1)
  for (int j = 0; j < 6; ++j) {
    tail += kBernoulli[j] * rising * power;
    rising *= (s + 2 * j + 1) * (s + 2 * j + 2);
    power /= q * q;
  }
  return static_cast<C>(sum + tail);
}

// polygamma(n, x) for a non-negative integer n: digamma for n = 0, else
// (-1)^(n + 1) n! zeta(n + 1, x). NaN for any other n.
template <typename C>
C Polygamma(C n_value, C x) {
  const double n = static_cast<double>(n_value);
  if (std::isnan(n) || n < 0.0 || n != std::floor(n)) {
    return std::numeric_limits<C>::quiet_NaN();
  }
  if (n == 0.0) return Digamma(x);
  const double factorial = std::tgamma(n + 1.0);
  const double sign = std::fmod(n, 2.0) == 0.0 ? -1.0 : 1.0;
  return static_cast<C>(sign * factorial *
                        static_cast<double>(HurwitzZeta<double>(n + 1.0, static_cast<double>(x))));
}

// exp(-|x|) I1(x), the exponentially scaled modified Bessel function of
// order one (odd in x): the standard library's I1 where it does not
// overflow, the asymptotic series beyond.
template <typename C>
C BesselI1e(C value) {
  const double x = static_cast<double>(value);
  if (std::isnan(x)) return value;
  const double magnitude = std::fabs(x);
  double result;
  if (magnitude < 500.0) {
    result = std::cyl_bessel_i(1.0, magnitude) * std::exp(-magnitude);
  } else {
    // 1/sqrt(2 pi x) (1 - 3/(8x) - 15/(2 (8x)^2) - 315/(6 (8x)^3) - ...)
    const double t = 1.0 / (8.0 * magnitude);
    const double series = 1.0 - 3.0 * t - 7.5 * t * t - 52.5 * t * t * t -
                          14175.0 / 24.0 * t * t * t * t;
    result = series / std::sqrt(2.0 * std::numbers::pi * magnitude);
  }
  return static_cast<C>(std::copysign(result, x));
}

// log |gamma(x)|, thread-safe (std::lgamma may write the global signgam).
inline float LogGamma(float x) {
  int sign = 0;
  return lgammaf_r(x, &sign);
}
inline double LogGamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);
}

// The next representable value after `x` towards `y`, in T's own format
// (so f16 and bf16 step by their own ulp): bit arithmetic, as XLA's
// expansion does; denormals are produced, not flushed.
template <typename T>
T NextAfter(T x, T y) {
  using Bits = std::conditional_t<sizeof(T) == 2, uint16_t,
                                  std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
  const double dx = static_cast<double>(x);
  const double dy = static_cast<double>(y);
  if (std::isnan(dx) || std::isnan(dy))
    return static_cast<T>(std::numeric_limits<float>::quiet_NaN());
  if (dx == dy) return y;
  constexpr Bits kSign = Bits{1} << (sizeof(T) * 8 - 1);
  if (dx == 0.0) {
    // The smallest denormal, with the sign of the direction.
    return std::bit_cast<T>(static_cast<Bits>(dy < 0.0 ? kSign | Bits{1} : Bits{1}));
  }
  Bits bits = std::bit_cast<Bits>(x);
  // Away from zero increases the magnitude.
  const bool away = (dy > dx) == (dx > 0.0);
  bits = away ? static_cast<Bits>(bits + 1) : static_cast<Bits>(bits - 1);
  return std::bit_cast<T>(bits);
}

}  // namespace kiln::kernels
