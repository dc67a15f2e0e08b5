// The parts of a serialized xla.CompileOptionsProto Kiln uses
// (xla/pjrt/proto/compile_options.proto; field numbers in
// docs/formats/compile-options.md). Unknown fields are ignored.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "base/status.h"

namespace kiln::frontend {

// One entry of CompileOptionsProto.env_option_overrides: an XLA compile
// option set by name (`jax.jit(f, compiler_options={...})`), with the value
// type JAX gave it.
struct OptionOverride {
  std::string name;
  std::variant<std::string, bool, int64_t, double> value;
};

struct CompileOptions {
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  bool use_spmd_partitioning = false;
  bool use_shardy_partitioner = false;
  int64_t device_ordinal = -1;  // -1: not given
  // allow_spmd_sharding_propagation_to_output: per result (or one for all),
  // whether a result a GSPMD program gives no sharding takes the one the
  // partitioner finds; false: it is whole on every device (XLA's Shardy
  // pipeline ignores it). JAX sets true for the results of a jit without
  // out_shardings; PyTorch/XLA sets it per compile (true for its step
  // programs in 2.9, measured). XLA's default (the field absent: empty) is
  // false; Kiln, where it is absent, propagates.
  std::vector<bool> propagation_to_output;
  // device_assignment[replica][partition] = device id; empty when absent.
  std::vector<std::vector<int64_t>> device_assignment;
  // Checked by CheckOptionOverride: each names a field of xla.DebugOptions
  // and has a value of its type.
  std::vector<OptionOverride> option_overrides;
  // The options exactly as received (PJRT_Executable_GetCompileOptions).
  std::vector<uint8_t> serialized;
};

// Decodes `bytes`; an empty input gives the defaults. Malformed bytes are
// INVALID_ARGUMENT naming the byte offset; so is an option override XLA's
// CPU backend would reject (CheckOptionOverride).
StatusOr<CompileOptions> ParseCompileOptions(std::span<const uint8_t> bytes);

// Whether XLA accepts `option`: its name is a field of xla.DebugOptions (the
// table generated from the published xla.pb.h, docs/compile-options.md) and
// its value converts to the field's type by XLA's rules. The errors are
// XLA's words: "No such compile option: 'x'", "While setting option x, 'v'
// is not a valid int32 value.".
Status CheckOptionOverride(const OptionOverride& option);

// A serialized xla.DeviceAssignmentProto of `assignment[replica][partition]`
// (what PJRT_LoadedExecutable_GetDeviceAssignment returns).
std::vector<uint8_t> SerializeDeviceAssignment(const std::vector<std::vector<int64_t>>& assignment);

}  // namespace kiln::frontend
