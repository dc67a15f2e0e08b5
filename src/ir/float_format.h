// Floating-point literals as MLIR spells them: the bit layouts of every float
// element type Kiln knows, conversion from double with round-to-nearest-even,
// and MLIR's printing rule (6 significant digits when that round-trips, else
// the shortest form APFloat prints, else hexadecimal bits).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/element_type.h"

namespace kiln::ir {

// How a format encodes NaN (and whether it has infinities).
enum class FloatNonFinite : uint8_t {
  kIeee,        // exponent all ones: infinities and NaNs
  kAllOnesNan,  // "FN": no infinities; NaN is exponent and mantissa all ones
  kNegZeroNan,  // "FNUZ": no infinities, no -0; NaN is the sign bit alone
  kFiniteOnly,  // f4E2M1FN, f6*: neither
};

// The layout of a binary floating-point format.
struct FloatSemantics {
  int exponent_bits = 0;
  int mantissa_bits = 0;  // explicit fraction bits
  int bias = 0;
  bool has_sign = true;  // false for f8E8M0FNU
  bool has_zero = true;  // false for f8E8M0FNU
  FloatNonFinite non_finite = FloatNonFinite::kIeee;

  int bit_width() const { return (has_sign ? 1 : 0) + exponent_bits + mantissa_bits; }
};

// The semantics of a float element type, or nullopt for non-float types.
std::optional<FloatSemantics> GetFloatSemantics(ElementType type);

// The value of an encoding, exactly (every format here fits in a double).
double FloatBitsToDouble(const FloatSemantics& semantics, uint64_t bits);

// The encoding nearest `value` (ties to even). Overflow gives infinity, else
// NaN, else the largest finite value, as APFloat's conversion does.
uint64_t DoubleToFloatBits(const FloatSemantics& semantics, double value);

// The canonical quiet NaN of a format (what `0x7FC00000` is for f32).
uint64_t QuietNanBits(const FloatSemantics& semantics);

// MLIR's spelling of a float value (AsmPrinter's printFloatValue):
// "1.000000e+00", "0.333333343", "3.40282347E+38", or "0x7FC00000". Sets
// *printed_hex when the hexadecimal form was used.
std::string FormatFloat(const FloatSemantics& semantics, uint64_t bits,
                        bool* printed_hex = nullptr);

// C printf's "%.6e" spelling, which LLVM's raw_ostream uses for doubles
// (quantization scales).
std::string FormatDoubleExponent(double value);

}  // namespace kiln::ir
