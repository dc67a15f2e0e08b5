// Internal to the VHLO reader: the op tree of a bytecode File, whose
// producer CheckVersion accepted, as a Kiln IR module.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "frontend/bytecode/file.h"
#include "ir/module.h"

namespace kiln::frontend::vhlo {

// `bytes` holds the file `file` was read from (for byte offsets in messages).
StatusOr<ir::Module> BuildModule(const bytecode::File& file, std::span<const uint8_t> bytes);

}  // namespace kiln::frontend::vhlo
