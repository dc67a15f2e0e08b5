// Elementwise kernels: the StableHLO unary and binary arithmetic ops,
// compare, select, clamp and convert over dense arrays of one shape. Each
// runs over contiguous memory in chunks split across kernels::ParallelFor.
#pragma once

#include <cmath>
#include <cstdint>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// Complex multiply exactly as XLA's CPU backend computes it: the textbook
// formula with LLVM's multiply-add contraction, re = fma(xr, yr, -(xi * yi)),
// im = fma(xr, yi, xi * yr). No C99 Annex G recovery (std::complex's
// operator* would turn (inf + 1i) * (0 - inf i) into an infinity, XLA gives
// NaN), and (1e30 - 1e30i)^2 has re = -inf, not inf - inf. Shared by the
// elementwise, reduction and scatter kernels.
template <typename T>
inline T ComplexMultiply(const T& x, const T& y) {
  return T(std::fma(x.real(), y.real(), -(x.imag() * y.imag())),
           std::fma(x.real(), y.imag(), x.imag() * y.real()));
}

enum class UnaryOp : uint8_t {
  kAbs,
  kCbrt,
  kCeil,
  kCosine,
  kCountLeadingZeros,
  kExponential,
  kExponentialMinusOne,
  kFloor,
  kImag,
  kIsFinite,
  kLog,
  kLogPlusOne,
  kLogistic,
  kNegate,
  kNot,
  kPopcnt,
  kReal,
  kRoundNearestAfz,
  kRoundNearestEven,
  kRsqrt,
  kSign,
  kSine,
  kSqrt,
  kTan,
  kTanh,
  // chlo ops (StableHLO text as JAX prints it; artifacts carry decompositions).
  kAcos,
  kAcosh,
  kAsin,
  kAsinh,
  kAtan,
  kAtanh,
  kCosh,
  kSinh,
  kConj,
  kDigamma,
  kErf,
  kErfc,
  kErfInv,
  kLgamma,
  kSquare,
  kIsInf,
  kIsNegInf,
  kIsPosInf,
  kBesselI1e,
};

// Whether `op` gives pred (is_finite, is_inf, is_neg_inf, is_pos_inf).
inline bool UnaryGivesPred(UnaryOp op) {
  return op == UnaryOp::kIsFinite || op == UnaryOp::kIsInf || op == UnaryOp::kIsNegInf ||
         op == UnaryOp::kIsPosInf;
}

enum class BinaryOp : uint8_t {
  kAdd,
  kAnd,
  kAtan2,
  kDivide,
  kMaximum,
  kMinimum,
  kMultiply,
  kOr,
  kPower,
  kRemainder,
  kShiftLeft,
  kShiftRightArithmetic,
  kShiftRightLogical,
  kSubtract,
  kXor,
  kNextAfter,
  kPolygamma,
  kZeta,   // chlo.next_after, polygamma(n, x), zeta(x, q)
  kMulHi,  // chlo.mulhi: the high half of the double-width product
};

enum class CompareDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
// FLOAT compares by IEEE rules, TOTALORDER by the total order (-NaN < -Inf
// < ... < -0 < +0 < ... < +Inf < +NaN); integers ignore the distinction.
enum class CompareKind : uint8_t { kFloat, kTotalOrder };

// out[i] = op(in[i]). `type` is the operand type; the result is `type`, except
// abs/real/imag of complex (the real part type) and UnaryGivesPred ops (pred).
Status Unary(UnaryOp op, ElementType type, const void* in, void* out, int64_t count);

// out[i] = op(lhs[i], rhs[i]), all of `type`.
Status Binary(BinaryOp op, ElementType type, const void* lhs, const void* rhs, void* out,
              int64_t count);

// out[i] = compare(lhs[i], rhs[i]) as pred (one byte per element).
Status Compare(CompareDirection direction, CompareKind kind, ElementType type, const void* lhs,
               const void* rhs, bool* out, int64_t count);

// out[i] = pred[pred_scalar ? 0 : i] ? on_true[i] : on_false[i].
Status Select(ElementType type, const bool* pred, bool pred_scalar, const void* on_true,
              const void* on_false, void* out, int64_t count);

// out[i] = min(max(operand[i], min), max); `min`/`max` are scalars when the
// flags say so (the spec allows either).
Status Clamp(ElementType type, const void* min, bool min_scalar, const void* operand,
             const void* max, bool max_scalar, void* out, int64_t count);

// Converts `count` elements between any two element types, as XLA's CPU
// backend does: float -> integer saturates (NaN -> 0), integer -> integer
// wraps, complex -> real (and -> pred) uses the real part, x -> pred is x != 0.
Status Convert(ElementType from, const void* in, ElementType to, void* out, int64_t count);

// out[i] = (i / inner) % size as `type` (converted as Convert does from
// s64), for i < count, a multiple of size * inner: an iota along the
// dimension of `size` elements with `inner` elements after it.
Status Iota(ElementType type, int64_t size, int64_t inner, void* out, int64_t count);

// out[i] = complex(re[i], im[i]); `type` is f32 or f64.
Status MakeComplex(ElementType type, const void* re, const void* im, void* out, int64_t count);

// Rounds floats to `exponent_bits` and `mantissa_bits` (round to nearest
// even; overflow to infinity, underflow to zero; NaN stays NaN), as XLA's
// reduce_precision does. f16/bf16 go through f32.
Status ReducePrecision(ElementType type, const void* in, void* out, int64_t count,
                       int exponent_bits, int mantissa_bits);

// Sub-byte integers (s1, s2, s4, u1, u2, u4) live one per byte. Kiln's
// kernels compute on them extended to the byte (-2 as s4 is 0xFE); ml_dtypes
// and XLA's CPU backend hold them with only their own bits set (0x0E), which
// reads as 14 when taken for a whole byte. A program's parameters are brought
// into Kiln's form (SubByteToComputeForm: the low bits sign- or
// zero-extended, whatever the other bits held) and its results back
// (SubByteToHostForm: the low bits alone). `in` and `out` may be the same.
void SubByteToComputeForm(ElementType type, const void* in, void* out, int64_t n);
void SubByteToHostForm(ElementType type, const void* in, void* out, int64_t n);

}  // namespace kiln::kernels
