#include "capi/error.h"

#include <string>

namespace kiln::capi {
namespace {

struct KilnError : PJRT_Error {
  Status status;
};

void TableDestroy(PJRT_Error* error) { delete static_cast<KilnError*>(error); }

void TableMessage(const PJRT_Error* error, const char** message, size_t* size) {
  const Status& status = ErrorStatus(error);
  *message = status.message().c_str();
  *size = status.message().size();
}

PJRT_Error_Code TableGetCode(const PJRT_Error* error) {
  return ToPjrtCode(ErrorStatus(error).code());
}

// Kiln attaches no payloads.
void TableForEachPayload(const PJRT_Error*, PJRT_Error_PayloadVisitor, void*) {}

constexpr PJRT_Error_FunctionTable kErrorTable = {
    PJRT_Error_FunctionTable_STRUCT_SIZE,
    sizeof(KilnError),
    nullptr,
    &TableDestroy,
    &TableMessage,
    &TableGetCode,
    &TableForEachPayload,
};

const Status kNullErrorStatus(StatusCode::kInvalidArgument,
                              "a null PJRT_Error was passed where an error was expected");

}  // namespace

PJRT_Error* MakeError(Status status) {
  if (status.ok()) return nullptr;
  auto* error = new KilnError;
  error->vtable = &kErrorTable;
  error->status = std::move(status);
  return error;
}

const Status& ErrorStatus(const PJRT_Error* error) {
  if (error == nullptr) return kNullErrorStatus;
  return static_cast<const KilnError*>(error)->status;
}

Status StatusFromPjrt(PJRT_Error_Code code, const char* message, size_t size) {
  int value = static_cast<int>(code);
  if (value < 0 || value > static_cast<int>(StatusCode::kUnauthenticated)) {
    return InvalidArgument("unknown PJRT_Error_Code ", value);
  }
  return Status(static_cast<StatusCode>(value),
                message == nullptr ? std::string() : std::string(message, size));
}

void ErrorDestroy(PJRT_Error_Destroy_Args* args) {
  if (args != nullptr && args->error != nullptr) args->error->vtable->destroy(args->error);
}

void ErrorMessage(PJRT_Error_Message_Args* args) {
  if (args == nullptr) return;
  const Status& status = ErrorStatus(args->error);
  args->message = status.message().c_str();
  args->message_size = status.message().size();
}

PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* args) {
  args->code = ToPjrtCode(ErrorStatus(args->error).code());
  return nullptr;
}

PJRT_Error* ErrorForEachPayload(PJRT_Error_ForEachPayload_Args* args) {
  if (args->error == nullptr) return MakeError(kNullErrorStatus);
  return nullptr;
}

}  // namespace kiln::capi
