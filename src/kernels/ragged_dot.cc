#include "kernels/ragged_dot.h"

#include <algorithm>
#include <cstring>

#include "kernels/dot.h"
#include "kernels/gather.h"

namespace kiln::kernels {

Status RaggedMatMul(ElementType type, const RaggedDotShape& shape, const void* lhs, const void* rhs,
                    ElementType sizes_type, const void* group_sizes, void* out) {
  const auto bytes = static_cast<int64_t>(GetElementTypeInfo(type).storage_bytes);
  const auto* a = static_cast<const uint8_t*>(lhs);
  const auto* b = static_cast<const uint8_t*>(rhs);
  auto* c = static_cast<uint8_t*>(out);
  const bool rows = shape.mode == RaggedDotShape::Mode::kRows;
  for (int64_t item = 0; item < shape.batch; ++item) {
    int64_t start = 0;
    for (int64_t g = 0; g < shape.groups; ++g) {
      const int64_t at = (shape.sizes_per_batch ? item * shape.groups : 0) + g;
      const int64_t size = std::clamp<int64_t>(LoadIndex(sizes_type, group_sizes, at), 0,
                                               shape.ragged - start);
      MatMulShape gemm;
      const uint8_t *left = nullptr, *right = nullptr;
      uint8_t* result = nullptr;
      if (rows) {
        gemm.m = size * shape.inner;
        gemm.n = shape.n;
        gemm.k = shape.k;
        const int64_t row = item * shape.ragged * shape.inner + start * shape.inner;
        left = a + row * shape.k * bytes;
        right = b + (g * shape.batch + item) * shape.k * shape.n * bytes;
        result = c + row * shape.n * bytes;
      } else {
        gemm.m = shape.m;
        gemm.n = shape.n;
        gemm.k = size * shape.inner;
        gemm.lhs_transposed = true;
        const int64_t depth = item * shape.ragged * shape.inner + start * shape.inner;
        left = a + depth * shape.m * bytes;
        right = b + depth * shape.n * bytes;
        result = c + (g * shape.batch + item) * shape.m * shape.n * bytes;
        if (gemm.k == 0) {
          std::memset(result, 0, static_cast<size_t>(shape.m * shape.n * bytes));
          continue;
        }
      }
      if (gemm.m > 0) KILN_RETURN_IF_ERROR(MatMul(type, gemm, left, right, result));
      start += size;
    }
    if (rows) {
      // Rows no group holds.
      const int64_t end = (item + 1) * shape.ragged * shape.inner;
      const int64_t first = item * shape.ragged * shape.inner + start * shape.inner;
      std::memset(c + first * shape.n * bytes, 0,
                  static_cast<size_t>((end - first) * shape.n * bytes));
    }
  }
  return Status::Ok();
}

}  // namespace kiln::kernels
