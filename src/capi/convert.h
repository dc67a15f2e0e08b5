// Translations between PJRT C types and Kiln runtime types.
#pragma once

#include <span>
#include <vector>

#include "base/element_type.h"
#include "capi/error.h"
#include "runtime/attribute.h"
#include "runtime/client.h"

namespace kiln::capi {

StatusOr<ElementType> FromPjrtType(PJRT_Buffer_Type type);
PJRT_Buffer_Type ToPjrtType(ElementType type);

// A shape from C arrays, with the type and dims validated.
StatusOr<Shape> MakeShape(PJRT_Buffer_Type type, const int64_t* dims, size_t num_dims);

StatusOr<runtime::HostBufferSemantics> FromPjrtSemantics(PJRT_HostBufferSemantics semantics);

// Create options and the like; every value type PJRT defines is accepted here,
// the runtime decides which it wants.
StatusOr<std::vector<runtime::Attribute>> FromNamedValues(const PJRT_NamedValue* values,
                                                          size_t count);

// Byte strides of a host array laid out as `layout` (null: dense row-major).
StatusOr<std::vector<int64_t>> HostLayoutStrides(const PJRT_Buffer_MemoryLayout* layout,
                                                 const Shape& shape);

// INVALID_ARGUMENT / UNIMPLEMENTED unless `layout` (maybe null) is the dense
// row-major layout Kiln keeps every device array in.
Status CheckDeviceLayout(const PJRT_Buffer_MemoryLayout* layout, const Shape& shape);

}  // namespace kiln::capi
