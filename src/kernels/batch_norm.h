// Batch normalization kernels behind stablehlo.batch_norm_inference,
// batch_norm_training and batch_norm_grad, with XLA's formulas
// (BatchNormExpander): biased variance E[x^2] - E[x]^2, epsilon added to the
// variance inside the rsqrt. The operand is seen as [outer, features, inner]
// around its feature dimension; per-feature arrays are [features]. f16/bf16
// compute in f32, f32 accumulates its sums in f64, f64 computes in f64.
#pragma once

#include <cstdint>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// The sizes of an operand around its feature dimension.
struct BatchNormShape {
  int64_t outer = 1;
  int64_t features = 1;
  int64_t inner = 1;
};

// out = (x - mean) * rsqrt(variance + epsilon) * scale + offset.
Status BatchNormInference(ElementType type, const void* x, const void* scale, const void* offset,
                          const void* mean, const void* variance, void* out, BatchNormShape shape,
                          float epsilon);

// Normalizes x by its own per-feature mean and biased variance, which it
// also writes to batch_mean and batch_variance.
Status BatchNormTraining(ElementType type, const void* x, const void* scale, const void* offset,
                         void* out, void* batch_mean, void* batch_variance, BatchNormShape shape,
                         float epsilon);

// The gradients of batch_norm_training's output with respect to x, scale and
// offset, given the mean and variance it used and the output's gradient.
Status BatchNormGrad(ElementType type, const void* x, const void* scale, const void* mean,
                     const void* variance, const void* grad_output, void* grad_x, void* grad_scale,
                     void* grad_offset, BatchNormShape shape, float epsilon);

}  // namespace kiln::kernels
