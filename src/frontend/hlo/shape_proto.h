// XLA ShapeProtos (xla/xla_data.proto) that Kiln hands to frameworks:
// PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace returns one.
#pragma once

#include <cstdint>
#include <vector>

#include "base/element_type.h"
#include "frontend/hlo/hlo_proto.h"

namespace kiln::frontend::hlo {

// XLA's PrimitiveType of an array element type (kInvalid for the IR-only
// types, which no array holds).
PrimitiveType ToPrimitiveType(ElementType type);

// A serialized ShapeProto of the dense array `shape` in Kiln's layout:
// element_type, dimensions, is_dynamic_dimension (all false) and a
// LayoutProto whose minor_to_major is row-major (rank-1 down to 0).
std::vector<uint8_t> SerializeArrayShape(const kiln::Shape& shape);

}  // namespace kiln::frontend::hlo
