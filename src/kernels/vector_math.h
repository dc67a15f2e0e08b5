// SIMD forms of the transcendental unary ops over contiguous f32 / f64
// arrays (Eigen's packet math), compiled for the baseline instruction set
// and again for AVX2 + FMA and for AVX-512, picked once by CPUID like the
// GEMM (dot.cc).
// elementwise.cc calls them for the ops they cover and keeps its scalar
// loops for the rest.
#pragma once

#include <cstdint>

#include "kernels/elementwise.h"

namespace kiln::kernels {

// out[i] = op(in[i]) for i in [0, n); false (nothing written) when `op` has
// no vector form for the type. `in` and `out` may be the same array.
bool VectorUnary(UnaryOp op, const float* in, float* out, int64_t n);
bool VectorUnary(UnaryOp op, const double* in, double* out, int64_t n);

// The instruction set the vector forms run with: "avx512", "avx2" or
// "baseline".
const char* VectorMathIsa();

// VectorUnary with the forms built for instruction set `isa` ("baseline",
// "avx2", "avx512"), for tests: false also when they are not built or this
// CPU cannot run them.
bool VectorUnaryWith(const char* isa, UnaryOp op, const float* in, float* out, int64_t n);

// Whether the AVX2 + FMA variants run: built for x86-64 with them, on a CPU
// that has both (checked once). vector_math, tile_f32 and loop_jit ask.
bool UseAvx2Variants();

namespace vector_math_internal {
// Each variant's entry points (vector_math.inc).
#define KILN_DECLARE_VECTOR_MATH(variant)                           \
  namespace variant {                                               \
  bool Unary(UnaryOp op, const float* in, float* out, int64_t n);   \
  bool Unary(UnaryOp op, const double* in, double* out, int64_t n); \
  }
KILN_DECLARE_VECTOR_MATH(baseline)
KILN_DECLARE_VECTOR_MATH(avx2)
KILN_DECLARE_VECTOR_MATH(avx512)
#undef KILN_DECLARE_VECTOR_MATH
namespace avx2 {
// The packet form of `op` on eight f32 lanes, a function __m256(__m256),
// or null: for generated code (loop_jit.cc). The AVX2 build only.
const void* PacketUnaryF32(UnaryOp op);
}  // namespace avx2
}  // namespace vector_math_internal

}  // namespace kiln::kernels
