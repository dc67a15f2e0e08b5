// One entry point for every program format Kiln reads: StableHLO portable
// artifacts (MLIR bytecode of VHLO) and StableHLO text, told apart by the
// bytecode magic. PJRT_Client_Compile and the `kiln` tool use it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "ir/module.h"

namespace kiln::frontend {

enum class ProgramFormat { kPortableArtifact, kText };

// Which reader `bytes` need: bytecode when they start with the magic
// "ML\xEFR" or a damaged form of it ("ML\xEF..."), else text.
ProgramFormat DetectFormat(std::span<const uint8_t> bytes);

// Reads a program in either format into Kiln IR (not yet verified). Errors
// name the byte offset or line:column and what was expected there.
StatusOr<ir::Module> ReadProgram(std::span<const uint8_t> bytes);

// What PJRT_Client_Compile does first: reads `bytes` in PJRT_Program's
// `format` ("mlir": a portable artifact or StableHLO text) and verifies the
// module. A format Kiln does not read is UNIMPLEMENTED ("hlo") or
// INVALID_ARGUMENT (anything else), naming the formats it reads.
StatusOr<ir::Module> LoadProgram(std::span<const uint8_t> bytes, std::string_view format);

}  // namespace kiln::frontend
