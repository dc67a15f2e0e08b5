// PJRT_Event_*: handles over runtime::Event.
#include "capi/call.h"
#include "capi/functions.h"
#include "capi/handles.h"

namespace kiln::capi {

PJRT_Error* Impl::PJRT_Event_Destroy(PJRT_Event_Destroy_Args* args) {
  KILN_ARGS(event);
  // Pending callbacks keep the runtime event alive.
  return DestroyLiveHandle(args->event, [](auto* handle) { return UnwrapEvent(handle); });
}

PJRT_Error* Impl::PJRT_Event_IsReady(PJRT_Event_IsReady_Args* args) {
  KILN_ARGS(is_ready);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Event* event, UnwrapEvent(args->event));
  args->is_ready = event->event->IsReady();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Event_Error(PJRT_Event_Error_Args* args) {
  KILN_ARGS(event);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Event* event, UnwrapEvent(args->event));
  std::optional<Status> status = event->event->TryGetStatus();
  if (!status.has_value()) {
    return MakeError(FailedPrecondition("PJRT_Event_Error: the event is not ready yet; call "
                                        "PJRT_Event_Await or PJRT_Event_OnReady first"));
  }
  return MakeError(std::move(*status));
}

PJRT_Error* Impl::PJRT_Event_Await(PJRT_Event_Await_Args* args) {
  KILN_ARGS(event);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Event* event, UnwrapEvent(args->event));
  return MakeError(event->event->Await());
}

PJRT_Error* Impl::PJRT_Event_OnReady(PJRT_Event_OnReady_Args* args) {
  KILN_ARGS(user_arg);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Event* event, UnwrapEvent(args->event));
  if (args->callback == nullptr) {
    return MakeError(InvalidArgument("PJRT_Event_OnReady: callback is null"));
  }
  // The callback owns the PJRT_Error it receives (it must destroy it).
  event->event->OnReady([callback = args->callback, user_arg = args->user_arg](
                            const Status& status) { callback(MakeError(status), user_arg); });
  return nullptr;
}

PJRT_Error* Impl::PJRT_Event_Create(PJRT_Event_Create_Args* args) {
  KILN_ARGS(event);
  args->event = NewEvent(runtime::Event::Create());
  return nullptr;
}

PJRT_Error* Impl::PJRT_Event_Set(PJRT_Event_Set_Args* args) {
  KILN_ARGS(error_message_size);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Event* event, UnwrapEvent(args->event));
  KILN_CAPI_RETURN_IF_ERROR(CheckErrorCode(args->error_code, "error_code"));
  Status status = StatusFromPjrt(args->error_code, args->error_message, args->error_message_size);
  if (!event->event->Set(std::move(status))) {
    return MakeError(FailedPrecondition("PJRT_Event_Set: the event was already set"));
  }
  return nullptr;
}

}  // namespace kiln::capi
