// Elementwise kernels other than the unary and binary arithmetic ops
// (elementwise_unary.cc, elementwise_binary.cc): compare, select, clamp,
// convert, iota, complex, reduce_precision and the sub-byte storage forms.
// Each is a lambda over the compute type run by the shared map loops
// (elementwise_internal.h), so every element type shares the loop, and the
// loop body is simple enough to vectorize.
#include "kernels/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/elementwise_internal.h"
#include "kernels/isa_clones.h"
#include "kernels/minifloat.h"
#include "kernels/parallel.h"
#include "kernels/scratch.h"
#include "kernels/semantics.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

using elementwise_internal::BadType;
using elementwise_internal::Decode;
using elementwise_internal::Encode;
using elementwise_internal::FloatMax;
using elementwise_internal::FloatMin;
using elementwise_internal::Map1;
using elementwise_internal::Map2;
using elementwise_internal::RunLoop2;
using elementwise_internal::WrapToWidth;

// The total order of floats as integers: flip the magnitude bits of
// negative values so integer order matches.
template <typename C>
auto TotalOrderKey(C x) {
  using Bits = std::conditional_t<sizeof(C) == 8, int64_t, int32_t>;
  Bits bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits < 0 ? static_cast<Bits>(bits ^ std::numeric_limits<Bits>::max()) : bits;
}

template <CompareDirection kDirection, typename V>
bool Decide(const V& a, const V& b) {
  if constexpr (kDirection == CompareDirection::kEq) return a == b;
  if constexpr (kDirection == CompareDirection::kNe) return a != b;
  if constexpr (kDirection == CompareDirection::kGe) return a >= b;
  if constexpr (kDirection == CompareDirection::kGt) return a > b;
  if constexpr (kDirection == CompareDirection::kLe) return a <= b;
  if constexpr (kDirection == CompareDirection::kLt) return a < b;
}

// Calls f.template operator()<direction>(): the direction is chosen once per
// call, not per element, so the loops inside vectorize (a switch per element
// kept an s32 compare at 1.3 ns per element).
template <typename F>
void WithDirection(CompareDirection direction, F&& f) {
  switch (direction) {
    case CompareDirection::kEq: return f.template operator()<CompareDirection::kEq>();
    case CompareDirection::kNe: return f.template operator()<CompareDirection::kNe>();
    case CompareDirection::kGe: return f.template operator()<CompareDirection::kGe>();
    case CompareDirection::kGt: return f.template operator()<CompareDirection::kGt>();
    case CompareDirection::kLe: return f.template operator()<CompareDirection::kLe>();
    case CompareDirection::kLt: return f.template operator()<CompareDirection::kLt>();
  }
}

}  // namespace

// Compare's loops for the common element types, one plain function per
// direction and type built for AVX2 and AVX-512 too (KILN_ISA_CLONES): the
// templates compile for baseline x86-64, and integer compares (jnp's index
// normalization and bounds masks before every gather) ran on SSE2.
#define KILN_COMPARE_LOOP(name, T, op)                                                     \
  KILN_ISA_CLONES void name(const T* a, const T* b, bool* y, int64_t begin, int64_t end) { \
    for (int64_t i = begin; i < end; ++i) y[i] = a[i] op b[i];                             \
  }
#define KILN_COMPARE_LOOPS(T)             \
  KILN_COMPARE_LOOP(CompareEqLoop, T, ==) \
  KILN_COMPARE_LOOP(CompareNeLoop, T, !=) \
  KILN_COMPARE_LOOP(CompareLtLoop, T, <)  \
  KILN_COMPARE_LOOP(CompareLeLoop, T, <=) \
  KILN_COMPARE_LOOP(CompareGtLoop, T, >)  \
  KILN_COMPARE_LOOP(CompareGeLoop, T, >=)
namespace {
KILN_COMPARE_LOOPS(int32_t)
KILN_COMPARE_LOOPS(uint32_t)
KILN_COMPARE_LOOPS(int64_t)
KILN_COMPARE_LOOPS(uint64_t)
KILN_COMPARE_LOOPS(float)
KILN_COMPARE_LOOPS(double)

// Whether the compare ran as one of the loops above (for floats, the
// partial order: IEEE comparisons, false with NaN but for NE).
template <typename T>
bool CompareLoop(CompareDirection direction, const void* lhs, const void* rhs, bool* out,
                 int64_t count) {
  if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t> ||
                std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> ||
                std::is_same_v<T, float> || std::is_same_v<T, double>) {
    void (*loop)(const T*, const T*, bool*, int64_t, int64_t) = nullptr;
    switch (direction) {
      case CompareDirection::kEq: loop = CompareEqLoop; break;
      case CompareDirection::kNe: loop = CompareNeLoop; break;
      case CompareDirection::kLt: loop = CompareLtLoop; break;
      case CompareDirection::kLe: loop = CompareLeLoop; break;
      case CompareDirection::kGt: loop = CompareGtLoop; break;
      case CompareDirection::kGe: loop = CompareGeLoop; break;
    }
    if (loop == nullptr) return false;
    RunLoop2(loop, lhs, rhs, out, count, 1);
    return true;
  }
  return false;
}
}  // namespace
#undef KILN_COMPARE_LOOPS
#undef KILN_COMPARE_LOOP

Status Compare(CompareDirection direction, CompareKind kind, ElementType type, const void* lhs,
               const void* rhs, bool* out, int64_t count) {
  if (IsMinifloat(type)) {
    ScratchArray<float> a(static_cast<size_t>(count));
    Decode(type, lhs, count, a.data());
    ScratchArray<float> b(static_cast<size_t>(count));
    Decode(type, rhs, count, b.data());
    return Compare(direction, kind, ElementType::kF32, a.data(), b.data(), out, count);
  }
  Status status = Status::Ok();
  KILN_RETURN_IF_ERROR(DispatchType(SubByteStorageType(type), [&]<typename T>() {
    if constexpr (kIsComplex<T>) {
      if (direction != CompareDirection::kEq && direction != CompareDirection::kNe) {
        status = InvalidArgument("complex numbers compare only for EQ and NE");
        return;
      }
      const bool equal = direction == CompareDirection::kEq;
      Map2<T, bool>(lhs, rhs, out, count, 2, [equal](T x, T y) { return (x == y) == equal; });
    } else if constexpr (kIsFloat<T>) {
      using C = ComputeType<T>;
      if (kind != CompareKind::kTotalOrder && CompareLoop<T>(direction, lhs, rhs, out, count)) {
        return;
      }
      WithDirection(direction, [&]<CompareDirection kDirection>() {
        if (kind == CompareKind::kTotalOrder) {
          Map2<T, bool>(lhs, rhs, out, count, 2, [](T x, T y) {
            return Decide<kDirection>(TotalOrderKey(static_cast<C>(x)),
                                      TotalOrderKey(static_cast<C>(y)));
          });
        } else {
          Map2<T, bool>(lhs, rhs, out, count, 1, [](T x, T y) {
            return Decide<kDirection>(static_cast<C>(x), static_cast<C>(y));
          });
        }
      });
    } else {
      if (CompareLoop<T>(direction, lhs, rhs, out, count)) return;
      WithDirection(direction, [&]<CompareDirection kDirection>() {
        Map2<T, bool>(lhs, rhs, out, count, 1, [](T x, T y) { return Decide<kDirection>(x, y); });
      });
    }
  }));
  return status;
}

// Select's loop per element width: the predicate's byte (any nonzero byte
// is true) becomes a mask of the element's width, with no branch, so that
// the loop vectorizes (`pred[i] ? a[i] : b[i]` stayed a branch per element:
// a masked select over 512K floats took 300 us, 2.3 cycles per element),
// in the widest registers the CPU has (with SSE2 alone a fused take's
// select over 1M floats took 120 us of its 225).
#define KILN_SELECT_LOOP(T)                                                                      \
  KILN_ISA_CLONES void SelectLoop(const uint8_t* p, const T* a, const T* b, T* y, int64_t begin, \
                                  int64_t end) {                                                 \
    for (int64_t i = begin; i < end; ++i) {                                                      \
      const T mask = static_cast<T>(T{0} - static_cast<T>(p[i] != 0));                           \
      y[i] = static_cast<T>((a[i] & mask) | (b[i] & static_cast<T>(~mask)));                     \
    }                                                                                            \
  }
namespace {
KILN_SELECT_LOOP(uint8_t)
KILN_SELECT_LOOP(uint16_t)
KILN_SELECT_LOOP(uint32_t)
KILN_SELECT_LOOP(uint64_t)
}  // namespace
#undef KILN_SELECT_LOOP

namespace {

// Select over [begin, end) that copies the chunks of 64 elements whose
// predicate bytes are all true or all false with one move per run of such
// chunks and runs SelectLoop over the rest. Masks broadcast along rows
// (jnp.take's fill mode, padding, causal masks) are made of such runs; a
// fused take of 4096 rows of 256 floats spent a quarter of its time in
// SelectLoop. Two mixed chunks in a row (a random mask: dropout) let the
// next eight go to SelectLoop unchecked, so such masks pay for a check
// per ten chunks at most.
template <typename T>
void SelectRuns(const uint8_t* p, const T* a, const T* b, T* y, int64_t begin, int64_t end) {
  constexpr int64_t kChunk = 64;
  constexpr uint64_t kOnes = 0x0101010101010101u, kHigh = 0x8080808080808080u;
  int64_t pending = begin;  // the start of elements not yet written
  int64_t run = -1;         // the start of the current uniform run, or -1
  bool run_value = false;
  int mixed = 0;
  auto flush_run = [&](int64_t at) {
    if (run < 0) return;
    std::memmove(y + run, (run_value ? a : b) + run, static_cast<size_t>(at - run) * sizeof(T));
    run = -1;
    pending = at;
  };
  int64_t i = begin;
  while (i + kChunk <= end) {
    uint64_t any = 0;
    bool all = true;
    for (int w = 0; w < kChunk / 8; ++w) {
      uint64_t word;
      std::memcpy(&word, p + i + 8 * w, 8);
      any |= word;
      all = all && ((word - kOnes) & ~word & kHigh) == 0;  // no zero byte
    }
    if (any == 0 || all) {
      const bool value = any != 0;
      if (run >= 0 && value != run_value) flush_run(i);
      if (run < 0) {
        if (pending < i) SelectLoop(p, a, b, y, pending, i);
        run = i;
        run_value = value;
      }
      mixed = 0;
      i += kChunk;
      continue;
    }
    flush_run(i);
    i += (++mixed >= 2 ? 9 : 1) * kChunk;
    if (mixed >= 2) mixed = 0;
  }
  i = std::min(i, end);
  flush_run(i);
  if (pending < end) SelectLoop(p, a, b, y, pending, end);
}

}  // namespace

Status Select(ElementType type, const bool* pred, bool pred_scalar, const void* on_true,
              const void* on_false, void* out, int64_t count) {
  const size_t bytes = GetElementTypeInfo(type).storage_bytes;
  if (pred_scalar) {
    std::memcpy(out, *pred ? on_true : on_false, bytes * static_cast<size_t>(count));
    return Status::Ok();
  }
  const auto* p = reinterpret_cast<const uint8_t*>(pred);
  auto select = [&]<typename T>() {
    const T* a = static_cast<const T*>(on_true);
    const T* b = static_cast<const T*>(on_false);
    T* y = static_cast<T*>(out);
    ParallelFor(count, 1, [a, b, y, p](int64_t begin, int64_t end) {  // by value: see Map1
      SelectRuns(p, a, b, y, begin, end);
    });
  };
  auto select_wide = [&]<typename T>() {
    const T* a = static_cast<const T*>(on_true);
    const T* b = static_cast<const T*>(on_false);
    T* y = static_cast<T*>(out);
    ParallelFor(count, 1, [a, b, y, p](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = p[i] != 0 ? a[i] : b[i];
    });
  };
  switch (bytes) {
    case 1: select.operator()<uint8_t>(); break;
    case 2: select.operator()<uint16_t>(); break;
    case 4: select.operator()<uint32_t>(); break;
    case 8: select.operator()<uint64_t>(); break;
    case 16: select_wide.operator()<complex128>(); break;
    default: return InvalidArgument("select of ", bytes, "-byte elements");
  }
  return Status::Ok();
}

Status Clamp(ElementType type, const void* min, bool min_scalar, const void* operand,
             const void* max, bool max_scalar, void* out, int64_t count) {
  Status status = Status::Ok();
  KILN_RETURN_IF_ERROR(DispatchType(SubByteStorageType(type), [&]<typename T>() {
    if constexpr (kIsComplex<T> || std::is_same_v<T, bool>) {
      status = InvalidArgument("clamp does not accept element type ",
                               GetElementTypeInfo(type).name);
    } else {
      using C = ComputeType<T>;
      const T* lo = static_cast<const T*>(min);
      const T* x = static_cast<const T*>(operand);
      const T* hi = static_cast<const T*>(max);
      T* y = static_cast<T*>(out);
      ParallelFor(count, 2, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const C low = static_cast<C>(lo[min_scalar ? 0 : i]);
          const C high = static_cast<C>(hi[max_scalar ? 0 : i]);
          C value = static_cast<C>(x[i]);
          if constexpr (kIsFloat<T>) {
            value = FloatMin(FloatMax(value, low), high);
          } else {
            value = std::min(std::max(value, low), high);
          }
          y[i] = static_cast<T>(value);
        }
      });
    }
  }));
  return status;
}

namespace {

// One element converted as XLA does.
template <typename From, typename To>
To ConvertOne(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    // The spec (and its interpreter) converts complex to pred by the real part.
    if constexpr (kIsComplex<From>) return x.real() != 0;
    else
      return static_cast<ComputeType<From>>(x) != ComputeType<From>(0);
  } else if constexpr (kIsComplex<To>) {
    if constexpr (kIsComplex<From>) return To(x);
    else
      return To(static_cast<typename To::value_type>(static_cast<ComputeType<From>>(x)), 0);
  } else if constexpr (kIsComplex<From>) {
    return ConvertOne<typename From::value_type, To>(x.real());
  } else if constexpr (kIsFloat<From> && !kIsFloat<To>) {
    // Float -> integer saturates; NaN -> 0.
    const double value = static_cast<double>(static_cast<ComputeType<From>>(x));
    if (std::isnan(value)) return To(0);
    if (value <= static_cast<double>(std::numeric_limits<To>::min())) {
      return std::numeric_limits<To>::min();
    }
    if (value >= static_cast<double>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
    return static_cast<To>(value);
  } else if constexpr (kIsLowFloat<To> || kIsLowFloat<From>) {
    return static_cast<To>(static_cast<ComputeType<From>>(x));
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace

Status Convert(ElementType from, const void* in, ElementType to, void* out, int64_t count) {
  if (from == to) {
    std::memcpy(out, in, GetElementTypeInfo(from).storage_bytes * static_cast<size_t>(count));
    return Status::Ok();
  }
  if (IsMinifloat(from)) {
    ScratchArray<float> x(static_cast<size_t>(count));
    Decode(from, in, count, x.data());
    return Convert(ElementType::kF32, x.data(), to, out, count);
  }
  if (IsMinifloat(to)) {
    // Through f32. From f64 this rounds twice, which differs from one direct
    // rounding only for values within 2^-24 (relative) of a minifloat tie.
    ScratchArray<float> x(static_cast<size_t>(count));
    KILN_RETURN_IF_ERROR(Convert(from, in, ElementType::kF32, x.data(), count));
    Encode(to, x.data(), out, count);
    return Status::Ok();
  }
  Status inner = Status::Ok();
  KILN_RETURN_IF_ERROR(DispatchType(SubByteStorageType(from), [&]<typename From>() {
    inner = DispatchType(SubByteStorageType(to), [&]<typename To>() {
      Map1<From, To>(in, out, count, 1, [](From x) { return ConvertOne<From, To>(x); });
    });
  }));
  KILN_RETURN_IF_ERROR(inner);
  if (SubByteStorageType(to) != to) WrapToWidth(to, out, count);
  return Status::Ok();
}

Status Iota(ElementType type, int64_t size, int64_t inner, void* out, int64_t count) {
  if (count <= 0 || size <= 0 || inner <= 0) return Status::Ok();
  const size_t bytes = GetElementTypeInfo(type).storage_bytes;
  auto* o = static_cast<uint8_t*>(out);
  const auto at = [&](int64_t i) { return o + static_cast<size_t>(i) * bytes; };
  const auto copy = [&](int64_t to, int64_t from, int64_t n) {
    std::memcpy(at(to), at(from), static_cast<size_t>(n) * bytes);
  };
  // The indices 0 .. size - 1, converted a stack's chunk at a time, into
  // out[0, size).
  constexpr int64_t kChunk = 256;
  int64_t chunk[kChunk];
  for (int64_t start = 0; start < size; start += kChunk) {
    const int64_t n = std::min(kChunk, size - start);
    for (int64_t j = 0; j < n; ++j) chunk[j] = start + j;
    KILN_RETURN_IF_ERROR(Convert(ElementType::kS64, chunk, type, at(start), n));
  }
  // Index i becomes a run of `inner` copies at i * inner, the last index
  // first (a run only covers positions at or after its index's own). Each
  // run grows by doubling.
  if (inner > 1) {
    for (int64_t i = size; i-- > 0;) {
      const int64_t run = i * inner;
      if (run != i) copy(run, i, 1);
      for (int64_t filled = 1; filled < inner; filled *= 2) {
        copy(run + filled, run, std::min(filled, inner - filled));
      }
    }
  }
  // The first period repeated over the outer dimensions, doubling.
  for (int64_t done = size * inner; done < count;) {
    const int64_t n = std::min(done, count - done);
    copy(done, 0, n);
    done += n;
  }
  return Status::Ok();
}

Status MakeComplex(ElementType type, const void* re, const void* im, void* out, int64_t count) {
  if (type == ElementType::kF32) {
    Map2<float, complex64>(re, im, out, count, 1, [](float a, float b) { return complex64(a, b); });
  } else if (type == ElementType::kF64) {
    Map2<double, complex128>(re, im, out, count, 1,
                             [](double a, double b) { return complex128(a, b); });
  } else {
    return BadType("complex", type);
  }
  return Status::Ok();
}

namespace {

// reduce_precision on the bits of one IEEE float with `kMantissa` and
// `kExponent` bits (f32: 23, 8; f64: 52, 11).
template <typename Float, typename Bits, int kMantissa, int kExponent>
Float ReduceBits(Float x, int exponent_bits, int mantissa_bits) {
  if (std::isnan(x)) {
    // No mantissa bits leave no NaN: the spec's result is infinity (XLA's
    // CPU backend keeps the NaN, which Kiln follows unless asked for the
    // spec's semantics, semantics.h).
    if (mantissa_bits == 0 && SpecSemantics()) {
      return std::copysign(std::numeric_limits<Float>::infinity(), x);
    }
    return x;
  }
  Bits bits;
  std::memcpy(&bits, &x, sizeof(bits));
  if (mantissa_bits < kMantissa) {
    const Bits last_bit_mask = Bits(1) << (kMantissa - mantissa_bits);
    const Bits base_bias = (last_bit_mask >> 1) - 1;
    const Bits last_bit = (bits & last_bit_mask) >> (kMantissa - mantissa_bits);
    const Bits truncation_mask = ~(last_bit_mask - 1);
    bits = (bits + last_bit + base_bias) & truncation_mask;
  }
  if (exponent_bits < kExponent) {
    const Bits sign_mask = Bits(1) << (sizeof(Bits) * 8 - 1);
    const Bits exponent_mask = ((Bits(1) << kExponent) - 1) << kMantissa;
    const Bits bias = (Bits(1) << (kExponent - 1)) - 1;
    const Bits reduced_bias = (Bits(1) << (exponent_bits - 1)) - 1;
    const Bits max_exponent = (bias + reduced_bias) << kMantissa;
    const Bits min_exponent = (bias - reduced_bias) << kMantissa;
    const Bits exponent = bits & exponent_mask;
    const Bits signed_zero = bits & sign_mask;
    if (exponent > max_exponent) {
      bits = signed_zero | exponent_mask;
    } else if (exponent <= min_exponent) {
      bits = signed_zero;
    }
  }
  Float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

}  // namespace

Status ReducePrecision(ElementType type, const void* in, void* out, int64_t count,
                       int exponent_bits, int mantissa_bits) {
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return InvalidArgument("reduce_precision needs exponent_bits >= 1 and mantissa_bits >= 0, "
                           "found ",
                           exponent_bits, " and ", mantissa_bits);
  }
  Status status = Status::Ok();
  KILN_RETURN_IF_ERROR(DispatchType(type, [&]<typename T>() {
    if constexpr (std::is_same_v<T, double>) {
      Map1<T, T>(in, out, count, 4, [=](T x) {
        return ReduceBits<double, uint64_t, 52, 11>(x, exponent_bits, mantissa_bits);
      });
    } else if constexpr (kIsFloat<T>) {
      Map1<T, T>(in, out, count, 4, [=](T x) {
        return static_cast<T>(ReduceBits<float, uint32_t, 23, 8>(static_cast<float>(x),
                                                                 exponent_bits, mantissa_bits));
      });
    } else {
      status = BadType("reduce_precision", type);
    }
  }));
  return status;
}

void SubByteToComputeForm(ElementType type, const void* in, void* out, int64_t n) {
  if (in != out) std::memmove(out, in, static_cast<size_t>(n));
  WrapToWidth(type, out, n);
}

void SubByteToHostForm(ElementType type, const void* in, void* out, int64_t n) {
  const auto mask = static_cast<uint8_t>((1u << GetElementTypeInfo(type).bit_width) - 1);
  const auto* from = static_cast<const uint8_t*>(in);
  auto* to = static_cast<uint8_t*>(out);
  for (int64_t i = 0; i < n; ++i) to[i] = from[i] & mask;
}

}  // namespace kiln::kernels
