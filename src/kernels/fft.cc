#include "kernels/fft.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <type_traits>
#include <vector>

#include "kernels/isa_clones.h"
#include "kernels/parallel.h"
#include "kernels/scratch.h"

namespace kiln::kernels {
namespace {

// A complex number with plain arithmetic: std::complex's operator* checks
// for NaN/Inf operands (__mulsc3) unless -ffast-math, which is slow in
// butterflies. Layout-compatible with std::complex<T>.
template <typename T>
struct Cx {
  T re, im;
};
template <typename T>
inline Cx<T> operator+(Cx<T> a, Cx<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <typename T>
inline Cx<T> operator-(Cx<T> a, Cx<T> b) {
  return {a.re - b.re, a.im - b.im};
}
template <typename T>
inline Cx<T> operator*(Cx<T> a, Cx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <typename T>
inline Cx<T> operator*(Cx<T> a, T s) {
  return {a.re * s, a.im * s};
}
template <typename T>
inline Cx<T> Conj(Cx<T> a) {
  return {a.re, -a.im};
}
template <typename T>
inline Cx<T> TimesMinusI(Cx<T> a) {
  return {a.im, -a.re};
}
template <typename T>
inline Cx<T> TimesI(Cx<T> a) {
  return {-a.im, a.re};
}

// exp(-2 pi i numerator / denominator), computed with the numerator reduced
// first, so large tables stay accurate: in long double for f64 transforms,
// in double for f32 ones (far below an f32 ulp, and several times faster:
// the tables of a 2^20-point transform took 130 ms to build in long double).
template <typename T>
Cx<T> Root(int64_t numerator, int64_t denominator) {
  using Wide = std::conditional_t<std::is_same_v<T, float>, double, long double>;
  const int64_t reduced = numerator % denominator;
  const Wide angle = -2 * std::numbers::pi_v<Wide> * static_cast<Wide>(reduced) /
                     static_cast<Wide>(denominator);
  return {static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle))};
}

// The n-th roots of unity, exp(-2 pi i j / n) for any j, from the first
// octant alone when 8 divides n (the rest by the circle's symmetries, which
// are exact: swaps and sign changes), else from a table of all n.
template <typename T>
class Roots {
 public:
  explicit Roots(int64_t n) : n_(n), octant_(n % 8 == 0) {
    const int64_t count = octant_ ? n / 8 + 1 : n;
    table_.resize(static_cast<size_t>(count));
    for (int64_t j = 0; j < count; ++j) table_[static_cast<size_t>(j)] = Root<T>(j, n);
  }

  Cx<T> operator()(int64_t j) const {
    j %= n_;
    if (!octant_) return table_[static_cast<size_t>(j)];
    const int64_t quarter = n_ / 4;
    const int64_t q = j / quarter;
    int64_t r = j % quarter;
    // exp(-i t) for t = 2 pi r / n in the first quadrant.
    Cx<T> w;
    if (r <= n_ / 8) {
      w = table_[static_cast<size_t>(r)];
    } else {
      const Cx<T> v = table_[static_cast<size_t>(quarter - r)];  // exp(-i (pi/2 - t))
      w = {-v.im, -v.re};
    }
    // Each quarter turn multiplies by exp(-i pi / 2) = -i.
    for (int64_t k = 0; k < q; ++k) w = TimesMinusI(w);
    return w;
  }

 private:
  int64_t n_;
  bool octant_;
  std::vector<Cx<T>> table_;
};

// Forward butterflies (sign -1) of radix P on a[0..P).
template <typename T, int P>
inline __attribute__((always_inline)) void Butterfly(Cx<T>* a) {
  if constexpr (P == 2) {
    const Cx<T> t = a[1];
    a[1] = a[0] - t;
    a[0] = a[0] + t;
  } else if constexpr (P == 3) {
    constexpr T kSin = static_cast<T>(0.866025403784438646763723170752936183L);
    const Cx<T> sum = a[1] + a[2];
    const Cx<T> mid = a[0] - sum * static_cast<T>(0.5);
    const Cx<T> rot = TimesMinusI((a[1] - a[2]) * kSin);
    a[0] = a[0] + sum;
    a[1] = mid + rot;
    a[2] = mid - rot;
  } else if constexpr (P == 4) {
    const Cx<T> t0 = a[0] + a[2], t1 = a[0] - a[2];
    const Cx<T> t2 = a[1] + a[3], t3 = TimesMinusI(a[1] - a[3]);
    a[0] = t0 + t2;
    a[1] = t1 + t3;
    a[2] = t0 - t2;
    a[3] = t1 - t3;
  } else if constexpr (P == 5) {
    constexpr T kCos1 = static_cast<T>(0.309016994374947424102293417182819059L);
    constexpr T kCos2 = static_cast<T>(-0.809016994374947424102293417182819059L);
    constexpr T kSin1 = static_cast<T>(0.951056516295153572116439333379382143L);
    constexpr T kSin2 = static_cast<T>(0.587785252292473129168705954639072769L);
    const Cx<T> t1 = a[1] + a[4], t2 = a[2] + a[3], t3 = a[1] - a[4], t4 = a[2] - a[3];
    const Cx<T> b1 = a[0] + t1 * kCos1 + t2 * kCos2;
    const Cx<T> b2 = a[0] + t1 * kCos2 + t2 * kCos1;
    const Cx<T> d1 = TimesMinusI(t3 * kSin1 + t4 * kSin2);
    const Cx<T> d2 = TimesMinusI(t3 * kSin2 - t4 * kSin1);
    a[0] = a[0] + t1 + t2;
    a[1] = b1 + d1;
    a[4] = b1 - d1;
    a[2] = b2 + d2;
    a[3] = b2 - d2;
  } else if constexpr (P == 8) {
    // Two DFTs of 4 (even and odd points), the odd ones times w8^k.
    constexpr T kHalfSqrt2 = static_cast<T>(0.707106781186547524400844362104849039L);
    Cx<T> e[4] = {a[0], a[2], a[4], a[6]};
    Cx<T> o[4] = {a[1], a[3], a[5], a[7]};
    Butterfly<T, 4>(e);
    Butterfly<T, 4>(o);
    o[1] = Cx<T>{o[1].re + o[1].im, o[1].im - o[1].re} * kHalfSqrt2;   // (1 - i) / sqrt(2)
    o[2] = TimesMinusI(o[2]);                                          // -i
    o[3] = Cx<T>{o[3].im - o[3].re, -o[3].re - o[3].im} * kHalfSqrt2;  // (-1 - i) / sqrt(2)
    for (int k = 0; k < 4; ++k) {
      a[k] = e[k] + o[k];
      a[k + 4] = e[k] - o[k];
    }
  }
}

// Butterflies k = 0..count-1 of radix P on split arrays: input j at
// x[k * in + j * xs], output j at y[k * out + j * ys], output j >= 1 times
// its twiddle, w[(2j - 2) wm + k tw] + i w[(2j - 1) wm + k tw] (tw = 0: one
// set for all). The streams never overlap (ivdep): the loop vectorizes.
template <typename T, int P, int64_t in, int64_t out, int64_t tw>
inline __attribute__((always_inline)) void ButterfliesBody(int64_t count, const T* __restrict xr,
                                                           const T* __restrict xi, int64_t xs,
                                                           T* __restrict yr, T* __restrict yi,
                                                           int64_t ys, const T* __restrict w,
                                                           int64_t wm) {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC ivdep
#endif
  for (int64_t k = 0; k < count; ++k) {
    Cx<T> a[P];
    for (int j = 0; j < P; ++j) a[j] = {xr[k * in + j * xs], xi[k * in + j * xs]};
    Butterfly<T, P>(a);
    yr[k * out] = a[0].re;
    yi[k * out] = a[0].im;
    for (int j = 1; j < P; ++j) {
      const T wr = w[(2 * j - 2) * wm + k * tw], wi = w[(2 * j - 1) * wm + k * tw];
      yr[k * out + j * ys] = a[j].re * wr - a[j].im * wi;
      yi[k * out + j * ys] = a[j].re * wi + a[j].im * wr;
    }
  }
}

// The butterfly loops for f32 and f64, compiled once more for AVX2 and for
// AVX-512 and picked at load time (GCC's target_clones): they are the whole
// of a transform's arithmetic and vectorize to the widest registers the
// machine has. `First` passes (stride 1) run over p, their outputs
// interleaved by the radix and a twiddle set per butterfly; the others over
// q (and the batch), with one set.

#define KILN_FFT_BUTTERFLIES(T, P, name)                                                       \
  KILN_ISA_CLONES void First##name(int64_t count, const T* xr, const T* xi, int64_t xs, T* yr, \
                                   T* yi, int64_t ys, const T* w, int64_t wm) {                \
    ButterfliesBody<T, P, 1, P, 1>(count, xr, xi, xs, yr, yi, ys, w, wm);                      \
  }                                                                                            \
  KILN_ISA_CLONES void name(int64_t count, const T* xr, const T* xi, int64_t xs, T* yr, T* yi, \
                            int64_t ys, const T* w, int64_t wm) {                              \
    ButterfliesBody<T, P, 1, 1, 0>(count, xr, xi, xs, yr, yi, ys, w, wm);                      \
  }
KILN_FFT_BUTTERFLIES(float, 2, Radix2F32)
KILN_FFT_BUTTERFLIES(float, 3, Radix3F32)
KILN_FFT_BUTTERFLIES(float, 4, Radix4F32)
KILN_FFT_BUTTERFLIES(float, 5, Radix5F32)
KILN_FFT_BUTTERFLIES(float, 8, Radix8F32)
KILN_FFT_BUTTERFLIES(double, 2, Radix2F64)
KILN_FFT_BUTTERFLIES(double, 3, Radix3F64)
KILN_FFT_BUTTERFLIES(double, 4, Radix4F64)
KILN_FFT_BUTTERFLIES(double, 5, Radix5F64)
KILN_FFT_BUTTERFLIES(double, 8, Radix8F64)
#undef KILN_FFT_BUTTERFLIES

using ButterfliesF32 = void (*)(int64_t, const float*, const float*, int64_t, float*, float*,
                                int64_t, const float*, int64_t);
using ButterfliesF64 = void (*)(int64_t, const double*, const double*, int64_t, double*, double*,
                                int64_t, const double*, int64_t);

// The loop of radix `radix` (2, 3, 4, 5 or 8), first pass or not.
template <typename T>
auto ButterfliesOf(int radix, bool first) {
  const int index = radix == 8 ? 4 : radix - 2;
  if constexpr (std::is_same_v<T, float>) {
    constexpr ButterfliesF32 kFirst[] = {FirstRadix2F32, FirstRadix3F32, FirstRadix4F32,
                                         FirstRadix5F32, FirstRadix8F32};
    constexpr ButterfliesF32 kOther[] = {Radix2F32, Radix3F32, Radix4F32, Radix5F32, Radix8F32};
    return (first ? kFirst : kOther)[index];
  } else {
    constexpr ButterfliesF64 kFirst[] = {FirstRadix2F64, FirstRadix3F64, FirstRadix4F64,
                                         FirstRadix5F64, FirstRadix8F64};
    constexpr ButterfliesF64 kOther[] = {Radix2F64, Radix3F64, Radix4F64, Radix5F64, Radix8F64};
    return (first ? kFirst : kOther)[index];
  }
}

// Interleaved complex values to split arrays and back, the imaginary parts
// times `sign` on the way in (conjugated for an inverse) and every part
// scaled on the way out: with the conjugation and scaling of an inverse
// done apart, these copies were 42% of a 1000-point transform's time. One
// plain function per type, built per ISA like the butterflies.
#define KILN_FFT_SPLIT_JOIN(T, suffix)                                                           \
  KILN_ISA_CLONES void Split##suffix(const T* __restrict in, T* __restrict re, T* __restrict im, \
                                     int64_t n, T sign) {                                        \
    for (int64_t k = 0; k < n; ++k) {                                                            \
      re[k] = in[2 * k];                                                                         \
      im[k] = sign * in[2 * k + 1];                                                              \
    }                                                                                            \
  }                                                                                              \
  KILN_ISA_CLONES void Join##suffix(const T* __restrict re, const T* __restrict im,              \
                                    T* __restrict out, int64_t n, T re_scale, T im_scale) {      \
    for (int64_t k = 0; k < n; ++k) {                                                            \
      out[2 * k] = re[k] * re_scale;                                                             \
      out[2 * k + 1] = im[k] * im_scale;                                                         \
    }                                                                                            \
  }
KILN_FFT_SPLIT_JOIN(float, F32)
KILN_FFT_SPLIT_JOIN(double, F64)
#undef KILN_FFT_SPLIT_JOIN

template <typename T>
void Split(const Cx<T>* in, T* re, T* im, int64_t n, T sign) {
  if constexpr (std::is_same_v<T, float>) {
    SplitF32(reinterpret_cast<const float*>(in), re, im, n, sign);
  } else {
    SplitF64(reinterpret_cast<const double*>(in), re, im, n, sign);
  }
}

template <typename T>
void Join(const T* re, const T* im, Cx<T>* out, int64_t n, T re_scale, T im_scale) {
  if constexpr (std::is_same_v<T, float>) {
    JoinF32(re, im, reinterpret_cast<float*>(out), n, re_scale, im_scale);
  } else {
    JoinF64(re, im, reinterpret_cast<double*>(out), n, re_scale, im_scale);
  }
}

// The forward DFT of a length made of 2, 3 and 5 as Stockham's
// self-sorting passes of radix 4, 2, 3 and 5 on split real and imaginary
// arrays: every pass streams through the data in order (a read stream and a
// write stream per radix point), and its loops vectorize. Pass k of radix
// r, length n_k and stride s_k (the product of the earlier radixes): for
// p < m = n_k / r and q < s_k,
//   a_j = x[q + s (p + j m)], j < r
//   y[q + s (r p + j)] = w^(j p) DFT_r(a)_j,  w = exp(-2 pi i / n_k).
// The recursive form below read its leaves at strides of n / r, a cache
// miss per element for long transforms (2^20 points: 28 ms against XLA's
// 9 ms).
template <typename T>
class Stockham {
 public:
  static bool Takes(int64_t n) {
    if (n < 16) return false;
    for (int64_t radix : {2, 3, 5}) {
      while (n % radix == 0) n /= radix;
    }
    return n == 1;
  }

  explicit Stockham(int64_t n) : n_(n) {
    const Roots<T> roots(n);
    for (int64_t length = n, stride = 1; length > 1;) {
      // Radix 8 where it divides: fewer passes over the data, and the
      // second pass's loops (over the first passes' stride) eight long
      // rather than four (1000 points: 8, 5, 5, 5 instead of 4, 2, 5, 5, 5).
      int radix = 5;
      for (int candidate : {8, 4, 2, 3}) {
        if (length % candidate == 0) {
          radix = candidate;
          break;
        }
      }
      const int64_t m = length / radix;
      Pass pass{radix, length, stride, static_cast<int64_t>(twiddles_.size())};
      // w^(j p) for j = 1..radix-1 and p < m, as real and imaginary arrays
      // of m each: w = exp(-2 pi i / length) is the n-th root `stride`.
      twiddles_.resize(twiddles_.size() + static_cast<size_t>(2 * (radix - 1) * m));
      T* table = twiddles_.data() + pass.twiddles;
      for (int64_t j = 1; j < radix; ++j) {
        for (int64_t p = 0; p < m; ++p) {
          const Cx<T> w = roots(j * p * stride);
          table[(2 * j - 2) * m + p] = w.re;
          table[(2 * j - 1) * m + p] = w.im;
        }
      }
      passes_.push_back(pass);
      length = m;
      stride *= radix;
    }
  }

  int64_t size() const { return n_; }
  int64_t scratch_size() const { return 2 * n_; }  // complex elements

  // out = DFT(in), or with `inverse` scale * conj(DFT(conj(in))).
  void Forward(const Cx<T>* in, Cx<T>* out, Cx<T>* scratch, bool inverse = false,
               T scale = T(1)) const {
    const int64_t n = n_;
    T* x = reinterpret_cast<T*>(scratch);  // real parts, then imaginary
    const T sign = inverse ? T(-1) : T(1);
    Split(in, x, x + n, n, sign);
    const T* result = Run(x, x + 2 * n, 1);
    Join(result, result + n, out, n, scale, sign * scale);
  }

  // Runs `batch` transforms on split arrays: element j of transform b at
  // x[j * batch + b] (real parts) and x[n * batch + j * batch + b]
  // (imaginary parts); `y` is as large. Returns the one holding the result.
  // Batched, every pass is over runs of stride * batch elements in order:
  // columns of an array transform together, their loops as long as the
  // batch.
  T* Run(T* x, T* y, int64_t batch) const {
    const int64_t total = n_ * batch;
    for (const Pass& pass : passes_) {
      RunPass(pass, batch, x, x + total, y, y + total);
      std::swap(x, y);
    }
    return x;
  }

 private:
  struct Pass {
    int radix;
    int64_t length;
    int64_t stride;
    int64_t twiddles;  // offset into twiddles_
  };

  void RunPass(const Pass& pass, int64_t batch, const T* xr, const T* xi, T* yr, T* yi) const {
    const int64_t m = pass.length / pass.radix, s = pass.stride * batch;
    const T* w = twiddles_.data() + pass.twiddles;
    if (s == 1) {
      ButterfliesOf<T>(pass.radix, true)(m, xr, xi, m, yr, yi, 1, w, m);
      return;
    }
    auto* butterflies = ButterfliesOf<T>(pass.radix, false);
    for (int64_t p = 0; p < m; ++p) {
      const int64_t in = s * p, out = pass.radix * s * p;
      butterflies(s, xr + in, xi + in, s * m, yr + out, yi + out, s, w + p, m);
    }
  }

  int64_t n_;
  std::vector<Pass> passes_;
  std::vector<T> twiddles_;
};

// The forward DFT of one contiguous sequence: Stockham's passes for lengths
// of 16 or more made of 2, 3 and 5; else recursive decimation in time over
// the factors, or Bluestein's chirp-z convolution over a power of two when
// the length has a prime factor above kMaxRadix.
template <typename T>
class Plan1D {
 public:
  static constexpr int kMaxRadix = 13;

  explicit Plan1D(int64_t n) : n_(n) {
    if (Stockham<T>::Takes(n)) {
      stockham_ = std::make_unique<Stockham<T>>(n);
      return;
    }
    int64_t rest = n;
    for (int radix : {4, 2, 3, 5, 7, 11, 13}) {
      while (rest % radix == 0 && rest > 1) {
        factors_.push_back(radix);
        rest /= radix;
      }
    }
    if (rest > 1) {
      factors_.clear();
      BuildBluestein();
      return;
    }
    int64_t size = n;
    const Roots<T> roots_of_n(n);  // every stage's twiddles are n-th roots
    for (int radix : factors_) {
      const int64_t m = size / radix;
      sizes_.push_back(size);
      std::vector<Cx<T>> table(static_cast<size_t>((radix - 1) * m));
      const int64_t step = n / size;
      for (int q = 1; q < radix; ++q) {
        for (int64_t k = 0; k < m; ++k)
          table[static_cast<size_t>((q - 1) * m + k)] = roots_of_n(q * k * step);
      }
      twiddles_.push_back(std::move(table));
      std::vector<Cx<T>> roots(static_cast<size_t>(radix));
      for (int j = 0; j < radix; ++j) roots[static_cast<size_t>(j)] = Root<T>(j, radix);
      roots_.push_back(std::move(roots));
      size = m;
    }
  }

  int64_t size() const { return n_; }
  // The Stockham plan (a length of 16 or more made of 2, 3, 5), else null.
  const Stockham<T>* stockham() const { return stockham_.get(); }
  // Elements of scratch Forward needs.
  int64_t scratch_size() const {
    if (stockham_) return stockham_->scratch_size();
    return inner_ ? 2 * inner_->size() + inner_->scratch_size() : 0;
  }

  // out = DFT(in); `in` and `out` must not overlap.
  void Forward(const Cx<T>* in, Cx<T>* out, Cx<T>* scratch) const {
    if (stockham_) return stockham_->Forward(in, out, scratch);
    if (inner_) return Bluestein(in, out, scratch);
    if (factors_.empty()) {
      if (n_ == 1) out[0] = in[0];
      return;
    }
    Recurse(in, 1, out, 0);
  }

 private:
  void BuildBluestein() {
    int64_t m = 1;
    while (m < 2 * n_ - 1) m *= 2;
    inner_ = std::make_unique<Plan1D>(m);
    chirp_.resize(static_cast<size_t>(n_));
    // exp(-i pi k^2 / n) = Root(k^2 mod 2n, 2n), with k^2 mod 2n stepped
    // as (k + 1)^2 = k^2 + 2k + 1 so that it never overflows.
    int64_t square = 0;
    const Roots<T> roots(2 * n_);
    for (int64_t k = 0; k < n_; ++k) {
      chirp_[static_cast<size_t>(k)] = roots(square);
      square = (square + 2 * k + 1) % (2 * n_);
    }
    std::vector<Cx<T>> b(static_cast<size_t>(m), Cx<T>{0, 0});
    b[0] = Conj(chirp_[0]);
    for (int64_t k = 1; k < n_; ++k) {
      b[static_cast<size_t>(k)] = b[static_cast<size_t>(m - k)] = Conj(
          chirp_[static_cast<size_t>(k)]);
    }
    kernel_.resize(static_cast<size_t>(m));
    std::vector<Cx<T>> scratch(static_cast<size_t>(inner_->scratch_size()));
    inner_->Forward(b.data(), kernel_.data(), scratch.data());
    const T scale = static_cast<T>(1.0L / static_cast<long double>(m));
    for (Cx<T>& value : kernel_) value = value * scale;  // folds the inverse's 1/m
  }

  void Bluestein(const Cx<T>* in, Cx<T>* out, Cx<T>* scratch) const {
    const int64_t m = inner_->size();
    Cx<T>* a = scratch;
    Cx<T>* spectrum = scratch + m;
    for (int64_t k = 0; k < n_; ++k) a[k] = in[k] * chirp_[static_cast<size_t>(k)];
    std::fill(a + n_, a + m, Cx<T>{0, 0});
    Cx<T>* more = scratch + 2 * m;
    inner_->Forward(a, spectrum, more);
    // The inverse transform as conj(DFT(conj(.))).
    for (int64_t k = 0; k < m; ++k)
      spectrum[k] = Conj(spectrum[k] * kernel_[static_cast<size_t>(k)]);
    inner_->Forward(spectrum, a, more);
    for (int64_t k = 0; k < n_; ++k) out[k] = chirp_[static_cast<size_t>(k)] * Conj(a[k]);
  }

  // DFT of length sizes_[level] of in[0], in[stride], ... into out[0..).
  void Recurse(const Cx<T>* in, int64_t stride, Cx<T>* out, size_t level) const {
    const int radix = factors_[level];
    const int64_t m = sizes_[level] / radix;
    if (m == 1) {
      switch (radix) {
        case 2: return Leaf<2>(in, stride, out);
        case 3: return Leaf<3>(in, stride, out);
        case 4: return Leaf<4>(in, stride, out);
        case 5: return Leaf<5>(in, stride, out);
        default: return LeafGeneric(in, stride, out, level);
      }
    }
    for (int q = 0; q < radix; ++q)
      Recurse(in + q * stride, stride * radix, out + q * m, level + 1);
    const Cx<T>* twiddles = twiddles_[level].data();
    switch (radix) {
      case 2: return Combine<2>(out, m, twiddles);
      case 3: return Combine<3>(out, m, twiddles);
      case 4: return Combine<4>(out, m, twiddles);
      case 5: return Combine<5>(out, m, twiddles);
      default: return CombineGeneric(out, m, twiddles, level);
    }
  }

  template <int P>
  static void Leaf(const Cx<T>* in, int64_t stride, Cx<T>* out) {
    Cx<T> a[P];
    for (int q = 0; q < P; ++q) a[q] = in[q * stride];
    Butterfly<T, P>(a);
    for (int q = 0; q < P; ++q) out[q] = a[q];
  }

  template <int P>
  static void Combine(Cx<T>* out, int64_t m, const Cx<T>* twiddles) {
    for (int64_t k = 0; k < m; ++k) {
      Cx<T> a[P];
      a[0] = out[k];
      for (int q = 1; q < P; ++q) a[q] = out[q * m + k] * twiddles[(q - 1) * m + k];
      Butterfly<T, P>(a);
      for (int q = 0; q < P; ++q) out[q * m + k] = a[q];
    }
  }

  // Radixes 7, 11, 13: the O(p^2) sum over a table of p roots.
  void GenericButterfly(Cx<T>* a, size_t level) const {
    const int p = factors_[level];
    const Cx<T>* roots = roots_[level].data();
    Cx<T> result[kMaxRadix];
    for (int j = 0; j < p; ++j) {
      Cx<T> sum = a[0];
      for (int q = 1; q < p; ++q) sum = sum + a[q] * roots[(j * q) % p];
      result[j] = sum;
    }
    std::copy(result, result + p, a);
  }

  void LeafGeneric(const Cx<T>* in, int64_t stride, Cx<T>* out, size_t level) const {
    const int p = factors_[level];
    Cx<T> a[kMaxRadix];
    for (int q = 0; q < p; ++q) a[q] = in[q * stride];
    GenericButterfly(a, level);
    std::copy(a, a + p, out);
  }

  void CombineGeneric(Cx<T>* out, int64_t m, const Cx<T>* twiddles, size_t level) const {
    const int p = factors_[level];
    for (int64_t k = 0; k < m; ++k) {
      Cx<T> a[kMaxRadix];
      a[0] = out[k];
      for (int q = 1; q < p; ++q) a[q] = out[q * m + k] * twiddles[(q - 1) * m + k];
      GenericButterfly(a, level);
      for (int q = 0; q < p; ++q) out[q * m + k] = a[q];
    }
  }

  int64_t n_;
  std::vector<int> factors_;
  std::vector<int64_t> sizes_;                // transform length at each level
  std::vector<std::vector<Cx<T>>> twiddles_;  // per level: w^(q k), q >= 1
  std::vector<std::vector<Cx<T>>> roots_;     // per level: the radix's roots
  std::unique_ptr<Plan1D> inner_;             // Bluestein: the power-of-two plan
  std::unique_ptr<Stockham<T>> stockham_;     // lengths Stockham takes
  std::vector<Cx<T>> chirp_, kernel_;
};

// Real transforms of length n: an even n runs as a complex DFT of n / 2
// (the even samples as real parts, the odd ones as imaginary parts) and one
// pass of twiddles; an odd n through the complex DFT of n.
template <typename T>
class RealPlan {
 public:
  explicit RealPlan(int64_t n)
      : n_(n), half_(n / 2), even_(n % 2 == 0), complex_(even_ ? n / 2 : n) {
    if (even_) {
      twiddles_.resize(static_cast<size_t>(half_ + 1));
      const Roots<T> roots(n);
      for (int64_t k = 0; k <= half_; ++k) twiddles_[static_cast<size_t>(k)] = roots(k);
      split_twiddles_.resize(static_cast<size_t>(2 * half_));
      for (int64_t k = 0; k < half_; ++k) {
        split_twiddles_[static_cast<size_t>(k)] = twiddles_[static_cast<size_t>(k)].re;
        split_twiddles_[static_cast<size_t>(half_ + k)] = twiddles_[static_cast<size_t>(k)].im;
      }
    }
  }

  int64_t scratch_size() const { return 2 * complex_.size() + complex_.scratch_size(); }

  // out[0..n/2] = DFT(in[0..n)).
  void Forward(const T* in, Cx<T>* out, Cx<T>* scratch) const {
    Cx<T>* spectrum = scratch + complex_.size();
    Cx<T>* more = scratch + 2 * complex_.size();
    if (!even_) {
      for (int64_t k = 0; k < n_; ++k) scratch[k] = {in[k], 0};
      complex_.Forward(scratch, spectrum, more);
      std::copy(spectrum, spectrum + half_ + 1, out);
      return;
    }
    if (const Stockham<T>* stockham = complex_.stockham()) {
      // Split arrays throughout: the twiddle pass vectorizes too.
      T* x = reinterpret_cast<T*>(more);
      Split(reinterpret_cast<const Cx<T>*>(in), x, x + half_, half_, T(1));
      const T* r = stockham->Run(x, x + 2 * half_, 1);
      Untangle(r, r + half_, out);
      return;
    }
    complex_.Forward(reinterpret_cast<const Cx<T>*>(in), spectrum, more);
    for (int64_t k = 0; k <= half_; ++k) {
      const Cx<T> z = spectrum[k == half_ ? 0 : k];
      const Cx<T> mirror = Conj(spectrum[k == 0 ? 0 : half_ - k]);
      const Cx<T> even = (z + mirror) * static_cast<T>(0.5);
      const Cx<T> odd = TimesMinusI(z - mirror) * static_cast<T>(0.5);
      out[k] = even + twiddles_[static_cast<size_t>(k)] * odd;
    }
  }

  // The spectrum of the real sequence from the complex DFT of its even and
  // odd samples (re, im split): out[k] = E[k] + w^k O[k], E and O from
  // Z[k] and conj(Z[n/2 - k]).
  void Untangle(const T* __restrict re, const T* __restrict im, Cx<T>* __restrict out) const {
    const int64_t h = half_;
    out[0] = {re[0] + im[0], 0};
    out[h] = {re[0] - im[0], 0};
    const T* __restrict wr = split_twiddles_.data();
    const T* __restrict wi = wr + h;
    const T half = static_cast<T>(0.5);
    for (int64_t k = 1; k < h; ++k) {
      const T zr = re[k], zi = im[k], mr = re[h - k], mi = -im[h - k];
      const T er = (zr + mr) * half, ei = (zi + mi) * half;
      const T odd_r = (zi - mi) * half, odd_i = (mr - zr) * half;  // -i (z - mirror) / 2
      out[k] = {er + wr[k] * odd_r - wi[k] * odd_i, ei + wr[k] * odd_i + wi[k] * odd_r};
    }
  }

  // out[0..n) = scale * the real inverse DFT of the Hermitian spectrum
  // in[0..n/2]; the imaginary parts of in[0] (and in[n/2], n even) are
  // ignored, as pocketfft does.
  void Inverse(const Cx<T>* in, T* out, T scale, Cx<T>* scratch) const {
    Cx<T>* spectrum = scratch + complex_.size();
    Cx<T>* more = scratch + 2 * complex_.size();
    if (!even_) {
      scratch[0] = {in[0].re, 0};
      for (int64_t k = 1; k <= half_; ++k) {
        scratch[k] = Conj(in[k]);  // conjugated for the inverse
        scratch[n_ - k] = in[k];
      }
      complex_.Forward(scratch, spectrum, more);
      for (int64_t k = 0; k < n_; ++k) out[k] = spectrum[k].re * scale;
      return;
    }
    for (int64_t k = 0; k < half_; ++k) {
      Cx<T> x = in[k];
      Cx<T> mirror = Conj(in[half_ - k]);
      if (k == 0) {
        x.im = 0;
        mirror.im = 0;
      }
      const Cx<T> sum = x + mirror;
      const Cx<T> difference = TimesI(Conj(twiddles_[static_cast<size_t>(k)]) * (x - mirror));
      scratch[k] = Conj(sum + difference);
    }
    complex_.Forward(scratch, spectrum, more);
    for (int64_t k = 0; k < half_; ++k) {
      out[2 * k] = spectrum[k].re * scale;
      out[2 * k + 1] = -spectrum[k].im * scale;
    }
  }

 private:
  int64_t n_, half_;
  bool even_;
  Plan1D<T> complex_;
  std::vector<Cx<T>> twiddles_;    // even n: exp(-2 pi i k / n), k = 0..n/2
  std::vector<T> split_twiddles_;  // their real parts, then imaginary (k < n/2)
};

int64_t Product(std::span<const int64_t> values) {
  int64_t product = 1;
  for (int64_t v : values) product *= v;
  return product;
}

// Rough operations per transform of length n, for ParallelFor.
int64_t TransformCost(int64_t n) {
  int64_t log = 1;
  while ((int64_t{1} << log) < n) ++log;
  return 5 * n * log;
}

template <typename T>
class NdPlan final : public FftPlan {
 public:
  NdPlan(FftType type, int64_t batch, std::span<const int64_t> lengths)
      : type_(type), batch_(batch), lengths_(lengths.begin(), lengths.end()) {
    complex_dims_ = lengths_;
    const bool real = type == FftType::kRfft || type == FftType::kIrfft;
    if (real) complex_dims_.back() = lengths_.back() / 2 + 1;
    empty_ = batch == 0 || Product(lengths_) == 0;
    if (empty_) return;
    const size_t rank = lengths_.size();
    for (size_t axis = 0; axis < rank; ++axis) {
      if (axis + 1 == rank && real) break;
      plans_.push_back(std::make_unique<Plan1D<T>>(lengths_[axis]));
    }
    if (real) real_ = std::make_unique<RealPlan<T>>(lengths_.back());
  }

  void Run(const void* input, void* output) const override {
    if (empty_) return;
    const size_t rank = lengths_.size();
    const int64_t n = lengths_.back();
    const int64_t rows = batch_ * Product(std::span(lengths_).first(rank - 1));
    const int64_t h = complex_dims_.back();
    const T scale = static_cast<T>(1.0L / static_cast<long double>(Product(lengths_)));
    switch (type_) {
      case FftType::kFft:
      case FftType::kIfft: {
        const bool inverse = type_ == FftType::kIfft;
        const auto* in = static_cast<const Cx<T>*>(input);
        auto* out = static_cast<Cx<T>*>(output);
        RowPass(rows, n, in, out, inverse, inverse ? scale : T(1));
        AxisPasses(out, inverse);
        return;
      }
      case FftType::kRfft: {
        const auto* in = static_cast<const T*>(input);
        auto* out = static_cast<Cx<T>*>(output);
        ParallelFor(rows, TransformCost(n), [&](int64_t begin, int64_t end) {
          ScratchArray<Cx<T>> scratch(static_cast<size_t>(real_->scratch_size()), Cx<T>{});
          for (int64_t row = begin; row < end; ++row)
            real_->Forward(in + row * n, out + row * h, scratch.data());
        });
        AxisPasses(out, false);
        return;
      }
      case FftType::kIrfft: {
        const auto* in = static_cast<const Cx<T>*>(input);
        auto* out = static_cast<T*>(output);
        const Cx<T>* spectrum = in;
        ScratchArray<Cx<T>> copy(rank > 1 ? static_cast<size_t>(rows * h) : 0);
        if (rank > 1) {
          std::copy(in, in + rows * h, copy.data());
          AxisPasses(copy.data(), true);
          spectrum = copy.data();
        }
        ParallelFor(rows, TransformCost(n), [&](int64_t begin, int64_t end) {
          ScratchArray<Cx<T>> scratch(static_cast<size_t>(real_->scratch_size()), Cx<T>{});
          for (int64_t row = begin; row < end; ++row) {
            real_->Inverse(spectrum + row * h, out + row * n, scale, scratch.data());
          }
        });
        return;
      }
    }
  }

 private:
  // Complex transforms of the last axis, `in` rows to `out` rows; the
  // inverse runs as conj(DFT(conj(x))) and is scaled by `scale`.
  void RowPass(int64_t rows, int64_t n, const Cx<T>* in, Cx<T>* out, bool inverse, T scale) const {
    const Plan1D<T>& plan = *plans_.back();
    ParallelFor(rows, TransformCost(n), [&](int64_t begin, int64_t end) {
      ScratchArray<Cx<T>> buffer(static_cast<size_t>(inverse ? n : 0), Cx<T>{});
      ScratchArray<Cx<T>> scratch(static_cast<size_t>(plan.scratch_size()), Cx<T>{});
      for (int64_t row = begin; row < end; ++row) {
        const Cx<T>* source = in + row * n;
        Cx<T>* target = out + row * n;
        if (const Stockham<T>* stockham = plan.stockham()) {
          stockham->Forward(source, target, scratch.data(), inverse, scale);
          continue;
        }
        if (!inverse) {
          plan.Forward(source, target, scratch.data());
          continue;
        }
        for (int64_t k = 0; k < n; ++k) buffer[static_cast<size_t>(k)] = Conj(source[k]);
        plan.Forward(buffer.data(), target, scratch.data());
        for (int64_t k = 0; k < n; ++k) target[k] = Conj(target[k]) * scale;
      }
    });
  }

  // Complex transforms in place along every axis but the last, innermost
  // first. Columns are gathered in blocks into contiguous rows.
  void AxisPasses(Cx<T>* data, bool inverse) const {
    const size_t rank = lengths_.size();
    for (size_t axis = rank - 1; axis-- > 0;) {
      const int64_t n = lengths_[axis];
      const int64_t outer = batch_ * Product(std::span(lengths_).first(axis));
      const int64_t inner = Product(std::span(complex_dims_).subspan(axis + 1));
      const Plan1D<T>& plan = *plans_[axis];
      const int64_t block = std::min<int64_t>(inner, 16);
      const int64_t blocks = (inner + block - 1) / block;
      if (const Stockham<T>* stockham = plan.stockham()) {
        // A block of columns transforms together, batched, in split arrays.
        ParallelFor(outer * blocks, block * TransformCost(n), [&](int64_t begin, int64_t end) {
          ScratchArray<T> scratch(static_cast<size_t>(4 * n * block), T{});
          const T sign = inverse ? T(-1) : T(1);
          for (int64_t task = begin; task < end; ++task) {
            const int64_t first = (task % blocks) * block;
            const int64_t width = std::min(block, inner - first);
            Cx<T>* base = data + (task / blocks) * n * inner + first;
            T* x = scratch.data();
            const int64_t total = n * width;
            for (int64_t t = 0; t < n; ++t) {
              for (int64_t c = 0; c < width; ++c) {
                const Cx<T> value = base[t * inner + c];
                x[t * width + c] = value.re;
                x[total + t * width + c] = sign * value.im;
              }
            }
            const T* r = stockham->Run(x, x + 2 * total, width);
            for (int64_t t = 0; t < n; ++t) {
              for (int64_t c = 0; c < width; ++c) {
                base[t * inner + c] = {r[t * width + c], sign * r[total + t * width + c]};
              }
            }
          }
        });
        continue;
      }
      ParallelFor(outer * blocks, block * TransformCost(n), [&](int64_t begin, int64_t end) {
        ScratchArray<Cx<T>> columns(static_cast<size_t>(block * n), Cx<T>{});
        ScratchArray<Cx<T>> result(static_cast<size_t>(n), Cx<T>{});
        ScratchArray<Cx<T>> scratch(static_cast<size_t>(plan.scratch_size()), Cx<T>{});
        for (int64_t task = begin; task < end; ++task) {
          const int64_t first = (task % blocks) * block;
          const int64_t width = std::min(block, inner - first);
          Cx<T>* base = data + (task / blocks) * n * inner + first;
          for (int64_t t = 0; t < n; ++t) {
            for (int64_t c = 0; c < width; ++c) {
              const Cx<T> value = base[t * inner + c];
              columns[static_cast<size_t>(c * n + t)] = inverse ? Conj(value) : value;
            }
          }
          for (int64_t c = 0; c < width; ++c) {
            plan.Forward(columns.data() + c * n, result.data(), scratch.data());
            for (int64_t t = 0; t < n; ++t) {
              const Cx<T> value = result[static_cast<size_t>(t)];
              base[t * inner + c] = inverse ? Conj(value) : value;
            }
          }
        }
      });
    }
  }

  FftType type_;
  int64_t batch_;
  std::vector<int64_t> lengths_;
  std::vector<int64_t> complex_dims_;  // lengths_, the last halved for RFFT/IRFFT
  bool empty_ = false;
  std::vector<std::unique_ptr<Plan1D<T>>> plans_;  // complex plans per axis
  std::unique_ptr<RealPlan<T>> real_;
};

}  // namespace

StatusOr<std::shared_ptr<const FftPlan>> FftPlan::Create(FftType type, bool double_precision,
                                                         int64_t batch,
                                                         std::span<const int64_t> lengths) {
  if (lengths.empty() || lengths.size() > 3) {
    return InvalidArgument("an FFT runs over 1 to 3 dimensions, found ", lengths.size());
  }
  if (batch < 0) return InvalidArgument("negative FFT batch ", batch);
  for (int64_t length : lengths) {
    if (length < 0) return InvalidArgument("negative FFT length ", length);
    // Bluestein's power of two must stay addressable.
    if (length > (int64_t{1} << 40)) return InvalidArgument("FFT length ", length, " is too large");
  }
  if (double_precision)
    return std::shared_ptr<const FftPlan>(new NdPlan<double>(type, batch, lengths));
  return std::shared_ptr<const FftPlan>(new NdPlan<float>(type, batch, lengths));
}

template <typename T>
std::vector<std::complex<T>> ReferenceDft(std::span<const std::complex<T>> input, bool inverse) {
  const auto n = static_cast<int64_t>(input.size());
  std::vector<std::complex<T>> output(input.size());
  for (int64_t k = 0; k < n; ++k) {
    std::complex<long double> sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const long double angle = (inverse ? 2.0L : -2.0L) * std::numbers::pi_v<long double> *
                                static_cast<long double>((j * k) % n) / static_cast<long double>(n);
      sum += std::complex<long double>(input[static_cast<size_t>(j)]) *
             std::complex<long double>(std::cos(angle), std::sin(angle));
    }
    output[static_cast<size_t>(k)] = std::complex<T>(sum);
  }
  return output;
}

template std::vector<std::complex<float>> ReferenceDft(std::span<const std::complex<float>>, bool);
template std::vector<std::complex<double>> ReferenceDft(std::span<const std::complex<double>>,
                                                        bool);

}  // namespace kiln::kernels
