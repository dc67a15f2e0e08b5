#include "kernels/minifloat.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace kiln::kernels {
namespace {

// How a type spends its special encodings.
enum class Special : uint8_t {
  kIeee,          // all-ones exponent: infinity (mantissa 0) or NaN
  kNanOnly,       // only all-ones exponent and mantissa is NaN ("fn"); no infinity
  kNegZeroNan,    // the negative-zero pattern is NaN; no infinity, no -0 ("fnuz")
  kFiniteOnly,    // every pattern is a finite number
  kExponentOnly,  // e8m0: unsigned powers of two, 0xFF is NaN
};

struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Special special;
};

Format FormatOf(ElementType type) {
  switch (type) {
    case ElementType::kF8E5M2: return {5, 2, 15, Special::kIeee};
    case ElementType::kF8E4M3FN: return {4, 3, 7, Special::kNanOnly};
    case ElementType::kF8E4M3B11FNUZ: return {4, 3, 11, Special::kNegZeroNan};
    case ElementType::kF8E5M2FNUZ: return {5, 2, 16, Special::kNegZeroNan};
    case ElementType::kF8E4M3FNUZ: return {4, 3, 8, Special::kNegZeroNan};
    case ElementType::kF8E4M3: return {4, 3, 7, Special::kIeee};
    case ElementType::kF8E3M4: return {3, 4, 3, Special::kIeee};
    case ElementType::kF8E8M0FNU: return {8, 0, 127, Special::kExponentOnly};
    case ElementType::kF4E2M1FN: return {2, 1, 1, Special::kFiniteOnly};
    case ElementType::kF6E2M3FN: return {2, 3, 1, Special::kFiniteOnly};
    case ElementType::kF6E3M2FN: return {3, 2, 3, Special::kFiniteOnly};
    default: return {0, 0, 0, Special::kFiniteOnly};
  }
}

int SignShift(const Format& f) { return f.exponent_bits + f.mantissa_bits; }

bool IsNanPattern(const Format& f, uint8_t bits) {
  const int exponent_max = (1 << f.exponent_bits) - 1;
  const int mantissa_max = (1 << f.mantissa_bits) - 1;
  const int exponent = (bits >> f.mantissa_bits) & exponent_max;
  const int mantissa = bits & mantissa_max;
  switch (f.special) {
    case Special::kIeee: return exponent == exponent_max && mantissa != 0;
    case Special::kNanOnly: return exponent == exponent_max && mantissa == mantissa_max;
    case Special::kNegZeroNan: return bits == (1u << SignShift(f));
    case Special::kExponentOnly: return bits == 0xFF;
    case Special::kFiniteOnly: return false;
  }
  return false;
}

// The largest finite magnitude's encoding (without sign).
uint8_t MaxFinite(const Format& f) {
  const int exponent_max = (1 << f.exponent_bits) - 1;
  const int mantissa_max = (1 << f.mantissa_bits) - 1;
  switch (f.special) {
    case Special::kIeee:
      return static_cast<uint8_t>(((exponent_max - 1) << f.mantissa_bits) | mantissa_max);
    case Special::kNanOnly:
      return static_cast<uint8_t>((exponent_max << f.mantissa_bits) | (mantissa_max - 1));
    case Special::kExponentOnly: return 0xFE;
    default: return static_cast<uint8_t>((exponent_max << f.mantissa_bits) | mantissa_max);
  }
}

}  // namespace

bool IsMinifloat(ElementType type) { return FormatOf(type).exponent_bits != 0; }

float MinifloatToFloat(ElementType type, uint8_t bits) {
  const Format f = FormatOf(type);
  if (IsNanPattern(f, bits)) return std::numeric_limits<float>::quiet_NaN();
  if (f.special == Special::kExponentOnly) {
    // 2^(bits - 127) built from bits: ldexp would flush code 0's f32
    // denormal (2^-127, bits 0x00400000) under the run's FTZ, which XLA
    // keeps.
    return std::bit_cast<float>(bits == 0 ? uint32_t{0x00400000} : uint32_t{bits} << 23);
  }
  const int exponent_max = (1 << f.exponent_bits) - 1;
  const bool negative = (bits >> SignShift(f)) & 1;
  const int exponent = (bits >> f.mantissa_bits) & exponent_max;
  const int mantissa = bits & ((1 << f.mantissa_bits) - 1);
  float magnitude;
  if (f.special == Special::kIeee && exponent == exponent_max) {
    magnitude = std::numeric_limits<float>::infinity();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa + (1 << f.mantissa_bits)),
                           exponent - f.bias - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

uint8_t FloatToMinifloat(ElementType type, float value) {
  const Format f = FormatOf(type);
  const uint8_t sign = std::signbit(value) ? static_cast<uint8_t>(1u << SignShift(f)) : 0;
  const uint8_t max_finite = MaxFinite(f);
  auto nan = [&]() -> uint8_t {
    switch (f.special) {
      case Special::kIeee:
        return static_cast<uint8_t>(sign | (((1 << f.exponent_bits) - 1) << f.mantissa_bits) |
                                    (1 << (f.mantissa_bits - 1)));
      case Special::kNanOnly: return static_cast<uint8_t>(sign | (max_finite + 1));
      case Special::kNegZeroNan: return static_cast<uint8_t>(1u << SignShift(f));
      case Special::kExponentOnly: return 0xFF;
      // No NaN to give: XLA's CPU backend gives the negative-zero pattern.
      case Special::kFiniteOnly: return static_cast<uint8_t>(1u << SignShift(f));
    }
    return 0;
  };
  if (std::isnan(value)) return nan();
  if (f.special == Special::kExponentOnly) {
    // Unsigned powers of two: round log2 to nearest (ties to even exponent
    // do not arise: the midpoint of 2^e and 2^(e+1) is 1.5 * 2^e).
    if (value <= 0 || std::isinf(value)) return value <= 0 ? 0xFF : 0xFF;
    int exponent;
    const float fraction = std::frexp(value, &exponent);  // value = fraction * 2^exponent
    int e = exponent - 1;                                 // value = 2 * fraction * 2^e
    if (2 * fraction > 1.5f) ++e;
    const int biased = e + f.bias;
    if (biased < 0) return 0;
    if (biased > 0xFE) return 0xFF;
    return static_cast<uint8_t>(biased);
  }
  const float magnitude = std::fabs(value);
  // Find the nearest representable magnitude by rounding in the type's
  // grid: subnormal spacing below the smallest normal, else the exponent's.
  const int min_exponent = 1 - f.bias;  // of the smallest normal
  int exponent;
  std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
  int unbiased = exponent - 1;
  if (magnitude == 0) unbiased = min_exponent;
  if (unbiased < min_exponent) unbiased = min_exponent;
  const float quantum = std::ldexp(1.0f, unbiased - f.mantissa_bits);
  const float scaled = magnitude / quantum;  // exact: power-of-two division
  float rounded = std::nearbyint(scaled);    // ties to even in the default mode
  // Rebuild the encoding from rounded * quantum.
  int64_t units = static_cast<int64_t>(rounded);
  int encoded_exponent;
  int64_t mantissa;
  if (units == 0) {
    return f.special == Special::kNegZeroNan ? 0 : sign;
  }
  if (unbiased == min_exponent && units < (int64_t(1) << f.mantissa_bits)) {
    encoded_exponent = 0;  // subnormal
    mantissa = units;
  } else {
    if (units >= (int64_t(2) << f.mantissa_bits)) {  // rounded up to the next binade
      units >>= 1;
      ++unbiased;
    }
    encoded_exponent = unbiased + f.bias;
    mantissa = units - (int64_t(1) << f.mantissa_bits);
  }
  const int64_t code = (int64_t(encoded_exponent) << f.mantissa_bits) | mantissa;
  if (code > max_finite || std::isinf(value)) {
    switch (f.special) {
      case Special::kIeee:
        return static_cast<uint8_t>(sign | (((1 << f.exponent_bits) - 1) << f.mantissa_bits));
      case Special::kFiniteOnly: return static_cast<uint8_t>(sign | max_finite);
      default: return nan();
    }
  }
  return static_cast<uint8_t>(sign | code);
}

}  // namespace kiln::kernels
