// Number formats of the bytecode: floating-point bit patterns of every width
// StableHLO uses, widened to double, and integers truncated to a type's width.
#pragma once

#include <cstdint>

#include "base/element_type.h"

namespace kiln::frontend::vhlo {

// The value of the bit pattern `bits` (right-aligned) of a floating-point
// `type` (f16, bf16, f32, f64, tf32 and every f8/f6/f4 type) as a double.
// False if `type` is not a floating-point type Kiln knows.
bool FloatBitsToDouble(ElementType type, uint64_t bits, double& value);

// Bits of x87 extended (f80) and IEEE quad (f128) values, widened to double
// (precision beyond double's is dropped).
double Float80BitsToDouble(uint64_t mantissa, uint16_t sign_exponent);
double Float128BitsToDouble(uint64_t low, uint64_t high);

// `bits` truncated to `width` bits and sign-extended if `is_signed`
// (two's complement bits otherwise), as MLIR's APInt holds them.
int64_t TruncateToWidth(uint64_t bits, int width, bool is_signed);

}  // namespace kiln::frontend::vhlo
