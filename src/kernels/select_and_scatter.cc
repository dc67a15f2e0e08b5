// select_and_scatter (reduce.h's SelectAndScatter): each window's selected
// element accumulates its source element, with the combine functions of
// reduce_internal.h.
#include <algorithm>
#include <cstdint>

#include "base/small_vector.h"
#include "kernels/parallel.h"
#include "kernels/reduce.h"
#include "kernels/reduce_internal.h"
#include "kernels/scratch.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

using reduce_internal::Apply;
using reduce_internal::DispatchReduce;
using reduce_internal::Product;
using reduce_internal::WrapSubByte;

}  // namespace

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
          data_[static_cast<size_t>(start + p * w.size + k)] = real ? at / w.base_dilation *
                                                                          strides[d]
                                                                    : -1;
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
                           std::span<const WindowDim> window, std::span<const int64_t> output_dims,
                           const WindowTables& tables, int64_t begin, int64_t end) {
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
