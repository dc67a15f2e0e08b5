// One entry point for every program format Kiln reads: StableHLO portable
// artifacts (MLIR bytecode of VHLO) and StableHLO text, told apart by the
// bytecode magic. PJRT_Client_Compile and the `kiln` tool use it.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "ir/module.h"

namespace kiln::frontend {

enum class ProgramFormat { kPortableArtifact, kText };

// Which reader `bytes` need (bytecode magic "ML\xEFR", else text).
ProgramFormat DetectFormat(std::span<const uint8_t> bytes);

// Reads a program in either format into Kiln IR (not yet verified). Errors
// name the byte offset or line:column and what was expected there.
StatusOr<ir::Module> ReadProgram(std::span<const uint8_t> bytes);

}  // namespace kiln::frontend
