// One entry point for every program format Kiln reads: StableHLO portable
// artifacts (MLIR bytecode of VHLO), StableHLO text and serialized
// HloModuleProtos. PJRT_Client_Compile is told the format; the `kiln` tool
// tells them apart by their bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "ir/module.h"

namespace kiln::frontend {

enum class ProgramFormat { kPortableArtifact, kText, kHloProto };

// Which reader `bytes` need: bytecode when they start with the magic
// "ML\xEFR" or a damaged form of it ("ML\xEF..."); an HloModuleProto when
// they start with a protobuf tag of field 1-3 and hold control characters no
// text program has; else text.
ProgramFormat DetectFormat(std::span<const uint8_t> bytes);

// Reads a program in any of the formats (DetectFormat) into Kiln IR (not
// yet verified). Errors name the byte offset or line:column and what was
// expected there.
StatusOr<ir::Module> ReadProgram(std::span<const uint8_t> bytes);

// What PJRT_Client_Compile does first: reads `bytes` in PJRT_Program's
// `format` ("mlir": a portable artifact or StableHLO text; "hlo": a
// serialized HloModuleProto; "hlo_with_config": an HloModuleProtoWithConfig)
// and verifies the module. Another format is INVALID_ARGUMENT naming the
// formats Kiln reads.
StatusOr<ir::Module> LoadProgram(std::span<const uint8_t> bytes, std::string_view format);

}  // namespace kiln::frontend
