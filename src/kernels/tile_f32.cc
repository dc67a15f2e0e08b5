// The baseline tile kernels, and the choice between them and the AVX2 ones.
#define KILN_TILE_F32_VARIANT baseline
#include "kernels/tile_f32.inc"

#include "kernels/vector_math.h"

namespace kiln::kernels {

TileKernel TileUnaryF32(UnaryOp op) {
#ifdef KILN_VECTOR_MATH_AVX2
  if (UseAvx2Variants()) return tile_f32_internal::avx2::Unary(op);
#endif
  return tile_f32_internal::baseline::Unary(op);
}

TileKernel TileBinaryF32(BinaryOp op) {
#ifdef KILN_VECTOR_MATH_AVX2
  if (UseAvx2Variants()) return tile_f32_internal::avx2::Binary(op);
#endif
  return tile_f32_internal::baseline::Binary(op);
}

}  // namespace kiln::kernels
