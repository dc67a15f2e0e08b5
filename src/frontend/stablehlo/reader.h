// Reads MLIR bytecode of the StableHLO dialect itself (stablehlo, chlo, func,
// builtin and sdy ops; what JAX's MLIR bindings write with write_bytecode and
// what older exporters stored), as opposed to a StableHLO portable artifact
// (bytecode of VHLO, frontend/vhlo). The module is the one the text parser
// builds from the same module's printed form.
// docs/formats/stablehlo-bytecode.md describes the encodings and what differs
// from VHLO.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "frontend/bytecode/file.h"
#include "ir/module.h"

namespace kiln::frontend::stablehlo {

// Reads and converts a whole file. Errors:
//  - INVALID_ARGUMENT: malformed input, with the byte offset and what was
//    expected there;
//  - UNIMPLEMENTED: an op of a dialect Kiln does not read (naming it), an
//    attribute or type encoding Kiln does not know, properties of an op it
//    does not model.
// Any producer is accepted ("MLIR24.0.0git", ...). Work and memory are
// bounded by the size of `bytes`; nesting uses no native stack. The module
// owns its data; `bytes` may be freed afterwards.
StatusOr<ir::Module> ReadStablehloBytecode(std::span<const uint8_t> bytes);

// The same conversion for a File already read from `bytes` (which it borrows).
StatusOr<ir::Module> ConvertFile(const bytecode::File& file, std::span<const uint8_t> bytes);

}  // namespace kiln::frontend::stablehlo
