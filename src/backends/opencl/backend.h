// Kiln's devices on an OpenCL device (KILN_BACKEND=opencl): device memory
// is OpenCL buffers on the device KILN_OPENCL_DEVICE names (the first GPU,
// else the first device), and every virtual device of the client shares
// it. Programs run on the host kernels over staged copies until the
// backend compiles nodes itself (issue 31; docs/architecture.md).
#pragma once

#include <memory>

#include "base/status.h"
#include "runtime/device_backend.h"

namespace kiln::backends::opencl {

// FAILED_PRECONDITION without an OpenCL loader, NOT_FOUND (listing the
// devices there are) when KILN_OPENCL_DEVICE names none.
StatusOr<std::shared_ptr<runtime::DeviceBackend>> CreateBackend();

}  // namespace kiln::backends::opencl
