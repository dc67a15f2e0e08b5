// The objects behind XLA FFI's opaque C types, as Kiln defines them, and
// the helpers the ffi layer's files share. Only src/ffi includes this.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"
#include "ffi/api.h"
#include "xla/ffi/api/c_api.h"

namespace kiln::ffi {
class UserData;
class ExecutionState;
}  // namespace kiln::ffi

// An error a handler (or Kiln's table) creates; whoever receives it destroys
// it with XLA_FFI_Error_Destroy.
struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  std::string message;
};

// A handler's asynchronous completion. Two references: the runtime's (taken
// from the call frame once the handler returns) and the completer's
// (dropped by SetAvailable / SetError). The last one frees it.
struct XLA_FFI_Future {
  std::mutex mutex;
  std::condition_variable ready;
  bool done = false;
  std::optional<kiln::Status> error;
  std::atomic<int> references{2};
};

// What a handler sees of the run calling it (XLA_FFI_ExecutionContext).
// Lives on the calling stack for the duration of one stage's call.
struct XLA_FFI_InvokeContext {
  XLA_FFI_ExecutionStage stage = XLA_FFI_ExecutionStage_EXECUTE;
  int32_t device_ordinal = 0;
  int64_t run_id = 0;
  const kiln::ffi::UserData* user_data = nullptr;
  // The instantiate stage's state (the call's), and the prepare and
  // initialize stages' (this execution's).
  kiln::ffi::ExecutionState* state = nullptr;
  kiln::ffi::ExecutionState* run_state = nullptr;
};

namespace kiln::ffi {

// A new XLA_FFI_Error carrying `status` (never OK).
XLA_FFI_Error* ToError(const Status& status);
// The Status an error carries; destroys `error`. OK for null.
Status TakeError(XLA_FFI_Error* error);

// Drops one reference of `future`, freeing it with the last.
void Release(XLA_FFI_Future* future);
// Waits until `future` completes; its error, or OK. Drops the runtime's
// reference.
Status WaitAndRelease(XLA_FFI_Future* future);

}  // namespace kiln::ffi
