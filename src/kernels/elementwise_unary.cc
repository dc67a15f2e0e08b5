// Elementwise unary kernels (elementwise.h's Unary): the float, complex and
// integer families, each a switch over the op that picks a lambda for the
// shared map loop (elementwise_internal.h).
#include <bit>
#include <cmath>
#include <limits>

#include "kernels/elementwise.h"
#include "kernels/elementwise_internal.h"
#include "kernels/minifloat.h"
#include "kernels/parallel.h"
#include "kernels/scratch.h"
#include "kernels/special_functions.h"
#include "kernels/types.h"
#include "kernels/vector_math.h"

namespace kiln::kernels {
namespace {

using elementwise_internal::BadType;
using elementwise_internal::Decode;
using elementwise_internal::Encode;
using elementwise_internal::Map1;
using elementwise_internal::Unsigned;
using elementwise_internal::WrapMul;
using elementwise_internal::WrapSub;
using elementwise_internal::WrapToWidth;

template <typename C>
C FloatSign(C x) {
  if (std::isnan(x) || x == C(0)) return x;
  return x > C(0) ? C(1) : C(-1);
}

// Rounds half away from zero.
template <typename C>
C RoundAfz(C x) {
  return std::round(x);
}

// A denormal as the signed zero it is under DAZ. The run's DAZ mode (see
// float_env.h) flushes denormal inputs of SSE arithmetic, but libm's log
// decodes its argument's bits itself and sees the denormal: log(1e-45f)
// would be -103.97 where XLA's CPU backend gives -inf.
// Classified from the bits: under DAZ, fpclassify's comparisons see a
// denormal as zero too.
template <typename R>
R FlushDenormal(R x) {
  using Bits = std::conditional_t<sizeof(R) == 4, uint32_t, uint64_t>;
  constexpr int kMantissaBits = std::numeric_limits<R>::digits - 1;
  constexpr Bits kMantissa = (Bits{1} << kMantissaBits) - 1;
  constexpr Bits kSign = Bits{1} << (sizeof(R) * 8 - 1);
  const auto bits = std::bit_cast<Bits>(x);
  const bool denormal = (bits & ~kSign & ~kMantissa) == 0 && (bits & kMantissa) != 0;
  return denormal ? std::bit_cast<R>(static_cast<Bits>(bits & kSign)) : x;
}

template <typename T>
Status UnaryFloat(UnaryOp op, const void* in, void* out, int64_t n) {
  using C = ComputeType<T>;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    // The SIMD form, when the op has one (asked with an empty array).
    if (VectorUnary(op, static_cast<const T*>(nullptr), static_cast<T*>(nullptr), 0)) {
      const T* x = static_cast<const T*>(in);
      T* y = static_cast<T*>(out);
      ParallelFor(n, 8, [&](int64_t begin, int64_t end) {
        VectorUnary(op, x + begin, y + begin, end - begin);
      });
      return Status::Ok();
    }
  }
  auto map = [&](int64_t cost, auto f) {
    Map1<T, T>(in, out, n, cost, [f](T x) { return static_cast<T>(f(static_cast<C>(x))); });
  };
  switch (op) {
    case UnaryOp::kAbs: map(1, [](C x) { return std::fabs(x); }); break;
    case UnaryOp::kCbrt: map(20, [](C x) { return std::cbrt(x); }); break;
    case UnaryOp::kCeil: map(1, [](C x) { return std::ceil(x); }); break;
    case UnaryOp::kCosine: map(20, [](C x) { return std::cos(x); }); break;
    case UnaryOp::kExponential: map(20, [](C x) { return std::exp(x); }); break;
    case UnaryOp::kExponentialMinusOne: map(20, [](C x) { return std::expm1(x); }); break;
    case UnaryOp::kFloor: map(1, [](C x) { return std::floor(x); }); break;
    case UnaryOp::kImag: map(1, [](C) { return C(0); }); break;
    case UnaryOp::kLog: map(20, [](C x) { return std::log(FlushDenormal(x)); }); break;
    case UnaryOp::kLogPlusOne: map(20, [](C x) { return std::log1p(x); }); break;
    case UnaryOp::kLogistic: map(20, [](C x) { return C(1) / (C(1) + std::exp(-x)); }); break;
    case UnaryOp::kNegate: map(1, [](C x) { return -x; }); break;
    case UnaryOp::kReal: map(1, [](C x) { return x; }); break;
    case UnaryOp::kRoundNearestAfz: map(2, [](C x) { return RoundAfz(x); }); break;
    case UnaryOp::kRoundNearestEven: map(2, [](C x) { return std::nearbyint(x); }); break;
    case UnaryOp::kRsqrt: map(4, [](C x) { return C(1) / std::sqrt(x); }); break;
    case UnaryOp::kSign: map(1, [](C x) { return FloatSign(x); }); break;
    case UnaryOp::kSine: map(20, [](C x) { return std::sin(x); }); break;
    case UnaryOp::kSqrt: map(4, [](C x) { return std::sqrt(x); }); break;
    case UnaryOp::kTan: map(20, [](C x) { return std::tan(x); }); break;
    case UnaryOp::kTanh: map(20, [](C x) { return std::tanh(x); }); break;
    case UnaryOp::kIsFinite:
      Map1<T, bool>(in, out, n, 1, [](T x) { return std::isfinite(static_cast<C>(x)); });
      break;
    case UnaryOp::kIsInf:
      Map1<T, bool>(in, out, n, 1, [](T x) { return std::isinf(static_cast<C>(x)); });
      break;
    case UnaryOp::kIsNegInf:
      Map1<T, bool>(in, out, n, 1,
                    [](T x) { return static_cast<C>(x) == -std::numeric_limits<C>::infinity(); });
      break;
    case UnaryOp::kIsPosInf:
      Map1<T, bool>(in, out, n, 1,
                    [](T x) { return static_cast<C>(x) == std::numeric_limits<C>::infinity(); });
      break;
    case UnaryOp::kAcos: map(20, [](C x) { return std::acos(x); }); break;
    case UnaryOp::kAcosh: map(20, [](C x) { return std::acosh(x); }); break;
    case UnaryOp::kAsin: map(20, [](C x) { return std::asin(x); }); break;
    case UnaryOp::kAsinh: map(20, [](C x) { return std::asinh(x); }); break;
    case UnaryOp::kAtan: map(20, [](C x) { return std::atan(x); }); break;
    case UnaryOp::kAtanh: map(20, [](C x) { return std::atanh(x); }); break;
    case UnaryOp::kCosh: map(20, [](C x) { return std::cosh(x); }); break;
    case UnaryOp::kSinh: map(20, [](C x) { return std::sinh(x); }); break;
    case UnaryOp::kConj: map(1, [](C x) { return x; }); break;
    case UnaryOp::kDigamma: map(40, [](C x) { return Digamma(x); }); break;
    case UnaryOp::kErf: map(20, [](C x) { return std::erf(x); }); break;
    case UnaryOp::kErfc: map(20, [](C x) { return std::erfc(x); }); break;
    case UnaryOp::kErfInv: map(80, [](C x) { return ErfInv(x); }); break;
    case UnaryOp::kLgamma: map(40, [](C x) { return LogGamma(x); }); break;
    case UnaryOp::kSquare: map(1, [](C x) { return x * x; }); break;
    case UnaryOp::kBesselI1e: map(80, [](C x) { return BesselI1e(x); }); break;
    default: return InvalidArgument("this unary op does not accept floating-point elements");
  }
  return Status::Ok();
}

// Complex functions as XLA's CPU backend computes them (its elemental IR
// emitter, and StableHLO's CHLO decompositions for cosh and sinh), with
// accurate real parts where XLA's structure allows (expm1's real part is
// expm1(a) cos b + cosm1(b), not exp(z) - 1). JAX's complex-plane tests
// compare these with mpmath region by region; C++'s std:: forms differ from
// XLA's at infinities and NaN (cosh(-inf + inf i) is NaN + NaN i there).

// exp(a + bi): the halves of exp(a) when it overflows (e^a cos b may still
// be finite), and a real result for a real input.
template <typename T>
T ComplexExp(T z) {
  using R = typename T::value_type;
  const R a = z.real(), b = z.imag();
  const R e = std::exp(a);
  const R inf = std::numeric_limits<R>::infinity();
  if (e == inf) {
    const R h = std::exp(a * R(0.5));
    return T((h * std::cos(b)) * h, b == R(0) ? R(0) : (h * std::sin(b)) * h);
  }
  return T(e * std::cos(b), b == R(0) ? R(0) : e * std::sin(b));
}

// cos(b) - 1 without cancellation.
template <typename R>
R CosMinusOne(R b) {
  const R half = std::sin(b * R(0.5));
  return R(-2) * half * half;
}

// expm1(a + bi) = (expm1(a) cos b + cosm1(b)) + i e^a sin b.
template <typename T>
T ComplexExpm1(T z) {
  using R = typename T::value_type;
  const R a = z.real(), b = z.imag();
  const R em = std::expm1(a);
  const R cm = CosMinusOne(b);
  const R c = cm + R(1);
  return T(em * c + cm, b == R(0) ? R(0) : (em + R(1)) * std::sin(b));
}

// tanh(a + bi) from expm1(2a) and expm1(-2a), clamped to +-1 when they
// overflow; tan z = -i tanh(iz).
template <typename T>
T ComplexTanh(T z) {
  using R = typename T::value_type;
  const R a = z.real(), b = z.imag();
  const R twice = a + a;
  const R up = std::expm1(twice), down = std::expm1(-twice);
  const R cb = std::cos(b);
  const R imag_numerator = R(4) * (cb * std::sin(b));
  const R sum = up + down;
  const R denominator = sum + (cb * cb) * R(4);
  R re = sum == std::numeric_limits<R>::infinity() ? std::copysign(R(1), a)
                                                   : (up - down) / denominator;
  R im = imag_numerator / denominator;
  const bool sin_nan = std::isnan(imag_numerator);
  const bool a_infinite = std::isinf(a);
  if (sin_nan && !a_infinite) re = std::numeric_limits<R>::quiet_NaN();
  if (b == R(0) || (a_infinite && sin_nan)) im = R(0);
  return T(re, im);
}

template <typename T>
T ComplexTan(T z) {
  const T t = ComplexTanh(T(-z.imag(), z.real()));
  return T(t.imag(), -t.real());
}

// CHLO's decompositions: cosh z = e^(z + log 1/2) + e^(log 1/2 - z), sinh
// the difference.
template <typename T>
T ComplexCoshOrSinh(T z, bool cosh) {
  using R = typename T::value_type;
  const R log_half = std::log(R(0.5));
  const T up = ComplexExp(T(z.real() + log_half, z.imag()));
  const T down = ComplexExp(T(log_half - z.real(), -z.imag()));
  return cosh ? up + down : up - down;
}

template <typename T>
Status UnaryComplex(UnaryOp op, const void* in, void* out, int64_t n) {
  using R = typename T::value_type;
  auto map = [&](int64_t cost, auto f) { Map1<T, T>(in, out, n, cost, f); };
  auto map_real = [&](auto f) { Map1<T, R>(in, out, n, 2, f); };
  switch (op) {
    case UnaryOp::kAbs: map_real([](T x) { return std::abs(x); }); break;
    case UnaryOp::kReal: map_real([](T x) { return x.real(); }); break;
    case UnaryOp::kImag: map_real([](T x) { return x.imag(); }); break;
    case UnaryOp::kCosine: map(40, [](T x) { return std::cos(x); }); break;
    case UnaryOp::kSine: map(40, [](T x) { return std::sin(x); }); break;
    case UnaryOp::kTan: map(40, [](T x) { return ComplexTan(x); }); break;
    case UnaryOp::kTanh: map(40, [](T x) { return ComplexTanh(x); }); break;
    case UnaryOp::kExponential: map(40, [](T x) { return ComplexExp(x); }); break;
    case UnaryOp::kExponentialMinusOne: map(40, [](T x) { return ComplexExpm1(x); }); break;
    case UnaryOp::kLog:
      map(40, [](T x) { return std::log(T(FlushDenormal(x.real()), FlushDenormal(x.imag()))); });
      break;
    case UnaryOp::kLogPlusOne: map(40, [](T x) { return std::log(x + T(1)); }); break;
    case UnaryOp::kLogistic: map(40, [](T x) { return T(1) / (T(1) + std::exp(-x)); }); break;
    case UnaryOp::kNegate: map(1, [](T x) { return -x; }); break;
    case UnaryOp::kAcos: map(80, [](T x) { return std::acos(x); }); break;
    case UnaryOp::kAcosh: map(80, [](T x) { return std::acosh(x); }); break;
    case UnaryOp::kAsin: map(80, [](T x) { return std::asin(x); }); break;
    case UnaryOp::kAsinh: map(80, [](T x) { return std::asinh(x); }); break;
    case UnaryOp::kAtan: map(80, [](T x) { return std::atan(x); }); break;
    case UnaryOp::kAtanh: map(80, [](T x) { return std::atanh(x); }); break;
    case UnaryOp::kCosh: map(40, [](T x) { return ComplexCoshOrSinh(x, true); }); break;
    case UnaryOp::kSinh: map(40, [](T x) { return ComplexCoshOrSinh(x, false); }); break;
    case UnaryOp::kConj: map(1, [](T x) { return std::conj(x); }); break;
    case UnaryOp::kSquare: map(4, [](T x) { return ComplexMultiply(x, x); }); break;
    case UnaryOp::kSqrt: map(20, [](T x) { return std::sqrt(x); }); break;
    case UnaryOp::kRsqrt: map(20, [](T x) { return T(1) / std::sqrt(x); }); break;
    case UnaryOp::kCbrt: map(40, [](T x) { return std::pow(x, T(R(1) / R(3))); }); break;
    case UnaryOp::kSign:
      map(4, [](T x) {
        if (std::isnan(x.real()) || std::isnan(x.imag())) return T(NAN, NAN);
        const R magnitude = std::abs(x);
        return magnitude == R(0) ? T(0) : x / magnitude;
      });
      break;
    default: return InvalidArgument("this unary op does not accept complex elements");
  }
  return Status::Ok();
}

template <typename T>
Status UnaryInteger(UnaryOp op, const void* in, void* out, int64_t n) {
  auto map = [&](auto f) { Map1<T, T>(in, out, n, 1, f); };
  using U = Unsigned<T>;
  switch (op) {
    case UnaryOp::kAbs: map([](T x) { return x < T(0) ? WrapSub(T(0), x) : x; }); break;
    case UnaryOp::kNegate: map([](T x) { return WrapSub(T(0), x); }); break;
    case UnaryOp::kSquare: map([](T x) { return WrapMul(x, x); }); break;
    case UnaryOp::kNot: map([](T x) { return static_cast<T>(~x); }); break;
    case UnaryOp::kPopcnt: map([](T x) { return static_cast<T>(std::popcount(U(x))); }); break;
    case UnaryOp::kCountLeadingZeros:
      map([](T x) { return static_cast<T>(std::countl_zero(U(x))); });
      break;
    case UnaryOp::kSign:
      map([](T x) { return static_cast<T>(x > T(0) ? 1 : (x < T(0) ? -1 : 0)); });
      break;
    default: return InvalidArgument("this unary op does not accept integer elements");
  }
  return Status::Ok();
}

}  // namespace

Status Unary(UnaryOp op, ElementType type, const void* in, void* out, int64_t count) {
  if (IsMinifloat(type)) {
    ScratchArray<float> x(static_cast<size_t>(count));
    Decode(type, in, count, x.data());
    if (UnaryGivesPred(op)) return Unary(op, ElementType::kF32, x.data(), out, count);
    KILN_RETURN_IF_ERROR(Unary(op, ElementType::kF32, x.data(), x.data(), count));
    Encode(type, x.data(), out, count);
    return Status::Ok();
  }
  const ElementType storage = SubByteStorageType(type);
  Status status = Status::Ok();
  KILN_RETURN_IF_ERROR(DispatchType(storage, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      if (op == UnaryOp::kNot) {
        Map1<bool, bool>(in, out, count, 1, [](bool x) { return !x; });
      } else {
        status = BadType("op", type);
      }
    } else if constexpr (kIsComplex<T>) {
      status = UnaryComplex<T>(op, in, out, count);
    } else if constexpr (kIsFloat<T>) {
      status = UnaryFloat<T>(op, in, out, count);
    } else {
      status = UnaryInteger<T>(op, in, out, count);
    }
  }));
  KILN_RETURN_IF_ERROR(status);
  if (storage != type && !UnaryGivesPred(op)) WrapToWidth(type, out, count);
  return Status::Ok();
}

}  // namespace kiln::kernels
