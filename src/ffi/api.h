// XLA's FFI C API as Kiln implements it: the table handed to handlers in
// their call frames, and to users who register handlers through it
// (Kiln's library exports it as KilnXlaFfiApi). Has the lifetime of the
// process.
#pragma once

#include "xla/ffi/api/c_api.h"

namespace kiln::ffi {

const XLA_FFI_Api* Api();

}  // namespace kiln::ffi
