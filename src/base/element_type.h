// Element types of arrays, named as in the StableHLO spec; shared by the IR and the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln {

enum class ElementType : uint8_t {
  kPred,
  kS1,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU1,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  kF8E5M2,
  kF8E4M3FN,
  kF8E4M3B11FNUZ,
  kF8E5M2FNUZ,
  kF8E4M3FNUZ,
  kF8E4M3,
  kF8E3M4,
  kF8E8M0FNU,
  kF4E2M1FN,
  kF6E2M3FN,
  kF6E3M2FN,
  kToken,
  // IR-only types: programs may use them, no buffer holds them.
  kTF32,
  kIndex,
};

// Static facts about an element type.
struct ElementTypeInfo {
  std::string_view name;  // StableHLO spelling, e.g. "f32", "i1", "f8E4M3FN"
  int bit_width;          // width of the value, e.g. 4 for s4
  size_t storage_bytes;   // bytes one element occupies in a Kiln buffer
};

// Sub-byte types are stored unpacked, one element per byte, as numpy and
// ml_dtypes hold them on the host; see docs/architecture.md.
const ElementTypeInfo& GetElementTypeInfo(ElementType type);

// A dense array's shape: element type and dimension sizes (major to minor).
struct Shape {
  ElementType element_type = ElementType::kF32;
  std::vector<int64_t> dims;

  int64_t NumElements() const;
  size_t ByteSize() const;  // dense storage size
  // "f32[2,3]"
  std::string ToString() const;
};

// Validates dimension sizes (non-negative, product fits in memory) for `what`.
Status ValidateDims(std::span<const int64_t> dims, size_t element_bytes, std::string_view what);

// Row-major byte strides of a dense array.
std::vector<int64_t> DenseByteStrides(std::span<const int64_t> dims, size_t element_bytes);

}  // namespace kiln
