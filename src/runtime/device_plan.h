// A program split between a backend's own code and the host kernels
// (compiler/split.h), its device segments compiled by the backend, and the
// walk of one run through it: segments in order, the split's crossings
// copied between the device's memory and host blocks as they come.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/compile.h"
#include "compiler/executor.h"
#include "compiler/split.h"
#include "runtime/device_backend.h"

namespace kiln::runtime {

class DevicePlan {
 public:
  // Splits `program` by backend.Supports and compiles its device segments.
  // Null (not an error) when the backend compiles no nodes or supports none
  // of the program's. Nodes with side effects (collectives, host
  // callbacks, feeds, FFI handlers) always run in host segments, in program
  // order, with the run's environment: a collective's operands cross to the
  // host, the devices' runs meet there, and its results cross back.
  static StatusOr<std::shared_ptr<const DevicePlan>> Build(const compiler::Program& program,
                                                           DeviceBackend& backend);

  // One run on device `ordinal` of `backend`: parameters and results in its
  // device memory. A result may be a parameter's memory (a donated argument
  // updated in place); it is written after every read of the parameter.
  // `env` holds the host segments' arenas.
  Status Run(DeviceBackend& backend, int ordinal, std::span<const DeviceAddress> parameters,
             std::span<const DeviceAddress> results, compiler::ExecutionEnv& env) const;

  const compiler::SplitPlan& split() const { return split_; }
  // What `kiln plan --backend` prints (compiler::ListSplit).
  std::string Listing() const { return compiler::ListSplit(*graph_, split_); }

 private:
  std::shared_ptr<const compiler::Graph> graph_;  // the unfused graph split
  compiler::SplitPlan split_;
  // Per segment: the backend's code, or null for a host segment.
  std::vector<std::shared_ptr<DeviceExecutable>> executables_;
};

}  // namespace kiln::runtime
