// Reads an HloModuleProto (PJRT_Program format "hlo", what PyTorch/XLA
// compiles) into Kiln IR. The decoded module (hlo_proto.h) is written out as
// StableHLO in MLIR's generic op form and read by the StableHLO text parser,
// so HLO programs reach the compiler as the same ops JAX's programs do
// (docs/decisions.md says why text rather than building IR directly).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "frontend/hlo/hlo_proto.h"
#include "ir/module.h"

namespace kiln::frontend::hlo {

// The StableHLO text of `module`: the entry computation becomes
// `func.func @main` with tuple parameters and results flattened, called
// computations become regions (reduce, sort, scatter, while, conditional)
// or are inlined (call). An HLO opcode Kiln does not read is UNIMPLEMENTED
// naming it and the instruction; a malformed module is INVALID_ARGUMENT.
StatusOr<std::string> ToStableHloText(const Module& module);

// DecodeModule, ToStableHloText and the text parser: a serialized
// HloModuleProto as a Kiln IR module (not yet verified).
StatusOr<ir::Module> ReadHloModule(std::span<const uint8_t> bytes);

// What PJRT_Executable_OptimizedProgram reports for a program compiled
// from `bytes` (format "hlo" or "hlo_with_config"): an
// HloModuleProtoWithConfig holding the module and, as the config's
// entry_computation_layout, the module's host_program_shape. XLA's PJRT
// client parses it into an HloModule after every compile (PyTorch/XLA reads
// the entry layout from it); the module itself is returned unchanged.
StatusOr<std::vector<uint8_t>> OptimizedProgramOf(std::span<const uint8_t> bytes,
                                                  std::string_view format);

// `with_config` (OptimizedProgramOf) for a partitioned program: its module
// with spmd_parameters_shardings and spmd_output_sharding (a TUPLE of
// `outputs`) set, as XLA's SPMD partitioner leaves them. Each sharding is
// a serialized xla.OpSharding. PyTorch/XLA reads a result's sharding
// there, and takes a result without one as replicated.
StatusOr<std::vector<uint8_t>> WithSpmdShardings(std::span<const uint8_t> with_config,
                                                 std::span<const std::string> parameters,
                                                 std::span<const std::string> outputs);

// The HloModuleProto inside a serialized HloModuleProtoWithConfig
// (PJRT_Program format "hlo_with_config": field 1).
StatusOr<std::span<const uint8_t>> ModuleOfModuleWithConfig(std::span<const uint8_t> bytes);

}  // namespace kiln::frontend::hlo
