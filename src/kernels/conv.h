// Convolution support: the im2col transform that turns a convolution in
// Kiln's canonical layouts into one batched GEMM (kernels/dot.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// One convolution in the canonical layouts: input [batch, spatial...,
// features] (NHWC), kernel [groups, window..., features / feature groups,
// output features / groups], output [batch / batch groups, output spatial...,
// output features]. At most one of the group counts exceeds 1.
struct ConvGeometry {
  int64_t batch = 1;
  int64_t features = 1;
  std::vector<int64_t> input_spatial;
  std::vector<int64_t> window;  // kernel spatial sizes
  std::vector<int64_t> output_spatial;
  std::vector<int64_t> strides;       // per spatial dimension
  std::vector<int64_t> padding_low;   // may be negative
  std::vector<int64_t> lhs_dilation;  // input (base) dilation
  std::vector<int64_t> rhs_dilation;  // kernel (window) dilation
  int64_t feature_groups = 1;
  int64_t batch_groups = 1;
  int64_t output_features = 1;  // of all groups together

  int64_t groups() const { return feature_groups * batch_groups; }
  // Features each group reads: features / feature_groups.
  int64_t group_features() const { return features / feature_groups; }
  // Rows of the GEMM per group: output batch x output spatial positions.
  int64_t rows() const;
  // Window positions: the product of `window`.
  int64_t window_size() const;
  // Whether the input already is the column matrix (one group, a 1x1 window
  // at stride 1 without padding or dilation).
  bool columns_are_input() const;
};

// Writes the column matrix [groups, rows, window positions x group features]
// of `input` (NHWC, dense): row (n, y...) of group g holds, for each window
// position w (row-major) the group's features of the input element under w,
// or zeros where w falls on padding or between dilated input elements.
// Element type agnostic: zeros are all-zero bytes.
void Im2Col(size_t element_bytes, const ConvGeometry& geometry, const void* input, void* columns);

// A one-group convolution as im2col + GEMM a block of output rows at a
// time (ConvBlockRows of them): each thread writes a block's columns into
// its scratch memory and multiplies them by the kernel [window...,
// features, output features] while they are in cache, so the column
// matrix (window positions x the input) is never whole in memory. Output
// [rows, output features]; `type` as MatMul takes it.
Status ConvByBlocks(ElementType type, const ConvGeometry& geometry, const void* input,
                    const void* kernel, void* out);
// Output rows per block: the block's columns fill about 256 KiB.
int64_t ConvBlockRows(const ConvGeometry& geometry, size_t element_bytes);
// Whether ConvByBlocks splits each block's columns into slices of window
// positions, adding up the slices' products: f32 or f64 rows deeper than 8
// KiB, so that fewer than 32 fit in the block budget (kernel gradients,
// whose window is the whole image; also 3x3 layers of 228 or more f32
// input features).
bool ConvSlicesDepth(const ConvGeometry& geometry, ElementType type);

// Whether DepthwiseConv computes `geometry` in `type`: one input feature per
// group (feature_group_count = features), no batch groups, f32 or f64.
bool DepthwiseConvAccepts(ElementType type, const ConvGeometry& geometry);

// A depthwise convolution computed directly (im2col would copy every input
// element once per window position for a one-column GEMM): output
// [batch, output spatial..., features x multiplier] from the NHWC input and
// the kernel as [window..., features x multiplier]; output feature
// c * multiplier + m reads input feature c.
Status DepthwiseConv(ElementType type, const ConvGeometry& geometry, const void* input,
                     const void* kernel, void* out);

}  // namespace kiln::kernels
