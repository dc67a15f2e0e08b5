// Kernels for the f32 tiles of fused loops (compiler/fusion.cc): one op over
// `n` elements already in cache, with no per-call dispatch on type or op and
// no threads (the loop split the work before). A fused loop calls one per
// member per tile, so with tiles small enough for L1 the call itself must
// cost little. Each computes exactly what Unary / Binary compute for f32
// (elementwise_test.cc checks it); compiled for the baseline instruction
// set and again for AVX2 + FMA, picked once by CPUID as vector_math is.
#pragma once

#include <cstdint>

#include "kernels/elementwise.h"

namespace kiln::kernels {

// out[i] = op(in[0][i], ...) for i in [0, n). `out` may be one of the inputs.
using TileKernel = void (*)(const float* const* in, float* out, int64_t n);

// The tile kernel of a unary / binary op on f32, or nullptr when it has none
// (the loop then calls Unary / Binary).
TileKernel TileUnaryF32(UnaryOp op);
TileKernel TileBinaryF32(BinaryOp op);

namespace tile_f32_internal {
#define KILN_DECLARE_TILE_F32(variant) \
  namespace variant {                  \
  TileKernel Unary(UnaryOp op);        \
  TileKernel Binary(BinaryOp op);      \
  }
KILN_DECLARE_TILE_F32(baseline)
KILN_DECLARE_TILE_F32(avx2)
#undef KILN_DECLARE_TILE_F32
}  // namespace tile_f32_internal

}  // namespace kiln::kernels
