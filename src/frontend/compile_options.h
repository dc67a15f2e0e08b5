// The parts of a serialized xla.CompileOptionsProto Kiln uses
// (xla/pjrt/proto/compile_options.proto; field numbers in
// docs/formats/compile-options.md). Unknown fields are ignored.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace kiln::frontend {

struct CompileOptions {
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  bool use_spmd_partitioning = false;
  bool use_shardy_partitioner = false;
  int64_t device_ordinal = -1;  // -1: not given
  // device_assignment[replica][partition] = device id; empty when absent.
  std::vector<std::vector<int64_t>> device_assignment;
  // The options exactly as received (PJRT_Executable_GetCompileOptions).
  std::vector<uint8_t> serialized;
};

// Decodes `bytes`; an empty input gives the defaults. Malformed bytes are
// INVALID_ARGUMENT naming the byte offset.
StatusOr<CompileOptions> ParseCompileOptions(std::span<const uint8_t> bytes);

// A serialized xla.DeviceAssignmentProto of `assignment[replica][partition]`
// (what PJRT_LoadedExecutable_GetDeviceAssignment returns).
std::vector<uint8_t> SerializeDeviceAssignment(
    const std::vector<std::vector<int64_t>>& assignment);

}  // namespace kiln::frontend
