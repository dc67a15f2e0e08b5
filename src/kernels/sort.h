// Sorting (stablehlo.sort): slices along one dimension are sorted through a
// permutation of indexes, which then reorders every operand. Comparators the
// compiler recognizes become lexicographic keys and a typed std::stable_sort;
// any other comparator is a callback (the comparator region).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "base/element_type.h"
#include "base/function_ref.h"
#include "base/status.h"

namespace kiln::kernels {

// How one key orders its elements.
enum class SortKeyKind : uint8_t {
  kNative,      // C++ `<`: integers, pred, and IEEE comparison of floats
  kTotalOrder,  // floats by the total order (-NaN < -Inf < ... < -0 < +0 < ... < +NaN)
  // floats as JAX sorts them: -0 and +0 are one value, every NaN is one
  // value after +Inf (the total order of the canonicalized values)
  kCanonicalTotalOrder,
};

// Which part of a complex operand a key compares (JAX sorts complex numbers
// by real part, then imaginary part).
enum class SortKeyPart : uint8_t { kWhole, kReal, kImag };

struct SortKey {
  size_t operand = 0;  // which operand holds the key
  bool descending = false;
  SortKeyKind kind = SortKeyKind::kNative;
  SortKeyPart part = SortKeyPart::kWhole;  // kReal/kImag: of a complex operand
};

// One operand of a sort and its result, both dense of the sort's shape.
struct SortOperand {
  ElementType type;
  const void* in;
  void* out;
};

// Sorts every slice along `dimension` of arrays of shape `dims`,
// lexicographically by `keys` (earlier keys first). Equal elements keep
// their order (a stable sort also satisfies is_stable = false). Slices run
// in parallel.
Status Sort(std::span<const SortOperand> operands, std::span<const int64_t> dims, int64_t dimension,
            std::span<const SortKey> keys);

// A comparator callback: whether the element at flat index `lhs` sorts
// before the one at flat index `rhs` (both in one slice, indexes into the
// dense operands); errors stop the sort.
using SortLess = FunctionRef<StatusOr<bool>(int64_t lhs, int64_t rhs)>;

// Sort with an arbitrary comparator, on the calling thread (the callback
// may run a region). A comparator that is not a strict weak order gives some
// permutation, never a crash.
Status SortWithComparator(std::span<const SortOperand> operands, std::span<const int64_t> dims,
                          int64_t dimension, const SortLess& less);

}  // namespace kiln::kernels
