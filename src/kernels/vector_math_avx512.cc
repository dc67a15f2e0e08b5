// vector_math.inc compiled for AVX-512 (CMake adds -mavx512f -mavx512dq
// -mavx512vl to this file only); vector_math.cc calls it when the CPU has
// them. Eigen renamed apart from the GEMM's AVX-512 copy (dot_avx512.cc).
#define Eigen KilnEigenAvx512Math
#define KILN_VECTOR_MATH_VARIANT avx512
#include "kernels/vector_math.inc"
