// Elementwise binary kernels (elementwise.h's Binary): the float, complex,
// integer and pred families, and chlo.mulhi, each a switch over the op that
// picks a lambda for the shared map loop (elementwise_internal.h).
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/elementwise.h"
#include "kernels/elementwise_internal.h"
#include "kernels/isa_clones.h"
#include "kernels/minifloat.h"
#include "kernels/parallel.h"
#include "kernels/scratch.h"
#include "kernels/special_functions.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

using elementwise_internal::BadType;
using elementwise_internal::Decode;
using elementwise_internal::Encode;
using elementwise_internal::FloatMax;
using elementwise_internal::FloatMin;
using elementwise_internal::Map2;
using elementwise_internal::RunLoop2;
using elementwise_internal::Unsigned;
using elementwise_internal::WrapAdd;
using elementwise_internal::WrapMul;
using elementwise_internal::WrapSub;
using elementwise_internal::WrapToWidth;

// XLA's integer division: x / 0 is -1 (all ones), INT_MIN / -1 is INT_MIN;
// x % 0 is x, INT_MIN % -1 is 0.
template <typename T>
T IntDivide(T a, T b) {
  if (b == 0) return static_cast<T>(-1);
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) return a;
  }
  return static_cast<T>(a / b);
}
template <typename T>
T IntRemainder(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) return 0;
  }
  return static_cast<T>(a % b);
}

// Integer power by squaring; negative exponents give 0 except for bases 1
// and -1 (XLA's rule).
template <typename T>
T IntPower(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  T result = 1;
  while (exponent != 0) {
    if (exponent & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    exponent = static_cast<T>(static_cast<Unsigned<T>>(exponent) >> 1);
  }
  return result;
}

// Shifts by the bit width or more: 0 (left, logical) or the sign (arithmetic).
template <typename T>
T ShiftLeft(T a, T b) {
  const auto amount = static_cast<Unsigned<T>>(b);
  if (amount >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<Unsigned<T>>(a) << amount);
}
template <typename T>
T ShiftRightLogical(T a, T b) {
  const auto amount = static_cast<Unsigned<T>>(b);
  if (amount >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<Unsigned<T>>(a) >> amount);
}
template <typename T>
T ShiftRightArithmetic(T a, T b) {
  using S = std::make_signed_t<T>;
  const auto amount = static_cast<Unsigned<T>>(b);
  const S value = static_cast<S>(a);
  if (amount >= sizeof(T) * 8) return static_cast<T>(value < 0 ? S(-1) : S(0));
  return static_cast<T>(value >> amount);
}

// Complex numbers order lexicographically (real, then imaginary) in max/min.
template <typename C>
C ComplexMax(C a, C b) {
  return (a.real() > b.real() || (a.real() == b.real() && a.imag() >= b.imag())) ? a : b;
}
template <typename C>
C ComplexMin(C a, C b) {
  return (a.real() < b.real() || (a.real() == b.real() && a.imag() <= b.imag())) ? a : b;
}

// Complex divide as XLA's CPU backend does it: Smith's algorithm, then, only
// when both parts are NaN, the zero-denominator, infinite-numerator and
// infinite-denominator cases.
template <typename T>
T ComplexDivide(T x, T y) {
  using R = typename T::value_type;
  const R ar = x.real(), ai = x.imag(), br = y.real(), bi = y.imag();
  const R abs_br = std::fabs(br), abs_bi = std::fabs(bi);
  R cr, ci;
  if (abs_br < abs_bi) {
    const R ratio = br / bi, denominator = bi + ratio * br;
    cr = (ratio * ar + ai) / denominator;
    ci = (ratio * ai - ar) / denominator;
  } else {
    const R ratio = bi / br, denominator = br + ratio * bi;
    cr = (ratio * ai + ar) / denominator;
    ci = (ai - ratio * ar) / denominator;
  }
  if (!(std::isnan(cr) && std::isnan(ci))) return T(cr, ci);
  const R inf = std::numeric_limits<R>::infinity();
  if (abs_br == R(0) && abs_bi == R(0) && (!std::isnan(ar) || !std::isnan(ai))) {
    const R signed_inf = std::copysign(inf, br);
    return T(signed_inf * ar, signed_inf * ai);
  }
  // XLA's "finite" tests are ordered compares (|v| != inf): NaN is not finite.
  const bool a_finite = std::isfinite(ar) && std::isfinite(ai);
  const bool b_finite = std::isfinite(br) && std::isfinite(bi);
  const bool a_infinite = std::isinf(ar) || std::isinf(ai);
  const bool b_infinite = std::isinf(br) || std::isinf(bi);
  if (a_infinite && b_finite) {
    const R sr = std::copysign(std::isinf(ar) ? R(1) : R(0), ar);
    const R si = std::copysign(std::isinf(ai) ? R(1) : R(0), ai);
    return T(inf * (sr * br + si * bi), inf * (si * br - sr * bi));
  }
  if (b_infinite && a_finite) {
    const R sr = std::copysign(std::isinf(br) ? R(1) : R(0), br);
    const R si = std::copysign(std::isinf(bi) ? R(1) : R(0), bi);
    return T(R(0) * (ar * sr + ai * si), R(0) * (ai * sr - ar * si));
  }
  return T(cr, ci);
}

// Complex power as XLA's CPU backend computes it (elemental_ir_emitter's
// EmitComplexPower), in polar form:
//   (a+bi)^(c+di) = (a^2+b^2)^(c/2) e^(-d atan2(b,a)) (cos q + i sin q),
//   q = c atan2(b,a) + d/2 ln(a^2+b^2),
// with 0^(c+0i) = 1 for c = 0 and 0 for c > 0. std::pow's exp(y log x)
// loses the exactness of real powers (9^3 was 729.00006 in complex64; XLA
// and torch give 729).
template <typename T>
T ComplexPower(T x, T y) {
  using R = typename T::value_type;
  const R a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  const R norm = a * a + b * b;
  if (norm == R(0) && d == R(0) && c >= R(0)) return T(c == R(0) ? R(1) : R(0), R(0));
  const R angle = std::atan2(b, a);
  const R coefficient = std::pow(norm, R(0.5) * c) * std::exp(-d * angle);
  const R q = c * angle + R(0.5) * d * std::log(norm);
  return T(coefficient * std::cos(q), coefficient * std::sin(q));
}

// Integer element types (mulhi takes no floats and no pred).
template <typename T>
constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The arithmetic ops on f32 and f64 as plain loops built for AVX2 and
// AVX-512 too (KILN_ISA_CLONES), as the integer ops below: the templates
// compile for baseline x86-64, two f64 lanes per instruction, where XLA's
// loops use the machine's widest.
#define KILN_BINARY_LOOP(name, T, expr)                                                 \
  KILN_ISA_CLONES void name(const T* a, const T* b, T* y, int64_t begin, int64_t end) { \
    for (int64_t i = begin; i < end; ++i) {                                             \
      const T x = a[i], z = b[i];                                                       \
      y[i] = static_cast<T>(expr);                                                      \
    }                                                                                   \
  }
#define KILN_FLOAT_LOOPS(T)                                \
  KILN_BINARY_LOOP(FloatAddLoop, T, x + z)                 \
  KILN_BINARY_LOOP(FloatSubtractLoop, T, x - z)            \
  KILN_BINARY_LOOP(FloatMultiplyLoop, T, x* z)             \
  KILN_BINARY_LOOP(FloatDivideLoop, T, x / z)              \
  KILN_BINARY_LOOP(FloatMaximumLoop, T, FloatMax<T>(x, z)) \
  KILN_BINARY_LOOP(FloatMinimumLoop, T, FloatMin<T>(x, z))
KILN_FLOAT_LOOPS(float)
KILN_FLOAT_LOOPS(double)
#undef KILN_FLOAT_LOOPS

// Whether `op` on f32 or f64 ran as one of the loops above.
template <typename T>
bool BinaryFloatLoop(BinaryOp op, const void* lhs, const void* rhs, void* out, int64_t n) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    void (*loop)(const T*, const T*, T*, int64_t, int64_t) = nullptr;
    switch (op) {
      case BinaryOp::kAdd: loop = FloatAddLoop; break;
      case BinaryOp::kSubtract: loop = FloatSubtractLoop; break;
      case BinaryOp::kMultiply: loop = FloatMultiplyLoop; break;
      case BinaryOp::kDivide: loop = FloatDivideLoop; break;
      case BinaryOp::kMaximum: loop = FloatMaximumLoop; break;
      case BinaryOp::kMinimum: loop = FloatMinimumLoop; break;
      default: return false;
    }
    RunLoop2(loop, lhs, rhs, out, n, op == BinaryOp::kDivide ? 4 : 1);
    return true;
  }
  return false;
}

template <typename T>
Status BinaryFloat(BinaryOp op, const void* a, const void* b, void* out, int64_t n) {
  if (BinaryFloatLoop<T>(op, a, b, out, n)) return Status::Ok();
  using C = ComputeType<T>;
  auto map = [&](int64_t cost, auto f) {
    Map2<T, T>(a, b, out, n, cost,
               [f](T x, T y) { return static_cast<T>(f(static_cast<C>(x), static_cast<C>(y))); });
  };
  switch (op) {
    case BinaryOp::kAdd: map(1, [](C x, C y) { return x + y; }); break;
    case BinaryOp::kSubtract: map(1, [](C x, C y) { return x - y; }); break;
    case BinaryOp::kMultiply: map(1, [](C x, C y) { return x * y; }); break;
    case BinaryOp::kDivide: map(4, [](C x, C y) { return x / y; }); break;
    case BinaryOp::kMaximum: map(1, [](C x, C y) { return FloatMax(x, y); }); break;
    case BinaryOp::kMinimum: map(1, [](C x, C y) { return FloatMin(x, y); }); break;
    case BinaryOp::kPower: map(40, [](C x, C y) { return std::pow(x, y); }); break;
    case BinaryOp::kRemainder: map(20, [](C x, C y) { return std::fmod(x, y); }); break;
    case BinaryOp::kAtan2: map(40, [](C x, C y) { return std::atan2(x, y); }); break;
    case BinaryOp::kNextAfter:
      // In T's own format: f16 / bf16 step by their ulp, not f32's.
      Map2<T, T>(a, b, out, n, 4, [](T x, T y) { return NextAfter(x, y); });
      break;
    case BinaryOp::kPolygamma: map(200, [](C x, C y) { return Polygamma(x, y); }); break;
    case BinaryOp::kZeta: map(200, [](C x, C y) { return HurwitzZeta(x, y); }); break;
    default: return InvalidArgument("this binary op does not accept floating-point elements");
  }
  return Status::Ok();
}

template <typename T>
Status BinaryComplex(BinaryOp op, const void* a, const void* b, void* out, int64_t n) {
  auto map = [&](int64_t cost, auto f) { Map2<T, T>(a, b, out, n, cost, f); };
  switch (op) {
    case BinaryOp::kAdd: map(2, [](T x, T y) { return x + y; }); break;
    case BinaryOp::kSubtract: map(2, [](T x, T y) { return x - y; }); break;
    case BinaryOp::kMultiply: map(4, [](T x, T y) { return ComplexMultiply(x, y); }); break;
    case BinaryOp::kDivide: map(10, [](T x, T y) { return ComplexDivide(x, y); }); break;
    case BinaryOp::kPower: map(80, [](T x, T y) { return ComplexPower(x, y); }); break;
    case BinaryOp::kMaximum: map(2, [](T x, T y) { return ComplexMax(x, y); }); break;
    case BinaryOp::kMinimum: map(2, [](T x, T y) { return ComplexMin(x, y); }); break;
    case BinaryOp::kAtan2:
      // atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)), the StableHLO
      // interpreter's definition (XLA's CPU backend has none for complex).
      map(80, [](T y, T x) {
        const T i(0, 1);
        return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
      });
      break;
    default: return InvalidArgument("this binary op does not accept complex elements");
  }
  return Status::Ok();
}

// The bitwise and wrapping ops on 32- and 64-bit integers, one plain loop
// per op and width built for AVX2 and AVX-512 too (KILN_ISA_CLONES): in
// unsigned arithmetic, which is the same bits for signed elements. The
// templates above compile for baseline x86-64, two u32 lanes per SSE2
// instruction and no variable shifts: threefry's rounds (adds, xors,
// rotates of u32) were 70% of jax.random.uniform's time, 1.5 times XLA's.
#define KILN_INTEGER_LOOPS(U, S)                                                    \
  KILN_BINARY_LOOP(LoopAdd, U, x + z)                                               \
  KILN_BINARY_LOOP(LoopSubtract, U, x - z)                                          \
  KILN_BINARY_LOOP(LoopMultiply, U, x* z)                                           \
  KILN_BINARY_LOOP(LoopAnd, U, x& z)                                                \
  KILN_BINARY_LOOP(LoopOr, U, x | z)                                                \
  KILN_BINARY_LOOP(LoopXor, U, x ^ z)                                               \
  KILN_BINARY_LOOP(LoopShiftLeft, U, z >= sizeof(U) * 8 ? U{0} : U(x << z))         \
  KILN_BINARY_LOOP(LoopShiftRightLogical, U, z >= sizeof(U) * 8 ? U{0} : U(x >> z)) \
  KILN_BINARY_LOOP(LoopShiftRightArithmetic, S,                                     \
                   static_cast<U>(z) >= sizeof(S) * 8 ? S(x >> (sizeof(S) * 8 - 1)) : S(x >> z))
KILN_INTEGER_LOOPS(uint32_t, int32_t)
KILN_INTEGER_LOOPS(uint64_t, int64_t)
#undef KILN_INTEGER_LOOPS
#undef KILN_BINARY_LOOP

// Whether `op` on 32- or 64-bit integers ran as one of the loops above.
template <typename T>
bool BinaryIntegerLoop(BinaryOp op, const void* a, const void* b, void* out, int64_t n) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    using S = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
    if (op == BinaryOp::kShiftRightArithmetic) {
      RunLoop2<S, S>(LoopShiftRightArithmetic, a, b, out, n, 1);
      return true;
    }
    void (*loop)(const U*, const U*, U*, int64_t, int64_t) = nullptr;
    switch (op) {
      case BinaryOp::kAdd: loop = LoopAdd; break;
      case BinaryOp::kSubtract: loop = LoopSubtract; break;
      case BinaryOp::kMultiply: loop = LoopMultiply; break;
      case BinaryOp::kAnd: loop = LoopAnd; break;
      case BinaryOp::kOr: loop = LoopOr; break;
      case BinaryOp::kXor: loop = LoopXor; break;
      case BinaryOp::kShiftLeft: loop = LoopShiftLeft; break;
      case BinaryOp::kShiftRightLogical: loop = LoopShiftRightLogical; break;
      default: return false;
    }
    RunLoop2(loop, a, b, out, n, 1);
    return true;
  }
  return false;
}

template <typename T>
Status BinaryInteger(BinaryOp op, const void* a, const void* b, void* out, int64_t n) {
  if (BinaryIntegerLoop<T>(op, a, b, out, n)) return Status::Ok();
  auto map = [&](auto f) { Map2<T, T>(a, b, out, n, 1, f); };
  switch (op) {
    case BinaryOp::kAdd: map([](T x, T y) { return WrapAdd(x, y); }); break;
    case BinaryOp::kSubtract: map([](T x, T y) { return WrapSub(x, y); }); break;
    case BinaryOp::kMultiply: map([](T x, T y) { return WrapMul(x, y); }); break;
    case BinaryOp::kDivide: map([](T x, T y) { return IntDivide(x, y); }); break;
    case BinaryOp::kRemainder: map([](T x, T y) { return IntRemainder(x, y); }); break;
    case BinaryOp::kMaximum: map([](T x, T y) { return x >= y ? x : y; }); break;
    case BinaryOp::kMinimum: map([](T x, T y) { return x <= y ? x : y; }); break;
    case BinaryOp::kPower: map([](T x, T y) { return IntPower(x, y); }); break;
    case BinaryOp::kAnd: map([](T x, T y) { return static_cast<T>(x & y); }); break;
    case BinaryOp::kOr: map([](T x, T y) { return static_cast<T>(x | y); }); break;
    case BinaryOp::kXor: map([](T x, T y) { return static_cast<T>(x ^ y); }); break;
    case BinaryOp::kShiftLeft: map([](T x, T y) { return ShiftLeft(x, y); }); break;
    case BinaryOp::kShiftRightLogical: map([](T x, T y) { return ShiftRightLogical(x, y); }); break;
    case BinaryOp::kShiftRightArithmetic:
      map([](T x, T y) { return ShiftRightArithmetic(x, y); });
      break;
    default: return InvalidArgument("this binary op does not accept integer elements");
  }
  return Status::Ok();
}

// pred arithmetic as XLA defines it: add/max/or = or, multiply/min/and = and.
Status BinaryPred(BinaryOp op, const void* a, const void* b, void* out, int64_t n) {
  auto map = [&](auto f) { Map2<bool, bool>(a, b, out, n, 1, f); };
  switch (op) {
    case BinaryOp::kAdd:
    case BinaryOp::kMaximum:
    case BinaryOp::kOr: map([](bool x, bool y) { return x || y; }); break;
    case BinaryOp::kMultiply:
    case BinaryOp::kMinimum:
    case BinaryOp::kAnd: map([](bool x, bool y) { return x && y; }); break;
    case BinaryOp::kXor:
    case BinaryOp::kSubtract: map([](bool x, bool y) { return x != y; }); break;
    default: return InvalidArgument("this binary op does not accept pred elements");
  }
  return Status::Ok();
}

// chlo.mulhi on integers of `bits` logical bits (stored in T): the high
// `bits` bits of the exact 2 * bits product, signed or unsigned as T is.
__extension__ using Int128 = __int128;
__extension__ using Uint128 = unsigned __int128;

template <typename T>
void MultiplyHigh(const void* lhs, const void* rhs, void* out, int64_t count, int bits) {
  using Wide = std::conditional_t<std::is_signed_v<T>, Int128, Uint128>;
  Map2<T, T>(lhs, rhs, out, count, 2, [bits](T x, T y) {
    return static_cast<T>((static_cast<Wide>(x) * static_cast<Wide>(y)) >> bits);
  });
}

}  // namespace

Status Binary(BinaryOp op, ElementType type, const void* lhs, const void* rhs, void* out,
              int64_t count) {
  if (op == BinaryOp::kMulHi) {
    const ElementType storage = SubByteStorageType(type);
    const int bits = GetElementTypeInfo(type).bit_width;
    Status status = Status::Ok();
    KILN_RETURN_IF_ERROR(DispatchType(storage, [&]<typename T>() {
      if constexpr (kIsInteger<T>) {
        MultiplyHigh<T>(lhs, rhs, out, count, bits);
      } else {
        status = BadType("mulhi", type);
      }
    }));
    KILN_RETURN_IF_ERROR(status);
    if (storage != type) WrapToWidth(type, out, count);
    return Status::Ok();
  }
  if (IsMinifloat(type)) {
    ScratchArray<float> a(static_cast<size_t>(count));
    Decode(type, lhs, count, a.data());
    ScratchArray<float> b(static_cast<size_t>(count));
    Decode(type, rhs, count, b.data());
    KILN_RETURN_IF_ERROR(Binary(op, ElementType::kF32, a.data(), b.data(), a.data(), count));
    Encode(type, a.data(), out, count);
    return Status::Ok();
  }
  const ElementType storage = SubByteStorageType(type);
  Status status = Status::Ok();
  KILN_RETURN_IF_ERROR(DispatchType(storage, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      status = BinaryPred(op, lhs, rhs, out, count);
    } else if constexpr (kIsComplex<T>) {
      status = BinaryComplex<T>(op, lhs, rhs, out, count);
    } else if constexpr (kIsFloat<T>) {
      status = BinaryFloat<T>(op, lhs, rhs, out, count);
    } else {
      status = BinaryInteger<T>(op, lhs, rhs, out, count);
    }
  }));
  KILN_RETURN_IF_ERROR(status);
  if (storage != type) WrapToWidth(type, out, count);
  return Status::Ok();
}

}  // namespace kiln::kernels
