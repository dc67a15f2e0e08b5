#include "frontend/vhlo/numbers.h"

#include <bit>
#include <cmath>
#include <limits>

namespace kiln::frontend::vhlo {
namespace {

// How a small float format spends its special encodings (llvm::APFloat's
// fltNonfiniteBehavior and fltNanEncoding).
enum class Specials : uint8_t {
  kIeee,           // all-ones exponent: infinity (zero mantissa) or NaN
  kFiniteAllOnes,  // no infinity; NaN is all-ones exponent and mantissa ("FN")
  kFiniteNegZero,  // no infinity; NaN is the negative-zero pattern ("FNUZ")
  kFiniteNone,     // no infinity, no NaN (f4/f6 "FN" types)
};

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
};

bool FormatOf(ElementType type, FloatFormat& format) {
  switch (type) {
    case ElementType::kF16: format = {5, 10, 15, Specials::kIeee}; return true;
    case ElementType::kBF16: format = {8, 7, 127, Specials::kIeee}; return true;
    case ElementType::kF32: format = {8, 23, 127, Specials::kIeee}; return true;
    case ElementType::kF64: format = {11, 52, 1023, Specials::kIeee}; return true;
    case ElementType::kTF32: format = {8, 10, 127, Specials::kIeee}; return true;
    case ElementType::kF8E5M2: format = {5, 2, 15, Specials::kIeee}; return true;
    case ElementType::kF8E4M3: format = {4, 3, 7, Specials::kIeee}; return true;
    case ElementType::kF8E3M4: format = {3, 4, 3, Specials::kIeee}; return true;
    case ElementType::kF8E4M3FN: format = {4, 3, 7, Specials::kFiniteAllOnes}; return true;
    case ElementType::kF8E4M3FNUZ: format = {4, 3, 8, Specials::kFiniteNegZero}; return true;
    case ElementType::kF8E5M2FNUZ: format = {5, 2, 16, Specials::kFiniteNegZero}; return true;
    case ElementType::kF8E4M3B11FNUZ: format = {4, 3, 11, Specials::kFiniteNegZero}; return true;
    case ElementType::kF4E2M1FN: format = {2, 1, 1, Specials::kFiniteNone}; return true;
    case ElementType::kF6E2M3FN: format = {2, 3, 1, Specials::kFiniteNone}; return true;
    case ElementType::kF6E3M2FN: format = {3, 2, 3, Specials::kFiniteNone}; return true;
    default: return false;
  }
}

}  // namespace

bool FloatBitsToDouble(ElementType type, uint64_t bits, double& value) {
  if (type == ElementType::kF64) {
    value = std::bit_cast<double>(bits);
    return true;
  }
  if (type == ElementType::kF8E8M0FNU) {
    // Unsigned powers of two: 2^(e - 127); all ones is NaN.
    uint64_t exponent = bits & 0xFF;
    value = exponent == 0xFF ? std::numeric_limits<double>::quiet_NaN()
                             : std::ldexp(1.0, static_cast<int>(exponent) - 127);
    return true;
  }
  FloatFormat format;
  if (!FormatOf(type, format)) return false;
  const int width = 1 + format.exponent_bits + format.mantissa_bits;
  const uint64_t mantissa_mask = (uint64_t{1} << format.mantissa_bits) - 1;
  const uint64_t exponent_max = (uint64_t{1} << format.exponent_bits) - 1;
  const bool negative = (bits >> (width - 1)) & 1;
  const uint64_t exponent = (bits >> format.mantissa_bits) & exponent_max;
  const uint64_t mantissa = bits & mantissa_mask;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (format.specials) {
    case Specials::kIeee:
      if (exponent == exponent_max) {
        value = mantissa != 0 ? nan : (negative ? -INFINITY : INFINITY);
        return true;
      }
      break;
    case Specials::kFiniteAllOnes:
      if (exponent == exponent_max && mantissa == mantissa_mask) {
        value = nan;
        return true;
      }
      break;
    case Specials::kFiniteNegZero:
      if (negative && exponent == 0 && mantissa == 0) {
        value = nan;
        return true;
      }
      break;
    case Specials::kFiniteNone: break;
  }
  double magnitude;
  if (exponent == 0) {  // zero or subnormal
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - format.bias - format.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (mantissa_mask + 1)),
                           static_cast<int>(exponent) - format.bias - format.mantissa_bits);
  }
  value = negative ? -magnitude : magnitude;
  return true;
}

double Float80BitsToDouble(uint64_t mantissa, uint16_t sign_exponent) {
  const bool negative = sign_exponent & 0x8000;
  const int exponent = sign_exponent & 0x7FFF;
  double magnitude;
  if (exponent == 0x7FFF) {
    magnitude = (mantissa << 1) != 0 ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  } else {
    // The integer bit is explicit: value = mantissa * 2^(e - 16383 - 63).
    magnitude = std::ldexp(static_cast<double>(mantissa),
                           (exponent == 0 ? 1 : exponent) - 16383 - 63);
  }
  return negative ? -magnitude : magnitude;
}

double Float128BitsToDouble(uint64_t low, uint64_t high) {
  const bool negative = high >> 63;
  const int exponent = static_cast<int>((high >> 48) & 0x7FFF);
  const uint64_t top = high & ((uint64_t{1} << 48) - 1);
  double magnitude;
  if (exponent == 0x7FFF) {
    magnitude = (top | low) != 0 ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  } else {
    // 112 mantissa bits; the top 48 and the high part of the low word are
    // plenty for a double's 53.
    double fraction = std::ldexp(static_cast<double>(top), -48) +
                      std::ldexp(static_cast<double>(low), -112);
    magnitude = exponent == 0 ? std::ldexp(fraction, 1 - 16383)
                              : std::ldexp(1.0 + fraction, exponent - 16383);
  }
  return negative ? -magnitude : magnitude;
}

int64_t TruncateToWidth(uint64_t bits, int width, bool is_signed) {
  if (width >= 64) return static_cast<int64_t>(bits);
  if (width <= 0) return 0;
  const uint64_t mask = (uint64_t{1} << width) - 1;
  bits &= mask;
  if (is_signed && ((bits >> (width - 1)) & 1)) bits |= ~mask;
  return static_cast<int64_t>(bits);
}

}  // namespace kiln::frontend::vhlo
