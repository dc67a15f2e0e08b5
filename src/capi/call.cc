#include "capi/call.h"

#include <string>

namespace kiln::capi {
namespace {

thread_local std::string_view current_function = "PJRT function";

}  // namespace

std::string_view CurrentFunction() { return current_function; }
void SetCurrentFunction(std::string_view name) { current_function = name; }

Status CheckStructSize(size_t struct_size, size_t required, std::string_view field) {
  if (struct_size >= required) return Status::Ok();
  return InvalidArgument(CurrentFunction(), "_Args.struct_size is ", struct_size,
                         "; expected at least ", required, " bytes to reach the field `", field,
                         "` (set struct_size to ", CurrentFunction(), "_Args_STRUCT_SIZE)");
}

Status InFunction(Status status) {
  if (status.ok()) return status;
  return Status(status.code(), StrCat(CurrentFunction(), ": ", status.message()));
}

Status CheckErrorCode(int code, std::string_view field) {
  if (code >= 0 && code <= static_cast<int>(StatusCode::kUnauthenticated)) return Status::Ok();
  return InvalidArgument(CurrentFunction(), ": `", field, "` is ", code,
                         "; expected a PJRT_Error_Code (0 to ",
                         static_cast<int>(StatusCode::kUnauthenticated), ")");
}

}  // namespace kiln::capi
