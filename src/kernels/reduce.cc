// Reduction kernels. One combine function per (op, type) (reduce_internal.h),
// instantiated into a few loop shapes: a contiguous row folded into one
// value, rows folded into a row of accumulators (vectorizable), windows,
// prefix scans. select_and_scatter is in select_and_scatter.cc.
#include "kernels/reduce.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>
#include <vector>

#include "base/small_vector.h"
#include "kernels/isa_clones.h"
#include "kernels/parallel.h"
#include "kernels/reduce_avx2.h"
#include "kernels/reduce_internal.h"
#include "kernels/scratch.h"
#include "kernels/types.h"
#include "kernels/vector_math.h"

namespace kiln::kernels {
namespace {

using reduce_internal::Apply;
using reduce_internal::Defined;
using reduce_internal::DispatchReduce;
using reduce_internal::FoldInto;
using reduce_internal::kTreeFold;
using reduce_internal::Product;
using reduce_internal::WrapSubByte;

// Combines values streamed in order as a binary tree (a binary counter of
// partial results): level k holds the fold of 2^k earlier values.
template <ReduceOp kOp, typename T>
class Cascade {
 public:
  void Add(T value) {
    int level = 0;
    while ((occupied_ >> level) & 1u) {
      value = Apply<kOp>(levels_[level], value);
      occupied_ &= ~(uint64_t{1} << level);
      ++level;
    }
    levels_[level] = value;
    occupied_ |= uint64_t{1} << level;
  }
  bool empty() const { return occupied_ == 0; }
  // The fold of everything added (not empty()), earliest values first.
  // Visits only the occupied levels, highest first (a row's fold calls this
  // once; scanning all 64 levels took a tenth of layer norm's time).
  T Total() const {
    uint64_t rest = occupied_;
    if (rest == 0) return T{};
    int level = 63 - std::countl_zero(rest);
    T total = levels_[level];
    rest &= ~(uint64_t{1} << level);
    while (rest != 0) {
      level = 63 - std::countl_zero(rest);
      total = Apply<kOp>(total, levels_[level]);
      rest &= ~(uint64_t{1} << level);
    }
    return total;
  }

 private:
  T levels_[64];
  uint64_t occupied_ = 0;
};

// Folds x[0..n) (1 <= n) with sixteen independent lanes, which the compiler
// vectorizes, combined as a tree.
template <ReduceOp kOp, typename T>
T FoldLanes(const T* x, int64_t n) {
  constexpr int64_t kLanes = 16;
  if (n < 2 * kLanes) {
    T acc = x[0];
    for (int64_t i = 1; i < n; ++i) acc = Apply<kOp>(acc, x[i]);
    return acc;
  }
#ifdef KILN_VECTOR_MATH_AVX2
  if constexpr (std::is_same_v<T, float> &&
                (kOp == ReduceOp::kAdd || kOp == ReduceOp::kMaximum || kOp == ReduceOp::kMinimum)) {
    if (UseAvx2Variants()) return reduce_internal::FoldLanesF32Avx2(kOp, x, n);
  }
#endif
  T lanes[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lanes[l] = x[l];
  int64_t i = kLanes;
  for (; i + kLanes <= n; i += kLanes) {
    __builtin_prefetch(x + i + 4096 / sizeof(T));
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] = Apply<kOp>(lanes[l], x[i + l]);
  }
  for (int64_t l = 0; i < n; ++i, ++l) lanes[l] = Apply<kOp>(lanes[l], x[i]);
  for (int64_t width = kLanes / 2; width > 0; width /= 2) {
    for (int64_t l = 0; l < width; ++l) lanes[l] = Apply<kOp>(lanes[l], lanes[l + width]);
  }
  return lanes[0];
}

// Folds x[0..n) (n >= 1) into one value.
template <ReduceOp kOp, typename T>
T FoldRow(const T* x, int64_t n) {
  constexpr int64_t kBlock = 256;
  if (!kTreeFold<kOp, T> || n <= kBlock) return FoldLanes<kOp>(x, n);
  Cascade<kOp, T> cascade;
  for (int64_t start = 0; start < n; start += kBlock) {
    cascade.Add(FoldLanes<kOp>(x + start, std::min(kBlock, n - start)));
  }
  return cascade.Total();
}
// acc[i] = (...((acc[i] op x[0][i]) op x[1][i]) ...) op x[k-1][i] for i < n:
// up to eight rows folded in one pass, in the same order as k FoldInto
// calls, with the accumulators held in registers across the rows.
template <ReduceOp kOp, typename T>
inline __attribute__((always_inline)) void FoldRowsOfPassBody(T* acc, const T* const* x, int64_t k,
                                                              int64_t n) {
  constexpr int64_t kLanes = 16;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    T lanes[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] = acc[i + l];
    for (int64_t r = 0; r < k; ++r) {
      const T* row = x[r] + i;
      for (int64_t l = 0; l < kLanes; ++l) lanes[l] = Apply<kOp>(lanes[l], row[l]);
    }
    for (int64_t l = 0; l < kLanes; ++l) acc[i + l] = lanes[l];
  }
  for (; i < n; ++i) {
    T value = acc[i];
    for (int64_t r = 0; r < k; ++r) value = Apply<kOp>(value, x[r][i]);
    acc[i] = value;
  }
}

// The common float folds built for AVX2 and AVX-512 too (isa_clones.h):
// built for SSE2 alone, GCC split a pass's sixteen f32 lanes into two
// vectors, a pair and two scalars, and a 2048 x 2048 column sum ran at 49
// GB/s on one core.
// Four rows at a time, one loop over the accumulators (in L1) that
// vectorizes to the widest registers; the order of the folds is the same.
// (A loop per row lets GCC's unroll-and-jam pair two rows into a scalar
// loop.)
#define KILN_FOLD_ROWS(T, op, name)                                                          \
  KILN_ISA_CLONES void name(T* __restrict acc, const T* const* x, int64_t k, int64_t n) {    \
    int64_t r = 0;                                                                           \
    for (; r + 4 <= k; r += 4) {                                                             \
      const T* __restrict a = x[r];                                                          \
      const T* __restrict b = x[r + 1];                                                      \
      const T* __restrict c = x[r + 2];                                                      \
      const T* __restrict d = x[r + 3];                                                      \
      for (int64_t i = 0; i < n; ++i) {                                                      \
        acc[i] = Apply<op>(Apply<op>(Apply<op>(Apply<op>(acc[i], a[i]), b[i]), c[i]), d[i]); \
      }                                                                                      \
    }                                                                                        \
    if (k - r == 3) {                                                                        \
      const T* __restrict a = x[r];                                                          \
      const T* __restrict b = x[r + 1];                                                      \
      const T* __restrict c = x[r + 2];                                                      \
      for (int64_t i = 0; i < n; ++i) {                                                      \
        acc[i] = Apply<op>(Apply<op>(Apply<op>(acc[i], a[i]), b[i]), c[i]);                  \
      }                                                                                      \
    } else if (k - r == 2) {                                                                 \
      const T* __restrict a = x[r];                                                          \
      const T* __restrict b = x[r + 1];                                                      \
      for (int64_t i = 0; i < n; ++i) acc[i] = Apply<op>(Apply<op>(acc[i], a[i]), b[i]);     \
    } else if (k - r == 1) {                                                                 \
      const T* __restrict a = x[r];                                                          \
      for (int64_t i = 0; i < n; ++i) acc[i] = Apply<op>(acc[i], a[i]);                      \
    }                                                                                        \
  }
KILN_FOLD_ROWS(float, ReduceOp::kAdd, FoldRowsAddF32)
KILN_FOLD_ROWS(float, ReduceOp::kMaximum, FoldRowsMaxF32)
KILN_FOLD_ROWS(float, ReduceOp::kMinimum, FoldRowsMinF32)
KILN_FOLD_ROWS(double, ReduceOp::kAdd, FoldRowsAddF64)
KILN_FOLD_ROWS(double, ReduceOp::kMaximum, FoldRowsMaxF64)
KILN_FOLD_ROWS(double, ReduceOp::kMinimum, FoldRowsMinF64)
#undef KILN_FOLD_ROWS

template <ReduceOp kOp, typename T>
void FoldRowsOfPass(T* acc, const T* const* x, int64_t k, int64_t n) {
  constexpr bool kCloned = kOp == ReduceOp::kAdd || kOp == ReduceOp::kMaximum ||
                           kOp == ReduceOp::kMinimum;
  if constexpr (kCloned && std::is_same_v<T, float>) {
    if constexpr (kOp == ReduceOp::kAdd) return FoldRowsAddF32(acc, x, k, n);
    if constexpr (kOp == ReduceOp::kMaximum) return FoldRowsMaxF32(acc, x, k, n);
    if constexpr (kOp == ReduceOp::kMinimum) return FoldRowsMinF32(acc, x, k, n);
  } else if constexpr (kCloned && std::is_same_v<T, double>) {
    if constexpr (kOp == ReduceOp::kAdd) return FoldRowsAddF64(acc, x, k, n);
    if constexpr (kOp == ReduceOp::kMaximum) return FoldRowsMaxF64(acc, x, k, n);
    if constexpr (kOp == ReduceOp::kMinimum) return FoldRowsMinF64(acc, x, k, n);
  } else {
    FoldRowsOfPassBody<kOp>(acc, x, k, n);
  }
}

// Folds rows first+1 .. first+count-1 (row r at row(r)) into `acc`, which
// holds row `first` or a fold before it: eight rows per pass.
template <ReduceOp kOp, typename T, typename RowAt>
void FoldRunInto(T* acc, int64_t width, int64_t first, int64_t count, RowAt row) {
  constexpr int64_t kRowsPerPass = 8;
  const T* rows[kRowsPerPass];
  for (int64_t r = first; r < first + count;) {
    const int64_t k = std::min(kRowsPerPass, first + count - r);
    for (int64_t j = 0; j < k; ++j) rows[j] = row(r + j);
    FoldRowsOfPass<kOp>(acc, rows, k, width);
    r += k;
  }
}

// Writes the fold of `count` (>= 1) rows of `width` elements (row r at
// row(r)) to `total`. Float sums and products fold rows in blocks of 32,
// the blocks combined as a tree (a binary counter, as in Cascade: levels[k]
// holds the fold of 2^k blocks); a count of 32 x 2^k rows is folded as a
// perfect binary tree of blocks.
template <ReduceOp kOp, typename T, typename RowAt>
void FoldRowsTotal(T* total, int64_t width, int64_t count, RowAt row) {
  constexpr int64_t kBlock = 32;
  const T* first = row(0);
  std::copy(first, first + width, total);
  if (!kTreeFold<kOp, T> || count <= kBlock) {
    FoldRunInto<kOp>(total, width, 1, count - 1, row);
    return;
  }
  // One row of memory per level (a binary counter over the blocks needs at
  // most bit_width(blocks) of them) and one for the block being folded.
  const int64_t blocks = (count + kBlock - 1) / kBlock;
  const auto num_levels = static_cast<size_t>(std::bit_width(static_cast<uint64_t>(blocks)));
  ScratchArray<T> memory((num_levels + 1) * static_cast<size_t>(width));
  SmallVector<T*, 64> levels(num_levels, nullptr);
  for (size_t level = 0; level < num_levels; ++level) levels[level] = memory.data() + level * width;
  SmallVector<bool, 64> occupied(num_levels, false);
  T* block = memory.data() + num_levels * width;
  for (int64_t start = 0; start < count; start += kBlock) {
    const T* head = row(start);
    std::copy(head, head + width, block);
    FoldRunInto<kOp>(block, width, start + 1, std::min(start + kBlock, count) - start - 1, row);
    size_t level = 0;
    for (; level < num_levels && occupied[level]; ++level) {
      FoldInto<kOp>(levels[level], block, width);
      std::swap(levels[level], block);
      occupied[level] = false;
    }
    std::swap(levels[level], block);
    occupied[level] = true;
  }
  bool first_level = true;
  for (size_t level = num_levels; level-- > 0;) {
    if (!occupied[level]) continue;
    if (first_level) {
      std::copy(levels[level], levels[level] + width, total);
      first_level = false;
    } else {
      FoldInto<kOp>(total, levels[level], width);
    }
  }
}

// Folds `count` rows of `width` elements (row r at row(r)) into `acc`,
// which holds the init value.
template <ReduceOp kOp, typename T, typename RowAt>
void FoldRows(T* acc, int64_t width, int64_t count, RowAt row) {
  if (count <= 0) return;
  if constexpr (kTreeFold<kOp, T>) {
    if (count > 32) {
      ScratchArray<T> total(static_cast<size_t>(width));
      FoldRowsTotal<kOp>(total.data(), width, count, row);
      FoldInto<kOp>(acc, total.data(), width);
      return;
    }
  }
  FoldRunInto<kOp>(acc, width, 0, count, row);
}

// Runs of dimensions after dropping size-1 dimensions and merging neighbours
// that are both reduced or both kept: the reduction in its simplest shape.
struct Group {
  int64_t size;
  int64_t stride;  // in the input, in elements
  bool reduced;
};

SmallVector<Group> Collapse(std::span<const int64_t> dims, std::span<const int64_t> reduced) {
  SmallVector<bool, 16> is_reduced(dims.size(), false);
  for (int64_t d : reduced) is_reduced[static_cast<size_t>(d)] = true;
  SmallVector<Group> groups;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!groups.empty() && groups.back().reduced == is_reduced[d]) {
      groups.back().size *= dims[d];
    } else {
      groups.push_back({dims[d], 0, is_reduced[d]});
    }
  }
  int64_t stride = 1;
  for (size_t g = groups.size(); g-- > 0;) {
    groups[g].stride = stride;
    stride *= groups[g].size;
  }
  return groups;
}

// Offset in the input of index `linear` of the row-major space of `groups`.
int64_t OffsetOf(int64_t linear, std::span<const Group> groups) {
  int64_t offset = 0;
  for (size_t g = groups.size(); g-- > 0;) {
    offset += (linear % groups[g].size) * groups[g].stride;
    linear /= groups[g].size;
  }
  return offset;
}

int64_t CountOf(std::span<const Group> groups) {
  int64_t count = 1;
  for (const Group& group : groups) count *= group.size;
  return count;
}

// ReduceKeptInner when there are few rows of outputs (a column reduction
// of a matrix): the folded rows are split into 4-8
// segments of 32 x 2^k rows, each folded by a task streaming whole rows
// (which the hardware prefetcher follows, unlike a thread's share of
// columns), and the segments' folds combined as a binary tree. The split
// depends only on the shape, so results do not depend on the thread count;
// for a float sum over 32 x 2^k rows it is the tree FoldRows builds.
template <ReduceOp kOp, typename T>
void ReduceKeptInnerBySegments(const T* in, std::span<const Group> outer,
                               std::span<const Group> folded, int64_t width, T init, T* out) {
  const int64_t fold_count = CountOf(folded);
  const int64_t outer_count = CountOf(outer);
  const auto eighth = static_cast<uint64_t>((fold_count + 7) / 8);
  const int64_t segment = std::max<int64_t>(32, static_cast<int64_t>(std::bit_ceil(eighth)));
  const int64_t segments = (fold_count + segment - 1) / segment;
  ScratchArray<T> partials(static_cast<size_t>(outer_count * segments * width));
  ParallelFor(outer_count * segments, segment * width, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / segments;
      const int64_t first = (task % segments) * segment;
      const T* base = in + OffsetOf(o, outer);
      FoldRowsTotal<kOp>(partials.data() + task * width, width,
                         std::min(segment, fold_count - first),
                         [&](int64_t f) { return base + OffsetOf(first + f, folded); });
    }
  });
  for (int64_t o = 0; o < outer_count; ++o) {
    T* part = partials.data() + o * segments * width;
    for (int64_t stride = 1; stride < segments; stride *= 2) {
      for (int64_t s = 0; s + stride < segments; s += 2 * stride) {
        FoldInto<kOp>(part + s * width, part + (s + stride) * width, width);
      }
    }
    T* acc = out + o * width;
    std::fill(acc, acc + width, init);
    FoldInto<kOp>(acc, part, width);
  }
}

// The innermost run is kept (or nothing is reduced): each task folds whole
// rows of up to kChunk elements into a row of accumulators, so the inner
// loop is contiguous and vectorizes.
template <ReduceOp kOp, typename T>
void ReduceKeptInner(const T* in, std::span<const Group> kept, std::span<const Group> folded,
                     T init, T* out) {
  const int64_t width = kept.empty() ? 1 : kept.back().size;
  const std::span<const Group> outer = kept.subspan(0, kept.empty() ? 0 : kept.size() - 1);
  const int64_t fold_count = CountOf(folded);
  const int64_t outer_count = CountOf(outer);
  constexpr int64_t kChunk = 4096;  // a row of accumulators stays in L1/L2
  const int64_t chunks = (width + kChunk - 1) / kChunk;
  // Chosen by shape alone (not the thread count), so results are the same
  // on every machine.
  if (outer_count * chunks < 8 && fold_count >= 256) {
    return ReduceKeptInnerBySegments<kOp>(in, outer, folded, width, init, out);
  }
  ParallelFor(outer_count * chunks, fold_count * std::min(width, kChunk),
              [&](int64_t begin, int64_t end) {
                for (int64_t task = begin; task < end; ++task) {
                  const int64_t row = task / chunks;
                  const int64_t start = (task % chunks) * kChunk;
                  const int64_t length = std::min(kChunk, width - start);
                  T* acc = out + row * width + start;
                  std::fill(acc, acc + length, init);
                  const T* base = in + OffsetOf(row, outer) + start;
                  FoldRows<kOp>(acc, length, fold_count,
                                [&](int64_t f) { return base + OffsetOf(f, folded); });
                }
              });
}

// The innermost run is reduced: each output folds contiguous rows; one long
// range (a full reduction) is split into chunks folded in parallel.
template <ReduceOp kOp, typename T>
void ReduceFoldedInner(const T* in, std::span<const Group> kept, std::span<const Group> folded,
                       T init, T* out) {
  const int64_t out_count = CountOf(kept);
  const int64_t row_length = folded.back().size;
  const std::span<const Group> outer_folded = folded.subspan(0, folded.size() - 1);
  const int64_t rows_per_output = CountOf(outer_folded);
  if (out_count == 1 && rows_per_output == 1) {
    constexpr int64_t kChunk = 1 << 16;
    const int64_t chunks = (row_length + kChunk - 1) / kChunk;
    // Not std::vector<T>: vector<bool> packs bits, which threads cannot share.
    ScratchArray<T> partials(static_cast<size_t>(chunks));
    ParallelFor(chunks, kChunk, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t start = c * kChunk;
        partials[static_cast<size_t>(c)] = FoldRow<kOp>(in + start,
                                                        std::min(kChunk, row_length - start));
      }
    });
    Cascade<kOp, T> cascade;
    for (int64_t c = 0; c < chunks; ++c) cascade.Add(partials[static_cast<size_t>(c)]);
    out[0] = Apply<kOp>(init, cascade.Total());
    return;
  }
  ParallelFor(out_count, rows_per_output * row_length, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const T* base = in + OffsetOf(o, kept);
      Cascade<kOp, T> cascade;
      for (int64_t r = 0; r < rows_per_output; ++r) {
        cascade.Add(FoldRow<kOp>(base + OffsetOf(r, outer_folded), row_length));
      }
      out[o] = Apply<kOp>(init, cascade.Total());
    }
  });
}

template <ReduceOp kOp, typename T>
void ReduceTyped(const T* in, std::span<const int64_t> dims, std::span<const int64_t> reduced,
                 T init, T* out) {
  int64_t in_count = 1;
  int64_t out_count = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    in_count *= dims[d];
    if (std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) == reduced.end()) {
      out_count *= dims[d];
    }
  }
  if (out_count == 0) return;
  if (in_count == 0) {
    std::fill(out, out + out_count, init);
    return;
  }
  const SmallVector<Group> groups = Collapse(dims, reduced);
  SmallVector<Group> kept;
  SmallVector<Group> folded;
  for (const Group& group : groups) (group.reduced ? folded : kept).push_back(group);
  if constexpr (kOp == ReduceOp::kMultiply && kIsComplex<T>) {
    // Complex products fold in order from init, as XLA's CPU backend does:
    // once a partial product overflows, 0 * inf = NaN makes the result depend
    // on the order ((1+0i) * (inf+inf i) is NaN+NaN i), so a tree differs.
    const int64_t fold_count = CountOf(folded);
    ParallelFor(out_count, fold_count, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* base = in + OffsetOf(o, kept);
        T acc = init;
        for (int64_t f = 0; f < fold_count; ++f) acc = Apply<kOp>(acc, base[OffsetOf(f, folded)]);
        out[o] = acc;
      }
    });
    return;
  }
  if (groups.empty() || !groups.back().reduced) {
    ReduceKeptInner<kOp>(in, kept, folded, init, out);
  } else {
    ReduceFoldedInner<kOp>(in, kept, folded, init, out);
  }
}

}  // namespace

bool ReduceOpAccepts(ReduceOp op, ElementType type) {
  bool accepted = false;
  Status status = DispatchType(SubByteStorageType(type),
                               [&]<typename T>() { accepted = Defined<T>(op); });
  return status.ok() && accepted;
}

Status Reduce(ReduceOp op, ElementType type, const void* in, std::span<const int64_t> dims,
              std::span<const int64_t> reduced, const void* init, void* out) {
  KILN_RETURN_IF_ERROR(DispatchReduce(op, type, [&]<ReduceOp kOp, typename T>() {
    ReduceTyped<kOp, T>(static_cast<const T*>(in), dims, reduced, *static_cast<const T*>(init),
                        static_cast<T*>(out));
  }));
  int64_t out_count = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) == reduced.end()) {
      out_count *= dims[d];
    }
  }
  return WrapSubByte(type, out, out_count);
}

Status FoldRowsInto(ReduceOp op, ElementType type, const void* in, int64_t rows, int64_t width,
                    void* acc) {
  if (SubByteStorageType(type) != type) {
    return InvalidArgument("FoldRowsInto does not take sub-byte type ",
                           GetElementTypeInfo(type).name);
  }
  if (width <= 0) return Status::Ok();
  return DispatchReduce(op, type, [&]<ReduceOp kOp, typename T>() {
    const T* x = static_cast<const T*>(in);
    T* out = static_cast<T*>(acc);
    for (int64_t r = 0; r < rows; ++r) {
      out[r] = Apply<kOp>(out[r], FoldRow<kOp>(x + r * width, width));
    }
  });
}

// ---------------------------------------------------------------------------
// Windows

WindowGeometry::WindowGeometry(std::span<const int64_t> input_dims,
                               std::span<const WindowDim> window,
                               std::span<const int64_t> output_dims)
    : input_dims_(input_dims.begin(), input_dims.end()),
      window_(window.begin(), window.end()),
      output_dims_(output_dims.begin(), output_dims.end()),
      input_strides_(input_dims.size()) {
  int64_t stride = 1;
  for (size_t d = input_dims_.size(); d-- > 0;) {
    input_strides_[d] = stride;
    stride *= input_dims_[d];
  }
  num_outputs_ = Product(output_dims_);
}

void WindowGeometry::Offsets(int64_t output, std::vector<int64_t>& offsets,
                             std::vector<int64_t>& scratch) const {
  offsets.assign(1, 0);
  // Position of this output along each dimension, outermost first.
  const size_t rank = output_dims_.size();
  SmallVector<int64_t, 16> position(rank);
  for (size_t d = rank; d-- > 0;) {
    position[d] = output % output_dims_[d];
    output /= output_dims_[d];
  }
  for (size_t d = 0; d < rank; ++d) {
    const WindowDim& w = window_[d];
    const int64_t dilated_extent = (input_dims_[d] - 1) * w.base_dilation;  // last real element
    scratch.clear();
    for (int64_t k = 0; k < w.size; ++k) {
      const int64_t at = position[d] * w.stride + k * w.window_dilation - w.padding_low;
      if (at < 0 || at > dilated_extent || at % w.base_dilation != 0) continue;
      scratch.push_back(at / w.base_dilation * input_strides_[d]);
    }
    if (scratch.size() == 1) {
      for (int64_t& offset : offsets) offset += scratch[0];
      continue;
    }
    const size_t previous = offsets.size();
    offsets.resize(previous * scratch.size());
    // Expand in place from the back so row-major order is kept.
    for (size_t i = previous; i-- > 0;) {
      const int64_t base = offsets[i];
      for (size_t j = 0; j < scratch.size(); ++j) {
        offsets[i * scratch.size() + j] = base + scratch[j];
      }
    }
  }
}

namespace {

// The dimension a cumulative window runs along, or -1: every other window
// dimension is trivial and this one covers [i - size + 1, i] at stride 1
// with size >= the dimension (a prefix scan).
int64_t ScanDimension(std::span<const int64_t> dims, std::span<const WindowDim> window,
                      std::span<const int64_t> output_dims) {
  int64_t found = -1;
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDim& w = window[d];
    if (w.trivial()) continue;
    if (found >= 0) return -1;
    if (w.stride != 1 || w.base_dilation != 1 || w.window_dilation != 1 || w.padding_high != 0 ||
        w.padding_low != w.size - 1 || w.size < dims[d] || output_dims[d] != dims[d]) {
      return -1;
    }
    found = static_cast<int64_t>(d);
  }
  return found;
}

// In place: row i of `y` (n rows of `width`, `width` apart) becomes the fold
// of rows 0..i.
template <ReduceOp kOp, typename T>
void ScanRange(T* y, int64_t begin, int64_t end, int64_t width) {
  for (int64_t i = begin + 1; i < end; ++i) {
    T* row = y + i * width;
    const T* previous = row - width;
    for (int64_t c = 0; c < width; ++c) row[c] = Apply<kOp>(previous[c], row[c]);
  }
}

// ScanRange over all n rows when grouping matters: rows are scanned in
// blocks of 16 and the block totals scanned recursively and carried in, as
// XLA's CPU backend rewrites long cumulative sums; the error then grows with
// log n rather than n.
template <ReduceOp kOp, typename T>
void ScanRowsAsTree(T* y, int64_t n, int64_t width) {
  constexpr int64_t kBlock = 16;
  if (n <= kBlock) return ScanRange<kOp>(y, 0, n, width);
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  ScratchArray<T> totals(static_cast<size_t>(blocks * width));
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t end = std::min(n, (b + 1) * kBlock);
    ScanRange<kOp>(y, b * kBlock, end, width);
    std::copy(y + (end - 1) * width, y + end * width, totals.data() + b * width);
  }
  ScanRowsAsTree<kOp>(totals.data(), blocks, width);
  for (int64_t b = 1; b < blocks; ++b) {
    const T* carry = totals.data() + (b - 1) * width;
    for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
      T* row = y + i * width;
      for (int64_t c = 0; c < width; ++c) row[c] = Apply<kOp>(carry[c], row[c]);
    }
  }
}

template <ReduceOp kOp, typename T>
void ScanRows(T* y, int64_t n, int64_t width) {
  if constexpr (kTreeFold<kOp, T>) {
    ScanRowsAsTree<kOp>(y, n, width);
  } else {
    ScanRange<kOp>(y, 0, n, width);
  }
}

template <ReduceOp kOp, typename T>
void ScanTyped(const T* in, std::span<const int64_t> dims, size_t axis, T init, T* out) {
  const int64_t lines = Product(dims.subspan(0, axis));
  const int64_t length = dims[axis];
  const int64_t inner = Product(dims.subspan(axis + 1));
  ParallelFor(lines, length * inner, [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const T* x = in + line * length * inner;
      T* y = out + line * length * inner;
      for (int64_t c = 0; c < inner; ++c) y[c] = Apply<kOp>(init, x[c]);
      std::copy(x + inner, x + length * inner, y + inner);
      ScanRows<kOp>(y, length, inner);
    }
  });
}

template <ReduceOp kOp, typename T>
void ReduceWindowTyped(const T* in, std::span<const int64_t> dims,
                       std::span<const WindowDim> window, std::span<const int64_t> output_dims,
                       T init, T* out) {
  if (Product(output_dims) == 0) return;
  const int64_t scan = ScanDimension(dims, window, output_dims);
  if (scan >= 0 && Product(dims) > 0) {
    ScanTyped<kOp>(in, dims, static_cast<size_t>(scan), init, out);
    return;
  }
  // Trailing dimensions with trivial windows form a contiguous block that
  // every window position folds as a row.
  size_t leading = window.size();
  while (leading > 0 && window[leading - 1].trivial()) --leading;
  const int64_t block = Product(dims.subspan(leading));
  const WindowGeometry geometry(dims.subspan(0, leading), window.subspan(0, leading),
                                output_dims.subspan(0, leading));
  ParallelFor(geometry.num_outputs(), block * 4, [&](int64_t begin, int64_t end) {
    // Per thread and kept, so that steady-state runs allocate nothing.
    thread_local std::vector<int64_t> offsets;
    thread_local std::vector<int64_t> scratch;
    for (int64_t o = begin; o < end; ++o) {
      T* acc = out + o * block;
      std::fill(acc, acc + block, init);
      geometry.Offsets(o, offsets, scratch);
      for (int64_t offset : offsets) FoldInto<kOp>(acc, in + offset * block, block);
    }
  });
}

}  // namespace

Status ReduceWindow(ReduceOp op, ElementType type, const void* in, std::span<const int64_t> dims,
                    std::span<const WindowDim> window, std::span<const int64_t> output_dims,
                    const void* init, void* out) {
  if (window.size() != dims.size() || output_dims.size() != dims.size()) {
    return InvalidArgument("reduce_window: the window has ", window.size(),
                           " dimensions, the input ", dims.size());
  }
  KILN_RETURN_IF_ERROR(DispatchReduce(op, type, [&]<ReduceOp kOp, typename T>() {
    ReduceWindowTyped<kOp, T>(static_cast<const T*>(in), dims, window, output_dims,
                              *static_cast<const T*>(init), static_cast<T*>(out));
  }));
  return WrapSubByte(type, out, Product(output_dims));
}
}  // namespace kiln::kernels
