// Helpers the reduction kernels share (reduce.cc, reduce_window.cc): the
// combine function of each (op, type), the dispatch from a runtime op and
// type to it, and the wrap of sub-byte results. Not part of the kernels'
// interface.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>

#include "base/element_type.h"
#include "base/status.h"
#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "kernels/types.h"

namespace kiln::kernels::reduce_internal {

// Integer element types (pred excluded).
template <typename T>
constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Whether `op` is defined on the C++ type T.
template <typename T>
constexpr bool Defined(ReduceOp op) {
  if constexpr (std::is_same_v<T, bool> || kIsInteger<T>) return true;
  return op == ReduceOp::kAdd || op == ReduceOp::kMultiply || op == ReduceOp::kMaximum ||
         op == ReduceOp::kMinimum;
}

// a op b in T, as the elementwise kernels compute it.
template <ReduceOp kOp, typename T>
inline T Apply(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (kOp == ReduceOp::kAdd || kOp == ReduceOp::kMaximum || kOp == ReduceOp::kOr) {
      return a || b;
    } else if constexpr (kOp == ReduceOp::kXor) {
      return a != b;
    } else {
      return a && b;
    }
  } else if constexpr (kIsInteger<T>) {
    // Wrapping arithmetic in unsigned types (no undefined overflow); products
    // of narrow types are computed in unsigned int to avoid promotion to int.
    using U = std::make_unsigned_t<T>;
    using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
    if constexpr (kOp == ReduceOp::kAdd) {
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    }
    if constexpr (kOp == ReduceOp::kMultiply) {
      return static_cast<T>(static_cast<Wide>(static_cast<U>(a)) *
                            static_cast<Wide>(static_cast<U>(b)));
    }
    if constexpr (kOp == ReduceOp::kMaximum) return a >= b ? a : b;
    if constexpr (kOp == ReduceOp::kMinimum) return a <= b ? a : b;
    if constexpr (kOp == ReduceOp::kAnd) return static_cast<T>(a & b);
    if constexpr (kOp == ReduceOp::kOr) return static_cast<T>(a | b);
    if constexpr (kOp == ReduceOp::kXor) return static_cast<T>(a ^ b);
  } else if constexpr (kIsComplex<T>) {
    if constexpr (kOp == ReduceOp::kAdd) return a + b;
    if constexpr (kOp == ReduceOp::kMultiply) return ComplexMultiply(a, b);
    // Lexicographic (real, then imaginary), as the elementwise max/min.
    const bool a_first = a.real() > b.real() || (a.real() == b.real() && a.imag() >= b.imag());
    const bool a_last = a.real() < b.real() || (a.real() == b.real() && a.imag() <= b.imag());
    if constexpr (kOp == ReduceOp::kMaximum) return a_first ? a : b;
    if constexpr (kOp == ReduceOp::kMinimum) return a_last ? a : b;
  } else {
    using C = ComputeType<T>;
    const C x = static_cast<C>(a);
    const C y = static_cast<C>(b);
    if constexpr (kOp == ReduceOp::kAdd) return static_cast<T>(x + y);
    if constexpr (kOp == ReduceOp::kMultiply) return static_cast<T>(x * y);
    // NaN propagates; otherwise the first operand wins ties.
    if constexpr (kOp == ReduceOp::kMaximum) {
      return std::isnan(x) ? a : (std::isnan(y) ? b : (x >= y ? a : b));
    }
    if constexpr (kOp == ReduceOp::kMinimum) {
      return std::isnan(x) ? a : (std::isnan(y) ? b : (x <= y ? a : b));
    }
  }
  return a;  // ops Defined<T> rejects; never reached
}

// Whether the grouping of a fold changes its result: float sums and
// products round. Those fold as a tree (pairwise) so that the error grows
// with log n rather than n, as XLA's CPU backend (whose tree reduction
// rewriter folds in blocks) stays accurate on long reductions.
template <ReduceOp kOp, typename T>
constexpr bool kTreeFold = (kOp == ReduceOp::kAdd || kOp == ReduceOp::kMultiply) &&
                           (kIsFloat<T> || kIsComplex<T>);

// acc[i] = acc[i] op x[i] for i < n.
template <ReduceOp kOp, typename T>
inline void FoldInto(T* acc, const T* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = Apply<kOp>(acc[i], x[i]);
}

// Sub-byte results computed in 8 bits wrap to their width (add, multiply
// and xor commute with the wrap; the rest stay in range).
inline Status WrapSubByte(ElementType type, void* data, int64_t count) {
  const ElementType storage = SubByteStorageType(type);
  if (storage == type || count <= 0) return Status::Ok();
  return Convert(storage, data, type, data, count);
}

// Calls f.template operator()<kOp, T>() for the runtime op and type.
template <typename F>
Status DispatchReduce(ReduceOp op, ElementType type, F&& f) {
  if (!ReduceOpAccepts(op, type)) {
    constexpr const char* kNames[] = {"add", "multiply", "maximum", "minimum", "and", "or", "xor"};
    return InvalidArgument("a reduction by ", kNames[static_cast<size_t>(op)],
                           " does not accept element type ", GetElementTypeInfo(type).name);
  }
  return DispatchType(SubByteStorageType(type), [&]<typename T>() {
    if constexpr (Defined<T>(ReduceOp::kAnd)) {
      switch (op) {
        case ReduceOp::kAnd: f.template operator()<ReduceOp::kAnd, T>(); return;
        case ReduceOp::kOr: f.template operator()<ReduceOp::kOr, T>(); return;
        case ReduceOp::kXor: f.template operator()<ReduceOp::kXor, T>(); return;
        default: break;
      }
    }
    switch (op) {
      case ReduceOp::kAdd: f.template operator()<ReduceOp::kAdd, T>(); return;
      case ReduceOp::kMultiply: f.template operator()<ReduceOp::kMultiply, T>(); return;
      case ReduceOp::kMaximum: f.template operator()<ReduceOp::kMaximum, T>(); return;
      case ReduceOp::kMinimum: f.template operator()<ReduceOp::kMinimum, T>(); return;
      default: return;
    }
  });
}

// The number of elements of an array of shape `dims`.
inline int64_t Product(std::span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

}  // namespace kiln::kernels::reduce_internal
