// The f32/f64 GEMM compiled for AVX2 + FMA (CMake adds -mavx2 -mfma to this
// file only); dot.cc calls it when the CPU has them.
#define Eigen KilnEigenAvx2
#define KILN_DOT_VARIANT avx2
#include "kernels/dot_eigen.inc"
