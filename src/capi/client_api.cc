// PJRT_Client_*: translation onto runtime::Client.
#include <cstdio>
#include <optional>
#include <span>

#include "backends/backends.h"
#include "base/env.h"
#include "capi/call.h"
#include "capi/convert.h"
#include "capi/functions.h"
#include "capi/handles.h"
#include "capi/key_value_store.h"

namespace kiln::capi {
namespace {

constexpr PJRT_Memory_FunctionTable kMemoryTable = {
    PJRT_Memory_FunctionTable_STRUCT_SIZE,
    nullptr,
    PJRT_Memory_STRUCT_SIZE,
    [](PJRT_Memory* memory, const void* key) -> void* {
      KilnMemory* kiln_memory = AsKiln(memory);
      std::lock_guard lock(kiln_memory->user_data_mutex);
      auto it = kiln_memory->user_data.find(key);
      return it == kiln_memory->user_data.end() ? nullptr : it->second.data;
    },
    [](PJRT_Memory* memory, const void* key, void* data, void (*dtor)(void*)) {
      KilnMemory* kiln_memory = AsKiln(memory);
      KilnMemory::UserData previous{nullptr, nullptr};
      {
        std::lock_guard lock(kiln_memory->user_data_mutex);
        auto& entry = kiln_memory->user_data[key];
        previous = entry;
        entry = {data, dtor};
      }
      if (previous.dtor != nullptr && previous.data != data) previous.dtor(previous.data);
    },
};

// Wraps a new runtime client in handles for its devices and memories.
std::unique_ptr<PJRT_Client> WrapClient(std::unique_ptr<runtime::Client> runtime_client) {
  auto client = std::make_unique<PJRT_Client>();
  client->client = std::move(runtime_client);
  runtime::Client& inner = *client->client;
  for (runtime::Device* device : inner.devices()) {
    auto handle = std::make_unique<PJRT_Device>();
    handle->device = device;
    handle->client = client.get();
    handle->description.description = &device->description();
    handle->description.attributes = ToNamedValues(device->description().attributes);
    client->device_list.push_back(handle.get());
    if (device->addressable()) client->addressable_device_list.push_back(handle.get());
    client->devices.push_back(std::move(handle));
  }
  for (runtime::MemorySpace* space : inner.memory_spaces()) {
    auto memory = std::make_unique<KilnMemory>();
    memory->vtable = &kMemoryTable;
    memory->space = space;
    memory->client = client.get();
    memory->devices.push_back(client->FindDevice(space->device()));
    client->memory_list.push_back(memory.get());
    client->memories.push_back(std::move(memory));
  }
  for (auto& device : client->devices) {
    for (runtime::MemorySpace* space : device->device->memory_spaces()) {
      device->memories.push_back(client->FindMemory(space));
    }
  }
  client->topology = MakeTopologyHandle(&inner.topology(), nullptr, inner.platform_version());
  for (auto& device : client->devices) {
    RegisterHandle(device.get(), HandleKind::kDevice);
    RegisterHandle(&device->description, HandleKind::kDeviceDescription);
  }
  for (auto& memory : client->memories) {
    RegisterHandle(static_cast<PJRT_Memory*>(memory.get()), HandleKind::kMemory);
  }
  RegisterHandle(client.get(), HandleKind::kClient);
  return client;
}

void UnregisterClient(PJRT_Client* client) {
  UnregisterHandle(client);
  for (auto& device : client->devices) {
    UnregisterHandle(device.get());
    UnregisterHandle(&device->description);
  }
  for (auto& memory : client->memories) UnregisterHandle(static_cast<PJRT_Memory*>(memory.get()));
  for (auto& description : client->topology->descriptions) UnregisterHandle(description.get());
  UnregisterHandle(client->topology.get());
}

// KILN_DUMP_DIR=<dir>: every program handed to PJRT_Client_Compile is written
// there as kiln-<FNV-1a of its bytes>.<format> (.mlir.bc for bytecode), so what a framework sent
// can be read back with `kiln print` and compared with other tools.
void DumpProgram(std::span<const uint8_t> code, const std::string& format) {
  static const std::optional<std::string> directory = GetEnv("KILN_DUMP_DIR");
  if (!directory) return;
  uint64_t hash = 1469598103934665603ull;
  for (uint8_t byte : code) hash = (hash ^ byte) * 1099511628211ull;
  char name[32];
  std::snprintf(name, sizeof(name), "kiln-%016llx", static_cast<unsigned long long>(hash));
  const bool bytecode = code.size() >= 4 && code[0] == 'M' && code[1] == 'L' && code[2] == 0xEF &&
                        code[3] == 'R';
  std::string extension = format.empty() ? "bin" : format;
  if (format == "mlir" && bytecode) extension = "mlir.bc";
  std::string path = StrCat(*directory, "/", name, ".", extension);
  if (std::FILE* file = std::fopen(path.c_str(), "wb")) {
    std::fwrite(code.data(), 1, code.size(), file);
    std::fclose(file);
  }
}

// A serialized CompileOptionsProto from the C arguments (empty when absent).
StatusOr<std::span<const uint8_t>> OptionsBytes(const char* options, size_t size) {
  if (options == nullptr && size > 0) {
    return InvalidArgument(CurrentFunction(),
                           ": `compile_options` is null but "
                           "`compile_options_size` is ",
                           size);
  }
  return std::span(reinterpret_cast<const uint8_t*>(options), options == nullptr ? 0 : size);
}

// What a compile call compiles: the program's bytes and format and the
// serialized compile options, checked; the program is dumped to
// KILN_DUMP_DIR when set.
struct CompileInput {
  std::span<const uint8_t> code;
  std::string format;
  std::span<const uint8_t> options;
};

StatusOr<CompileInput> ReadCompileInput(const PJRT_Program* program, const char* options,
                                        size_t options_size) {
  if (program == nullptr) {
    return InvalidArgument(CurrentFunction(), ": `program` is null; expected a PJRT_Program");
  }
  if (program->code == nullptr && program->code_size > 0) {
    return InvalidArgument(CurrentFunction(), ": program code is null but code_size is ",
                           program->code_size);
  }
  CompileInput input;
  input.code = std::span(reinterpret_cast<const uint8_t*>(program->code), program->code_size);
  if (program->format != nullptr) input.format.assign(program->format, program->format_size);
  KILN_ASSIGN_OR_RETURN(input.options, OptionsBytes(options, options_size));
  DumpProgram(input.code, input.format);
  return input;
}

}  // namespace

// The destination memory of a call that names a device, a memory, or both
// (memory wins, as the header says).
StatusOr<runtime::MemorySpace*> ResolveDestination(PJRT_Client* client, PJRT_Device* device,
                                                   PJRT_Memory* memory) {
  if (memory != nullptr) {
    KILN_ASSIGN_OR_RETURN(auto* kiln_memory, UnwrapMemory(memory));
    if (kiln_memory->client != client) {
      return InvalidArgument(CurrentFunction(), ": the memory ", kiln_memory->space->debug_string(),
                             " belongs to another client");
    }
    return kiln_memory->space;
  }
  if (device == nullptr) {
    return InvalidArgument(CurrentFunction(), ": both `device` and `memory` are null; expected "
                                              "the destination in one of them");
  }
  KILN_ASSIGN_OR_RETURN(auto* device_handle, UnwrapAddressableDevice(device));
  if (device_handle->client != client) {
    return InvalidArgument(CurrentFunction(), ": the device ",
                           device_handle->device->description().debug_string,
                           " belongs to another client");
  }
  return device_handle->device->default_memory_space();
}

PJRT_Error* Impl::PJRT_Client_Create(PJRT_Client_Create_Args* args) {
  KILN_ARGS(client);
  KILN_CAPI_ASSIGN_OR_RETURN(auto options,
                             FromNamedValues(args->create_options, args->num_options));
  KILN_CAPI_ASSIGN_OR_RETURN(auto client_options, runtime::ClientOptions::FromAttributes(options));
  if (client_options.job.num_nodes > 1) {
    // Only now are the key-value fields initialized (jaxlib leaves them
    // unset for a job of one).
    KILN_ARGS(kv_put_user_arg);
    KILN_CAPI_ASSIGN_OR_RETURN(client_options.job.store, KeyValueStoreFrom(*args));
  }
  // KILN_BACKEND picks the devices: "host" (Kiln's virtual CPU devices) or
  // another backend built in (docs/architecture.md, "Backends").
  KILN_CAPI_ASSIGN_OR_RETURN(std::shared_ptr<runtime::DeviceBackend> backend,
                             backends::Create());
  KILN_CAPI_ASSIGN_OR_RETURN(auto client,
                             runtime::Client::Create(client_options, std::move(backend)));
  args->client = WrapClient(std::move(client)).release();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_Destroy(PJRT_Client_Destroy_Args* args) {
  KILN_ARGS(client);
  if (args->client == nullptr) return nullptr;  // the header allows null
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  UnregisterClient(client);
  delete client;
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_PlatformName(PJRT_Client_PlatformName_Args* args) {
  KILN_ARGS(platform_name_size);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  std::string_view name = client->client->platform_name();
  args->platform_name = name.data();
  args->platform_name_size = name.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_ProcessIndex(PJRT_Client_ProcessIndex_Args* args) {
  KILN_ARGS(process_index);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  args->process_index = client->client->process_index();
  return nullptr;
}

// jaxlib calls this from its own thread whenever the coordination service
// sees a process join, leave or fail; an error here ends the process.
PJRT_Error* Impl::PJRT_Client_UpdateGlobalProcessInfo(
    PJRT_Client_UpdateGlobalProcessInfo_Args* args) {
  KILN_ARGS(num_process_infos);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  if (args->process_infos == nullptr && args->num_process_infos > 0) {
    return MakeError(InvalidArgument("PJRT_Client_UpdateGlobalProcessInfo: process_infos is null "
                                     "but num_process_infos is ",
                                     args->num_process_infos));
  }
  std::vector<runtime::ProcessInfo> infos;
  for (size_t i = 0; i < args->num_process_infos; ++i) {
    const PJRT_ProcessInfo& info = args->process_infos[i];
    runtime::ProcessInfo entry;
    entry.process = info.task_id;
    entry.incarnation = info.incarnation_id;
    switch (info.state) {
      case PJRT_ProcessState_kConnected: entry.state = "connected"; break;
      case PJRT_ProcessState_kDisconnected: entry.state = "disconnected"; break;
      case PJRT_ProcessState_kError: entry.state = "failed"; break;
      case PJRT_ProcessState_kUninitialized: entry.state = "not yet connected"; break;
      default: entry.state = "in an unknown state"; break;
    }
    if (info.struct_size >= PJRT_ProcessInfo_STRUCT_SIZE && info.error_message != nullptr) {
      entry.error = std::string(info.error_message, info.error_message_size);
    }
    infos.push_back(std::move(entry));
  }
  client->client->UpdateProcessInfo(std::move(infos));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_PlatformVersion(PJRT_Client_PlatformVersion_Args* args) {
  KILN_ARGS(platform_version_size);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  const std::string& version = client->client->platform_version();
  args->platform_version = version.c_str();
  args->platform_version_size = version.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_Devices(PJRT_Client_Devices_Args* args) {
  KILN_ARGS(num_devices);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  args->devices = client->device_list.data();
  args->num_devices = client->device_list.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_AddressableDevices(PJRT_Client_AddressableDevices_Args* args) {
  KILN_ARGS(num_addressable_devices);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  args->addressable_devices = client->addressable_device_list.data();
  args->num_addressable_devices = client->addressable_device_list.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_LookupDevice(PJRT_Client_LookupDevice_Args* args) {
  KILN_ARGS(device);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::Device* device, client->client->LookupDevice(args->id));
  args->device = client->FindDevice(device);
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_LookupAddressableDevice(
    PJRT_Client_LookupAddressableDevice_Args* args) {
  KILN_ARGS(addressable_device);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::Device* device,
                             client->client->LookupAddressableDevice(args->local_hardware_id));
  args->addressable_device = client->FindDevice(device);
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_AddressableMemories(PJRT_Client_AddressableMemories_Args* args) {
  KILN_ARGS(num_addressable_memories);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  args->addressable_memories = client->memory_list.data();
  args->num_addressable_memories = client->memory_list.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_DefaultDeviceAssignment(
    PJRT_Client_DefaultDeviceAssignment_Args* args) {
  KILN_ARGS(default_assignment);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  KILN_CAPI_ASSIGN_OR_RETURN(
      std::vector<int> assignment,
      client->client->DefaultDeviceAssignment(args->num_replicas, args->num_partitions));
  if (args->default_assignment == nullptr || args->default_assignment_size < assignment.size()) {
    return MakeError(InvalidArgument(
        "PJRT_Client_DefaultDeviceAssignment: default_assignment must hold num_replicas * "
        "num_partitions = ",
        assignment.size(), " ints; found room for ",
        args->default_assignment == nullptr ? 0 : args->default_assignment_size));
  }
  std::copy(assignment.begin(), assignment.end(), args->default_assignment);
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_TopologyDescription(PJRT_Client_TopologyDescription_Args* args) {
  KILN_ARGS(topology);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  args->topology = client->topology.get();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_BufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args* args) {
  KILN_ARGS(buffer);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::MemorySpace* destination,
                             ResolveDestination(client, args->device, args->memory));
  runtime::HostBuffer host;
  host.data = args->data;
  KILN_CAPI_ASSIGN_OR_RETURN(host.shape, MakeShape(args->type, args->dims, args->num_dims));
  KILN_CAPI_RETURN_IF_ERROR(CheckDeviceLayout(args->device_layout, host.shape));
  if (args->num_byte_strides > 0) {
    if (args->byte_strides == nullptr) {
      return MakeError(InvalidArgument("PJRT_Client_BufferFromHostBuffer: byte_strides is null "
                                       "but num_byte_strides is ",
                                       args->num_byte_strides));
    }
    host.byte_strides.assign(args->byte_strides, args->byte_strides + args->num_byte_strides);
  }
  KILN_CAPI_ASSIGN_OR_RETURN(host.semantics, FromPjrtSemantics(args->host_buffer_semantics));
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::HostTransfer transfer,
                             client->client->BufferFromHostBuffer(host, destination));
  args->done_with_host_buffer = NewEvent(std::move(transfer.done_with_host_buffer));
  args->buffer = NewBuffer(client, std::move(transfer.buffer));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_CreateUninitializedBuffer(
    PJRT_Client_CreateUninitializedBuffer_Args* args) {
  KILN_ARGS(buffer);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::MemorySpace* destination,
                             ResolveDestination(client, args->device, args->memory));
  KILN_CAPI_ASSIGN_OR_RETURN(
      Shape shape,
      MakeShape(args->shape_element_type, args->shape_dims, args->shape_num_dims));
  KILN_CAPI_RETURN_IF_ERROR(CheckDeviceLayout(args->shape_layout, shape));
  KILN_CAPI_ASSIGN_OR_RETURN(auto buffer,
                             client->client->CreateUninitializedBuffer(std::move(shape), destination));
  args->buffer = NewBuffer(client, std::move(buffer));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_CreateViewOfDeviceBuffer(
    PJRT_Client_CreateViewOfDeviceBuffer_Args* args) {
  KILN_ARGS(buffer);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  PJRT_Memory* memory = KILN_HAS_FIELD(memory) ? args->memory : nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::MemorySpace* destination,
                             ResolveDestination(client, args->device, memory));
  KILN_CAPI_ASSIGN_OR_RETURN(Shape shape,
                             MakeShape(args->element_type, args->dims, args->num_dims));
  KILN_CAPI_RETURN_IF_ERROR(CheckDeviceLayout(args->layout, shape));
  std::function<void()> on_delete;
  if (args->on_delete_callback != nullptr) {
    on_delete = [callback = args->on_delete_callback, data = args->device_buffer_ptr,
                 user_arg = args->on_delete_callback_arg] { callback(data, user_arg); };
  }
  KILN_CAPI_ASSIGN_OR_RETURN(auto buffer, client->client->CreateViewOfDeviceBuffer(
                                              args->device_buffer_ptr, std::move(shape),
                                              destination, std::move(on_delete)));
  args->buffer = NewBuffer(client, std::move(buffer));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_CreateErrorBuffer(PJRT_Client_CreateErrorBuffer_Args* args) {
  KILN_ARGS(buffer);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::MemorySpace* destination,
                             ResolveDestination(client, nullptr, args->memory));
  KILN_CAPI_ASSIGN_OR_RETURN(
      Shape shape,
      MakeShape(args->shape_element_type, args->shape_dims, args->shape_num_dims));
  Status error = StatusFromPjrt(args->error_code, args->error_message, args->error_message_size);
  KILN_CAPI_ASSIGN_OR_RETURN(auto buffer, client->client->CreateErrorBuffer(
                                              std::move(shape), destination, std::move(error)));
  args->buffer = NewBuffer(client, std::move(buffer));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_CreateAliasBuffer(PJRT_Client_CreateAliasBuffer_Args* args) {
  KILN_ARGS(fulfill_alias_buffer_cb);
  args->alias_buffer = nullptr;
  args->fulfill_alias_buffer_cb = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::MemorySpace* destination,
                             ResolveDestination(client, nullptr, args->memory));
  KILN_CAPI_ASSIGN_OR_RETURN(
      Shape shape,
      MakeShape(args->shape_element_type, args->shape_dims, args->shape_num_dims));
  KILN_CAPI_RETURN_IF_ERROR(CheckDeviceLayout(args->shape_layout, shape));
  KILN_CAPI_ASSIGN_OR_RETURN(
      runtime::AliasBuffer alias,
      InFunction(client->client->CreateAliasBuffer(std::move(shape), destination)));
  args->alias_buffer = NewBuffer(client, std::move(alias.buffer));
  args->fulfill_alias_buffer_cb = NewHandle<PJRT_FulfillAliasBufferCallback>(
      HandleKind::kAliasCallback, std::move(alias.promise), client);
  return nullptr;
}

// Arguments are checked first and a bad one leaves the callback usable;
// then the callback is consumed, and a failure to fulfill (a buffer of
// another shape, a deleted one) fails the alias too.
PJRT_Error* Impl::PJRT_Client_FulfillAliasBuffer(PJRT_Client_FulfillAliasBuffer_Args* args) {
  KILN_ARGS(fulfill_alias_buffer_cb);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_FulfillAliasBufferCallback* callback,
                             UnwrapAliasCallback(args->fulfill_alias_buffer_cb));
  if (callback->client != client) {
    return MakeError(InvalidArgument(CurrentFunction(), ": `fulfill_alias_buffer_cb` belongs to "
                                                        "another client than `client`"));
  }
  KILN_CAPI_RETURN_IF_ERROR(CheckErrorCode(args->status_code, "status_code"));
  PJRT_Buffer* buffer = nullptr;
  if (args->status_code == PJRT_Error_Code_OK) {
    KILN_CAPI_ASSIGN_OR_RETURN(buffer, UnwrapBuffer(args->buffer));
  }
  std::unique_ptr<kiln::runtime::AliasPromise> promise = std::move(callback->promise);
  DestroyHandle(callback);
  if (buffer == nullptr) {
    return MakeError(InFunction(promise->Fail(StatusFromPjrt(args->status_code, args->error_message,
                                                             args->error_message_size))));
  }
  return MakeError(InFunction(promise->Fulfill(*buffer->buffer)));
}

PJRT_Error* Impl::PJRT_Client_DmaMap(PJRT_Client_DmaMap_Args* args) {
  KILN_ARGS(size);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  return MakeError(InFunction(client->client->dma_mappings().Map(args->data, args->size)));
}

PJRT_Error* Impl::PJRT_Client_DmaUnmap(PJRT_Client_DmaUnmap_Args* args) {
  KILN_ARGS(data);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  return MakeError(InFunction(client->client->dma_mappings().Unmap(args->data)));
}

PJRT_Error* Impl::PJRT_Client_Compile(PJRT_Client_Compile_Args* args) {
  KILN_ARGS(executable);
  args->executable = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  KILN_CAPI_ASSIGN_OR_RETURN(
      CompileInput input,
      ReadCompileInput(args->program, args->compile_options, args->compile_options_size));
  KILN_CAPI_ASSIGN_OR_RETURN(
      auto loaded, InFunction(client->client->Compile(input.code, input.format, input.options)));
  args->executable = NewLoadedExecutable(client, std::move(loaded));
  return nullptr;
}

// Compiles for a topology; a client, when given, must be live but is not
// needed (Kiln has no performance-guided optimization to feed).
PJRT_Error* Impl::PJRT_Compile(PJRT_Compile_Args* args) {
  KILN_ARGS(executable);
  args->executable = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_TopologyDescription* topology, UnwrapTopology(args->topology));
  if (args->client != nullptr) {
    KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
    (void)client;
  }
  KILN_CAPI_ASSIGN_OR_RETURN(
      CompileInput input,
      ReadCompileInput(args->program, args->compile_options, args->compile_options_size));
  KILN_CAPI_ASSIGN_OR_RETURN(auto program,
                             InFunction(runtime::CompileForTopology(
                                 *topology->topology, input.code, input.format, input.options)));
  args->executable = NewExecutable(std::move(program));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Client_Load(PJRT_Client_Load_Args* args) {
  KILN_ARGS(loaded_executable);
  args->loaded_executable = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  KILN_CAPI_ASSIGN_OR_RETURN(std::span<const uint8_t> options,
                             OptionsBytes(args->compile_options, args->compile_options_size));
  KILN_CAPI_ASSIGN_OR_RETURN(auto loaded,
                             InFunction(client->client->Load(executable->program, options)));
  args->loaded_executable = NewLoadedExecutable(client, std::move(loaded));
  return nullptr;
}

}  // namespace kiln::capi
