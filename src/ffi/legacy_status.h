// XlaCustomCallStatus, the status object of the custom-call API before FFI
// (api_version 2 and 3): laid out as XLA's (xla/service/custom_call_status),
// so a handler that sets it through XLA's functions or through Kiln's
// exported XlaCustomCallStatusSetFailure writes the same object.
#pragma once

#include <optional>
#include <string>

struct XlaCustomCallStatus_ {
  std::optional<std::string> message;
};
typedef struct XlaCustomCallStatus_ XlaCustomCallStatus;
