// Uniform quantization (StableHLO uniform_quantize / uniform_dequantize):
// storage integers q and expressed floats x related by x = (q - zero_point)
// * scale, per tensor or per slice along one axis.
#pragma once

#include <cstdint>
#include <span>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// The parameters of one quantized array. Element i uses scales[c] and
// zero_points[c] with c = (i / inner) % channels (per tensor: one channel).
struct Quantization {
  std::span<const double> scales;
  std::span<const int64_t> zero_points;
  int64_t channels = 1;
  int64_t inner = 1;
  int64_t storage_min = 0;
  int64_t storage_max = 0;
};

// q = clamp(round_half_even(x / scale) + zero_point, storage_min, storage_max),
// computed in the expressed type (f16/bf16 in f32). `expressed` is f16, bf16,
// f32 or f64; `storage` an integer type.
Status Quantize(ElementType expressed, const void* x, ElementType storage, void* q, int64_t count,
                const Quantization& params);

// x = (q - zero_point) * scale in the expressed type.
Status Dequantize(ElementType storage, const void* q, ElementType expressed, void* x, int64_t count,
                  const Quantization& params);

}  // namespace kiln::kernels
