// tile_f32.inc compiled for AVX2 + FMA (CMake adds -mavx2 -mfma to this file
// only); tile_f32.cc returns these kernels when the CPU has them.
#define KILN_TILE_F32_VARIANT avx2
#include "kernels/tile_f32.inc"
