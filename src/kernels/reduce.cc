// Reduction kernels. One combine function per (op, type), instantiated into
// a few loop shapes: a contiguous row folded into one value, rows folded
// into a row of accumulators (vectorizable), windows, prefix scans.
#include "kernels/reduce.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>

#include "base/small_vector.h"
#include "kernels/elementwise.h"
#include "kernels/parallel.h"
#include "kernels/reduce_avx2.h"
#include "kernels/scratch.h"
#include "kernels/types.h"
#include "kernels/vector_math.h"

namespace kiln::kernels {
namespace {

template <typename T>
constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Whether `op` is defined on the C++ type T.
template <typename T>
constexpr bool Defined(ReduceOp op) {
  if constexpr (std::is_same_v<T, bool> || kIsInteger<T>) return true;
  return op == ReduceOp::kAdd || op == ReduceOp::kMultiply || op == ReduceOp::kMaximum ||
         op == ReduceOp::kMinimum;
}

// a op b in T, as the elementwise kernels compute it.
template <ReduceOp kOp, typename T>
inline T Apply(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (kOp == ReduceOp::kAdd || kOp == ReduceOp::kMaximum || kOp == ReduceOp::kOr) {
      return a || b;
    } else if constexpr (kOp == ReduceOp::kXor) {
      return a != b;
    } else {
      return a && b;
    }
  } else if constexpr (kIsInteger<T>) {
    // Wrapping arithmetic in unsigned types (no undefined overflow); products
    // of narrow types are computed in unsigned int to avoid promotion to int.
    using U = std::make_unsigned_t<T>;
    using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
    if constexpr (kOp == ReduceOp::kAdd) {
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    }
    if constexpr (kOp == ReduceOp::kMultiply) {
      return static_cast<T>(static_cast<Wide>(static_cast<U>(a)) *
                            static_cast<Wide>(static_cast<U>(b)));
    }
    if constexpr (kOp == ReduceOp::kMaximum) return a >= b ? a : b;
    if constexpr (kOp == ReduceOp::kMinimum) return a <= b ? a : b;
    if constexpr (kOp == ReduceOp::kAnd) return static_cast<T>(a & b);
    if constexpr (kOp == ReduceOp::kOr) return static_cast<T>(a | b);
    if constexpr (kOp == ReduceOp::kXor) return static_cast<T>(a ^ b);
  } else if constexpr (kIsComplex<T>) {
    if constexpr (kOp == ReduceOp::kAdd) return a + b;
    if constexpr (kOp == ReduceOp::kMultiply) return ComplexMultiply(a, b);
    // Lexicographic (real, then imaginary), as the elementwise max/min.
    const bool a_first = a.real() > b.real() || (a.real() == b.real() && a.imag() >= b.imag());
    const bool a_last = a.real() < b.real() || (a.real() == b.real() && a.imag() <= b.imag());
    if constexpr (kOp == ReduceOp::kMaximum) return a_first ? a : b;
    if constexpr (kOp == ReduceOp::kMinimum) return a_last ? a : b;
  } else {
    using C = ComputeType<T>;
    const C x = static_cast<C>(a);
    const C y = static_cast<C>(b);
    if constexpr (kOp == ReduceOp::kAdd) return static_cast<T>(x + y);
    if constexpr (kOp == ReduceOp::kMultiply) return static_cast<T>(x * y);
    // NaN propagates; otherwise the first operand wins ties.
    if constexpr (kOp == ReduceOp::kMaximum) {
      return std::isnan(x) ? a : (std::isnan(y) ? b : (x >= y ? a : b));
    }
    if constexpr (kOp == ReduceOp::kMinimum) {
      return std::isnan(x) ? a : (std::isnan(y) ? b : (x <= y ? a : b));
    }
  }
  return a;  // ops Defined<T> rejects; never reached
}

// Whether the grouping of a fold changes its result: float sums and
// products round. Those fold as a tree (pairwise) so that the error grows
// with log n rather than n, as XLA's CPU backend (whose tree reduction
// rewriter folds in blocks) stays accurate on long reductions.
template <ReduceOp kOp, typename T>
constexpr bool kTreeFold =
    (kOp == ReduceOp::kAdd || kOp == ReduceOp::kMultiply) && (kIsFloat<T> || kIsComplex<T>);

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
  if constexpr (std::is_same_v<T, float> && (kOp == ReduceOp::kAdd ||
                                             kOp == ReduceOp::kMaximum ||
                                             kOp == ReduceOp::kMinimum)) {
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

// acc[i] = acc[i] op x[i] for i < n.
template <ReduceOp kOp, typename T>
inline void FoldInto(T* acc, const T* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = Apply<kOp>(acc[i], x[i]);
}

// acc[i] = (...((acc[i] op x[0][i]) op x[1][i]) ...) op x[k-1][i] for i < n:
// up to eight rows folded in one pass, in the same order as k FoldInto
// calls, with the accumulators held in registers across the rows.
template <ReduceOp kOp, typename T>
void FoldRowsOfPass(T* acc, const T* const* x, int64_t k, int64_t n) {
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
        partials[static_cast<size_t>(c)] =
            FoldRow<kOp>(in + start, std::min(kChunk, row_length - start));
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

// The byte type sub-byte integers compute in; other types unchanged.
ElementType StorageType(ElementType type) {
  switch (type) {
    case ElementType::kS1: case ElementType::kS2: case ElementType::kS4: return ElementType::kS8;
    case ElementType::kU1: case ElementType::kU2: case ElementType::kU4: return ElementType::kU8;
    default: return type;
  }
}

// Sub-byte results computed in 8 bits wrap to their width (add, multiply
// and xor commute with the wrap; the rest stay in range).
Status WrapSubByte(ElementType type, void* data, int64_t count) {
  const ElementType storage = StorageType(type);
  if (storage == type || count <= 0) return Status::Ok();
  return Convert(storage, data, type, data, count);
}

// Calls f.template operator()<kOp, T>() for the runtime op and type.
template <typename F>
Status DispatchReduce(ReduceOp op, ElementType type, F&& f) {
  if (!ReduceOpAccepts(op, type)) {
    constexpr const char* kNames[] = {"add", "multiply", "maximum", "minimum", "and", "or", "xor"};
    return InvalidArgument("a reduction by ", kNames[static_cast<size_t>(op)],
                           " does not accept element type ", GetElementTypeInfo(type).name);
  }
  return DispatchType(StorageType(type), [&]<typename T>() {
    if constexpr (Defined<T>(ReduceOp::kAnd)) {
      switch (op) {
        case ReduceOp::kAnd: f.template operator()<ReduceOp::kAnd, T>(); return;
        case ReduceOp::kOr: f.template operator()<ReduceOp::kOr, T>(); return;
        case ReduceOp::kXor: f.template operator()<ReduceOp::kXor, T>(); return;
        default: break;
      }
    }
    switch (op) {
      case ReduceOp::kAdd: f.template operator()<ReduceOp::kAdd, T>(); return;
      case ReduceOp::kMultiply: f.template operator()<ReduceOp::kMultiply, T>(); return;
      case ReduceOp::kMaximum: f.template operator()<ReduceOp::kMaximum, T>(); return;
      case ReduceOp::kMinimum: f.template operator()<ReduceOp::kMinimum, T>(); return;
      default: return;
    }
  });
}

int64_t Product(std::span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

}  // namespace

bool ReduceOpAccepts(ReduceOp op, ElementType type) {
  bool accepted = false;
  Status status = DispatchType(StorageType(type), [&]<typename T>() {
    accepted = Defined<T>(op);
  });
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
  if (StorageType(type) != type) {
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

namespace {

template <typename T>
bool Selects(CompareDirection direction, T a, T b) {
  using C = ComputeType<T>;
  const C x = static_cast<C>(a);
  const C y = static_cast<C>(b);
  switch (direction) {
    case CompareDirection::kEq: return x == y;
    case CompareDirection::kNe: return x != y;
    case CompareDirection::kGe: return x >= y;
    case CompareDirection::kGt: return x > y;
    case CompareDirection::kLe: return x <= y;
    case CompareDirection::kLt: return x < y;
  }
  return false;
}

}  // namespace

namespace {

// Per dimension d, output position p and window position k: the offset
// (in elements) that dimension contributes to the input element under k,
// or -1 where k falls on padding or between base-dilated elements. Held in
// kernel scratch memory; built once per call.
class WindowTables {
 public:
  WindowTables(std::span<const int64_t> dims, std::span<const WindowDim> window,
               std::span<const int64_t> output_dims)
      : data_(TotalSize(window, output_dims)) {
    int64_t stride = 1;
    SmallVector<int64_t> strides(dims.size());
    for (size_t d = dims.size(); d-- > 0;) {
      strides[d] = stride;
      stride *= dims[d];
    }
    int64_t start = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      start_.push_back(start);
      const WindowDim& w = window[d];
      const int64_t last = (dims[d] - 1) * w.base_dilation;  // the last real element
      for (int64_t p = 0; p < output_dims[d]; ++p) {
        for (int64_t k = 0; k < w.size; ++k) {
          const int64_t at = p * w.stride + k * w.window_dilation - w.padding_low;
          const bool real = at >= 0 && at <= last && at % w.base_dilation == 0;
          data_[static_cast<size_t>(start + p * w.size + k)] =
              real ? at / w.base_dilation * strides[d] : -1;
        }
      }
      start += output_dims[d] * w.size;
    }
  }
  // The window position offsets of output position p along dimension d.
  const int64_t* At(size_t d, int64_t p, int64_t size) const {
    return data_.data() + start_[d] + p * size;
  }

 private:
  static size_t TotalSize(std::span<const WindowDim> window, std::span<const int64_t> output_dims) {
    int64_t total = 0;
    for (size_t d = 0; d < window.size(); ++d) total += output_dims[d] * window[d].size;
    return static_cast<size_t>(total);
  }
  ScratchArray<int64_t> data_;
  SmallVector<int64_t> start_;
};

// Whether no two windows share an input element: along every dimension
// with more than one position, the windows are at least their extent apart.
bool WindowsDisjoint(std::span<const WindowDim> window, std::span<const int64_t> output_dims) {
  for (size_t d = 0; d < window.size(); ++d) {
    const int64_t extent = (window[d].size - 1) * window[d].window_dilation + 1;
    if (output_dims[d] > 1 && window[d].stride < extent) return false;
  }
  return true;
}

// The most window positions over the dimensions before the last that
// SelectAndScatterRange keeps as a list (larger windows walk their
// positions with counters per window).
constexpr int64_t kMaxListedPositions = 64;

// Calls visit(offset) for each window position over dimensions [0, dims)
// that falls inside the operand, in row-major order; row[d][k] is window
// position k's part of the offset along d, -1 on padding or a dilation hole.
// `k` is the caller's counter storage (at least `dims` long).
template <typename Visit>
void ForEachInside(std::span<const int64_t* const> row, std::span<const WindowDim> window,
                   size_t dims, std::span<int64_t> k, Visit&& visit) {
  std::fill(k.begin(), k.begin() + static_cast<std::ptrdiff_t>(dims), 0);
  for (;;) {
    int64_t offset = 0;
    bool inside = true;
    for (size_t d = 0; d < dims && inside; ++d) {
      const int64_t part = row[d][k[d]];
      inside = part >= 0;
      offset += part;
    }
    if (inside) visit(offset);
    size_t d = dims;
    while (d-- > 0 && ++k[d] == window[d].size) k[d] = 0;
    if (d == static_cast<size_t>(-1)) return;
  }
}

// select_and_scatter over windows [begin, end), walking the windows and each
// window's positions in row-major order with counters (no divisions). The
// offsets of a window's positions over the dimensions before the last are
// listed once for every run of windows along the last dimension (a max
// pool's channels), which share them; each window then only adds its last
// dimension's parts. The positions are visited in the same order either way.
template <ReduceOp kOp, typename T>
void SelectAndScatterRange(CompareDirection select, const T* x, const T* s, T* y,
                           std::span<const WindowDim> window,
                           std::span<const int64_t> output_dims, const WindowTables& tables,
                           int64_t begin, int64_t end) {
  const size_t rank = window.size();
  if (rank == 0) {  // one window of one element
    for (int64_t w = begin; w < end; ++w) y[0] = Apply<kOp>(y[0], s[w]);
    return;
  }
  const size_t last = rank - 1;
  int64_t outer_positions = 1;
  for (size_t d = 0; d < last; ++d) outer_positions *= window[d].size;
  const bool listed = outer_positions <= kMaxListedPositions;
  SmallVector<int64_t, 8> position(rank), k(rank);
  int64_t rest = begin;
  for (size_t d = rank; d-- > 0;) {
    position[d] = rest % output_dims[d];
    rest /= output_dims[d];
  }
  SmallVector<const int64_t*, 8> row(rank);
  int64_t outer[kMaxListedPositions];
  int64_t outer_count = 0;
  bool outer_current = false;
  for (int64_t w = begin; w < end; ++w) {
    for (size_t d = 0; d < rank; ++d) row[d] = tables.At(d, position[d], window[d].size);
    bool found = false;
    int64_t selected = 0;
    const auto consider = [&](int64_t offset) {
      if (!found || !Selects(select, x[selected], x[offset])) selected = offset;
      found = true;
    };
    if (listed) {
      if (!outer_current) {  // the inside positions over dimensions [0, last)
        outer_count = 0;
        ForEachInside(row, window, last, k, [&](int64_t offset) { outer[outer_count++] = offset; });
        outer_current = true;
      }
      const int64_t* parts = row[last];
      for (int64_t i = 0; i < outer_count; ++i) {
        for (int64_t j = 0; j < window[last].size; ++j) {
          if (parts[j] >= 0) consider(outer[i] + parts[j]);
        }
      }
    } else {
      ForEachInside(row, window, rank, k, consider);
    }
    if (found) y[selected] = Apply<kOp>(y[selected], s[w]);
    for (size_t d = rank; d-- > 0;) {
      if (d < last) outer_current = false;  // the carry reached an outer dimension
      if (++position[d] < output_dims[d]) break;
      position[d] = 0;
    }
  }
}

}  // namespace

Status SelectAndScatter(ElementType type, CompareDirection select, ReduceOp scatter,
                        const void* operand, std::span<const int64_t> dims,
                        std::span<const WindowDim> window, const void* source,
                        std::span<const int64_t> source_dims, const void* init, void* out) {
  if (window.size() != dims.size() || source_dims.size() != dims.size()) {
    return InvalidArgument("select_and_scatter: the window has ", window.size(),
                           " dimensions, the operand ", dims.size());
  }
  if (type == ElementType::kC64 || type == ElementType::kC128) {
    return InvalidArgument("select_and_scatter cannot compare complex elements");
  }
  KILN_RETURN_IF_ERROR(DispatchReduce(scatter, type, [&]<ReduceOp kOp, typename T>() {
    if constexpr (!kIsComplex<T>) {
      const T* x = static_cast<const T*>(operand);
      const T* s = static_cast<const T*>(source);
      T* y = static_cast<T*>(out);
      std::fill(y, y + Product(dims), *static_cast<const T*>(init));
      const WindowTables tables(dims, window, source_dims);
      const int64_t windows = Product(source_dims);
      int64_t window_size = 1;
      for (const WindowDim& w : window) window_size *= w.size;
      if (windows == 0 || window_size == 0) return;  // nothing selected: init everywhere
      const auto range = [&](int64_t begin, int64_t end) {
        SelectAndScatterRange<kOp>(select, x, s, y, window, source_dims, tables, begin, end);
      };
      // Windows that share elements may scatter into one element: in order,
      // on one thread. Disjoint ones (pooling) split among threads.
      if (WindowsDisjoint(window, source_dims)) {
        ParallelFor(windows, 4 * window_size, range);
      } else {
        range(0, windows);
      }
    }
  }));
  return WrapSubByte(type, out, Product(dims));
}

}  // namespace kiln::kernels
