// Reductions: the kernels behind stablehlo.reduce, reduce_window and
// select_and_scatter when their bodies are one binary op, and the window
// geometry their generic paths (which call the body region per element)
// share with them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/element_type.h"
#include "base/small_vector.h"
#include "base/status.h"
#include "kernels/elementwise.h"

namespace kiln::kernels {

// The binary ops a reduction body may be recognized as. Semantics are the
// elementwise ops' (elementwise.h): integers wrap, float max/min propagate
// NaN, pred add/max/or are or and multiply/min/and are and.
enum class ReduceOp : uint8_t { kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kXor };

// Whether the fast kernels compute `op` over `type` (false for, e.g., and
// of floats, or f8 types; the compiler then runs the body region instead).
bool ReduceOpAccepts(ReduceOp op, ElementType type);

// out = init op x0 op x1 ... over the dimensions `reduced` of the dense
// array `in` of shape `dims`; `out` is dense over the other dimensions, in
// order. Accumulates in the element type, as XLA's CPU backend does (f16/bf16
// round after every step); the order of a float sum is unspecified, as in
// the spec.
Status Reduce(ReduceOp op, ElementType type, const void* in, std::span<const int64_t> dims,
              std::span<const int64_t> reduced, const void* init, void* out);

// acc[r] = acc[r] op x_r0 op x_r1 ... for each of `rows` contiguous rows of
// `width` elements at `in` (row r at in + r * width), folding each row as
// Reduce does. Fused loops (compiler/fusion.cc) call it per tile to reduce
// values they computed in cache; a row split across tiles folds in pieces.
// Not for sub-byte types (the caller keeps those on Reduce).
Status FoldRowsInto(ReduceOp op, ElementType type, const void* in, int64_t rows, int64_t width,
                    void* acc);

// One dimension of a window (stablehlo.reduce_window, select_and_scatter).
struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;
  int64_t window_dilation = 1;

  // A window of one element at stride one without padding or dilation.
  bool trivial() const {
    return size == 1 && stride == 1 && padding_low == 0 && padding_high == 0 &&
           base_dilation == 1 && window_dilation == 1;
  }
};

// Which input elements each window covers. Padding and the holes of base
// dilation are skipped, as XLA's CPU backend does: a reduction applies the
// init value once and then only real elements (identical to the spec's
// padding with the init value when init is the body's identity).
class WindowGeometry {
 public:
  // `output_dims` has one entry per window position along each dimension.
  WindowGeometry(std::span<const int64_t> input_dims, std::span<const WindowDim> window,
                 std::span<const int64_t> output_dims);

  int64_t num_outputs() const { return num_outputs_; }
  // Sets `offsets` to the dense row-major element offsets in the input of
  // the elements window `output` (row-major over the output) covers, in
  // row-major window order. `scratch` is reused memory.
  void Offsets(int64_t output, std::vector<int64_t>& offsets, std::vector<int64_t>& scratch) const;

 private:
  SmallVector<int64_t> input_dims_;
  SmallVector<WindowDim> window_;
  SmallVector<int64_t> output_dims_;
  SmallVector<int64_t> input_strides_;
  int64_t num_outputs_ = 1;
};

// out = reduce_window(in, init) with `op`; `output_dims` as the verifier
// computed them. A cumulative window (cumsum, cummax: one dimension with
// window >= its size, padded size-1 low, stride 1) runs as a prefix scan in
// the order of XLA's CPU backend (blocked, for float sums and products).
Status ReduceWindow(ReduceOp op, ElementType type, const void* in, std::span<const int64_t> dims,
                    std::span<const WindowDim> window, std::span<const int64_t> output_dims,
                    const void* init, void* out);

// select_and_scatter with a select body `a <direction> b` (IEEE comparison)
// and a scatter body `op`: out = init everywhere, then for each window (one
// per source element) the selected element (the first of the window, then
// replaced by each later element e for which select(selected, e) is false)
// accumulates the source element.
Status SelectAndScatter(ElementType type, CompareDirection select, ReduceOp scatter,
                        const void* operand, std::span<const int64_t> dims,
                        std::span<const WindowDim> window, const void* source,
                        std::span<const int64_t> source_dims, const void* init, void* out);

}  // namespace kiln::kernels
