// PJRT_Memory_*.
#include "capi/call.h"
#include "capi/functions.h"
#include "capi/handles.h"

namespace kiln::capi {

PJRT_Error* Impl::PJRT_Memory_Id(PJRT_Memory_Id_Args* args) {
  KILN_ARGS(id);
  KILN_CAPI_ASSIGN_OR_RETURN(KilnMemory* memory, UnwrapMemory(args->memory));
  args->id = memory->space->id();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Memory_Kind(PJRT_Memory_Kind_Args* args) {
  KILN_ARGS(kind_size);
  KILN_CAPI_ASSIGN_OR_RETURN(KilnMemory* memory, UnwrapMemory(args->memory));
  std::string_view kind = memory->space->kind_name();
  args->kind = kind.data();
  args->kind_size = kind.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Memory_Kind_Id(PJRT_Memory_Kind_Id_Args* args) {
  KILN_ARGS(kind_id);
  KILN_CAPI_ASSIGN_OR_RETURN(KilnMemory* memory, UnwrapMemory(args->memory));
  args->kind_id = memory->space->kind_id();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Memory_DebugString(PJRT_Memory_DebugString_Args* args) {
  KILN_ARGS(debug_string_size);
  KILN_CAPI_ASSIGN_OR_RETURN(KilnMemory* memory, UnwrapMemory(args->memory));
  args->debug_string = memory->space->debug_string().c_str();
  args->debug_string_size = memory->space->debug_string().size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Memory_ToString(PJRT_Memory_ToString_Args* args) {
  KILN_ARGS(to_string_size);
  KILN_CAPI_ASSIGN_OR_RETURN(KilnMemory* memory, UnwrapMemory(args->memory));
  args->to_string = memory->space->to_string().c_str();
  args->to_string_size = memory->space->to_string().size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Memory_AddressableByDevices(PJRT_Memory_AddressableByDevices_Args* args) {
  KILN_ARGS(num_devices);
  KILN_CAPI_ASSIGN_OR_RETURN(KilnMemory* memory, UnwrapMemory(args->memory));
  args->devices = memory->devices.data();
  args->num_devices = memory->devices.size();
  return nullptr;
}

}  // namespace kiln::capi
