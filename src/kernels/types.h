// C++ types of Kiln's element types, and dispatch from an ElementType to a
// template instantiated for its C++ type. Every kernel family uses these, so
// a new element type is added here once.
#pragma once

#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <Eigen/Core>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;
using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

template <typename T>
inline constexpr bool kIsComplex = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;
template <typename T>
inline constexpr bool kIsLowFloat = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
template <typename T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T> || kIsLowFloat<T>;

// The C++ type a kernel computes a storage type in: f16/bf16 in f32 (as XLA's
// CPU backend does), everything else in itself.
template <typename T>
using ComputeType = std::conditional_t<kIsLowFloat<T>, float, T>;

// The byte type sub-byte integers are stored and computed in (s1, s2, s4 ->
// s8; u1, u2, u4 -> u8); other types unchanged.
inline ElementType SubByteStorageType(ElementType type) {
  switch (type) {
    case ElementType::kS1:
    case ElementType::kS2:
    case ElementType::kS4: return ElementType::kS8;
    case ElementType::kU1:
    case ElementType::kU2:
    case ElementType::kU4: return ElementType::kU8;
    default: return type;
  }
}

// Calls `f.template operator()<T>()` with T the C++ type of `type`, for the
// types kernels compute in natively: pred (bool), s8..s64, u8..u64, f16,
// bf16, f32, f64, c64, c128. The sub-byte integers (stored one per byte) map
// to their byte type and f8/f6/f4 types are not dispatched: the compiler
// converts them (docs/execution.md). Returns UNIMPLEMENTED otherwise.
template <typename F>
Status DispatchType(ElementType type, F&& f) {
  switch (type) {
    case ElementType::kPred: f.template operator()<bool>(); return Status::Ok();
    case ElementType::kS8: f.template operator()<int8_t>(); return Status::Ok();
    case ElementType::kS16: f.template operator()<int16_t>(); return Status::Ok();
    case ElementType::kS32: f.template operator()<int32_t>(); return Status::Ok();
    case ElementType::kS64: f.template operator()<int64_t>(); return Status::Ok();
    case ElementType::kU8: f.template operator()<uint8_t>(); return Status::Ok();
    case ElementType::kU16: f.template operator()<uint16_t>(); return Status::Ok();
    case ElementType::kU32: f.template operator()<uint32_t>(); return Status::Ok();
    case ElementType::kU64: f.template operator()<uint64_t>(); return Status::Ok();
    case ElementType::kF16: f.template operator()<half>(); return Status::Ok();
    case ElementType::kBF16: f.template operator()<bfloat16>(); return Status::Ok();
    case ElementType::kF32: f.template operator()<float>(); return Status::Ok();
    case ElementType::kF64: f.template operator()<double>(); return Status::Ok();
    case ElementType::kC64: f.template operator()<complex64>(); return Status::Ok();
    case ElementType::kC128: f.template operator()<complex128>(); return Status::Ok();
    default:
      return Unimplemented("Kiln's kernels do not compute in element type ",
                           GetElementTypeInfo(type).name);
  }
}

// Calls `f.template operator()<T>()` for the four types LAPACK has and the
// linear-algebra kernels run in (f32, f64, c64, c128); UNIMPLEMENTED naming
// `what` for any other.
template <typename F>
Status DispatchLinalgType(ElementType type, std::string_view what, F&& f) {
  switch (type) {
    case ElementType::kF32: f.template operator()<float>(); return Status::Ok();
    case ElementType::kF64: f.template operator()<double>(); return Status::Ok();
    case ElementType::kC64: f.template operator()<complex64>(); return Status::Ok();
    case ElementType::kC128: f.template operator()<complex128>(); return Status::Ok();
    default:
      return Unimplemented(what, " runs in f32, f64, c64 and c128; found ",
                           GetElementTypeInfo(type).name);
  }
}

}  // namespace kiln::kernels
