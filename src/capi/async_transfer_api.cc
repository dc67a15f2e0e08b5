// PJRT_Client_CreateBuffersForAsyncHostToDevice and the
// PJRT_AsyncHostToDeviceTransferManager_* family: translation onto
// runtime::AsyncHostToDeviceTransferManager.
#include "capi/call.h"
#include "capi/convert.h"
#include "capi/functions.h"
#include "capi/handles.h"

namespace kiln::capi {
namespace {

using Args = PJRT_Client_CreateBuffersForAsyncHostToDevice_Args;

// The shapes the specs ask for; a device layout given for one must be
// Kiln's dense row-major layout.
StatusOr<std::vector<Shape>> ShapesOf(const Args& args) {
  if (args.num_shape_specs > 0 && args.shape_specs == nullptr) {
    return InvalidArgument(CurrentFunction(), ": `shape_specs` is null but `num_shape_specs` is ",
                           args.num_shape_specs);
  }
  if (args.num_device_layouts != 0 &&
      (args.num_device_layouts != args.num_shape_specs || args.device_layouts == nullptr)) {
    return InvalidArgument(CurrentFunction(),
                           ": expected no device layouts or one per shape "
                           "spec (",
                           args.num_shape_specs, "), found `num_device_layouts` ",
                           args.num_device_layouts,
                           args.device_layouts == nullptr ? " with a null `device_layouts`" : "");
  }
  std::vector<Shape> shapes;
  for (size_t i = 0; i < args.num_shape_specs; ++i) {
    const PJRT_ShapeSpec& spec = args.shape_specs[i];
    if (spec.struct_size < PJRT_ShapeSpec_STRUCT_SIZE) {
      return InvalidArgument(CurrentFunction(), ": shape_specs[", i, "].struct_size is ",
                             spec.struct_size, "; expected PJRT_ShapeSpec_STRUCT_SIZE (",
                             PJRT_ShapeSpec_STRUCT_SIZE, ")");
    }
    StatusOr<Shape> shape = MakeShape(spec.element_type, spec.dims, spec.num_dims);
    if (!shape.ok()) {
      return Status(shape.status().code(),
                    StrCat(shape.status().message(), " (in shape_specs[", i, "])"));
    }
    if (args.num_device_layouts > 0) {
      KILN_RETURN_IF_ERROR(CheckDeviceLayout(args.device_layouts[i], *shape));
    }
    shapes.push_back(std::move(shape).value());
  }
  return shapes;
}

// Hands out the event of a transfer just sent, or its error.
PJRT_Error* HandOut(StatusOr<std::shared_ptr<runtime::Event>> done, PJRT_Event** event) {
  if (!done.ok()) return MakeError(InFunction(done.status()));
  *event = NewEvent(std::move(done).value());
  return nullptr;
}

}  // namespace

PJRT_Error* Impl::PJRT_Client_CreateBuffersForAsyncHostToDevice(Args* args) {
  KILN_ARGS(transfer_manager);
  args->transfer_manager = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  if (args->memory == nullptr) {
    return MakeError(InvalidArgument(CurrentFunction(), ": `memory` is null; expected the "
                                                        "memory the buffers are made in"));
  }
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::MemorySpace* space,
                             ResolveDestination(client, nullptr, args->memory));
  KILN_CAPI_ASSIGN_OR_RETURN(std::vector<Shape> shapes, ShapesOf(*args));
  KILN_CAPI_ASSIGN_OR_RETURN(
      auto manager,
      InFunction(runtime::AsyncHostToDeviceTransferManager::Create(std::move(shapes), space)));
  args->transfer_manager = NewHandle<PJRT_AsyncHostToDeviceTransferManager>(
      HandleKind::kTransferManager, std::move(manager), client, client->alive);
  return nullptr;
}

PJRT_Error* Impl::PJRT_AsyncHostToDeviceTransferManager_Destroy(
    PJRT_AsyncHostToDeviceTransferManager_Destroy_Args* args) {
  KILN_ARGS(transfer_manager);
  return DestroyLiveHandle(args->transfer_manager, &UnwrapTransferManagerForDestroy);
}

PJRT_Error* Impl::PJRT_AsyncHostToDeviceTransferManager_TransferData(
    PJRT_AsyncHostToDeviceTransferManager_TransferData_Args* args) {
  KILN_ARGS(done_with_h2d_transfer);
  args->done_with_h2d_transfer = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_AsyncHostToDeviceTransferManager* manager,
                             UnwrapTransferManager(args->transfer_manager));
  return HandOut(manager->manager->TransferData(args->buffer_index, args->data, args->offset,
                                                args->transfer_size, args->is_last_transfer),
                 &args->done_with_h2d_transfer);
}

PJRT_Error* Impl::PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(
    PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args* args) {
  KILN_ARGS(done_with_h2d_transfer);
  args->done_with_h2d_transfer = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_AsyncHostToDeviceTransferManager* manager,
                             UnwrapTransferManager(args->transfer_manager));
  KILN_CAPI_ASSIGN_OR_RETURN(
      Shape shape, MakeShape(args->shape_element_type, args->shape_dims, args->shape_num_dims));
  KILN_CAPI_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                             HostLayoutStrides(args->shape_layout, shape));
  return HandOut(manager->manager->TransferLiteral(args->buffer_index, args->data, shape, strides),
                 &args->done_with_h2d_transfer);
}

PJRT_Error* Impl::PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(
    PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args* args) {
  KILN_ARGS(buffer_out);
  args->buffer_out = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_AsyncHostToDeviceTransferManager* manager,
                             UnwrapTransferManager(args->transfer_manager));
  KILN_CAPI_ASSIGN_OR_RETURN(auto buffer,
                             InFunction(manager->manager->RetrieveBuffer(args->buffer_index)));
  args->buffer_out = NewBuffer(manager->client, std::move(buffer));
  return nullptr;
}

PJRT_Error* Impl::PJRT_AsyncHostToDeviceTransferManager_Device(
    PJRT_AsyncHostToDeviceTransferManager_Device_Args* args) {
  KILN_ARGS(device_out);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_AsyncHostToDeviceTransferManager* manager,
                             UnwrapTransferManager(args->transfer_manager));
  args->device_out = manager->client->FindDevice(manager->manager->device());
  return nullptr;
}

PJRT_Error* Impl::PJRT_AsyncHostToDeviceTransferManager_BufferCount(
    PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args* args) {
  KILN_ARGS(buffer_count);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_AsyncHostToDeviceTransferManager* manager,
                             UnwrapTransferManager(args->transfer_manager));
  args->buffer_count = manager->manager->buffer_count();
  return nullptr;
}

PJRT_Error* Impl::PJRT_AsyncHostToDeviceTransferManager_BufferSize(
    PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args* args) {
  KILN_ARGS(buffer_size);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_AsyncHostToDeviceTransferManager* manager,
                             UnwrapTransferManager(args->transfer_manager));
  KILN_CAPI_ASSIGN_OR_RETURN(args->buffer_size,
                             InFunction(manager->manager->buffer_size(args->buffer_index)));
  return nullptr;
}

PJRT_Error* Impl::PJRT_AsyncHostToDeviceTransferManager_SetBufferError(
    PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args* args) {
  KILN_ARGS(error_message_size);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_AsyncHostToDeviceTransferManager* manager,
                             UnwrapTransferManager(args->transfer_manager));
  KILN_CAPI_RETURN_IF_ERROR(CheckErrorCode(args->error_code, "error_code"));
  Status error = StatusFromPjrt(args->error_code, args->error_message, args->error_message_size);
  return MakeError(InFunction(manager->manager->SetBufferError(args->buffer_index,
                                                               std::move(error))));
}

PJRT_Error* Impl::PJRT_AsyncHostToDeviceTransferManager_AddMetadata(
    PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args* args) {
  KILN_ARGS(num_metadata);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_AsyncHostToDeviceTransferManager* manager,
                             UnwrapTransferManager(args->transfer_manager));
  KILN_CAPI_ASSIGN_OR_RETURN(std::vector<runtime::Attribute> values,
                             FromNamedValues(args->transfer_metadata, args->num_metadata));
  std::vector<std::pair<std::string, std::string>> entries;
  for (runtime::Attribute& value : values) {
    auto* text = std::get_if<std::string>(&value.value);
    if (text == nullptr) {
      return MakeError(InvalidArgument(CurrentFunction(), ": transfer metadata \"", value.name,
                                       "\" must be a string (PJRT_NamedValue_kString), found "
                                       "another type"));
    }
    entries.emplace_back(std::move(value.name), std::move(*text));
  }
  manager->manager->AddMetadata(entries);
  return nullptr;
}

}  // namespace kiln::capi
