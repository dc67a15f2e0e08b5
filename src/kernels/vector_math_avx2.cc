// vector_math.inc compiled for AVX2 + FMA (CMake adds -mavx2 -mfma to this
// file only); vector_math.cc calls it when the CPU has them.
#define Eigen KilnEigenAvx2
#define KILN_VECTOR_MATH_VARIANT avx2
#include "kernels/vector_math.inc"
