// One entry point for every program format Kiln reads: MLIR bytecode
// (StableHLO portable artifacts, i.e. bytecode of VHLO, and bytecode of the
// StableHLO dialect itself), StableHLO text and serialized HloModuleProtos.
// PJRT_Client_Compile is told the format; the `kiln` tool tells them apart by
// their bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "ir/module.h"

namespace kiln::frontend {

enum class ProgramFormat { kBytecode, kText, kHloProto };

// Which reader `bytes` need: MLIR bytecode when they start with the magic
// "ML\xEFR" or a damaged form of it ("ML\xEF..."); an HloModuleProto when
// they start with a protobuf tag of field 1-3 and hold control characters no
// text program has; else text.
ProgramFormat DetectFormat(std::span<const uint8_t> bytes);

// Reads a program in any of the formats (DetectFormat) into Kiln IR (not
// yet verified). Errors name the byte offset or line:column and what was
// expected there.
StatusOr<ir::Module> ReadProgram(std::span<const uint8_t> bytes);

// Reads MLIR bytecode with the reader its dialects call for: a file holding
// the vhlo dialect is a portable artifact (vhlo::ConvertFile), any other is
// bytecode of the StableHLO dialect itself (stablehlo::ConvertFile).
StatusOr<ir::Module> ReadBytecode(std::span<const uint8_t> bytes);

// What PJRT_Client_Compile does first: reads `bytes` in PJRT_Program's
// `format` ("mlir": MLIR bytecode or StableHLO text; "hlo": a
// serialized HloModuleProto; "hlo_with_config": an HloModuleProtoWithConfig)
// and verifies the module. Another format is INVALID_ARGUMENT naming the
// formats Kiln reads.
StatusOr<ir::Module> LoadProgram(std::span<const uint8_t> bytes, std::string_view format);

}  // namespace kiln::frontend
