// What every C API entry point shares: args checks, handle liveness, tracing.
#pragma once

#include <cstddef>
#include <string_view>
#include <type_traits>

#include "capi/error.h"

namespace kiln::capi {

// The PJRT function running on this thread (set by the dispatch wrapper), so
// argument errors can name the args struct.
std::string_view CurrentFunction();
void SetCurrentFunction(std::string_view name);

// INVALID_ARGUMENT naming the args struct when `struct_size` does not cover
// `required` bytes (everything up to and including `field`).
Status CheckStructSize(size_t struct_size, size_t required, std::string_view field);

// `status` with the running function's name before its message, for
// runtime errors that do not say which call failed ("PJRT_X: ...").
Status InFunction(Status status);
template <typename T>
StatusOr<T> InFunction(StatusOr<T> result) {
  if (result.ok()) return result;
  return InFunction(result.status());
}

// INVALID_ARGUMENT naming `field` unless `code` is a PJRT_Error_Code.
Status CheckErrorCode(int code, std::string_view field);

}  // namespace kiln::capi

#define KILN_FIELD_END(field) \
  (offsetof(std::remove_reference_t<decltype(*args)>, field) + sizeof(args->field))

// First line of a C API function: `args` must reach at least to `field`.
#define KILN_ARGS(field)                                                     \
  KILN_CAPI_RETURN_IF_ERROR(::kiln::capi::CheckStructSize(args->struct_size, \
                                                          KILN_FIELD_END(field), #field))

// True when the caller's args struct (maybe from an older header) has `field`.
#define KILN_HAS_FIELD(field) (args->struct_size >= KILN_FIELD_END(field))
