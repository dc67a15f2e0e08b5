// The 8-, 6- and 4-bit float types (f8E5M2, f8E4M3FN, ..., f4E2M1FN), stored
// one per byte: decoding to f32 and encoding from f32 with round to nearest
// even, as ml_dtypes and XLA do. Kernels compute these types in f32.
#pragma once

#include <cstdint>

#include "base/element_type.h"

namespace kiln::kernels {

// True for the types this file handles.
bool IsMinifloat(ElementType type);

// The value of `bits` (the low bits of a byte) as f32.
float MinifloatToFloat(ElementType type, uint8_t bits);

// The nearest value of `type` to `value` (ties to even). Out of range: infinity
// where the type has one, else NaN where it has one, else the largest finite
// value with the sign; NaN maps to NaN, or for the types without NaN (f4, f6)
// to the negative-zero pattern, as XLA's CPU backend does.
uint8_t FloatToMinifloat(ElementType type, float value);

}  // namespace kiln::kernels
