// The baseline tile kernels, and the choice between them and the AVX2 ones.
#define KILN_TILE_F32_VARIANT baseline
#include "kernels/tile_f32.inc"

namespace kiln::kernels {
namespace {

bool UseAvx2() {
#ifdef KILN_VECTOR_MATH_AVX2
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx2;
#else
  return false;
#endif
}

}  // namespace

TileKernel TileUnaryF32(UnaryOp op) {
#ifdef KILN_VECTOR_MATH_AVX2
  if (UseAvx2()) return tile_f32_internal::avx2::Unary(op);
#endif
  return tile_f32_internal::baseline::Unary(op);
}

TileKernel TileBinaryF32(BinaryOp op) {
#ifdef KILN_VECTOR_MATH_AVX2
  if (UseAvx2()) return tile_f32_internal::avx2::Binary(op);
#endif
  return tile_f32_internal::baseline::Binary(op);
}

}  // namespace kiln::kernels
