// The baseline vector forms, and the choice between them and the AVX2 ones.
#define KILN_VECTOR_MATH_VARIANT baseline
#include "kernels/vector_math.inc"

namespace kiln::kernels {

bool UseAvx2Variants() {
#ifdef KILN_VECTOR_MATH_AVX2
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx2;
#else
  return false;
#endif
}

namespace {

template <typename T>
bool Dispatch(UnaryOp op, const T* in, T* out, int64_t n) {
#ifdef KILN_VECTOR_MATH_AVX2
  if (UseAvx2Variants()) return vector_math_internal::avx2::Unary(op, in, out, n);
#endif
  return vector_math_internal::baseline::Unary(op, in, out, n);
}

}  // namespace

bool VectorUnary(UnaryOp op, const float* in, float* out, int64_t n) {
  return Dispatch(op, in, out, n);
}
bool VectorUnary(UnaryOp op, const double* in, double* out, int64_t n) {
  return Dispatch(op, in, out, n);
}

const char* VectorMathIsa() { return UseAvx2Variants() ? "avx2" : "baseline"; }

}  // namespace kiln::kernels
