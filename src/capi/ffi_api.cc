// The PJRT FFI extension (jax.ffi's handlers and types reach Kiln's
// registry through it) and the C functions Kiln's library exports for what
// the extension cannot express: handler bundles with stages other than
// execute, targets of the custom-call API before FFI, the XLA_FFI_Api
// table itself, and XlaCustomCallStatus's setters. docs/ffi.md.
#include <cstring>

#include "capi/call.h"
#include "capi/functions.h"
#include "capi/handles.h"
#include "ffi/api.h"
#include "ffi/legacy_status.h"
#include "ffi/registry.h"

namespace kiln::capi {
namespace {

std::string_view Text(const char* data, size_t size) {
  return data == nullptr ? std::string_view() : std::string_view(data, size);
}

}  // namespace

PJRT_Error* Impl::PJRT_FFI_Type_Register(PJRT_FFI_Type_Register_Args* args) {
  KILN_ARGS(type_id);
  ffi::Deleter deleter = nullptr;
  if (KILN_HAS_FIELD(type_info) && args->type_info != nullptr) {
    deleter = args->type_info->deleter;
  }
  KILN_CAPI_ASSIGN_OR_RETURN(
      int64_t id, InFunction(ffi::Registry::Global().RegisterType(
                      Text(args->type_name, args->type_name_size), args->type_id, deleter)));
  args->type_id = id;
  return nullptr;
}

PJRT_Error* Impl::PJRT_FFI_UserData_Add(PJRT_FFI_UserData_Add_Args* args) {
  KILN_ARGS(user_data);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_ExecuteContext * context, UnwrapExecuteContext(args->context));
  // The caller keeps the datum: the context holds it without a deleter.
  KILN_CAPI_RETURN_IF_ERROR(InFunction(context->context->InsertUserData(
      args->user_data.type_id, args->user_data.data, /*deleter=*/nullptr)));
  return nullptr;
}

PJRT_Error* Impl::PJRT_FFI_Register_Handler(PJRT_FFI_Register_Handler_Args* args) {
  KILN_ARGS(traits);
  if (args->handler == nullptr) {
    return MakeError(InvalidArgument(CurrentFunction(), ": `handler` is null"));
  }
  XLA_FFI_Handler_Bundle bundle{};
  bundle.execute = reinterpret_cast<XLA_FFI_Handler*>(args->handler);
  KILN_CAPI_RETURN_IF_ERROR(InFunction(ffi::Registry::Global().RegisterTyped(
      Text(args->target_name, args->target_name_size),
      Text(args->platform_name, args->platform_name_size), bundle,
      static_cast<XLA_FFI_Handler_Traits>(args->traits))));
  return nullptr;
}

}  // namespace kiln::capi

// Exported (exports.map). Each returns 0 on success, else writes a message
// into `error` (at most `error_size` bytes, NUL-terminated) and returns 1.
extern "C" {

// The XLA_FFI_Api table Kiln passes to handlers: users register handler
// bundles through its XLA_FFI_Handler_Register, and types through
// XLA_FFI_Type_Register. Lives as long as the process.
__attribute__((visibility("default"))) const XLA_FFI_Api* KilnXlaFfiApi() {
  return kiln::ffi::Api();
}

// Registers `function` as custom call target `name` of the API before FFI
// (custom_call api_version 1-3; jax.ffi.register_ffi_target(...,
// api_version=0)) for `platform`, which must name Kiln.
__attribute__((visibility("default"))) int KilnRegisterCustomCallTarget(
    const char* name, size_t name_size, void* function, const char* platform, size_t platform_size,
    char* error, size_t error_size) {
  kiln::Status status;
  try {
    status = kiln::ffi::Registry::Global().RegisterLegacy(
        name == nullptr ? std::string_view() : std::string_view(name, name_size),
        platform == nullptr ? std::string_view() : std::string_view(platform, platform_size),
        function);
  } catch (const std::exception& exception) {
    status = kiln::Internal("KilnRegisterCustomCallTarget: ", exception.what());
  }
  if (status.ok()) return 0;
  if (error != nullptr && error_size > 0) {
    const std::string text = status.ToString();
    const size_t length = std::min(text.size(), error_size - 1);
    std::memcpy(error, text.data(), length);
    error[length] = '\0';
  }
  return 1;
}

// XLA's functions of the same name (xla/service/custom_call_status.h), for
// api_version 2-3 handlers that report through Kiln's status object.
__attribute__((visibility("default"))) void XlaCustomCallStatusSetSuccess(
    XlaCustomCallStatus* status) {
  if (status != nullptr) status->message.reset();
}

__attribute__((visibility("default"))) void XlaCustomCallStatusSetFailure(
    XlaCustomCallStatus* status, const char* message, size_t message_len) {
  if (status == nullptr) return;
  try {
    status->message = message == nullptr ? std::string() : std::string(message, message_len);
  } catch (...) {
    status->message.reset();  // out of memory: nothing can carry the message
  }
}

}  // extern "C"
