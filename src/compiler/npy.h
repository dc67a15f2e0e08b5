// NumPy's .npy files (format 1.0) of one dense array, for the StableHLO
// interpreter's probes: interpreter.probe writes a tensor, and
// check.expect_serialized_eq reads it back (lower_check.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::compiler {

// Writes `shape`'s elements (Kiln's storage, row-major) to `path`, with the
// NumPy type that has the same bytes ('<f4', '<i8', '<c8', '|b1'; bf16 and
// the one-byte floats as unsigned integers of their width, as the
// interpreter writes them).
Status WriteNpy(const std::string& path, const Shape& shape, const void* data);

// The elements of the .npy file `path`, which must hold `shape` (its dims,
// and elements of the same byte size).
StatusOr<std::vector<uint8_t>> ReadNpy(const std::string& path, const Shape& shape);

}  // namespace kiln::compiler
