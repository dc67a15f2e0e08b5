#include "kernels/rng.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "kernels/parallel.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

// Rough cost of one generator call in operations, for ParallelFor.
constexpr int64_t kCostPerCall = 120;

inline uint32_t RotateLeft(uint32_t v, int distance) {
  return (v << distance) | (v >> (32 - distance));
}

inline uint32_t Low(uint64_t v) { return static_cast<uint32_t>(v); }
inline uint32_t High(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
inline uint64_t Join(uint32_t low, uint32_t high) {
  return static_cast<uint64_t>(low) | (static_cast<uint64_t>(high) << 32);
}

int64_t Product(std::span<const int64_t> dims) {
  int64_t product = 1;
  for (int64_t d : dims) product *= d;
  return product;
}

// A 128-bit counter, low word first, and the addition XLA uses (the carry
// out of the high word is lost).
struct U128 {
  uint64_t low;
  uint64_t high;
  U128 Plus(uint64_t delta) const {
    const uint64_t sum = low + delta;
    return {sum, high + (sum < low ? 1 : 0)};
  }
};

void PhiloxAt(uint32_t key0, uint32_t key1, U128 counter, uint32_t words[4]) {
  const uint32_t in[4] = {Low(counter.low), High(counter.low), Low(counter.high),
                          High(counter.high)};
  Philox4x32(key0, key1, in, words);
}

// ThreeFry for outputs of up to 32 bits. XLA splits the shape in two along
// one dimension (the first of even size, else the first largest), runs one
// counter per element of the half shape (its row-major index plus `base`),
// and interleaves the two output words along the split dimension: element
// 2h of that dimension takes word 0 of counter h, element 2h + 1 word 1.
// Returns the number of counters used.
template <typename U>
int64_t ThreeFryNarrow(uint32_t key0, uint32_t key1, uint64_t base, std::span<const int64_t> dims,
                       U* out) {
  if (dims.empty()) {
    uint32_t words[2];
    ThreeFry2x32(key0, key1, Low(base), High(base), words);
    out[0] = static_cast<U>(words[0]);
    return 1;
  }
  size_t split = dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] % 2 == 0) {
      split = i;
      break;
    }
  }
  if (split == dims.size()) {
    split = 0;
    for (size_t i = 1; i < dims.size(); ++i) {
      if (dims[i] > dims[split]) split = i;
    }
  }
  const int64_t size = dims[split];
  const int64_t half = (size + 1) / 2;
  const int64_t outer = Product(dims.first(split));
  const int64_t inner = Product(dims.subspan(split + 1));
  const int64_t pairs = outer * half;
  if (pairs == 0 || inner == 0) return 0;
  ParallelFor(pairs, inner * kCostPerCall, [&](int64_t begin, int64_t end) {
    for (int64_t pair = begin; pair < end; ++pair) {
      const int64_t o = pair / half;
      const int64_t h = pair % half;
      U* row0 = out + (o * size + 2 * h) * inner;
      U* row1 = 2 * h + 1 < size ? row0 + inner : nullptr;
      for (int64_t i = 0; i < inner; ++i) {
        const uint64_t counter = base + static_cast<uint64_t>(pair * inner + i);
        uint32_t words[2];
        ThreeFry2x32(key0, key1, Low(counter), High(counter), words);
        row0[i] = static_cast<U>(words[0]);
        if (row1 != nullptr) row1[i] = static_cast<U>(words[1]);
      }
    }
  });
  return pairs * inner;
}

// ThreeFry for 64-bit outputs: counter base + i for element i, the two words
// joined low first.
void ThreeFryWide(uint32_t key0, uint32_t key1, uint64_t base, int64_t count, uint64_t* out) {
  ParallelFor(count, kCostPerCall, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint64_t counter = base + static_cast<uint64_t>(i);
      uint32_t words[2];
      ThreeFry2x32(key0, key1, Low(counter), High(counter), words);
      out[i] = Join(words[0], words[1]);
    }
  });
}

// Philox for outputs of up to 32 bits: counter + v makes elements 4v..4v+3.
// Returns the number of counters used.
template <typename U>
int64_t PhiloxNarrow(uint32_t key0, uint32_t key1, U128 counter, int64_t count, U* out) {
  const int64_t vectors = (count + 3) / 4;
  ParallelFor(vectors, kCostPerCall, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      uint32_t words[4];
      PhiloxAt(key0, key1, counter.Plus(static_cast<uint64_t>(v)), words);
      const int64_t first = 4 * v;
      const int64_t n = std::min<int64_t>(4, count - first);
      for (int64_t q = 0; q < n; ++q) out[first + q] = static_cast<U>(words[q]);
    }
  });
  return vectors;
}

// Philox for 64-bit outputs: counter + v makes elements 2v and 2v + 1.
int64_t PhiloxWide(uint32_t key0, uint32_t key1, U128 counter, int64_t count, uint64_t* out) {
  const int64_t vectors = (2 * count + 3) / 4;
  ParallelFor(vectors, kCostPerCall, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      uint32_t words[4];
      PhiloxAt(key0, key1, counter.Plus(static_cast<uint64_t>(v)), words);
      out[2 * v] = Join(words[0], words[1]);
      if (2 * v + 1 < count) out[2 * v + 1] = Join(words[2], words[3]);
    }
  });
  return vectors;
}

// Philox bits of `bytes` width (1, 2, 4 or 8) for `count` elements; returns
// the number of counters used.
int64_t PhiloxBits(uint64_t key, U128 counter, size_t bytes, int64_t count, void* out) {
  const uint32_t key0 = Low(key);
  const uint32_t key1 = High(key);
  switch (bytes) {
    case 1: return PhiloxNarrow(key0, key1, counter, count, static_cast<uint8_t*>(out));
    case 2: return PhiloxNarrow(key0, key1, counter, count, static_cast<uint16_t*>(out));
    case 4: return PhiloxNarrow(key0, key1, counter, count, static_cast<uint32_t*>(out));
    default: return PhiloxWide(key0, key1, counter, count, static_cast<uint64_t*>(out));
  }
}

}  // namespace

void ThreeFry2x32(uint32_t key0, uint32_t key1, uint32_t counter0, uint32_t counter1,
                  uint32_t out[2]) {
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t keys[3] = {key0, key1, 0x1BD11BDAu ^ key0 ^ key1};
  uint32_t x0 = counter0 + keys[0];
  uint32_t x1 = counter1 + keys[1];
  // Five groups of four rounds, each followed by a key injection.
  for (uint32_t group = 0; group < 5; ++group) {
    for (int rotation : kRotations[group % 2]) {
      x0 += x1;
      x1 = RotateLeft(x1, rotation);
      x1 ^= x0;
    }
    x0 += keys[(group + 1) % 3];
    x1 += keys[(group + 2) % 3] + group + 1;
  }
  out[0] = x0;
  out[1] = x1;
}

void Philox4x32(uint32_t key0, uint32_t key1, const uint32_t counter[4], uint32_t out[4]) {
  uint32_t x0 = counter[0], x1 = counter[1], x2 = counter[2], x3 = counter[3];
  for (int round = 0; round < 10; ++round) {
    const uint64_t product0 = static_cast<uint64_t>(x0) * 0xD2511F53u;
    const uint64_t product1 = static_cast<uint64_t>(x2) * 0xCD9E8D57u;
    const uint32_t y0 = High(product1) ^ x1 ^ key0;
    const uint32_t y2 = High(product0) ^ x3 ^ key1;
    x0 = y0;
    x1 = Low(product1);
    x2 = y2;
    x3 = Low(product0);
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
  out[0] = x0;
  out[1] = x1;
  out[2] = x2;
  out[3] = x3;
}

Status CheckRngBitGenerator(RngAlgorithm algorithm, int64_t state_size, ElementType output_type) {
  if (algorithm == RngAlgorithm::kThreeFry && state_size != 2) {
    return InvalidArgument("THREE_FRY needs a state of 2 u64 values, found ", state_size);
  }
  if (algorithm == RngAlgorithm::kPhilox && state_size != 2 && state_size != 3) {
    return InvalidArgument("PHILOX needs a state of 2 or 3 u64 values, found ", state_size);
  }
  const ElementTypeInfo& info = GetElementTypeInfo(output_type);
  const size_t bytes = info.storage_bytes;
  const bool sized = (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8) &&
                     info.bit_width == static_cast<int>(bytes * 8);
  if (!sized || output_type == ElementType::kPred || output_type == ElementType::kC64 ||
      output_type == ElementType::kToken) {
    return Unimplemented("rng_bit_generator produces integers and floats of 8, 16, 32 or 64 "
                         "bits, not ",
                         info.name);
  }
  return Status::Ok();
}

void RngBitGenerator(RngAlgorithm algorithm, const uint64_t* state, int64_t state_size,
                     ElementType output_type, std::span<const int64_t> dims, void* output,
                     uint64_t* new_state) {
  const uint64_t key = state[0];
  const size_t bytes = GetElementTypeInfo(output_type).storage_bytes;
  const int64_t count = Product(dims);
  if (algorithm == RngAlgorithm::kThreeFry) {
    const uint64_t base = state[1];
    int64_t used = count;
    switch (bytes) {
      case 1:
        used = ThreeFryNarrow(Low(key), High(key), base, dims, static_cast<uint8_t*>(output));
        break;
      case 2:
        used = ThreeFryNarrow(Low(key), High(key), base, dims, static_cast<uint16_t*>(output));
        break;
      case 4:
        used = ThreeFryNarrow(Low(key), High(key), base, dims, static_cast<uint32_t*>(output));
        break;
      default: ThreeFryWide(Low(key), High(key), base, count, static_cast<uint64_t*>(output));
    }
    new_state[0] = key;
    new_state[1] = base + static_cast<uint64_t>(used);
    return;
  }
  // Philox: a 2-word state keeps the counter's low word in state[1] and
  // uses the key as its high word; a 3-word state holds both.
  const U128 counter = state_size >= 3 ? U128{state[1], state[2]} : U128{state[1], state[0]};
  const U128 next = counter.Plus(static_cast<uint64_t>(PhiloxBits(key, counter, bytes, count,
                                                                  output)));
  new_state[0] = key;
  new_state[1] = next.low;
  if (state_size >= 3) new_state[2] = next.high;
}

namespace {

// XLA splits the shape for Box-Muller as for ThreeFry (see ThreeFryNarrow):
// the uniforms of the "concat" shape, whose split dimension is rounded up to
// even, pair element 2h with 2h + 1 of that dimension.
struct SplitShape {
  int64_t outer = 1, size = 1, inner = 1;
};

SplitShape SplitForPairs(std::span<const int64_t> dims) {
  if (dims.empty()) return {1, 1, 1};
  size_t split = dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] % 2 == 0) {
      split = i;
      break;
    }
  }
  if (split == dims.size()) {
    split = 0;
    for (size_t i = 1; i < dims.size(); ++i) {
      if (dims[i] > dims[split]) split = i;
    }
  }
  return {Product(dims.first(split)), dims[split], Product(dims.subspan(split + 1))};
}

template <typename F, typename Bits>
F BitsToUnit(Bits bits) {
  constexpr int kMantissa = std::numeric_limits<F>::digits - 1;
  constexpr int kWidth = sizeof(Bits) * 8;
  return static_cast<F>(bits >> (kWidth - kMantissa)) * std::ldexp(F(1), -kMantissa);
}

template <typename T>
void UniformFloat(T a, T b, int64_t count, const void* bits, T* out) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  const Bits* words = static_cast<const Bits*>(bits);
  for (int64_t i = 0; i < count; ++i) out[i] = BitsToUnit<T>(words[i]) * (b - a) + a;
}

template <typename T>
void UniformInteger(T a, T b, int64_t count, const void* bits, T* out) {
  using Bits = std::make_unsigned_t<T>;
  const Bits* words = static_cast<const Bits*>(bits);
  const Bits range = static_cast<Bits>(static_cast<Bits>(b) - static_cast<Bits>(a));
  for (int64_t i = 0; i < count; ++i) {
    const Bits dist = range == 0 ? words[i] : static_cast<Bits>(words[i] % range);
    const Bits half = dist >> 1;
    out[i] = static_cast<T>(static_cast<Bits>(a) + half + static_cast<Bits>(dist - half));
  }
}

template <typename T>
void Normal(T mean, T sigma, std::span<const int64_t> dims, uint64_t key, U128 counter, T* out) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  const SplitShape split = SplitForPairs(dims);
  const int64_t half = (split.size + 1) / 2;
  const int64_t uniforms = split.outer * half * 2 * split.inner;
  std::vector<Bits> bits(static_cast<size_t>(std::max<int64_t>(uniforms, 1)));
  PhiloxBits(key, counter, sizeof(Bits), uniforms, bits.data());
  for (int64_t o = 0; o < split.outer; ++o) {
    for (int64_t h = 0; h < half; ++h) {
      const Bits* first = bits.data() + (o * half + h) * 2 * split.inner;
      T* row0 = out + (o * split.size + 2 * h) * split.inner;
      T* row1 = 2 * h + 1 < split.size ? row0 + split.inner : nullptr;
      for (int64_t i = 0; i < split.inner; ++i) {
        const T u1 = std::max(BitsToUnit<T>(first[i]), static_cast<T>(1.0e-7f));
        const T v1 = static_cast<T>(2.0f * std::numbers::pi_v<float>) *
                     BitsToUnit<T>(first[split.inner + i]);
        const T radius = std::sqrt(static_cast<T>(-2.0f) * std::log(u1));
        row0[i] = mean + sigma * (std::sin(v1) * radius);
        if (row1 != nullptr) row1[i] = mean + sigma * (std::cos(v1) * radius);
      }
    }
  }
}

template <typename T>
Status Distribution(RngDistribution distribution, const void* a, const void* b,
                    std::span<const int64_t> dims, uint64_t key, U128 counter, void* output) {
  const int64_t count = Product(dims);
  T low, high;
  std::memcpy(&low, a, sizeof(T));
  std::memcpy(&high, b, sizeof(T));
  if constexpr (std::is_floating_point_v<T>) {
    if (distribution == RngDistribution::kNormal) {
      Normal<T>(low, high, dims, key, counter, static_cast<T*>(output));
      return Status::Ok();
    }
  } else if (distribution == RngDistribution::kNormal) {
    return Unimplemented("a NORMAL rng needs a float type");
  }
  std::vector<T> bits(static_cast<size_t>(std::max<int64_t>(count, 1)));
  PhiloxBits(key, counter, sizeof(T), count, bits.data());
  if constexpr (std::is_floating_point_v<T>) {
    UniformFloat<T>(low, high, count, bits.data(), static_cast<T*>(output));
  } else {
    UniformInteger<T>(low, high, count, bits.data(), static_cast<T*>(output));
  }
  return Status::Ok();
}

// f16/bf16 run in f32, as XLA's RngExpander does.
template <typename Narrow>
Status NarrowDistribution(RngDistribution distribution, const void* a, const void* b,
                          std::span<const int64_t> dims, uint64_t key, U128 counter, void* output) {
  Narrow narrow_a, narrow_b;
  std::memcpy(&narrow_a, a, sizeof(Narrow));
  std::memcpy(&narrow_b, b, sizeof(Narrow));
  const float wide_a = static_cast<float>(narrow_a);
  const float wide_b = static_cast<float>(narrow_b);
  const int64_t count = Product(dims);
  std::vector<float> wide(static_cast<size_t>(std::max<int64_t>(count, 1)));
  KILN_RETURN_IF_ERROR(Distribution<float>(distribution, &wide_a, &wide_b, dims, key, counter,
                                           wide.data()));
  Narrow* out = static_cast<Narrow*>(output);
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<Narrow>(wide[static_cast<size_t>(i)]);
  return Status::Ok();
}

}  // namespace

Status RngDistributionKernel(RngDistribution distribution, ElementType type, const void* a,
                             const void* b, std::span<const int64_t> dims, uint64_t key,
                             const uint64_t counter[2], void* output) {
  const U128 start{counter[0], counter[1]};
  switch (type) {
    case ElementType::kF16:
      return NarrowDistribution<half>(distribution, a, b, dims, key, start, output);
    case ElementType::kBF16:
      return NarrowDistribution<bfloat16>(distribution, a, b, dims, key, start, output);
    case ElementType::kF32:
      return Distribution<float>(distribution, a, b, dims, key, start, output);
    case ElementType::kF64:
      return Distribution<double>(distribution, a, b, dims, key, start, output);
    case ElementType::kS32:
      return Distribution<int32_t>(distribution, a, b, dims, key, start, output);
    case ElementType::kU32:
      return Distribution<uint32_t>(distribution, a, b, dims, key, start, output);
    case ElementType::kS64:
      return Distribution<int64_t>(distribution, a, b, dims, key, start, output);
    case ElementType::kU64:
      return Distribution<uint64_t>(distribution, a, b, dims, key, start, output);
    default:
      return Unimplemented("rng runs on f16, bf16, f32, f64 and 32/64-bit integers, not ",
                           GetElementTypeInfo(type).name);
  }
}

}  // namespace kiln::kernels
