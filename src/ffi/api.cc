// The XLA_FFI_Api table Kiln hands to handlers in every call frame. Every
// function is filled; what Kiln cannot honour (a device stream) is an
// error naming the function. No function throws or aborts: bad arguments
// are errors, and a null args pointer is the one thing that cannot be
// reported (the functions returning void then do nothing).
#include "ffi/api.h"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <deque>
#include <thread>

#include "ffi/call.h"
#include "ffi/execution_state.h"
#include "ffi/internal.h"
#include "ffi/registry.h"
#include "kernels/parallel.h"

namespace kiln::ffi {

XLA_FFI_Error* ToError(const Status& status) {
  try {
    return new XLA_FFI_Error{static_cast<XLA_FFI_Error_Code>(status.code()), status.message()};
  } catch (...) {
    return nullptr;  // out of memory: nothing can carry the error
  }
}

Status TakeError(XLA_FFI_Error* error) {
  if (error == nullptr) return Status::Ok();
  StatusCode code = static_cast<StatusCode>(error->code);
  if (error->code <= XLA_FFI_Error_Code_OK || error->code > XLA_FFI_Error_Code_UNAUTHENTICATED) {
    code = StatusCode::kUnknown;
  }
  Status status(code, std::move(error->message));
  delete error;
  return status;
}

void Release(XLA_FFI_Future* future) {
  if (future->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete future;
}

Status WaitAndRelease(XLA_FFI_Future* future) {
  Status status;
  {
    std::unique_lock lock(future->mutex);
    future->ready.wait(lock, [future] { return future->done; });
    if (future->error) status = *future->error;
  }
  Release(future);
  return status;
}

namespace {

// The intra-op pool handlers schedule tasks on (XLA_FFI_ThreadPool_*): as
// many threads as Kiln's kernels use, started on the first task. Its own
// threads, not the kernels' pool: a handler that waits for its tasks must
// never wait on the thread it runs on.
class TaskPool {
 public:
  static TaskPool& Global() {
    static TaskPool* pool = new TaskPool();  // its threads outlive exit
    return *pool;
  }

  void Schedule(XLA_FFI_Task* task, void* data) {
    std::lock_guard lock(mutex_);
    if (workers_.empty()) {
      for (int i = 0; i < kernels::NumThreads(); ++i) {
        workers_.emplace_back([this] { Work(); });
        workers_.back().detach();
      }
    }
    tasks_.emplace_back(task, data);
    ready_.notify_one();
  }

 private:
  void Work() {
    for (;;) {
      std::pair<XLA_FFI_Task*, void*> next;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return !tasks_.empty(); });
        next = tasks_.front();
        tasks_.pop_front();
      }
      next.first(next.second);
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::pair<XLA_FFI_Task*, void*>> tasks_;
  std::vector<std::thread> workers_;
};

// The size a caller's args struct must have at least: up to `field`.
#define KILN_FFI_CHECK_ARGS(Type, field)                                                      \
  do {                                                                                        \
    if (args == nullptr) return ToError(InvalidArgument(#Type ": null arguments"));           \
    constexpr size_t kNeeded = offsetof(Type, field) + sizeof(args->field);                   \
    if (args->struct_size < kNeeded) {                                                        \
      return ToError(InvalidArgument(#Type ": struct_size ", args->struct_size,               \
                                     " is smaller than the ", kNeeded, " bytes Kiln reads")); \
    }                                                                                         \
  } while (false)

#define KILN_FFI_CHECK_CONTEXT(Type)                                                             \
  do {                                                                                           \
    if (args->ctx == nullptr) return ToError(InvalidArgument(#Type ": null execution context")); \
  } while (false)

// Runs `body`, turning an exception into an INTERNAL error: nothing throws
// across the C ABI.
template <typename Body>
XLA_FFI_Error* Guard(const char* function, Body&& body) {
  try {
    return body();
  } catch (const std::exception& error) {
    return ToError(Internal(function, " failed: ", error.what()));
  } catch (...) {
    return ToError(Internal(function, " failed"));
  }
}

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_Error_Create_Args, errc);
  return Guard("XLA_FFI_Error_Create", [&]() -> XLA_FFI_Error* {
    return new XLA_FFI_Error{args->errc, args->message != nullptr ? args->message : ""};
  });
}

void ErrorGetDetails(XLA_FFI_Error_GetDetails_Args* args) {
  if (args == nullptr || args->struct_size < XLA_FFI_Error_GetDetails_Args_STRUCT_SIZE) return;
  if (args->error == nullptr) {
    args->message = "";
    args->errc = XLA_FFI_Error_Code_OK;
    return;
  }
  args->message = args->error->message.c_str();
  args->errc = args->error->code;
}

void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) {
  if (args == nullptr || args->struct_size < XLA_FFI_Error_Destroy_Args_STRUCT_SIZE) return;
  delete args->error;
}

XLA_FFI_Error* HandlerRegister(XLA_FFI_Handler_Register_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_Handler_Register_Args, traits);
  return Guard("XLA_FFI_Handler_Register", [&]() -> XLA_FFI_Error* {
    const std::string_view name(args->name.ptr, args->name.ptr ? args->name.len : 0);
    const std::string_view platform(args->platform.ptr,
                                    args->platform.ptr ? args->platform.len : 0);
    Status status = Registry::Global().RegisterTyped(name, platform, args->bundle, args->traits);
    return status.ok() ? nullptr : ToError(status);
  });
}

XLA_FFI_Error* StreamGet(XLA_FFI_Stream_Get_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_Stream_Get_Args, stream);
  args->stream = nullptr;
  return ToError(Unimplemented("XLA_FFI_Stream_Get: Kiln runs handlers on the host, which has "
                               "no device stream (PlatformStream is for GPU handlers)"));
}

XLA_FFI_Error* TypeRegister(XLA_FFI_Type_Register_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_Type_Register_Args, type_id);
  if (args->type_id == nullptr) {
    return ToError(InvalidArgument("XLA_FFI_Type_Register: null type_id"));
  }
  return Guard("XLA_FFI_Type_Register", [&]() -> XLA_FFI_Error* {
    Deleter deleter = nullptr;
    constexpr size_t kWithInfo = offsetof(XLA_FFI_Type_Register_Args, type_info) +
                                 sizeof(args->type_info);
    if (args->struct_size >= kWithInfo && args->type_info != nullptr &&
        args->type_info->struct_size >= XLA_FFI_TypeInfo_STRUCT_SIZE) {
      deleter = args->type_info->deleter;
    }
    const std::string_view name(args->name.ptr, args->name.ptr ? args->name.len : 0);
    StatusOr<int64_t> id = Registry::Global().RegisterType(name, args->type_id->type_id, deleter);
    if (!id.ok()) return ToError(id.status());
    args->type_id->type_id = *id;
    return nullptr;
  });
}

XLA_FFI_Error* InvokeContextGet(XLA_FFI_InvokeContext_Get_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_InvokeContext_Get_Args, data);
  KILN_FFI_CHECK_CONTEXT(XLA_FFI_ExecutionContext_Get);
  if (args->type_id == nullptr) {
    return ToError(InvalidArgument("XLA_FFI_ExecutionContext_Get: null type_id"));
  }
  args->data = args->ctx->user_data != nullptr
                   ? args->ctx->user_data->LookupUserData(args->type_id->type_id)
                   : nullptr;
  if (args->data == nullptr) {
    return ToError(NotFound("XLA_FFI_ExecutionContext_Get: this run's execute context has no "
                            "user data of type \"",
                            Registry::Global().TypeName(args->type_id->type_id),
                            "\" (PJRT_FFI_UserData_Add attaches it)"));
  }
  return nullptr;
}

// Where `stage`'s state lives: the call's for instantiate, the execution's
// for prepare and initialize.
ExecutionState* StateFor(XLA_FFI_InvokeContext* context, XLA_FFI_ExecutionStage stage) {
  return stage == XLA_FFI_ExecutionStage_INSTANTIATE ? context->state : context->run_state;
}

XLA_FFI_Error* StateSet(XLA_FFI_State_Set_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_State_Set_Args, state);
  KILN_FFI_CHECK_CONTEXT(XLA_FFI_State_Set);
  if (args->type_id == nullptr) return ToError(InvalidArgument("XLA_FFI_State_Set: null type_id"));
  ExecutionState* state = StateFor(args->ctx, args->stage);
  if (state == nullptr) {
    return ToError(FailedPrecondition("XLA_FFI_State_Set: this call keeps no state"));
  }
  return Guard("XLA_FFI_State_Set", [&]() -> XLA_FFI_Error* {
    if (!Registry::Global().KnownType(args->type_id->type_id)) {
      return ToError(InvalidArgument("XLA_FFI_State_Set: type id ", args->type_id->type_id,
                                     " is not registered (register the state's type before "
                                     "the handler: jax.ffi.register_ffi_type)"));
    }
    Status status = state->Set(args->stage, args->type_id->type_id, args->state);
    return status.ok() ? nullptr : ToError(status);
  });
}

XLA_FFI_Error* StateGet(XLA_FFI_State_Get_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_State_Get_Args, state);
  KILN_FFI_CHECK_CONTEXT(XLA_FFI_State_Get);
  if (args->type_id == nullptr) return ToError(InvalidArgument("XLA_FFI_State_Get: null type_id"));
  args->state = nullptr;
  const ExecutionState* state = StateFor(args->ctx, args->stage);
  if (state == nullptr) {
    return ToError(FailedPrecondition("XLA_FFI_State_Get: this call keeps no state"));
  }
  return Guard("XLA_FFI_State_Get", [&]() -> XLA_FFI_Error* {
    StatusOr<void*> found = state->Get(args->stage, args->type_id->type_id);
    if (!found.ok()) return ToError(found.status());
    args->state = *found;
    return nullptr;
  });
}

XLA_FFI_Error* DeviceMemoryAllocate(XLA_FFI_DeviceMemory_Allocate_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_DeviceMemory_Allocate_Args, data);
  KILN_FFI_CHECK_CONTEXT(XLA_FFI_DeviceMemory_Allocate);
  args->data = nullptr;
  size_t alignment = args->alignment == 0 ? 64 : args->alignment;
  if ((alignment & (alignment - 1)) != 0) {
    return ToError(InvalidArgument("XLA_FFI_DeviceMemory_Allocate: alignment ", alignment,
                                   " is not a power of two"));
  }
  alignment = std::max(alignment, sizeof(void*));
  const size_t size = args->size == 0 ? alignment
                                      : (args->size + alignment - 1) / alignment * alignment;
  if (size < args->size) {
    return ToError(ResourceExhausted("XLA_FFI_DeviceMemory_Allocate: ", args->size, " bytes"));
  }
  args->data = std::aligned_alloc(alignment, size);
  if (args->data == nullptr) {
    return ToError(ResourceExhausted("XLA_FFI_DeviceMemory_Allocate: out of host memory for ",
                                     args->size, " bytes"));
  }
  return nullptr;
}

XLA_FFI_Error* DeviceMemoryFree(XLA_FFI_DeviceMemory_Free_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_DeviceMemory_Free_Args, data);
  KILN_FFI_CHECK_CONTEXT(XLA_FFI_DeviceMemory_Free);
  std::free(args->data);
  return nullptr;
}

XLA_FFI_Error* ThreadPoolSchedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_ThreadPool_Schedule_Args, data);
  KILN_FFI_CHECK_CONTEXT(XLA_FFI_ThreadPool_Schedule);
  if (args->task == nullptr) {
    return ToError(InvalidArgument("XLA_FFI_ThreadPool_Schedule: null task"));
  }
  return Guard("XLA_FFI_ThreadPool_Schedule", [&]() -> XLA_FFI_Error* {
    TaskPool::Global().Schedule(args->task, args->data);
    return nullptr;
  });
}

XLA_FFI_Error* ThreadPoolNumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_ThreadPool_NumThreads_Args, num_threads);
  KILN_FFI_CHECK_CONTEXT(XLA_FFI_ThreadPool_NumThreads);
  if (args->num_threads == nullptr) {
    return ToError(InvalidArgument("XLA_FFI_ThreadPool_NumThreads: null num_threads"));
  }
  *args->num_threads = kernels::NumThreads();
  return nullptr;
}

XLA_FFI_Error* FutureCreate(XLA_FFI_Future_Create_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_Future_Create_Args, extension_start);
  return Guard("XLA_FFI_Future_Create", [&]() -> XLA_FFI_Error* {
    args->future = new XLA_FFI_Future();
    return nullptr;
  });
}

// Completes `future` with `error` (nullopt: available), once.
XLA_FFI_Error* Complete(XLA_FFI_Future* future, std::optional<Status> error, const char* function) {
  if (future == nullptr) return ToError(InvalidArgument(function, ": null future"));
  {
    std::lock_guard lock(future->mutex);
    if (future->done) {
      return ToError(FailedPrecondition(function, ": the future is already complete"));
    }
    future->done = true;
    future->error = std::move(error);
    future->ready.notify_all();
  }
  Release(future);
  return nullptr;
}

XLA_FFI_Error* FutureSetAvailable(XLA_FFI_Future_SetAvailable_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_Future_SetAvailable_Args, future);
  return Complete(args->future, std::nullopt, "XLA_FFI_Future_SetAvailable");
}

XLA_FFI_Error* FutureSetError(XLA_FFI_Future_SetError_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_Future_SetError_Args, error);
  Status status = TakeError(args->error);
  if (status.ok())
    status = Status(StatusCode::kUnknown, "an FFI future completed with a null error");
  return Complete(args->future, std::move(status), "XLA_FFI_Future_SetError");
}

XLA_FFI_Error* RunIdGet(XLA_FFI_RunId_Get_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_RunId_Get_Args, run_id);
  KILN_FFI_CHECK_CONTEXT(XLA_FFI_RunId_Get);
  args->run_id = args->ctx->run_id;
  return nullptr;
}

XLA_FFI_Error* DeviceOrdinalGet(XLA_FFI_DeviceOrdinal_Get_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal);
  KILN_FFI_CHECK_CONTEXT(XLA_FFI_DeviceOrdinal_Get);
  args->device_ordinal = args->ctx->device_ordinal;
  return nullptr;
}

// Kiln's invoke contexts carry no extensions (XLA's carry collectives on
// GPU): the handler is told none is there.
XLA_FFI_Error* InvokeContextFindExtension(XLA_FFI_InvokeContext_FindExtension_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_InvokeContext_FindExtension_Args, extension);
  KILN_FFI_CHECK_CONTEXT(XLA_FFI_InvokeContext_FindExtension);
  args->extension = nullptr;
  return nullptr;
}

// Runs get no custom options on Kiln (XLA passes a runtime's own per-run
// attributes here): an empty dictionary.
XLA_FFI_Error* CustomOptionsGet(XLA_FFI_CustomOptions_Get_Args* args) {
  KILN_FFI_CHECK_ARGS(XLA_FFI_CustomOptions_Get_Args, attrs);
  KILN_FFI_CHECK_CONTEXT(XLA_FFI_CustomOptions_Get);
  static const XLA_FFI_Attrs kEmpty{
      XLA_FFI_Attrs_STRUCT_SIZE, nullptr, 0, nullptr, nullptr, nullptr};
  args->attrs = &kEmpty;
  return nullptr;
}

#undef KILN_FFI_CHECK_ARGS
#undef KILN_FFI_CHECK_CONTEXT

XLA_FFI_Api MakeApi() {
  XLA_FFI_Api api{};
  api.struct_size = XLA_FFI_Api_STRUCT_SIZE;
  api.extension_start = nullptr;
  api.api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, XLA_FFI_API_MAJOR,
                     XLA_FFI_API_MINOR};
  api.internal_api = nullptr;  // XLA's own handlers' back door; Kiln has none
  api.XLA_FFI_Error_Create = ErrorCreate;
  api.XLA_FFI_Error_GetDetails = ErrorGetDetails;
  api.XLA_FFI_Error_Destroy = ErrorDestroy;
  api.XLA_FFI_Handler_Register = HandlerRegister;
  api.XLA_FFI_Stream_Get = StreamGet;
  api.XLA_FFI_Type_Register = TypeRegister;
  api.XLA_FFI_InvokeContext_Get = InvokeContextGet;
  api.XLA_FFI_State_Set = StateSet;
  api.XLA_FFI_State_Get = StateGet;
  api.XLA_FFI_DeviceMemory_Allocate = DeviceMemoryAllocate;
  api.XLA_FFI_DeviceMemory_Free = DeviceMemoryFree;
  api.XLA_FFI_ThreadPool_Schedule = ThreadPoolSchedule;
  api.XLA_FFI_ThreadPool_NumThreads = ThreadPoolNumThreads;
  api.XLA_FFI_Future_Create = FutureCreate;
  api.XLA_FFI_Future_SetAvailable = FutureSetAvailable;
  api.XLA_FFI_Future_SetError = FutureSetError;
  api.XLA_FFI_RunId_Get = RunIdGet;
  api.XLA_FFI_DeviceOrdinal_Get = DeviceOrdinalGet;
  api.XLA_FFI_InvokeContext_FindExtension = InvokeContextFindExtension;
  api.XLA_FFI_CustomOptions_Get = CustomOptionsGet;
  return api;
}

}  // namespace

const XLA_FFI_Api* Api() {
  static const XLA_FFI_Api api = MakeApi();
  return &api;
}

}  // namespace kiln::ffi
