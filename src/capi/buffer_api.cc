// PJRT_Buffer_*: translation onto runtime::Buffer and runtime::Client transfers.
#include "capi/call.h"
#include "capi/convert.h"
#include "capi/functions.h"
#include "capi/handles.h"
#include "runtime/strided_copy.h"

namespace kiln::capi {
namespace {

// Copies `buffer` into `space` (of the buffer's own client).
PJRT_Error* CopyInto(PJRT_Buffer* buffer, runtime::MemorySpace* space, PJRT_Buffer** out) {
  KILN_CAPI_ASSIGN_OR_RETURN(auto copy,
                             buffer->client->client->CopyToMemorySpace(*buffer->buffer, space));
  *out = NewBuffer(buffer->client, std::move(copy));
  return nullptr;
}

// The callback_data of PJRT_Buffer_CopyRawToHostFuture: where the copy goes.
struct RawCopyCallback {
  std::shared_ptr<runtime::HostDestination> destination;
};
// The callback_data of PJRT_Buffer_DonateWithControlDependency: the
// dependency the new buffer waits for.
struct DonationCallback {
  std::shared_ptr<runtime::Event> dependency;
};

// The body of a one-shot callback whose args start like
// PJRT_Buffer_CopyRawToHostFuture_Callback_Args: takes `callback_data`
// (registered as `kind`) once and calls `act(data, status)` with the
// status the caller reports. Callbacks return nothing, so a call that
// cannot be honoured (null args, data already used or never handed out)
// changes nothing; a too-small struct or an unknown error code becomes the
// status itself.
template <typename Data, typename CallbackArgs, typename Act>
void RunCallbackOnce(CallbackArgs* args, HandleKind kind, Act act) {
  constexpr size_t kDataEnd = offsetof(CallbackArgs, callback_data) + sizeof(void*);
  if (args == nullptr || args->struct_size < kDataEnd || !TakeHandle(args->callback_data, kind)) {
    return;
  }
  std::unique_ptr<Data> data(static_cast<Data*>(args->callback_data));
  // An unknown error code reads as INVALID_ARGUMENT naming it.
  act(*data, args->struct_size < offsetof(CallbackArgs, error_message_size) + sizeof(size_t)
                 ? InvalidArgument("the callback's args struct_size is ", args->struct_size,
                                   "; expected at least ", sizeof(CallbackArgs))
                 : StatusFromPjrt(args->error_code, args->error_message, args->error_message_size));
}

void ProvideRawCopyDestination(PJRT_Buffer_CopyRawToHostFuture_Callback_Args* args) {
  RunCallbackOnce<RawCopyCallback>(
      args, HandleKind::kRawCopyCallback, [args](RawCopyCallback& callback, Status status) {
        // Fail and Provide only refuse a second setting, which TakeHandle rules out.
        if (!status.ok()) {
          (void)callback.destination->Fail(std::move(status));
        } else if (args->struct_size < PJRT_Buffer_CopyRawToHostFuture_Callback_Args_STRUCT_SIZE) {
          (void)callback.destination->Fail(InvalidArgument("the callback's args struct_size is ",
                                                           args->struct_size,
                                                           "; it does not reach `dst`"));
        } else {
          (void)callback.destination->Provide(args->dst);
        }
      });
}

void SetDonationDependency(PJRT_Buffer_DonateWithControlDependency_Callback_Args* args) {
  RunCallbackOnce<DonationCallback>(args, HandleKind::kDonationCallback,
                                    [](DonationCallback& callback, Status status) {
                                      callback.dependency->Set(std::move(status));
                                    });
}

}  // namespace

PJRT_Error* Impl::PJRT_Buffer_Destroy(PJRT_Buffer_Destroy_Args* args) {
  KILN_ARGS(buffer);
  return DestroyLiveHandle(args->buffer, &UnwrapBufferForDestroy);
}

PJRT_Error* Impl::PJRT_Buffer_ElementType(PJRT_Buffer_ElementType_Args* args) {
  KILN_ARGS(type);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  args->type = ToPjrtType(buffer->buffer->shape().element_type);
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_Dimensions(PJRT_Buffer_Dimensions_Args* args) {
  KILN_ARGS(num_dims);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  args->dims = buffer->buffer->shape().dims.data();
  args->num_dims = buffer->buffer->shape().dims.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_UnpaddedDimensions(PJRT_Buffer_UnpaddedDimensions_Args* args) {
  KILN_ARGS(num_dims);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  // Kiln arrays are never padded.
  args->unpadded_dims = buffer->buffer->shape().dims.data();
  args->num_dims = buffer->buffer->shape().dims.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_DynamicDimensionIndices(
    PJRT_Buffer_DynamicDimensionIndices_Args* args) {
  KILN_ARGS(num_dynamic_dims);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  (void)buffer;
  args->dynamic_dim_indices = nullptr;
  args->num_dynamic_dims = 0;
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_GetMemoryLayout(PJRT_Buffer_GetMemoryLayout_Args* args) {
  KILN_ARGS(layout);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  PJRT_Buffer_MemoryLayout& layout = args->layout;
  layout = PJRT_Buffer_MemoryLayout{};
  layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  const std::span<const int64_t> minor_to_major = MinorToMajor(*buffer);
  layout.tiled.minor_to_major = minor_to_major.data();
  layout.tiled.minor_to_major_size = minor_to_major.size();
  layout.tiled.num_tiles = 0;
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_OnDeviceSizeInBytes(PJRT_Buffer_OnDeviceSizeInBytes_Args* args) {
  KILN_ARGS(on_device_size_in_bytes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  args->on_device_size_in_bytes = buffer->buffer->shape().ByteSize();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_Device(PJRT_Buffer_Device_Args* args) {
  KILN_ARGS(device);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  args->device = buffer->client->FindDevice(buffer->buffer->device());
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_Memory(PJRT_Buffer_Memory_Args* args) {
  KILN_ARGS(memory);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  args->memory = buffer->client->FindMemory(buffer->buffer->memory_space());
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_Delete(PJRT_Buffer_Delete_Args* args) {
  KILN_ARGS(buffer);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  buffer->buffer->Delete();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_IsDeleted(PJRT_Buffer_IsDeleted_Args* args) {
  KILN_ARGS(is_deleted);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  args->is_deleted = buffer->buffer->IsDeleted();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_CopyToDevice(PJRT_Buffer_CopyToDevice_Args* args) {
  KILN_ARGS(dst_buffer);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapAddressableDevice(args->dst_device, "dst_device"));
  if (device->client != buffer->client) {
    return MakeError(InvalidArgument("PJRT_Buffer_CopyToDevice: dst_device ",
                                     device->device->description().debug_string,
                                     " belongs to another client than the buffer"));
  }
  return CopyInto(buffer, device->device->default_memory_space(), &args->dst_buffer);
}

PJRT_Error* Impl::PJRT_Buffer_CopyToMemory(PJRT_Buffer_CopyToMemory_Args* args) {
  KILN_ARGS(dst_buffer);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  KILN_CAPI_ASSIGN_OR_RETURN(KilnMemory* memory, UnwrapMemory(args->dst_memory, "dst_memory"));
  if (memory->client != buffer->client) {
    return MakeError(InvalidArgument("PJRT_Buffer_CopyToMemory: dst_memory ",
                                     memory->space->debug_string(),
                                     " belongs to another client than the buffer"));
  }
  return CopyInto(buffer, memory->space, &args->dst_buffer);
}

PJRT_Error* Impl::PJRT_Buffer_ToHostBuffer(PJRT_Buffer_ToHostBuffer_Args* args) {
  KILN_ARGS(event);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->src, "src"));
  const Shape& shape = buffer->buffer->shape();
  KILN_CAPI_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                             HostLayoutStrides(args->host_layout, shape));
  const size_t element_bytes = GetElementTypeInfo(shape.element_type).storage_bytes;
  runtime::ByteExtent extent = runtime::StridedExtent(shape.dims, strides, element_bytes);
  if (extent.overflow || extent.lowest < 0) {
    return MakeError(InvalidArgument("PJRT_Buffer_ToHostBuffer: the host layout's strides must "
                                     "be non-negative and addressable"));
  }
  const auto required = static_cast<size_t>(extent.highest);
  if (args->dst == nullptr) {
    args->dst_size = required;  // a size query
    args->event = nullptr;
    return nullptr;
  }
  if (args->dst_size < required) {
    return MakeError(InvalidArgument("PJRT_Buffer_ToHostBuffer: dst_size is ", args->dst_size,
                                     " bytes; ", shape.ToString(),
                                     " in the requested layout needs ", required));
  }
  KILN_CAPI_ASSIGN_OR_RETURN(auto event,
                             buffer->client->client->ToHostBuffer(*buffer->buffer, args->dst, strides));
  args->event = NewEvent(std::move(event));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_CopyRawToHost(PJRT_Buffer_CopyRawToHost_Args* args) {
  KILN_ARGS(event);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  KILN_CAPI_ASSIGN_OR_RETURN(auto event, buffer->client->client->CopyRawToHost(
                                             *buffer->buffer, args->dst, args->offset,
                                             args->transfer_size));
  args->event = NewEvent(std::move(event));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_CopyRawToHostFuture(PJRT_Buffer_CopyRawToHostFuture_Args* args) {
  KILN_ARGS(future_ready_callback);
  args->event = nullptr;
  args->callback_data = nullptr;
  args->future_ready_callback = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::FutureHostCopy copy,
                             InFunction(buffer->client->client->CopyRawToHostFuture(
                                 *buffer->buffer, args->offset, args->transfer_size)));
  args->event = NewEvent(std::move(copy.done));
  args->callback_data = NewHandle<RawCopyCallback>(HandleKind::kRawCopyCallback,
                                                   std::move(copy.destination));
  args->future_ready_callback = &ProvideRawCopyDestination;
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_Bitcast(PJRT_Buffer_Bitcast_Args* args) {
  KILN_ARGS(out_buffer);
  args->out_buffer = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  KILN_CAPI_ASSIGN_OR_RETURN(Shape shape,
                             MakeShape(args->element_type, args->dims, args->num_dims));
  KILN_CAPI_RETURN_IF_ERROR(CheckDeviceLayout(args->device_layout, shape));
  KILN_CAPI_ASSIGN_OR_RETURN(auto bitcast, InFunction(buffer->buffer->Bitcast(std::move(shape))));
  args->out_buffer = NewBuffer(buffer->client, std::move(bitcast));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_DonateWithControlDependency(
    PJRT_Buffer_DonateWithControlDependency_Args* args) {
  KILN_ARGS(out_buffer);
  args->callback_data = nullptr;
  args->dependency_ready_callback = nullptr;
  args->out_buffer = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  auto dependency = runtime::Event::Create();
  KILN_CAPI_ASSIGN_OR_RETURN(auto donated,
                             InFunction(buffer->buffer->DonateWithControlDependency(dependency)));
  args->out_buffer = NewBuffer(buffer->client, std::move(donated));
  args->callback_data = NewHandle<DonationCallback>(HandleKind::kDonationCallback,
                                                    std::move(dependency));
  args->dependency_ready_callback = &SetDonationDependency;
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_IsOnCpu(PJRT_Buffer_IsOnCpu_Args* args) {
  KILN_ARGS(is_on_cpu);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  args->is_on_cpu = buffer->client->client->backend()->MemoryIsHostAddressable();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_ReadyEvent(PJRT_Buffer_ReadyEvent_Args* args) {
  KILN_ARGS(event);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  // A deleted buffer's event reports the deletion, as the header asks.
  auto memory = buffer->buffer->memory();
  args->event = NewEvent(memory.ok() ? buffer->buffer->ready_event()
                                     : runtime::Event::Ready(memory.status()));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_UnsafePointer(PJRT_Buffer_UnsafePointer_Args* args) {
  KILN_ARGS(buffer_pointer);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  KILN_CAPI_ASSIGN_OR_RETURN(auto memory, buffer->buffer->memory());
  args->buffer_pointer = reinterpret_cast<uintptr_t>(memory->data());
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_OpaqueDeviceMemoryDataPointer(
    PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args* args) {
  KILN_ARGS(device_memory_ptr);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  void* data = buffer->buffer->unsafe_data();
  if (data == nullptr) {
    return MakeError(FailedPrecondition("PJRT_Buffer_OpaqueDeviceMemoryDataPointer: the buffer ",
                                        buffer->buffer->shape().ToString(),
                                        " has been deleted; it holds no memory"));
  }
  args->device_memory_ptr = data;
  return nullptr;
}

PJRT_Error* Impl::PJRT_Buffer_IncreaseExternalReferenceCount(
    PJRT_Buffer_IncreaseExternalReferenceCount_Args* args) {
  KILN_ARGS(buffer);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  return MakeError(buffer->buffer->IncreaseExternalReferenceCount());
}

PJRT_Error* Impl::PJRT_Buffer_DecreaseExternalReferenceCount(
    PJRT_Buffer_DecreaseExternalReferenceCount_Args* args) {
  KILN_ARGS(buffer);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBuffer(args->buffer));
  return MakeError(buffer->buffer->DecreaseExternalReferenceCount());
}

}  // namespace kiln::capi
