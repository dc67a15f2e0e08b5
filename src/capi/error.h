// PJRT_Error: a kiln::Status behind the function table the header requires.
#pragma once

#include "base/status.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace kiln::capi {

// Returns null for OK; otherwise a new PJRT_Error the caller destroys.
PJRT_Error* MakeError(Status status);
// The status an error carries (its code and message).
const Status& ErrorStatus(const PJRT_Error* error);
// A PJRT_Error_Code from/to Kiln's code (same numbering).
inline PJRT_Error_Code ToPjrtCode(StatusCode code) { return static_cast<PJRT_Error_Code>(code); }
Status StatusFromPjrt(PJRT_Error_Code code, const char* message, size_t size);

void ErrorDestroy(PJRT_Error_Destroy_Args* args);
void ErrorMessage(PJRT_Error_Message_Args* args);
PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* args);
PJRT_Error* ErrorForEachPayload(PJRT_Error_ForEachPayload_Args* args);

}  // namespace kiln::capi

// Returns the error from a C API function if `expr` (a Status) is not OK.
#define KILN_CAPI_RETURN_IF_ERROR(expr)                             \
  do {                                                              \
    ::kiln::Status kiln_capi_status_ = (expr);                      \
    if (!kiln_capi_status_.ok()) {                                  \
      return ::kiln::capi::MakeError(std::move(kiln_capi_status_)); \
    }                                                               \
  } while (false)

#define KILN_CAPI_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                        \
  auto tmp = (expr);                                                           \
  if (!tmp.ok()) return ::kiln::capi::MakeError(::kiln::Status(tmp.status())); \
  lhs = std::move(tmp).value()

// `KILN_CAPI_ASSIGN_OR_RETURN(auto x, F());` in a C API function.
#define KILN_CAPI_ASSIGN_OR_RETURN(lhs, expr) \
  KILN_CAPI_ASSIGN_OR_RETURN_IMPL(KILN_CONCAT(kiln_capi_or_, __LINE__), lhs, expr)
