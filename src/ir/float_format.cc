#include "ir/float_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace kiln::ir {
namespace {

// A non-negative integer of any size, just enough arithmetic for exact
// binary-to-decimal conversion. Limbs are little-endian.
class BigInt {
 public:
  explicit BigInt(uint64_t value) {
    while (value != 0) {
      limbs_.push_back(static_cast<uint32_t>(value));
      value >>= 32;
    }
  }

  bool IsZero() const { return limbs_.empty(); }

  int BitLength() const {
    if (limbs_.empty()) return 0;
    int top = 32 - __builtin_clz(limbs_.back());
    return static_cast<int>((limbs_.size() - 1) * 32) + top;
  }

  void ShiftLeft(int bits) {
    if (IsZero() || bits == 0) return;
    size_t words = static_cast<size_t>(bits) / 32;
    int rest = bits % 32;
    limbs_.insert(limbs_.begin(), words, 0);
    if (rest != 0) {
      uint32_t carry = 0;
      for (uint32_t& limb : limbs_) {
        uint32_t next = limb >> (32 - rest);
        limb = (limb << rest) | carry;
        carry = next;
      }
      if (carry != 0) limbs_.push_back(carry);
    }
  }

  void MultiplySmall(uint32_t factor) {
    uint64_t carry = 0;
    for (uint32_t& limb : limbs_) {
      uint64_t product = static_cast<uint64_t>(limb) * factor + carry;
      limb = static_cast<uint32_t>(product);
      carry = product >> 32;
    }
    if (carry != 0) limbs_.push_back(static_cast<uint32_t>(carry));
  }

  // Divides in place, returning the remainder.
  uint32_t DivideSmall(uint32_t divisor) {
    uint64_t remainder = 0;
    for (size_t i = limbs_.size(); i-- > 0;) {
      uint64_t current = (remainder << 32) | limbs_[i];
      limbs_[i] = static_cast<uint32_t>(current / divisor);
      remainder = current % divisor;
    }
    while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
    return static_cast<uint32_t>(remainder);
  }

  void MultiplyByPowerOf5(int count) {
    for (; count >= 13; count -= 13) MultiplySmall(1220703125u);  // 5^13
    uint32_t rest = 1;
    for (; count > 0; --count) rest *= 5;
    MultiplySmall(rest);
  }

  void DivideByPowerOf10(int count) {
    for (; count >= 9; count -= 9) DivideSmall(1000000000u);
    uint32_t rest = 1;
    for (; count > 0; --count) rest *= 10;
    if (rest != 1) DivideSmall(rest);
  }

 private:
  std::vector<uint32_t> limbs_;
};

enum class Category { kZero, kNormal, kInfinity, kNan };

// An encoding taken apart the way APFloat holds it: value = significand *
// 2^exponent, with `precision` significand bits.
struct Decomposed {
  Category category = Category::kZero;
  bool negative = false;
  uint64_t significand = 0;
  int exponent = 0;
  int precision = 0;
};

uint64_t Mask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

Decomposed Decompose(const FloatSemantics& s, uint64_t bits) {
  Decomposed d;
  d.precision = s.mantissa_bits + 1;
  int body_bits = s.exponent_bits + s.mantissa_bits;
  d.negative = s.has_sign && ((bits >> body_bits) & 1) != 0;
  uint64_t field = (bits >> s.mantissa_bits) & Mask(s.exponent_bits);
  uint64_t mantissa = bits & Mask(s.mantissa_bits);
  uint64_t max_field = Mask(s.exponent_bits);
  switch (s.non_finite) {
    case FloatNonFinite::kIeee:
      if (field == max_field) {
        d.category = mantissa == 0 ? Category::kInfinity : Category::kNan;
        return d;
      }
      break;
    case FloatNonFinite::kAllOnesNan:
      if (field == max_field && mantissa == Mask(s.mantissa_bits)) {
        d.category = Category::kNan;
        return d;
      }
      break;
    case FloatNonFinite::kNegZeroNan:
      if (d.negative && field == 0 && mantissa == 0) {
        d.category = Category::kNan;
        return d;
      }
      break;
    case FloatNonFinite::kFiniteOnly: break;
  }
  int min_exponent = 1 - s.bias;
  if (!s.has_zero) {
    // f8E8M0FNU: every field is a normal power of two, no subnormals.
    d.category = Category::kNormal;
    d.significand = uint64_t{1} << s.mantissa_bits | mantissa;
    d.exponent = static_cast<int>(field) - s.bias - s.mantissa_bits;
    return d;
  }
  if (field == 0) {
    if (mantissa == 0) return d;  // zero
    d.category = Category::kNormal;
    d.significand = mantissa;
    d.exponent = min_exponent - s.mantissa_bits;
    return d;
  }
  d.category = Category::kNormal;
  d.significand = uint64_t{1} << s.mantissa_bits | mantissa;
  d.exponent = static_cast<int>(field) - s.bias - s.mantissa_bits;
  return d;
}

// APFloat's rounding of a decimal digit buffer (least significant digit
// first) to `precision` digits: round half up on the first dropped digit.
void RoundDigits(std::vector<char>& digits, int& exponent, unsigned precision) {
  size_t count = digits.size();
  if (count <= precision) return;
  size_t first = count - precision;
  if (digits[first - 1] < '5') {
    while (first < count && digits[first] == '0') ++first;
    exponent += static_cast<int>(first);
    digits.erase(digits.begin(), digits.begin() + static_cast<std::ptrdiff_t>(first));
    return;
  }
  for (size_t i = first; i != count; ++i) {
    if (digits[i] == '9') {
      ++first;
    } else {
      ++digits[i];
      break;
    }
  }
  if (first == count) {
    exponent += static_cast<int>(first);
    digits.assign(1, '1');
    return;
  }
  exponent += static_cast<int>(first);
  digits.erase(digits.begin(), digits.begin() + static_cast<std::ptrdiff_t>(first));
}

// APFloat::toString for a finite non-zero value.
std::string ToStringNormal(const Decomposed& d, unsigned format_precision, unsigned max_padding,
                           bool truncate_zero) {
  std::string out;
  if (d.negative) out.push_back('-');
  if (format_precision == 0) {
    format_precision = 2 + static_cast<unsigned>(d.precision) * 59 / 196;
  }
  uint64_t significand = d.significand;
  int exponent = d.exponent;
  int trailing = __builtin_ctzll(significand);
  exponent += trailing;
  significand >>= trailing;
  BigInt value(significand);
  if (exponent > 0) {
    value.ShiftLeft(exponent);
    exponent = 0;
  } else if (exponent < 0) {
    value.MultiplyByPowerOf5(-exponent);  // N * 2^-e == N * 5^e * 10^-e
  }
  // Drop decimal digits that cannot matter, as APFloat does (truncating).
  int bits = value.BitLength();
  int bits_required = static_cast<int>((format_precision * 196 + 58) / 59);
  if (bits > bits_required) {
    int removable = (bits - bits_required) * 59 / 196;
    if (removable > 0) {
      exponent += removable;
      value.DivideByPowerOf10(removable);
    }
  }
  std::vector<char> digits;  // least significant first
  bool in_trail = true;
  while (!value.IsZero()) {
    uint32_t digit = value.DivideSmall(10);
    if (in_trail && digit == 0) {
      ++exponent;
    } else {
      digits.push_back(static_cast<char>('0' + digit));
      in_trail = false;
    }
  }
  RoundDigits(digits, exponent, format_precision);
  unsigned count = static_cast<unsigned>(digits.size());

  bool scientific;
  if (max_padding == 0) {
    scientific = true;
  } else if (exponent >= 0) {
    scientific = static_cast<unsigned>(exponent) > max_padding ||
                 count + static_cast<unsigned>(exponent) > format_precision;
  } else {
    int most_significant = exponent + static_cast<int>(count) - 1;
    scientific = most_significant < 0 && static_cast<unsigned>(-most_significant) > max_padding;
  }

  if (scientific) {
    exponent += static_cast<int>(count) - 1;
    out.push_back(digits[count - 1]);
    out.push_back('.');
    if (count == 1 && truncate_zero) {
      out.push_back('0');
    } else {
      for (unsigned i = 1; i != count; ++i) out.push_back(digits[count - 1 - i]);
    }
    if (!truncate_zero && format_precision > count - 1) {
      out.append(format_precision - count + 1, '0');
    }
    out.push_back(truncate_zero ? 'E' : 'e');
    out.push_back(exponent >= 0 ? '+' : '-');
    int magnitude = exponent < 0 ? -exponent : exponent;
    if (!truncate_zero && magnitude < 10) out.push_back('0');
    out += std::to_string(magnitude);
    return out;
  }
  if (exponent >= 0) {
    for (unsigned i = 0; i != count; ++i) out.push_back(digits[count - 1 - i]);
    out.append(static_cast<size_t>(exponent), '0');
    return out;
  }
  int whole_digits = exponent + static_cast<int>(count);
  unsigned i = 0;
  if (whole_digits > 0) {
    for (; i != static_cast<unsigned>(whole_digits); ++i) out.push_back(digits[count - 1 - i]);
    out.push_back('.');
  } else {
    out += "0.";
    out.append(static_cast<size_t>(-whole_digits), '0');
  }
  for (; i != count; ++i) out.push_back(digits[count - 1 - i]);
  return out;
}

std::string ToString(const Decomposed& d, unsigned format_precision, unsigned max_padding,
                     bool truncate_zero) {
  if (d.category == Category::kZero) {
    std::string out = d.negative ? "-" : "";
    if (max_padding != 0) return out + "0";
    if (truncate_zero) return out + "0.0E+0";
    out += "0.0";
    if (format_precision > 1) out.append(format_precision - 1, '0');
    return out + "e+00";
  }
  return ToStringNormal(d, format_precision, max_padding, truncate_zero);
}

// Parses a decimal literal into the format, as APFloat(semantics, text) does.
uint64_t ParseDecimal(const FloatSemantics& s, const std::string& text) {
  if (s.exponent_bits == 11 && s.mantissa_bits == 52) {
    double value = std::strtod(text.c_str(), nullptr);
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
  }
  if (s.exponent_bits == 8 && s.mantissa_bits == 23) {
    float value = std::strtof(text.c_str(), nullptr);
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
  }
  return DoubleToFloatBits(s, std::strtod(text.c_str(), nullptr));
}

std::string HexBits(uint64_t bits) {
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "0x%llX", static_cast<unsigned long long>(bits));
  return buffer;
}

uint64_t LargestFinite(const FloatSemantics& s) {
  uint64_t max_field = Mask(s.exponent_bits);
  uint64_t all_mantissa = Mask(s.mantissa_bits);
  switch (s.non_finite) {
    case FloatNonFinite::kIeee: return (max_field - 1) << s.mantissa_bits | all_mantissa;
    case FloatNonFinite::kAllOnesNan:
      return max_field << s.mantissa_bits | (all_mantissa == 0 ? 0 : all_mantissa - 1);
    case FloatNonFinite::kNegZeroNan:
    case FloatNonFinite::kFiniteOnly: return max_field << s.mantissa_bits | all_mantissa;
  }
  return 0;
}

}  // namespace

std::optional<FloatSemantics> GetFloatSemantics(ElementType type) {
  auto make = [](int exponent_bits, int mantissa_bits, int bias, FloatNonFinite non_finite) {
    FloatSemantics s;
    s.exponent_bits = exponent_bits;
    s.mantissa_bits = mantissa_bits;
    s.bias = bias;
    s.non_finite = non_finite;
    return s;
  };
  using N = FloatNonFinite;
  switch (type) {
    case ElementType::kF16: return make(5, 10, 15, N::kIeee);
    case ElementType::kBF16: return make(8, 7, 127, N::kIeee);
    case ElementType::kF32: return make(8, 23, 127, N::kIeee);
    case ElementType::kF64: return make(11, 52, 1023, N::kIeee);
    case ElementType::kTF32: return make(8, 10, 127, N::kIeee);
    case ElementType::kF8E5M2: return make(5, 2, 15, N::kIeee);
    case ElementType::kF8E4M3: return make(4, 3, 7, N::kIeee);
    case ElementType::kF8E3M4: return make(3, 4, 3, N::kIeee);
    case ElementType::kF8E4M3FN: return make(4, 3, 7, N::kAllOnesNan);
    case ElementType::kF8E4M3B11FNUZ: return make(4, 3, 11, N::kNegZeroNan);
    case ElementType::kF8E5M2FNUZ: return make(5, 2, 16, N::kNegZeroNan);
    case ElementType::kF8E4M3FNUZ: return make(4, 3, 8, N::kNegZeroNan);
    case ElementType::kF4E2M1FN: return make(2, 1, 1, N::kFiniteOnly);
    case ElementType::kF6E2M3FN: return make(2, 3, 1, N::kFiniteOnly);
    case ElementType::kF6E3M2FN: return make(3, 2, 3, N::kFiniteOnly);
    case ElementType::kF8E8M0FNU: {
      FloatSemantics s = make(8, 0, 127, N::kAllOnesNan);
      s.has_sign = false;
      s.has_zero = false;
      return s;
    }
    default: return std::nullopt;
  }
}

double FloatBitsToDouble(const FloatSemantics& s, uint64_t bits) {
  Decomposed d = Decompose(s, bits & Mask(s.bit_width()));
  double magnitude = 0.0;
  switch (d.category) {
    case Category::kZero: magnitude = 0.0; break;
    case Category::kInfinity: magnitude = HUGE_VAL; break;
    case Category::kNan: return std::nan("");
    case Category::kNormal:
      magnitude = std::ldexp(static_cast<double>(d.significand), d.exponent);
      break;
  }
  return d.negative ? -magnitude : magnitude;
}

uint64_t QuietNanBits(const FloatSemantics& s) {
  switch (s.non_finite) {
    case FloatNonFinite::kIeee:
      return Mask(s.exponent_bits) << s.mantissa_bits | uint64_t{1} << (s.mantissa_bits - 1);
    case FloatNonFinite::kAllOnesNan: return Mask(s.exponent_bits + s.mantissa_bits);
    case FloatNonFinite::kNegZeroNan: return uint64_t{1} << (s.exponent_bits + s.mantissa_bits);
    case FloatNonFinite::kFiniteOnly: return 0;
  }
  return 0;
}

uint64_t DoubleToFloatBits(const FloatSemantics& s, double value) {
  if (s.exponent_bits == 11 && s.mantissa_bits == 52) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
  }
  if (s.exponent_bits == 8 && s.mantissa_bits == 23) {
    float narrowed = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &narrowed, sizeof(bits));
    return bits;
  }
  int body_bits = s.exponent_bits + s.mantissa_bits;
  bool negative = std::signbit(value) && s.has_sign;
  uint64_t sign = negative ? uint64_t{1} << body_bits : 0;
  auto overflow = [&]() -> uint64_t {
    switch (s.non_finite) {
      case FloatNonFinite::kIeee: return sign | Mask(s.exponent_bits) << s.mantissa_bits;
      case FloatNonFinite::kAllOnesNan:
      case FloatNonFinite::kNegZeroNan: return QuietNanBits(s);
      case FloatNonFinite::kFiniteOnly: return sign | LargestFinite(s);
    }
    return 0;
  };
  if (std::isnan(value)) return QuietNanBits(s);
  if (std::isinf(value)) return overflow();
  double magnitude = std::fabs(value);
  int min_exponent = 1 - s.bias;
  if (magnitude == 0.0) {
    if (!s.has_zero) return 0;
    return s.non_finite == FloatNonFinite::kNegZeroNan ? 0 : sign;
  }
  int frexp_exponent = 0;
  std::frexp(magnitude, &frexp_exponent);
  int exponent = frexp_exponent - 1;  // floor(log2(magnitude))
  int quantum = (s.has_zero ? std::max(exponent, min_exponent) : exponent) - s.mantissa_bits;
  double rounded = std::nearbyint(std::ldexp(magnitude, -quantum));
  auto scaled = static_cast<uint64_t>(rounded);
  if (scaled == 0) return s.non_finite == FloatNonFinite::kNegZeroNan ? 0 : sign;
  if (scaled >> (s.mantissa_bits + 1) != 0) {
    scaled >>= 1;
    ++quantum;
  }
  uint64_t field;
  uint64_t mantissa;
  if (scaled >> s.mantissa_bits != 0) {
    int64_t biased = static_cast<int64_t>(quantum) + s.mantissa_bits + s.bias;
    if (biased < 0) return s.has_zero ? sign : 0;
    field = static_cast<uint64_t>(biased);
    mantissa = scaled & Mask(s.mantissa_bits);
  } else {
    field = 0;
    mantissa = scaled;
  }
  uint64_t max_field = Mask(s.exponent_bits);
  bool too_large = false;
  switch (s.non_finite) {
    case FloatNonFinite::kIeee: too_large = field >= max_field; break;
    case FloatNonFinite::kAllOnesNan:
      too_large = field > max_field || (field == max_field && mantissa == Mask(s.mantissa_bits));
      break;
    case FloatNonFinite::kNegZeroNan:
    case FloatNonFinite::kFiniteOnly: too_large = field > max_field; break;
  }
  if (too_large) return overflow();
  return sign | field << s.mantissa_bits | mantissa;
}

std::string FormatFloat(const FloatSemantics& s, uint64_t bits, bool* printed_hex) {
  bits &= Mask(s.bit_width());
  Decomposed d = Decompose(s, bits);
  if (printed_hex) *printed_hex = false;
  if (d.category == Category::kZero || d.category == Category::kNormal) {
    std::string text = ToString(d, 6, 0, false);
    if (ParseDecimal(s, text) == bits) return text;
    text = ToString(d, 0, 3, true);
    if (text.find('.') != std::string::npos) return text;
  }
  if (printed_hex) *printed_hex = true;
  return HexBits(bits);
}

std::string FormatDoubleExponent(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6e", value);
  return buffer;
}

}  // namespace kiln::ir
