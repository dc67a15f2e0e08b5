// Helpers the elementwise kernels share (elementwise.cc,
// elementwise_unary.cc, elementwise_binary.cc): the map loops every op runs
// in, wrapping integer arithmetic, NaN-propagating max/min, and the storage
// of sub-byte integers and minifloats. Not part of the kernels' interface.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "base/element_type.h"
#include "base/status.h"
#include "kernels/minifloat.h"
#include "kernels/parallel.h"

namespace kiln::kernels::elementwise_internal {

// out[i] = f(in[i]), split across threads. The loops capture the arrays by
// value: captured by reference they sit in the closure, and a store through
// a one-byte Out (which may alias anything) made the compiler reload them
// for every element and never vectorize.
template <typename In, typename Out, typename F>
void Map1(const void* in, void* out, int64_t count, int64_t cost, F f) {
  const In* a = static_cast<const In*>(in);
  Out* y = static_cast<Out*>(out);
  ParallelFor(count, cost, [a, y, &f](int64_t begin, int64_t end) {
    const F g = f;
    for (int64_t i = begin; i < end; ++i) y[i] = g(a[i]);
  });
}

// out[i] = f(lhs[i], rhs[i]), split across threads as Map1.
template <typename In, typename Out, typename F>
void Map2(const void* lhs, const void* rhs, void* out, int64_t count, int64_t cost, F f) {
  const In* a = static_cast<const In*>(lhs);
  const In* b = static_cast<const In*>(rhs);
  Out* y = static_cast<Out*>(out);
  ParallelFor(count, cost, [a, b, y, &f](int64_t begin, int64_t end) {
    const F g = f;
    for (int64_t i = begin; i < end; ++i) y[i] = g(a[i], b[i]);
  });
}

// out[i] = op(lhs[i], rhs[i]) through `loop`, a plain function over a
// range of elements (the loops built per ISA, kernels/isa_clones.h), split
// across threads as Map2.
template <typename In, typename Out>
void RunLoop2(void (*loop)(const In*, const In*, Out*, int64_t, int64_t), const void* lhs,
              const void* rhs, void* out, int64_t count, int64_t cost) {
  const In* a = static_cast<const In*>(lhs);
  const In* b = static_cast<const In*>(rhs);
  Out* y = static_cast<Out*>(out);
  ParallelFor(count, cost,
              [loop, a, b, y](int64_t begin, int64_t end) { loop(a, b, y, begin, end); });
}

// The unsigned type of T's width, in which integer arithmetic wraps.
template <typename T>
using Unsigned = std::make_unsigned_t<T>;

// Integer arithmetic wraps (two's complement), as on XLA; done in unsigned
// arithmetic so C++ has no undefined behaviour.
template <typename T>
T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b));
}
template <typename T>
T WrapSub(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b));
}
template <typename T>
T WrapMul(T a, T b) {
  using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, Unsigned<T>>;
  return static_cast<T>(static_cast<U>(static_cast<Unsigned<T>>(a)) *
                        static_cast<U>(static_cast<Unsigned<T>>(b)));
}

// max/min propagate NaN; otherwise the first operand wins ties (so
// max(-0, +0) is -0, as XLA's CPU backend gives).
template <typename C>
C FloatMax(C a, C b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a >= b ? a : b;
}
template <typename C>
C FloatMin(C a, C b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a <= b ? a : b;
}

// The error for an op applied to an element type it does not accept; the
// verifier rejects these programs, so only hand-built plans reach it.
inline Status BadType(const char* op, ElementType type) {
  return InvalidArgument("elementwise ", op, " does not accept element type ",
                         GetElementTypeInfo(type).name);
}

// Sub-byte integers are stored one per byte; results wrap to their width.
inline void WrapToWidth(ElementType type, void* data, int64_t n) {
  const int bits = GetElementTypeInfo(type).bit_width;
  uint8_t* bytes = static_cast<uint8_t*>(data);
  const bool is_signed = type == ElementType::kS1 || type == ElementType::kS2 ||
                         type == ElementType::kS4;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t value = bytes[i] & mask;
    if (is_signed && (value >> (bits - 1)) != 0) value |= static_cast<uint8_t>(~mask);
    bytes[i] = value;
  }
}

// Minifloat arrays decoded to f32 and encoded back: those types compute in f32.
// (Into kernel scratch memory: a steady-state run allocates nothing.)
inline void Decode(ElementType type, const void* data, int64_t count, float* values) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (int64_t i = 0; i < count; ++i) values[i] = MinifloatToFloat(type, bytes[i]);
}
inline void Encode(ElementType type, const float* values, void* data, int64_t count) {
  auto* bytes = static_cast<uint8_t*>(data);
  for (int64_t i = 0; i < count; ++i) bytes[i] = FloatToMinifloat(type, values[i]);
}

}  // namespace kiln::kernels::elementwise_internal
