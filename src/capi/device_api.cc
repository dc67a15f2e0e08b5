// PJRT_DeviceDescription_* and PJRT_Device_*.
#include "capi/call.h"
#include "capi/convert.h"
#include "capi/functions.h"
#include "capi/handles.h"

namespace kiln::capi {
namespace {

// Device attributes handed out by PJRT_Device_GetAttributes; freed by its deleter.
struct AttributesCopy {
  NamedValues values;
};

void DeleteAttributes(PJRT_Device_Attributes* attributes) {
  delete reinterpret_cast<AttributesCopy*>(attributes);
}

}  // namespace

PJRT_Error* Impl::PJRT_DeviceDescription_Id(PJRT_DeviceDescription_Id_Args* args) {
  KILN_ARGS(id);
  KILN_CAPI_ASSIGN_OR_RETURN(auto* description, UnwrapDescription(args->device_description));
  args->id = description->description->id;
  return nullptr;
}

PJRT_Error* Impl::PJRT_DeviceDescription_ProcessIndex(
    PJRT_DeviceDescription_ProcessIndex_Args* args) {
  KILN_ARGS(process_index);
  KILN_CAPI_ASSIGN_OR_RETURN(auto* description, UnwrapDescription(args->device_description));
  args->process_index = description->description->process_index;
  return nullptr;
}

PJRT_Error* Impl::PJRT_DeviceDescription_Attributes(PJRT_DeviceDescription_Attributes_Args* args) {
  KILN_ARGS(attributes);
  KILN_CAPI_ASSIGN_OR_RETURN(auto* description, UnwrapDescription(args->device_description));
  args->attributes = description->attributes.values.data();
  args->num_attributes = description->attributes.values.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_DeviceDescription_Kind(PJRT_DeviceDescription_Kind_Args* args) {
  KILN_ARGS(device_kind_size);
  KILN_CAPI_ASSIGN_OR_RETURN(auto* description, UnwrapDescription(args->device_description));
  args->device_kind = description->description->kind.c_str();
  args->device_kind_size = description->description->kind.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_DeviceDescription_DebugString(
    PJRT_DeviceDescription_DebugString_Args* args) {
  KILN_ARGS(debug_string_size);
  KILN_CAPI_ASSIGN_OR_RETURN(auto* description, UnwrapDescription(args->device_description));
  args->debug_string = description->description->debug_string.c_str();
  args->debug_string_size = description->description->debug_string.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_DeviceDescription_ToString(PJRT_DeviceDescription_ToString_Args* args) {
  KILN_ARGS(to_string_size);
  KILN_CAPI_ASSIGN_OR_RETURN(auto* description, UnwrapDescription(args->device_description));
  args->to_string = description->description->to_string.c_str();
  args->to_string_size = description->description->to_string.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Device_GetDescription(PJRT_Device_GetDescription_Args* args) {
  KILN_ARGS(device_description);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapDevice(args->device));
  args->device_description = &device->description;
  return nullptr;
}

PJRT_Error* Impl::PJRT_Device_IsAddressable(PJRT_Device_IsAddressable_Args* args) {
  KILN_ARGS(is_addressable);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapDevice(args->device));
  args->is_addressable = device->device->addressable();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Device_LocalHardwareId(PJRT_Device_LocalHardwareId_Args* args) {
  KILN_ARGS(local_hardware_id);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapDevice(args->device));
  args->local_hardware_id = device->device->local_hardware_id();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Device_AddressableMemories(PJRT_Device_AddressableMemories_Args* args) {
  KILN_ARGS(num_memories);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapDevice(args->device));
  args->memories = device->memories.data();
  args->num_memories = device->memories.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Device_DefaultMemory(PJRT_Device_DefaultMemory_Args* args) {
  KILN_ARGS(memory);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapAddressableDevice(args->device));
  args->memory = device->memories.front();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Device_MemoryStats(PJRT_Device_MemoryStats_Args* args) {
  KILN_ARGS(bytes_in_use);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapAddressableDevice(args->device));
  const runtime::MemorySpace* space = device->device->default_memory_space();
  const runtime::MemoryCounters& counters = *space->counters();
  args->bytes_in_use = counters.bytes_in_use.load();
  // Optional fields exist only in callers' structs that are new enough.
  if (KILN_HAS_FIELD(peak_bytes_in_use_is_set)) {
    args->peak_bytes_in_use = counters.peak_bytes_in_use.load();
    args->peak_bytes_in_use_is_set = true;
  }
  if (KILN_HAS_FIELD(num_allocs_is_set)) {
    args->num_allocs = counters.num_allocs.load();
    args->num_allocs_is_set = true;
  }
  if (KILN_HAS_FIELD(largest_alloc_size_is_set)) {
    args->largest_alloc_size = counters.largest_alloc_size.load();
    args->largest_alloc_size_is_set = true;
  }
  if (KILN_HAS_FIELD(bytes_limit_is_set)) {
    args->bytes_limit = space->backend()->MemoryLimitBytes();
    args->bytes_limit_is_set = args->bytes_limit > 0;
  }
  // Kiln has no pool or reservations: the remaining fields stay unset.
  if (KILN_HAS_FIELD(bytes_reserved_is_set)) args->bytes_reserved_is_set = false;
  if (KILN_HAS_FIELD(peak_bytes_reserved_is_set)) args->peak_bytes_reserved_is_set = false;
  if (KILN_HAS_FIELD(bytes_reservable_limit_is_set)) args->bytes_reservable_limit_is_set = false;
  if (KILN_HAS_FIELD(largest_free_block_bytes_is_set)) {
    args->largest_free_block_bytes_is_set = false;
  }
  if (KILN_HAS_FIELD(pool_bytes_is_set)) args->pool_bytes_is_set = false;
  if (KILN_HAS_FIELD(peak_pool_bytes_is_set)) args->peak_pool_bytes_is_set = false;
  if (KILN_HAS_FIELD(peak_allocated_bytes_is_set)) {
    args->peak_allocated_bytes = counters.peak_bytes_in_use.load();
    args->peak_allocated_bytes_is_set = true;
  }
  return nullptr;
}

PJRT_Error* Impl::PJRT_Device_ClearMemoryStats(PJRT_Device_ClearMemoryStats_Args* args) {
  KILN_ARGS(device);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapAddressableDevice(args->device));
  device->device->default_memory_space()->counters()->ClearPeaks();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Device_GetAttributes(PJRT_Device_GetAttributes_Args* args) {
  KILN_ARGS(attributes_deleter);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapDevice(args->device));
  auto* copy = new AttributesCopy{ToNamedValues(device->device->description().attributes)};
  args->attributes = copy->values.values.data();
  args->num_attributes = copy->values.values.size();
  args->device_attributes = reinterpret_cast<PJRT_Device_Attributes*>(copy);
  args->attributes_deleter = &DeleteAttributes;
  return nullptr;
}

PJRT_Error* Impl::PJRT_Device_PoisonExecution(PJRT_Device_PoisonExecution_Args* args) {
  KILN_ARGS(num_payload);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapDevice(args->device));
  KILN_CAPI_RETURN_IF_ERROR(CheckErrorCode(args->error_code, "error_code"));
  if (args->error_code == PJRT_Error_Code_OK) {
    return MakeError(InvalidArgument(CurrentFunction(), ": `error_code` is OK; expected the "
                                                        "error the poisoned run's outputs carry"));
  }
  // Payloads are checked but not kept: Kiln's errors carry none.
  KILN_CAPI_ASSIGN_OR_RETURN(auto payload, FromNamedValues(args->payload, args->num_payload));
  (void)payload;
  Status error = StatusFromPjrt(args->error_code, args->error_message, args->error_message_size);
  args->poisoned = device->device->executions().Poison(args->launch_id, error);
  return nullptr;
}

PJRT_Error* Impl::PJRT_Device_CreateAsyncTrackingEvent(
    PJRT_Device_CreateAsyncTrackingEvent_Args* args) {
  KILN_ARGS(event);
  args->event = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapDevice(args->device));
  if (args->description == nullptr && args->description_size > 0) {
    return MakeError(InvalidArgument(CurrentFunction(),
                                     ": `description` is null but "
                                     "`description_size` is ",
                                     args->description_size));
  }
  std::string description(args->description == nullptr ? "" : args->description,
                          args->description_size);
  args->event = NewHandle<PJRT_AsyncTrackingEvent>(
      HandleKind::kAsyncTrackingEvent,
      device->device->CreateAsyncTrackingEvent(std::move(description)));
  return nullptr;
}

PJRT_Error* Impl::PJRT_AsyncTrackingEvent_Destroy(PJRT_AsyncTrackingEvent_Destroy_Args* args) {
  KILN_ARGS(event);
  return DestroyLiveHandle(args->event, &UnwrapAsyncTrackingEvent);
}

}  // namespace kiln::capi
