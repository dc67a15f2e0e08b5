// A custom_call bound to a handler users registered (jax.ffi): what the
// compiler creates for the call when it compiles a program, and what the
// call's node runs. Typed FFI calls (api_version 4) build XLA FFI call
// frames for the handler's stages; the older custom-call API (api_version
// 1-3) calls the function with pointer arrays, as XLA's CPU backend does.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/element_type.h"
#include "base/status.h"
#include "ir/attribute.h"

namespace kiln::ffi {

// The user data a run carries for handlers (PJRT_ExecuteContext's, added
// through the PJRT FFI extension), looked up by FFI type id.
class UserData {
 public:
  virtual ~UserData() = default;
  // The datum registered under `type_id`, or null.
  virtual void* LookupUserData(int64_t type_id) const = 0;
};

// What a handler may ask of the run calling it.
struct InvokeInfo {
  int32_t device_ordinal = 0;  // the device's local hardware id
  int64_t run_id = 0;          // the same for every device of one launch
  const UserData* user_data = nullptr;
};

// custom_call's api_version (stablehlo.CustomCallApiVersion).
enum class ApiVersion : int {
  kOriginal = 1,                // void f(void* out, const void** in)
  kStatusReturning = 2,         // ... + XlaCustomCallStatus*
  kStatusReturningUnified = 3,  // ... + opaque, opaque_len, XlaCustomCallStatus*
  kTypedFfi = 4,                // XLA_FFI_Handler
};

// The custom call as the program spells it.
struct CallSpec {
  std::string target;
  ApiVersion api_version = ApiVersion::kTypedFfi;
  ir::Attribute attributes;  // typed: the backend_config dictionary (null: none)
  std::string opaque;        // older API: the backend_config string
  std::vector<Shape> args;   // operand shapes (kToken for tokens)
  std::vector<Shape> rets;   // result shapes
};

// Whether a handler is registered for `target` under `version`'s API.
bool IsRegistered(std::string_view target, ApiVersion version);

class Call {
 public:
  virtual ~Call() = default;
  // Binds `spec` to its registered handler and, for a typed handler with an
  // instantiate stage, runs it (its state lives as long as the Call).
  // NOT_FOUND names how to register the target when none is.
  static StatusOr<std::shared_ptr<const Call>> Create(CallSpec spec);

  // Calls the handler with `args` and `rets` (one pointer per operand and
  // result; tokens' may be null) and waits for an asynchronous handler to
  // complete. A handler's error comes back with its message. Thread-safe:
  // runs on several devices may call it at once.
  virtual Status Execute(std::span<void* const> args, std::span<void* const> rets,
                         const InvokeInfo& info) const = 0;
};

}  // namespace kiln::ffi
