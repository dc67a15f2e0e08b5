// Internal to the bytecode reader: the IR section, read with an explicit stack.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "frontend/bytecode/encoding_reader.h"
#include "frontend/bytecode/file.h"

namespace kiln::frontend::bytecode {

// Reads the IR section into file.operations, file.top_level and
// file.num_value_ids. Every other table of `file` must be filled already: op
// names, attributes, types and properties are checked against them.
// `file_size` bounds the total count of regions, blocks and values, since
// each takes at least one distinct byte of an honest file.
Status ReadIrSection(const RawSection& section, uint64_t file_size, File& file);

}  // namespace kiln::frontend::bytecode
