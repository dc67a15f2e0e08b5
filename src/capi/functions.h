// The PJRT C API functions Kiln implements. api.cc fills every PJRT_Api slot
// from the header's own list: a slot named here gets its implementation, any
// other slot a stub returning UNIMPLEMENTED that names the function.
#pragma once

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla/pjrt/c/pjrt_c_api_ffi_extension.h"
#include "xla/pjrt/c/pjrt_c_api_layouts_extension.h"
#include "xla/pjrt/c/pjrt_c_api_shardings_extension.h"

namespace kiln::capi {

#define KILN_IMPL(name) static PJRT_Error* name(name##_Args* args)

struct Impl {
  static void PJRT_Error_Destroy(PJRT_Error_Destroy_Args* args);
  static void PJRT_Error_Message(PJRT_Error_Message_Args* args);
  KILN_IMPL(PJRT_Error_GetCode);
  KILN_IMPL(PJRT_Error_ForEachPayload);

  // plugin_api.cc
  KILN_IMPL(PJRT_Plugin_Initialize);
  KILN_IMPL(PJRT_Plugin_Attributes);

  // host_transfer_api.cc
  KILN_IMPL(PJRT_CopyToDeviceStream_Destroy);
  KILN_IMPL(PJRT_CopyToDeviceStream_AddChunk);
  KILN_IMPL(PJRT_CopyToDeviceStream_TotalBytes);
  KILN_IMPL(PJRT_CopyToDeviceStream_GranuleSize);
  KILN_IMPL(PJRT_CopyToDeviceStream_CurrentBytes);

  // event_api.cc
  KILN_IMPL(PJRT_Event_Destroy);
  KILN_IMPL(PJRT_Event_IsReady);
  KILN_IMPL(PJRT_Event_Error);
  KILN_IMPL(PJRT_Event_Await);
  KILN_IMPL(PJRT_Event_OnReady);
  KILN_IMPL(PJRT_Event_Create);
  KILN_IMPL(PJRT_Event_Set);

  // client_api.cc
  KILN_IMPL(PJRT_Client_Create);
  KILN_IMPL(PJRT_Client_Destroy);
  KILN_IMPL(PJRT_Client_PlatformName);
  KILN_IMPL(PJRT_Client_ProcessIndex);
  KILN_IMPL(PJRT_Client_UpdateGlobalProcessInfo);
  KILN_IMPL(PJRT_Client_PlatformVersion);
  KILN_IMPL(PJRT_Client_Devices);
  KILN_IMPL(PJRT_Client_AddressableDevices);
  KILN_IMPL(PJRT_Client_LookupDevice);
  KILN_IMPL(PJRT_Client_LookupAddressableDevice);
  KILN_IMPL(PJRT_Client_AddressableMemories);
  KILN_IMPL(PJRT_Client_DefaultDeviceAssignment);
  KILN_IMPL(PJRT_Client_TopologyDescription);
  KILN_IMPL(PJRT_Client_BufferFromHostBuffer);
  KILN_IMPL(PJRT_Client_CreateUninitializedBuffer);
  KILN_IMPL(PJRT_Client_CreateViewOfDeviceBuffer);
  KILN_IMPL(PJRT_Client_CreateErrorBuffer);
  KILN_IMPL(PJRT_Client_CreateAliasBuffer);
  KILN_IMPL(PJRT_Client_FulfillAliasBuffer);
  KILN_IMPL(PJRT_Client_DmaMap);
  KILN_IMPL(PJRT_Client_DmaUnmap);
  KILN_IMPL(PJRT_Client_Compile);
  KILN_IMPL(PJRT_Client_Load);
  KILN_IMPL(PJRT_Compile);

  // async_transfer_api.cc
  KILN_IMPL(PJRT_Client_CreateBuffersForAsyncHostToDevice);
  KILN_IMPL(PJRT_AsyncHostToDeviceTransferManager_Destroy);
  KILN_IMPL(PJRT_AsyncHostToDeviceTransferManager_TransferData);
  KILN_IMPL(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral);
  KILN_IMPL(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer);
  KILN_IMPL(PJRT_AsyncHostToDeviceTransferManager_Device);
  KILN_IMPL(PJRT_AsyncHostToDeviceTransferManager_BufferCount);
  KILN_IMPL(PJRT_AsyncHostToDeviceTransferManager_BufferSize);
  KILN_IMPL(PJRT_AsyncHostToDeviceTransferManager_SetBufferError);
  KILN_IMPL(PJRT_AsyncHostToDeviceTransferManager_AddMetadata);

  // device_api.cc
  KILN_IMPL(PJRT_DeviceDescription_Id);
  KILN_IMPL(PJRT_DeviceDescription_ProcessIndex);
  KILN_IMPL(PJRT_DeviceDescription_Attributes);
  KILN_IMPL(PJRT_DeviceDescription_Kind);
  KILN_IMPL(PJRT_DeviceDescription_DebugString);
  KILN_IMPL(PJRT_DeviceDescription_ToString);
  KILN_IMPL(PJRT_Device_GetDescription);
  KILN_IMPL(PJRT_Device_IsAddressable);
  KILN_IMPL(PJRT_Device_LocalHardwareId);
  KILN_IMPL(PJRT_Device_AddressableMemories);
  KILN_IMPL(PJRT_Device_DefaultMemory);
  KILN_IMPL(PJRT_Device_MemoryStats);
  KILN_IMPL(PJRT_Device_ClearMemoryStats);
  KILN_IMPL(PJRT_Device_GetAttributes);
  KILN_IMPL(PJRT_Device_PoisonExecution);
  KILN_IMPL(PJRT_Device_CreateAsyncTrackingEvent);
  KILN_IMPL(PJRT_AsyncTrackingEvent_Destroy);

  // memory_api.cc
  KILN_IMPL(PJRT_Memory_Id);
  KILN_IMPL(PJRT_Memory_Kind);
  KILN_IMPL(PJRT_Memory_Kind_Id);
  KILN_IMPL(PJRT_Memory_DebugString);
  KILN_IMPL(PJRT_Memory_ToString);
  KILN_IMPL(PJRT_Memory_AddressableByDevices);

  // buffer_api.cc
  KILN_IMPL(PJRT_Buffer_Destroy);
  KILN_IMPL(PJRT_Buffer_ElementType);
  KILN_IMPL(PJRT_Buffer_Dimensions);
  KILN_IMPL(PJRT_Buffer_UnpaddedDimensions);
  KILN_IMPL(PJRT_Buffer_DynamicDimensionIndices);
  KILN_IMPL(PJRT_Buffer_GetMemoryLayout);
  KILN_IMPL(PJRT_Buffer_OnDeviceSizeInBytes);
  KILN_IMPL(PJRT_Buffer_Device);
  KILN_IMPL(PJRT_Buffer_Memory);
  KILN_IMPL(PJRT_Buffer_Delete);
  KILN_IMPL(PJRT_Buffer_IsDeleted);
  KILN_IMPL(PJRT_Buffer_CopyToDevice);
  KILN_IMPL(PJRT_Buffer_CopyToMemory);
  KILN_IMPL(PJRT_Buffer_ToHostBuffer);
  KILN_IMPL(PJRT_Buffer_CopyRawToHost);
  KILN_IMPL(PJRT_Buffer_CopyRawToHostFuture);
  KILN_IMPL(PJRT_Buffer_Bitcast);
  KILN_IMPL(PJRT_Buffer_DonateWithControlDependency);
  KILN_IMPL(PJRT_Buffer_IsOnCpu);
  KILN_IMPL(PJRT_Buffer_ReadyEvent);
  KILN_IMPL(PJRT_Buffer_UnsafePointer);
  KILN_IMPL(PJRT_Buffer_OpaqueDeviceMemoryDataPointer);
  KILN_IMPL(PJRT_Buffer_IncreaseExternalReferenceCount);
  KILN_IMPL(PJRT_Buffer_DecreaseExternalReferenceCount);

  // topology_api.cc
  KILN_IMPL(PJRT_TopologyDescription_Create);
  KILN_IMPL(PJRT_TopologyDescription_Destroy);
  KILN_IMPL(PJRT_TopologyDescription_PlatformName);
  KILN_IMPL(PJRT_TopologyDescription_PlatformVersion);
  KILN_IMPL(PJRT_TopologyDescription_GetDeviceDescriptions);
  KILN_IMPL(PJRT_TopologyDescription_Serialize);
  KILN_IMPL(PJRT_TopologyDescription_Deserialize);
  KILN_IMPL(PJRT_TopologyDescription_Attributes);
  KILN_IMPL(PJRT_TopologyDescription_Fingerprint);
  KILN_IMPL(PJRT_TopologyDescription_GetMemorySpaceKindIds);
  KILN_IMPL(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace);

  // executable_api.cc
  KILN_IMPL(PJRT_ExecuteContext_Create);
  KILN_IMPL(PJRT_ExecuteContext_Destroy);
  KILN_IMPL(PJRT_Executable_Destroy);
  KILN_IMPL(PJRT_Executable_Name);
  KILN_IMPL(PJRT_Executable_NumReplicas);
  KILN_IMPL(PJRT_Executable_NumPartitions);
  KILN_IMPL(PJRT_Executable_NumOutputs);
  KILN_IMPL(PJRT_Executable_SizeOfGeneratedCodeInBytes);
  KILN_IMPL(PJRT_Executable_OutputElementTypes);
  KILN_IMPL(PJRT_Executable_OutputDimensions);
  KILN_IMPL(PJRT_Executable_OutputMemoryKinds);
  // The Shardings extension (executable_api.cc).
  KILN_IMPL(PJRT_Shardings_PJRT_Executable_ParameterShardings);
  KILN_IMPL(PJRT_Shardings_PJRT_Executable_OutputShardings);
  // The FFI extension (ffi_api.cc): handlers and types of jax.ffi.
  KILN_IMPL(PJRT_FFI_Type_Register);
  KILN_IMPL(PJRT_FFI_UserData_Add);
  KILN_IMPL(PJRT_FFI_Register_Handler);
  // The Layouts extension (layouts_api.cc).
  KILN_IMPL(PJRT_Layouts_MemoryLayout_Destroy);
  KILN_IMPL(PJRT_Layouts_MemoryLayout_Serialize);
  KILN_IMPL(PJRT_Layouts_PJRT_Client_GetDefaultLayout);
  KILN_IMPL(PJRT_Layouts_PJRT_Buffer_MemoryLayout);
  KILN_IMPL(PJRT_Layouts_PJRT_Topology_GetDefaultLayout);
  KILN_IMPL(PJRT_Layouts_PJRT_Executable_GetOutputLayouts);
  KILN_IMPL(PJRT_Layouts_PJRT_Executable_GetParameterLayouts);
  KILN_IMPL(PJRT_Executable_ParameterMemoryKinds);
  KILN_IMPL(PJRT_Executable_Fingerprint);
  KILN_IMPL(PJRT_Executable_OptimizedProgram);
  KILN_IMPL(PJRT_Executable_Serialize);
  KILN_IMPL(PJRT_Executable_DeserializeAndLoad);
  KILN_IMPL(PJRT_Executable_GetCompileOptions);
  KILN_IMPL(PJRT_Executable_GetCompiledMemoryStats);
  KILN_IMPL(PJRT_Executable_GetCostAnalysis);
  KILN_IMPL(PJRT_LoadedExecutable_Destroy);
  KILN_IMPL(PJRT_LoadedExecutable_GetExecutable);
  KILN_IMPL(PJRT_LoadedExecutable_AddressableDevices);
  KILN_IMPL(PJRT_LoadedExecutable_AddressableDeviceLogicalIds);
  KILN_IMPL(PJRT_LoadedExecutable_GetDeviceAssignment);
  KILN_IMPL(PJRT_LoadedExecutable_Delete);
  KILN_IMPL(PJRT_LoadedExecutable_IsDeleted);
  KILN_IMPL(PJRT_LoadedExecutable_Execute);
};

#undef KILN_IMPL

}  // namespace kiln::capi
