// The OpenCL backend's code for one segment of a plan: the segment's
// generated kernels (codegen.h) built into one program, and their launches
// over the run's memory — parameters and results where the runtime put
// them, constants uploaded on the first run, intermediates in scratch
// memory kept between runs.
#pragma once

#include <memory>

#include "backends/opencl/codegen.h"
#include "backends/opencl/driver.h"
#include "runtime/device_backend.h"

namespace kiln::backends::opencl {

StatusOr<std::unique_ptr<runtime::DeviceExecutable>> CompileSegment(
    std::shared_ptr<Context> context, const compiler::Graph& segment, const Target& target);

}  // namespace kiln::backends::opencl
