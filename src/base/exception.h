// Turning a caught exception into Kiln's Status, for the places where work
// that may throw (std::bad_alloc from a container) meets a Status boundary:
// a device's work queue, the C API.
#pragma once

#include <string_view>

#include "base/status.h"

namespace kiln {

// The exception being handled, as a Status; call it only inside a catch
// block. RESOURCE_EXHAUSTED for std::bad_alloc, INTERNAL with what() for
// other exceptions; `context` says what was running.
Status StatusFromCurrentException(std::string_view context);

}  // namespace kiln
