// Host transfers: the program's stablehlo.send / recv with is_host_transfer
// (how JAX runs jax.debug.print, pure_callback and io_callback on a plugin)
// meet the PJRT_SendCallbackInfo / PJRT_RecvCallbackInfo the framework put in
// PJRT_ExecuteOptions, and the PJRT_CopyToDeviceStream a recv callback fills.
// docs/framework-notes.md "Host callbacks" has the protocol.
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "capi/call.h"
#include "capi/error.h"
#include "capi/functions.h"
#include "capi/handles.h"
#include "compiler/executor.h"

namespace kiln::capi {

struct StreamState {
  std::mutex mutex;
  std::condition_variable changed;
  uint8_t* destination = nullptr;
  int64_t total = 0;
  int64_t current = 0;
  bool destroyed = false;
};

namespace {

// What a send callback calls to report an error: a Kiln PJRT_Error.
PJRT_Error* CallbackError(PJRT_Error_Code code, const char* message, size_t message_size) {
  return MakeError(StatusFromPjrt(code, message, message_size));
}

// The status of an error a callback returned, which is destroyed.
Status TakeError(PJRT_Error* error, int64_t channel) {
  const Status& status = ErrorStatus(error);
  Status result(status.code(),
                StrCat("the host callback on channel ", channel, " failed: ", status.message()));
  PJRT_Error_Destroy_Args destroy{PJRT_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
  ErrorDestroy(&destroy);
  return result;
}

class CallbackHostTransfer final : public compiler::HostTransfer {
 public:
  std::unordered_map<int64_t, PJRT_SendCallbackInfo> sends;
  std::unordered_map<int64_t, PJRT_RecvCallbackInfo> recvs;

  Status Send(int64_t channel, const Shape& shape, const void* data) override {
    auto it = sends.find(channel);
    if (it == sends.end() || it->second.send_callback == nullptr) {
      return FailedPrecondition("stablehlo.send on host channel ", channel,
                                ": the execute options have no send callback for it");
    }
    const size_t bytes = shape.ByteSize();
    // The callback owns the chunk and frees it through the deleter.
    void* copy = std::malloc(bytes == 0 ? 1 : bytes);
    if (copy == nullptr) return ResourceExhausted("out of host memory sending ", bytes, " bytes");
    if (bytes > 0) std::memcpy(copy, data, bytes);
    PJRT_Chunk chunk{copy, bytes, [](void* chunk_data, void*) { std::free(chunk_data); }, nullptr};
    PJRT_CallbackError report = &CallbackError;
    PJRT_Error* error = it->second.send_callback(&chunk, &report, bytes, /*done=*/true,
                                                 it->second.user_arg);
    return error == nullptr ? Status::Ok() : TakeError(error, channel);
  }

  Status Recv(int64_t channel, const Shape& shape, void* data) override {
    auto it = recvs.find(channel);
    if (it == recvs.end() || it->second.recv_callback == nullptr) {
      return FailedPrecondition("stablehlo.recv on host channel ", channel,
                                ": the execute options have no recv callback for it");
    }
    auto state = std::make_shared<StreamState>();
    state->destination = static_cast<uint8_t*>(data);
    state->total = static_cast<int64_t>(shape.ByteSize());
    // The callback owns the handle and destroys it; chunks may arrive now
    // or later from another thread.
    it->second.recv_callback(new PJRT_CopyToDeviceStream{state}, it->second.user_arg);
    std::unique_lock lock(state->mutex);
    state->changed.wait(lock, [&] { return state->current == state->total || state->destroyed; });
    if (state->current != state->total) {
      return FailedPrecondition("the host closed channel ", channel, " after ", state->current,
                                " of ", state->total, " bytes of ", shape.ToString());
    }
    return Status::Ok();
  }
};

StatusOr<PJRT_CopyToDeviceStream*> UnwrapStream(PJRT_CopyToDeviceStream* stream) {
  if (stream == nullptr || stream->state == nullptr) {
    return InvalidArgument("`stream` is null; expected a PJRT_CopyToDeviceStream from a recv "
                           "callback");
  }
  return stream;
}

}  // namespace

std::shared_ptr<compiler::HostTransfer> HostTransferFor(const PJRT_ExecuteOptions* options,
                                                        size_t device_index) {
  if (options == nullptr || (options->num_send_ops == 0 && options->num_recv_ops == 0)) {
    return nullptr;
  }
  auto transfer = std::make_shared<CallbackHostTransfer>();
  if (options->send_callbacks != nullptr && options->send_callbacks[device_index] != nullptr) {
    for (size_t i = 0; i < options->num_send_ops; ++i) {
      const PJRT_SendCallbackInfo& info = options->send_callbacks[device_index][i];
      transfer->sends[info.channel_id] = info;
    }
  }
  if (options->recv_callbacks != nullptr && options->recv_callbacks[device_index] != nullptr) {
    for (size_t i = 0; i < options->num_recv_ops; ++i) {
      const PJRT_RecvCallbackInfo& info = options->recv_callbacks[device_index][i];
      transfer->recvs[info.channel_id] = info;
    }
  }
  return transfer;
}

PJRT_Error* Impl::PJRT_CopyToDeviceStream_Destroy(PJRT_CopyToDeviceStream_Destroy_Args* args) {
  KILN_ARGS(stream);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_CopyToDeviceStream* stream, UnwrapStream(args->stream));
  {
    std::lock_guard lock(stream->state->mutex);
    stream->state->destroyed = true;
  }
  stream->state->changed.notify_all();
  delete stream;
  return nullptr;
}

PJRT_Error* Impl::PJRT_CopyToDeviceStream_AddChunk(PJRT_CopyToDeviceStream_AddChunk_Args* args) {
  KILN_ARGS(transfer_complete);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_CopyToDeviceStream* stream, UnwrapStream(args->stream));
  if (args->chunk == nullptr) {
    return MakeError(InvalidArgument(CurrentFunction(), ": `chunk` is null"));
  }
  PJRT_Chunk& chunk = *args->chunk;
  Status status = Status::Ok();
  {
    StreamState& state = *stream->state;
    std::lock_guard lock(state.mutex);
    const auto size = static_cast<int64_t>(chunk.size);
    if (chunk.size > 0 && chunk.data == nullptr) {
      status = InvalidArgument(CurrentFunction(), ": the chunk's data is null");
    } else if (size > state.total - state.current) {
      status = InvalidArgument(CurrentFunction(), ": a chunk of ", size,
                               " bytes overruns the "
                               "stream (",
                               state.current, " of ", state.total, " bytes already written)");
    } else {
      if (size > 0) std::memcpy(state.destination + state.current, chunk.data, chunk.size);
      state.current += size;
    }
  }
  stream->state->changed.notify_all();
  // The stream owns the chunk: free it whether or not it was taken.
  if (chunk.deleter != nullptr) chunk.deleter(chunk.data, chunk.deleter_arg);
  KILN_CAPI_RETURN_IF_ERROR(status);
  args->transfer_complete = NewEvent(runtime::Event::Ready());
  return nullptr;
}

PJRT_Error* Impl::PJRT_CopyToDeviceStream_TotalBytes(
    PJRT_CopyToDeviceStream_TotalBytes_Args* args) {
  KILN_ARGS(total_bytes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_CopyToDeviceStream* stream, UnwrapStream(args->stream));
  std::lock_guard lock(stream->state->mutex);
  args->total_bytes = stream->state->total;
  return nullptr;
}

PJRT_Error* Impl::PJRT_CopyToDeviceStream_GranuleSize(
    PJRT_CopyToDeviceStream_GranuleSize_Args* args) {
  KILN_ARGS(granule_size_in_bytes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_CopyToDeviceStream* stream, UnwrapStream(args->stream));
  (void)stream;
  args->granule_size_in_bytes = 1;  // chunks may be any size
  return nullptr;
}

PJRT_Error* Impl::PJRT_CopyToDeviceStream_CurrentBytes(
    PJRT_CopyToDeviceStream_CurrentBytes_Args* args) {
  KILN_ARGS(current_bytes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_CopyToDeviceStream* stream, UnwrapStream(args->stream));
  std::lock_guard lock(stream->state->mutex);
  args->current_bytes = stream->state->current;
  return nullptr;
}

}  // namespace kiln::capi
