// Batch normalization: per-feature sums in one contiguous pass over the
// operand (rows of `inner` elements, each row one feature), then an
// elementwise pass split across rows.
#include "kernels/batch_norm.h"

#include <cmath>
#include <vector>

#include "kernels/parallel.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

template <typename T>
using Compute = ComputeType<T>;  // f16/bf16 -> f32
using Accumulator = double;

template <typename T>
std::vector<Compute<T>> Load(const void* data, int64_t count) {
  const T* values = static_cast<const T*>(data);
  std::vector<Compute<T>> result(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) result[static_cast<size_t>(i)] = Compute<T>(values[i]);
  return result;
}

template <typename T>
void Store(const std::vector<Accumulator>& values, void* data) {
  T* out = static_cast<T*>(data);
  for (size_t i = 0; i < values.size(); ++i) {
    out[i] = T(static_cast<Compute<T>>(values[i]));
  }
}

// Per feature: the sums of a(x) over every element of that feature.
template <typename F>
std::vector<Accumulator> FeatureSums(BatchNormShape shape, F&& value) {
  std::vector<Accumulator> sums(static_cast<size_t>(shape.features), 0);
  for (int64_t o = 0; o < shape.outer; ++o) {
    for (int64_t c = 0; c < shape.features; ++c) {
      const int64_t base = (o * shape.features + c) * shape.inner;
      Accumulator sum = 0;
      for (int64_t i = 0; i < shape.inner; ++i) sum += value(base + i);
      sums[static_cast<size_t>(c)] += sum;
    }
  }
  return sums;
}

// out[e] = (x[e] - shift[c]) * multiplier[c] + offset[c] for e in feature c.
template <typename T>
void Normalize(const T* x, T* out, BatchNormShape shape, const std::vector<Compute<T>>& shift,
               const std::vector<Compute<T>>& multiplier, const std::vector<Compute<T>>& offset) {
  ParallelFor(shape.outer * shape.features, shape.inner * 3, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const auto c = static_cast<size_t>(row % shape.features);
      const Compute<T> s = shift[c], m = multiplier[c], b = offset[c];
      const T* from = x + row * shape.inner;
      T* to = out + row * shape.inner;
      for (int64_t i = 0; i < shape.inner; ++i) to[i] = T((Compute<T>(from[i]) - s) * m + b);
    }
  });
}

template <typename F>
Status DispatchFloat(ElementType type, F&& f) {
  switch (type) {
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64: return DispatchType(type, f);
    default:
      return Unimplemented("batch norm runs in f16, bf16, f32 and f64; found ",
                           GetElementTypeInfo(type).name);
  }
}

}  // namespace

Status BatchNormInference(ElementType type, const void* x, const void* scale, const void* offset,
                          const void* mean, const void* variance, void* out, BatchNormShape shape,
                          float epsilon) {
  return DispatchFloat(type, [&]<typename T>() {
    if constexpr (kIsFloat<T>) {
      using C = Compute<T>;
      std::vector<C> multiplier = Load<T>(scale, shape.features);
      const std::vector<C> variances = Load<T>(variance, shape.features);
      for (size_t c = 0; c < multiplier.size(); ++c) {
        multiplier[c] *= C(1) / std::sqrt(variances[c] + C(epsilon));
      }
      Normalize<T>(static_cast<const T*>(x), static_cast<T*>(out), shape,
                   Load<T>(mean, shape.features), multiplier, Load<T>(offset, shape.features));
    }
  });
}

Status BatchNormTraining(ElementType type, const void* x, const void* scale, const void* offset,
                         void* out, void* batch_mean, void* batch_variance, BatchNormShape shape,
                         float epsilon) {
  return DispatchFloat(type, [&]<typename T>() {
    if constexpr (kIsFloat<T>) {
      using C = Compute<T>;
      const T* data = static_cast<const T*>(x);
      const auto count = static_cast<Accumulator>(shape.outer * shape.inner);
      std::vector<Accumulator> means = FeatureSums(shape, [&](int64_t e) {
        return Accumulator(Compute<T>(data[e]));
      });
      std::vector<Accumulator> variances = FeatureSums(shape, [&](int64_t e) {
        const auto value = Accumulator(Compute<T>(data[e]));
        return value * value;
      });
      std::vector<C> shift(means.size()), multiplier = Load<T>(scale, shape.features);
      for (size_t c = 0; c < means.size(); ++c) {
        means[c] = count > 0 ? means[c] / count : 0;
        variances[c] = count > 0 ? variances[c] / count - means[c] * means[c] : 0;
        shift[c] = C(means[c]);
        multiplier[c] *= C(1) / std::sqrt(C(variances[c]) + C(epsilon));
      }
      Normalize<T>(data, static_cast<T*>(out), shape, shift, multiplier,
                   Load<T>(offset, shape.features));
      Store<T>(means, batch_mean);
      Store<T>(variances, batch_variance);
    }
  });
}

Status BatchNormGrad(ElementType type, const void* x, const void* scale, const void* mean,
                     const void* variance, const void* grad_output, void* grad_x, void* grad_scale,
                     void* grad_offset, BatchNormShape shape, float epsilon) {
  return DispatchFloat(type, [&]<typename T>() {
    if constexpr (kIsFloat<T>) {
      using C = Compute<T>;
      const T* data = static_cast<const T*>(x);
      const T* grad = static_cast<const T*>(grad_output);
      const std::vector<C> means = Load<T>(mean, shape.features);
      const std::vector<C> variances = Load<T>(variance, shape.features);
      const std::vector<C> scales = Load<T>(scale, shape.features);
      const int64_t features = shape.features, inner = shape.inner;
      const auto feature = [&](int64_t e) { return static_cast<size_t>(e / inner % features); };
      // sum(dy) and sum(dy * (x - mean)) per feature.
      const std::vector<Accumulator> grad_sums = FeatureSums(shape, [&](int64_t e) {
        return Accumulator(Compute<T>(grad[e]));
      });
      const std::vector<Accumulator> weighted = FeatureSums(shape, [&](int64_t e) {
        return Accumulator(Compute<T>(grad[e])) *
               Accumulator(Compute<T>(data[e]) - means[feature(e)]);
      });
      const auto count = static_cast<C>(shape.outer * inner);
      std::vector<Accumulator> scale_grads(weighted.size());
      // dx = scale * rsqrt(var + eps) / N * (N dy - sum(dy) - (x - mean) *
      // sum(dy (x - mean)) / (var + eps)).
      std::vector<C> rsqrt(weighted.size()), coefficient(weighted.size()),
          centered(weighted.size());
      for (size_t c = 0; c < weighted.size(); ++c) {
        rsqrt[c] = C(1) / std::sqrt(variances[c] + C(epsilon));
        scale_grads[c] = weighted[c] * Accumulator(rsqrt[c]);
        coefficient[c] = scales[c] * rsqrt[c] / count;
        centered[c] = C(weighted[c]) / (variances[c] + C(epsilon));
      }
      T* out = static_cast<T*>(grad_x);
      ParallelFor(shape.outer * features, inner * 6, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const auto c = static_cast<size_t>(row % features);
          const C sum = C(grad_sums[c]), m = means[c], k = centered[c], a = coefficient[c];
          for (int64_t e = row * inner; e < (row + 1) * inner; ++e) {
            const C dy = Compute<T>(grad[e]), xm = Compute<T>(data[e]) - m;
            out[e] = T(a * (count * dy - sum - xm * k));
          }
        }
      });
      Store<T>(scale_grads, grad_scale);
      Store<T>(grad_sums, grad_offset);
    }
  });
}

}  // namespace kiln::kernels
