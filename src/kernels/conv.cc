// im2col: each output position's receptive field copied into one row, so a
// convolution becomes one GEMM per group. Each (row, window position) is one
// contiguous run of the group's features in the NHWC input. ConvByBlocks
// does it a block of rows at a time, each block's columns GEMMed while in
// cache.
#include "kernels/conv.h"

#include <algorithm>
#include <cstring>
#include <span>

#include "base/small_vector.h"
#include "kernels/dot.h"
#include "kernels/parallel.h"
#include "kernels/scratch.h"

namespace kiln::kernels {
namespace {

// Copies n bytes; one-element runs of the common sizes (depthwise
// convolutions) as fixed-size copies, which compile to single moves.
inline void CopyRun(uint8_t* dst, const uint8_t* src, size_t n) {
  switch (n) {
    case 2: std::memcpy(dst, src, 2); return;
    case 4: std::memcpy(dst, src, 4); return;
    case 8: std::memcpy(dst, src, 8); return;
    default: std::memcpy(dst, src, n); return;
  }
}

// Per spatial dimension d: tables[d][y * window + k] is the input
// coordinate under window position k of output position y, or -1 (padding,
// dilation hole). Held in kernel scratch memory.
class SourceTables {
 public:
  explicit SourceTables(const ConvGeometry& g) : data_(TotalSize(g)) {
    int64_t start = 0;
    for (size_t d = 0; d < g.window.size(); ++d) {
      start_.push_back(start);
      int64_t* table = data_.data() + start;
      for (int64_t y = 0; y < g.output_spatial[d]; ++y) {
        for (int64_t k = 0; k < g.window[d]; ++k) {
          const int64_t dilated = y * g.strides[d] + k * g.rhs_dilation[d] - g.padding_low[d];
          int64_t x = -1;
          if (dilated >= 0 && dilated % g.lhs_dilation[d] == 0 &&
              dilated / g.lhs_dilation[d] < g.input_spatial[d]) {
            x = dilated / g.lhs_dilation[d];
          }
          table[y * g.window[d] + k] = x;
        }
      }
      start += g.output_spatial[d] * g.window[d];
    }
  }
  const int64_t* operator[](size_t d) const { return data_.data() + start_[d]; }

 private:
  static size_t TotalSize(const ConvGeometry& g) {
    int64_t total = 0;
    for (size_t d = 0; d < g.window.size(); ++d) total += g.output_spatial[d] * g.window[d];
    return static_cast<size_t>(total);
  }
  ScratchArray<int64_t> data_;
  SmallVector<int64_t> start_;
};

// The input offset under window position k of output position y, given
// the offset of the row's batch element (and group) `base`; -1 where the
// position falls on padding or between dilated input elements.
int64_t SourceOffset(const ConvGeometry& g, const SourceTables& source, std::span<const int64_t> y,
                     std::span<const int64_t> k, std::span<const int64_t> stride, int64_t base) {
  int64_t offset = base;
  for (size_t d = 0; d < g.window.size(); ++d) {
    const int64_t x = source[d][y[d] * g.window[d] + k[d]];
    if (x < 0) return -1;
    offset += x * stride[d];
  }
  return offset;
}

// Input strides in elements of the NHWC input's spatial dimensions, and
// (returned) of its batch dimension.
int64_t InputStrides(const ConvGeometry& g, SmallVector<int64_t>& stride) {
  stride.resize(g.window.size());
  int64_t pixel = g.features;
  for (size_t d = g.window.size(); d-- > 0;) {
    stride[d] = pixel;
    pixel *= g.input_spatial[d];
  }
  return pixel;
}

// The most window positions over the spatial dimensions before the last
// that DepthwiseTyped lists per run of output pixels along the last.
constexpr int64_t kMaxListedTaps = 64;

// o[c * multiplier + m] += x[c] * taps[c * multiplier + m] (the output row
// overlaps neither input nor kernel, which lets the compiler vectorize).
template <typename T>
void AccumulateTaps(const T* __restrict x, const T* __restrict taps, T* __restrict o,
                    int64_t features, int64_t multiplier) {
  if (multiplier == 1) {
    for (int64_t c = 0; c < features; ++c) o[c] += x[c] * taps[c];
    return;
  }
  for (int64_t c = 0; c < features; ++c) {
    const T xc = x[c];
    for (int64_t m = 0; m < multiplier; ++m) {
      o[c * multiplier + m] += xc * taps[c * multiplier + m];
    }
  }
}

// Each output row (pixel) sums its window's taps. The input offsets and tap
// indices of the window positions over the spatial dimensions before the
// last are listed once per run of pixels along the last dimension, which
// share them (rather than computed per pixel and position); each pixel then
// adds its last dimension's part. Windows with more positions than
// kMaxListedTaps walk them per pixel.
template <typename T>
void DepthwiseTyped(const ConvGeometry& g, const T* input, const T* kernel, T* out) {
  const size_t rank = g.window.size();
  const SourceTables source(g);
  SmallVector<int64_t> stride;
  const int64_t batch_stride = InputStrides(g, stride);
  const int64_t features = g.features;
  const int64_t outputs = g.output_features;
  const int64_t multiplier = outputs / features;
  const int64_t window = g.window_size();
  const int64_t last_window = rank == 0 ? 1 : g.window[rank - 1];
  // (A window of size 0 in some dimension has no positions: no listing.)
  const bool listed = rank > 0 && window > 0 && window / last_window <= kMaxListedTaps;
  ParallelFor(g.rows(), window * outputs, [&](int64_t begin, int64_t end) {
    SmallVector<int64_t> y(rank), k(rank);
    int64_t outer_offset[kMaxListedTaps], outer_tap[kMaxListedTaps];
    int64_t outer_count = 0;
    int64_t outer_row = -1;  // the row whose outer positions are listed
    for (int64_t row = begin; row < end; ++row) {
      int64_t r = row;
      for (size_t d = rank; d-- > 0;) {
        y[d] = r % g.output_spatial[d];
        r /= g.output_spatial[d];
      }
      T* o = out + row * outputs;
      std::fill(o, o + outputs, T(0));
      if (listed) {
        const size_t last = rank - 1;
        // Rows of one run along the last dimension share everything before it.
        const int64_t run_start = row - y[last];
        if (outer_row != run_start) {
          outer_row = run_start;
          outer_count = 0;
          std::fill(k.begin(), k.end(), 0);
          for (int64_t tap = 0;; tap += last_window) {
            int64_t offset = r * batch_stride;
            bool inside = true;
            for (size_t d = 0; d < last && inside; ++d) {
              const int64_t x = source[d][y[d] * g.window[d] + k[d]];
              inside = x >= 0;
              offset += x * stride[d];
            }
            if (inside) {
              outer_offset[outer_count] = offset;
              outer_tap[outer_count++] = tap;
            }
            size_t d = last;
            while (d-- > 0 && ++k[d] == g.window[d]) k[d] = 0;
            if (d == static_cast<size_t>(-1)) break;
          }
        }
        const int64_t* column = source[last] + y[last] * last_window;
        for (int64_t i = 0; i < outer_count; ++i) {
          for (int64_t j = 0; j < last_window; ++j) {
            if (column[j] < 0) continue;
            AccumulateTaps(input + outer_offset[i] + column[j] * stride[last],
                           kernel + (outer_tap[i] + j) * outputs, o, features, multiplier);
          }
        }
        continue;
      }
      std::fill(k.begin(), k.end(), 0);
      for (int64_t w = 0; w < window; ++w) {
        const int64_t offset = SourceOffset(g, source, y, k, stride, r * batch_stride);
        if (offset >= 0) {
          AccumulateTaps(input + offset, kernel + w * outputs, o, features, multiplier);
        }
        for (size_t d = rank; d-- > 0;) {
          if (++k[d] < g.window[d]) break;
          k[d] = 0;
        }
      }
    }
  });
}

}  // namespace

int64_t ConvGeometry::rows() const {
  int64_t rows = batch / batch_groups;
  for (int64_t size : output_spatial) rows *= size;
  return rows;
}

int64_t ConvGeometry::window_size() const {
  int64_t size = 1;
  for (int64_t w : window) size *= w;
  return size;
}

bool ConvGeometry::columns_are_input() const {
  if (groups() != 1) return false;
  for (size_t d = 0; d < window.size(); ++d) {
    if (window[d] != 1 || strides[d] != 1 || padding_low[d] != 0 || lhs_dilation[d] != 1 ||
        output_spatial[d] != input_spatial[d]) {
      return false;
    }
  }
  return true;
}

namespace {

// Rows [begin, end) of the column matrix (over all groups: task = group x
// rows + row), window positions [w_begin, w_end) of each, into `columns`,
// the first at its start. Without dilation along the innermost spatial
// dimension (and with one feature group), the window positions of one
// innermost run read consecutive input pixels: such a run is one copy
// between its padding's zeros.
void Im2ColRange(size_t element_bytes, const ConvGeometry& g, const SourceTables& source,
                 const void* input, int64_t begin, int64_t end, int64_t w_begin, int64_t w_end,
                 void* columns) {
  // No window positions (a window dimension of size 0): rows of no bytes.
  if (w_begin >= w_end) return;
  const size_t rank = g.window.size();
  SmallVector<int64_t> stride;
  const int64_t batch_stride = InputStrides(g, stride);
  const int64_t rows = g.rows();
  const int64_t group_batch = g.batch / g.batch_groups;
  const int64_t features = g.group_features();
  const size_t run = static_cast<size_t>(features) * element_bytes;
  const auto* in = static_cast<const uint8_t*>(input);
  auto* out = static_cast<uint8_t*>(columns);
  const size_t last = rank - 1;
  // (With feature groups a group's features are not a whole input pixel.)
  const bool runs = rank > 0 && g.rhs_dilation[last] == 1 && g.lhs_dilation[last] == 1 &&
                    stride[last] == features;
  SmallVector<int64_t> y(rank), k(rank);
  for (int64_t task = begin; task < end; ++task) {
    const int64_t group = task / rows;
    int64_t r = task % rows;
    for (size_t d = rank; d-- > 0;) {
      y[d] = r % g.output_spatial[d];
      r /= g.output_spatial[d];
    }
    const int64_t n = g.batch_groups > 1 ? group * group_batch + r : r;
    const int64_t base = n * batch_stride + (g.feature_groups > 1 ? group * features : 0);
    uint8_t* row = out + static_cast<size_t>((task - begin) * (w_end - w_begin)) * run;
    int64_t rest = w_begin;
    for (size_t d = rank; d-- > 0;) {
      k[d] = rest % g.window[d];
      rest /= g.window[d];
    }
    if (!runs) {
      for (int64_t w = w_begin; w < w_end; ++w) {
        const int64_t offset = SourceOffset(g, source, y, k, stride, base);
        if (offset >= 0) {
          CopyRun(row, in + static_cast<size_t>(offset) * element_bytes, run);
        } else {
          std::memset(row, 0, run);
        }
        row += run;
        for (size_t d = rank; d-- > 0;) {
          if (++k[d] < g.window[d]) break;
          k[d] = 0;
        }
      }
      continue;
    }
    for (int64_t w = w_begin; w < w_end;) {
      const int64_t count = std::min(w_end - w, g.window[last] - k[last]);
      int64_t offset = base;
      bool inside = true;
      for (size_t d = 0; d < last && inside; ++d) {
        const int64_t x = source[d][y[d] * g.window[d] + k[d]];
        inside = x >= 0;
        offset += x * stride[d];
      }
      // Input coordinates of the run's positions: -1 (padding), then
      // consecutive ones, then -1.
      const int64_t* x = source[last] + y[last] * g.window[last] + k[last];
      int64_t first = 0, stop = 0;
      if (inside) {
        while (first < count && x[first] < 0) ++first;
        stop = first;
        while (stop < count && x[stop] >= 0) ++stop;
      }
      std::memset(row, 0, static_cast<size_t>(first) * run);
      if (stop > first) {
        std::memcpy(row + static_cast<size_t>(first) * run,
                    in + static_cast<size_t>(offset + x[first] * stride[last]) * element_bytes,
                    static_cast<size_t>(stop - first) * run);
      }
      std::memset(row + static_cast<size_t>(stop) * run, 0,
                  static_cast<size_t>(count - stop) * run);
      row += static_cast<size_t>(count) * run;
      w += count;
      k[last] += count;
      for (size_t d = last; d > 0 && k[d] == g.window[d]; --d) {
        k[d] = 0;
        ++k[d - 1];
      }
    }
  }
}

}  // namespace

void Im2Col(size_t element_bytes, const ConvGeometry& g, const void* input, void* columns) {
  const SourceTables source(g);
  const int64_t window = g.window_size();
  const size_t row_bytes = static_cast<size_t>(window * g.group_features()) * element_bytes;
  auto* out = static_cast<uint8_t*>(columns);
  ParallelFor(g.groups() * g.rows(), window * g.group_features(), [&](int64_t begin, int64_t end) {
    Im2ColRange(element_bytes, g, source, input, begin, end, 0, window,
                out + static_cast<size_t>(begin) * row_bytes);
  });
}

int64_t ConvBlockRows(const ConvGeometry& g, size_t element_bytes) {
  // A block's columns in about 256 KiB: they stay in L2 while its GEMM
  // reads them.
  const auto row_bytes = static_cast<int64_t>(
      static_cast<size_t>(g.window_size() * g.group_features()) * element_bytes);
  const int64_t rows = (int64_t{256} << 10) / std::max<int64_t>(row_bytes, 1);
  return std::clamp<int64_t>(rows / 8 * 8, 8, 1024);
}

namespace {

// ConvByBlocks when each row's columns exceed the block budget (a weight
// gradient: its window is the whole output image, each row tens of
// thousands of columns deep). Whole-row blocks would be a few rows each,
// and each block's GEMM would pack the whole kernel again (a 3x3 weight
// gradient over 8x56x56x64 packed 6.4 MB 72 times). Here a block of rows
// is GEMMed one slice of window positions at a time, about kSliceDepth
// columns deep, each slice's product accumulated into the block's result
// (MatMulShape::accumulate); blocks are as many as the threads (or a
// multiple), so the kernel is packed once per block.
constexpr int64_t kSliceDepth = 256;

Status ConvByDepthSlices(ElementType type, const ConvGeometry& g, const SourceTables& source,
                         const void* input, const void* kernel, void* out) {
  const size_t bytes = GetElementTypeInfo(type).storage_bytes;
  const int64_t rows = g.rows();
  const int64_t features = g.group_features();
  const int64_t window = g.window_size();
  const int64_t outputs = g.output_features;
  if (rows == 0) return Status::Ok();  // an empty batch or output: nothing to write
  const int64_t slice = std::max<int64_t>(1, kSliceDepth / features);  // window positions
  // Rows per block: a slice's columns within the block budget, and the
  // blocks a multiple of the threads so that each thread gets as many.
  const int64_t budget_rows = std::max<int64_t>(
      8,
      (int64_t{256} << 10) / static_cast<int64_t>(static_cast<size_t>(slice * features) * bytes));
  const int64_t threads = std::max(1, NumThreads());
  const int64_t per_thread = (rows + threads - 1) / threads;
  const int64_t blocks = threads * ((per_thread + budget_rows - 1) / budget_rows);
  const int64_t block = (rows + blocks - 1) / blocks;
  return ParallelForStatus(
      blocks, block * window * features * outputs, [&](int64_t begin, int64_t end) {
        ScratchArray<uint8_t> columns(static_cast<size_t>(block * slice * features) * bytes);
        for (int64_t b = begin; b < end; ++b) {
          const int64_t r0 = std::min(rows, b * block), r1 = std::min(rows, r0 + block);
          if (r0 == r1) continue;
          auto* result = static_cast<uint8_t*>(out) + static_cast<size_t>(r0 * outputs) * bytes;
          for (int64_t w0 = 0; w0 < window; w0 += slice) {
            const int64_t w1 = std::min(window, w0 + slice);
            Im2ColRange(bytes, g, source, input, r0, r1, w0, w1, columns.data());
            MatMulShape shape;
            shape.m = r1 - r0;
            shape.n = outputs;
            shape.k = (w1 - w0) * features;
            shape.accumulate = w0 > 0;
            const auto* rhs = static_cast<const uint8_t*>(kernel) +
                              static_cast<size_t>(w0 * features * outputs) * bytes;
            KILN_RETURN_IF_ERROR(MatMul(type, shape, columns.data(), rhs, result));
          }
        }
        return Status::Ok();
      });
}

}  // namespace

Status ConvByBlocks(ElementType type, const ConvGeometry& g, const void* input, const void* kernel,
                    void* out) {
  if (g.groups() != 1) {
    return InvalidArgument("ConvByBlocks takes one group, found ", g.groups());
  }
  const size_t bytes = GetElementTypeInfo(type).storage_bytes;
  const SourceTables source(g);
  const int64_t rows = g.rows();
  const int64_t depth = g.window_size() * g.group_features();
  if (ConvSlicesDepth(g, type)) return ConvByDepthSlices(type, g, source, input, kernel, out);
  const int64_t block = ConvBlockRows(g, bytes);
  const int64_t blocks = (rows + block - 1) / block;
  // Each block's GEMM runs on its chunk's thread.
  return ParallelForStatus(
      blocks, block * depth * g.output_features, [&](int64_t begin, int64_t end) {
        ScratchArray<uint8_t> columns(static_cast<size_t>(block * depth) * bytes);
        for (int64_t b = begin; b < end; ++b) {
          const int64_t r0 = b * block, r1 = std::min(rows, r0 + block);
          Im2ColRange(bytes, g, source, input, r0, r1, 0, g.window_size(), columns.data());
          MatMulShape shape;
          shape.m = r1 - r0;
          shape.n = g.output_features;
          shape.k = depth;
          KILN_RETURN_IF_ERROR(MatMul(type, shape, columns.data(), kernel,
                                      static_cast<uint8_t*>(out) +
                                          static_cast<size_t>(r0 * g.output_features) * bytes));
        }
        return Status::Ok();
      });
}

bool ConvSlicesDepth(const ConvGeometry& g, ElementType type) {
  if (type != ElementType::kF32 && type != ElementType::kF64) return false;
  const auto row_bytes = static_cast<int64_t>(static_cast<size_t>(g.window_size() *
                                                                  g.group_features()) *
                                              GetElementTypeInfo(type).storage_bytes);
  // Fewer than 32 whole rows fit in a block's budget.
  return row_bytes * 32 > (int64_t{256} << 10);
}

bool DepthwiseConvAccepts(ElementType type, const ConvGeometry& g) {
  return (type == ElementType::kF32 || type == ElementType::kF64) && g.batch_groups == 1 &&
         g.feature_groups == g.features && g.features > 0 && g.output_features > 0 &&
         g.output_features % g.features == 0;
}

Status DepthwiseConv(ElementType type, const ConvGeometry& g, const void* input, const void* kernel,
                     void* out) {
  if (!DepthwiseConvAccepts(type, g)) {
    return Unimplemented("depthwise convolution of this shape or element type");
  }
  if (type == ElementType::kF32) {
    DepthwiseTyped(g, static_cast<const float*>(input), static_cast<const float*>(kernel),
                   static_cast<float*>(out));
  } else {
    DepthwiseTyped(g, static_cast<const double*>(input), static_cast<const double*>(kernel),
                   static_cast<double*>(out));
  }
  return Status::Ok();
}

}  // namespace kiln::kernels
