// Dense element data of the bytecode (builtin DenseIntOrFPElementsAttr and
// vhlo.tensor_v1 blobs) as Kiln's DenseElements attribute.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "frontend/bytecode/encoding_reader.h"
#include "ir/attribute.h"

namespace kiln::frontend::vhlo {

// The two writers pack i1 data slightly differently (see docs/formats/vhlo.md).
enum class DenseFlavor : uint8_t { kBuiltin, kVhlo };

// Bytes one element of `element` (an element or quantized type) takes in a
// blob, or 0 if it cannot be stored densely.
size_t DenseElementBytes(const ir::Type& element);

// Decodes `blob` (read by `reader`, starting at absolute offset `offset`) as
// the data of `type`, a statically shaped tensor: little-endian row-major
// elements, one element for a splat, i1 bit-packed LSB-first. The result
// keeps i1 as one byte 0/1 per element and stores data whose elements are all
// equal as a splat, as MLIR does.
StatusOr<ir::Attribute> DenseElementsFromBlob(const ir::Type& type, std::span<const uint8_t> blob,
                                              DenseFlavor flavor,
                                              const bytecode::EncodingReader& reader,
                                              uint64_t offset);

}  // namespace kiln::frontend::vhlo
