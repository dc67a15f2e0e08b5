// The baseline vector forms, and the choice between them and the AVX2 ones.
#define KILN_VECTOR_MATH_VARIANT baseline
#include "kernels/vector_math.inc"

#include <string_view>

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

// Whether the AVX-512 forms (f32 exp and logistic, the f64 ops) run: built with them, on
// a CPU that has AVX-512 F, DQ and VL.
bool UseAvx512() {
#ifdef KILN_VECTOR_MATH_AVX512
  static const bool avx512 = UseAvx2Variants() && __builtin_cpu_supports("avx512f") &&
                             __builtin_cpu_supports("avx512dq") &&
                             __builtin_cpu_supports("avx512vl");
  return avx512;
#else
  return false;
#endif
}

template <typename T>
bool Dispatch(UnaryOp op, const T* in, T* out, int64_t n) {
#ifdef KILN_VECTOR_MATH_AVX512
  // f32 exp and logistic and the f64 ops: the rest keep their AVX2 forms.
  if (UseAvx512() && vector_math_internal::avx512::Unary(op, in, out, n)) return true;
#endif
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

bool VectorUnaryWith(const char* isa, UnaryOp op, const float* in, float* out, int64_t n) {
  const std::string_view name(isa);
  if (name == "baseline") return vector_math_internal::baseline::Unary(op, in, out, n);
#ifdef KILN_VECTOR_MATH_AVX2
  if (name == "avx2" && UseAvx2Variants()) {
    return vector_math_internal::avx2::Unary(op, in, out, n);
  }
#endif
#ifdef KILN_VECTOR_MATH_AVX512
  if (name == "avx512" && UseAvx512()) return vector_math_internal::avx512::Unary(op, in, out, n);
#endif
  return false;
}

const char* VectorMathIsa() {
  return UseAvx512() ? "avx512" : UseAvx2Variants() ? "avx2" : "baseline";
}

}  // namespace kiln::kernels
