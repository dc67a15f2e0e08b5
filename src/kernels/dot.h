// Matrix products: the batched GEMM behind stablehlo.dot_general, dot and
// convolution (which the compiler lowers to im2col + this GEMM).
#pragma once

#include <cstdint>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// out[b] = lhs[b] x rhs[b] for b < batch: an M x K times a K x N matrix. Each
// operand is dense, batch-major; `lhs_transposed` means lhs[b] is stored as
// K x M (so the product uses its transpose), `rhs_transposed` that rhs[b] is
// stored as N x K. `out` is dense batch x M x N, row-major.
struct MatMulShape {
  int64_t batch = 1;
  int64_t m = 1;
  int64_t n = 1;
  int64_t k = 1;
  bool lhs_transposed = false;
  bool rhs_transposed = false;
  // out[b] += lhs[b] x rhs[b] instead (not for bf16 and f16, whose products
  // round once into out).
  bool accumulate = false;
};

// The product with lhs, rhs and out all of element type `type`. f32, f64 and
// complex run on Eigen's GEMM (the vector-ISA variant the machine supports),
// split over the batch or the larger of M and N across kernels::ParallelFor.
// bf16 runs on AVX512_BF16's VDPBF16PS where the CPU has it (see
// MatMulBf16Native). Otherwise bf16 and f16 run on the f32 GEMM tile by
// tile, each tile's operands widened into per-thread scratch (f16 with F16C
// where the CPU has it) and its f32 sums rounded once (as XLA's CPU backend
// computes such products, without f32 copies of whole operands). Integers wrap (computed in
// unsigned arithmetic); pred is an or of ands. Other types are
// UNIMPLEMENTED.
Status MatMul(ElementType type, const MatMulShape& shape, const void* lhs, const void* rhs,
              void* out);

// The product of 8-bit integers (`lhs_type` and `rhs_type` each s8 or u8)
// in 32-bit sums: out (s32) = lhs x rhs, wrapping as XLA's CPU backend
// does (`shape.accumulate` is not supported). On AVX512_VNNI's VPDPBUSD
// where the CPU has it (MatMulInt8Native), else a loop in 32-bit integers.
// Without it, the compiler converted both operands to s32 and ran the
// integer GEMM's loop: 14x XLA's time at 512^3.
Status MatMulInt8(ElementType lhs_type, ElementType rhs_type, const MatMulShape& shape,
                  const void* lhs, const void* rhs, void* out);

// The product of 16-bit signed integers in 32-bit sums (s16 x s16 -> s32,
// wrapping), on AVX512_VNNI's VPDPWSSD where the CPU has it, else a loop in
// 32-bit integers; `shape.accumulate` is not supported.
Status MatMulInt16(const MatMulShape& shape, const void* lhs, const void* rhs, void* out);
// Its path for CPUs without AVX512_VNNI, on any machine (tests).
Status MatMulInt16Portable(const MatMulShape& shape, const void* lhs, const void* rhs, void* out);

// Whether MatMulInt8 (and MatMulInt16) run on AVX512_VNNI on this machine.
bool MatMulInt8Native();
// MatMulInt8's path for CPUs without AVX512_VNNI, on any machine (tests).
Status MatMulInt8Portable(ElementType lhs_type, ElementType rhs_type, const MatMulShape& shape,
                          const void* lhs, const void* rhs, void* out);

// The same product as a plain triple loop accumulating in the compute type:
// the reference MatMul is tested against.
Status MatMulReference(ElementType type, const MatMulShape& shape, const void* lhs, const void* rhs,
                       void* out);

// Whether MatMul computes in `type`.
bool MatMulAccepts(ElementType type);

// Whether bf16 products run on AVX512_BF16's VDPBF16PS on this machine
// (when A is stored row-major, the depth is even, there are at least 8
// columns and B's packed copy stays within 32 MiB); else they widen to f32
// tile by tile.
bool MatMulBf16Native();

// The vector instruction set the f32/f64 GEMM uses on this machine
// ("avx512", "avx2", or "baseline"), for benchmarks and bug reports.
const char* MatMulIsa();

}  // namespace kiln::kernels
