// chlo.ragged_dot's products: GEMMs over the groups of a ragged dimension,
// whose sizes arrive at run time (kernels/dot.h does each group's product).
#pragma once

#include <cstdint>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// The canonical layouts the lowering brings the operands into, per mode
// (R: the ragged dimension's size, G: groups, B: batch):
// - kRows (the ragged dimension is a row dimension of lhs): lhs [B, R,
//   inner, k], rhs [G, B, k, n], out [B, R, inner, n]; rows of group g take
//   rhs[g]; rows past the last group are zero.
// - kDepth (the ragged dimension is contracted): lhs [B, R, inner, m] (the
//   GEMM's lhs transposed), rhs [B, R, inner, n], out [G, B, m, n]; group g
//   sums over its slice of the ragged dimension (zero when empty).
struct RaggedDotShape {
  enum class Mode : uint8_t { kRows, kDepth };
  Mode mode = Mode::kRows;
  int64_t batch = 1;
  int64_t groups = 1;
  int64_t ragged = 0;
  int64_t inner = 1;
  int64_t m = 1, n = 1, k = 1;
  // group_sizes is [B, G] (else [G], the same for every batch item).
  bool sizes_per_batch = false;
};

// `type`: the product's element type (all three arrays); group_sizes of the
// integer type `sizes_type`. Negative sizes count as 0, and groups past the
// ragged dimension's end are cut to fit.
Status RaggedMatMul(ElementType type, const RaggedDotShape& shape, const void* lhs, const void* rhs,
                    ElementType sizes_type, const void* group_sizes, void* out);

}  // namespace kiln::kernels
