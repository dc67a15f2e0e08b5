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

}  // namespace kiln::capi
