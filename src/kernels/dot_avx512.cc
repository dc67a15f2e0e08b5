// The f32/f64 GEMM compiled for AVX-512 (CMake adds -mavx512f -mavx512dq
// -mavx512vl -mavx2 -mfma to this file only); dot.cc calls it when the CPU
// has them.
#define Eigen KilnEigenAvx512
#define KILN_DOT_VARIANT avx512
#include "kernels/dot_eigen.inc"
