#include "kernels/quantize.h"

#include <algorithm>
#include <cmath>

#include "kernels/parallel.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

template <typename F>
Status DispatchExpressed(ElementType type, F&& f) {
  switch (type) {
    case ElementType::kF16: f.template operator()<half>(); return Status::Ok();
    case ElementType::kBF16: f.template operator()<bfloat16>(); return Status::Ok();
    case ElementType::kF32: f.template operator()<float>(); return Status::Ok();
    case ElementType::kF64: f.template operator()<double>(); return Status::Ok();
    default:
      return Unimplemented("quantized values express f16, bf16, f32 or f64; found ",
                           GetElementTypeInfo(type).name);
  }
}

template <typename F>
Status DispatchStorage(ElementType type, F&& f) {
  switch (type) {
    case ElementType::kS1:
    case ElementType::kS2:
    case ElementType::kS4:
    case ElementType::kS8: f.template operator()<int8_t>(); return Status::Ok();
    case ElementType::kS16: f.template operator()<int16_t>(); return Status::Ok();
    case ElementType::kS32: f.template operator()<int32_t>(); return Status::Ok();
    case ElementType::kU1:
    case ElementType::kU2:
    case ElementType::kU4:
    case ElementType::kU8: f.template operator()<uint8_t>(); return Status::Ok();
    case ElementType::kU16: f.template operator()<uint16_t>(); return Status::Ok();
    case ElementType::kU32: f.template operator()<uint32_t>(); return Status::Ok();
    default:
      return Unimplemented("quantized storage must be an integer of at most 32 bits; found ",
                           GetElementTypeInfo(type).name);
  }
}

int64_t Channel(const Quantization& params, int64_t i) {
  return params.channels == 1 ? 0 : (i / params.inner) % params.channels;
}

}  // namespace

Status Quantize(ElementType expressed, const void* x, ElementType storage, void* q, int64_t count,
                const Quantization& params) {
  Status status = Status::Ok();
  KILN_RETURN_IF_ERROR(DispatchExpressed(expressed, [&]<typename X>() {
    status = DispatchStorage(storage, [&]<typename Q>() {
      using C = ComputeType<X>;
      const auto* in = static_cast<const X*>(x);
      auto* out = static_cast<Q*>(q);
      ParallelFor(count, 8, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const auto c = static_cast<size_t>(Channel(params, i));
          const C scaled = static_cast<C>(in[i]) / static_cast<C>(params.scales[c]);
          // nearbyint rounds half to even in the default rounding mode. NaN
          // stays NaN through the clamp and converts to 0, as in XLA's
          // expansion (clamp, then convert).
          const C rounded = std::nearbyint(scaled) + static_cast<C>(params.zero_points[c]);
          int64_t value = 0;
          if (rounded >= static_cast<C>(params.storage_max)) {
            value = params.storage_max;
          } else if (rounded <= static_cast<C>(params.storage_min)) {
            value = params.storage_min;
          } else if (!std::isnan(rounded)) {
            value = static_cast<int64_t>(rounded);
          }
          out[i] = static_cast<Q>(value);
        }
      });
    });
  }));
  return status;
}

Status Dequantize(ElementType storage, const void* q, ElementType expressed, void* x, int64_t count,
                  const Quantization& params) {
  Status status = Status::Ok();
  KILN_RETURN_IF_ERROR(DispatchExpressed(expressed, [&]<typename X>() {
    status = DispatchStorage(storage, [&]<typename Q>() {
      using C = ComputeType<X>;
      const auto* in = static_cast<const Q*>(q);
      auto* out = static_cast<X*>(x);
      ParallelFor(count, 4, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const auto c = static_cast<size_t>(Channel(params, i));
          const C shifted = static_cast<C>(static_cast<int64_t>(in[i]) - params.zero_points[c]);
          out[i] = static_cast<X>(shifted * static_cast<C>(params.scales[c]));
        }
      });
    });
  }));
  return status;
}

}  // namespace kiln::kernels
