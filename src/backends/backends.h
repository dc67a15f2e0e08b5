// The device backends this build of Kiln has, by the names KILN_BACKEND
// takes: "host" (the default: Kiln's virtual CPU devices) and, where the
// OpenCL headers were found at build time, "opencl".
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/device_backend.h"

namespace kiln::backends {

// The names of the backends built in.
std::vector<std::string> Available();

// The backend `name` names; empty: KILN_BACKEND's, else "host".
// INVALID_ARGUMENT for a name not built in (listing those that are); the
// backend's own error when it cannot start (no OpenCL driver).
StatusOr<std::shared_ptr<runtime::DeviceBackend>> Create(std::string_view name = "");

}  // namespace kiln::backends
