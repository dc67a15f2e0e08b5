#include "plugin.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace conformance {
namespace {

// The one plugin this process tests.
struct LoadedPlugin {
  std::string path;
  void* handle = nullptr;
  GetPjrtApiFunction get_api = nullptr;
  const PJRT_Api* api = nullptr;
  Status initialize_status;
  std::string platform_name;
};

LoadedPlugin& Loaded() {
  static LoadedPlugin plugin;
  return plugin;
}

// Reads the platform name of a fresh default client without gtest assertions
// (it runs before any test).
std::string DetectPlatformName() {
  auto create = MAKE_ARGS(PJRT_Client_Create_Args);
  PJRT_Error* error = api()->PJRT_Client_Create(&create);
  if (error != nullptr || create.client == nullptr) {
    Status status = Consume(error);
    std::fprintf(stderr, "conformance: a default client cannot be created: %s: %s\n",
                 CodeName(status.code), status.message.c_str());
    return "";
  }
  auto name = MAKE_ARGS(PJRT_Client_PlatformName_Args);
  name.client = create.client;
  std::string result;
  if (Consume(api()->PJRT_Client_PlatformName(&name)).ok() && name.platform_name != nullptr) {
    result.assign(name.platform_name, name.platform_name_size);
  }
  auto destroy = MAKE_ARGS(PJRT_Client_Destroy_Args);
  destroy.client = create.client;
  Consume(api()->PJRT_Client_Destroy(&destroy));
  return result;
}

PJRT_NamedValue MakeNamed(const char* name, PJRT_NamedValue_Type type) {
  auto value = MAKE_ARGS(PJRT_NamedValue);
  value.name = name;
  value.name_size = std::strlen(name);
  value.type = type;
  value.value_size = 1;
  return value;
}

}  // namespace

std::string LoadPlugin(const std::string& path) {
  LoadedPlugin& plugin = Loaded();
  plugin.path = path;
  // RTLD_LOCAL keeps the plugin's symbols to itself, as frameworks load it.
  // Not RTLD_DEEPBIND (which JAX adds): sanitizer runtimes reject it.
  plugin.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (plugin.handle == nullptr) {
    const char* reason = dlerror();
    return "dlopen(" + path + ") failed: " + (reason ? reason : "unknown");
  }
  void* symbol = dlsym(plugin.handle, "GetPjrtApi");
  if (symbol == nullptr) return path + " does not export GetPjrtApi";
  plugin.get_api = reinterpret_cast<GetPjrtApiFunction>(symbol);
  plugin.api = plugin.get_api();
  if (plugin.api == nullptr) return "GetPjrtApi() returned null";
  if (!HAS_SLOT(PJRT_Plugin_Initialize)) {
    plugin.initialize_status = {PJRT_Error_Code_UNIMPLEMENTED, "PJRT_Plugin_Initialize is absent"};
  } else {
    auto args = MAKE_ARGS(PJRT_Plugin_Initialize_Args);
    plugin.initialize_status = Consume(plugin.api->PJRT_Plugin_Initialize(&args));
  }
  plugin.platform_name = DetectPlatformName();
  return "";
}

const PJRT_Api* api() { return Loaded().api; }
GetPjrtApiFunction get_pjrt_api() { return Loaded().get_api; }
const std::string& plugin_path() { return Loaded().path; }
const Status& initialize_status() { return Loaded().initialize_status; }
const std::string& platform_name() { return Loaded().platform_name; }
bool IsKiln() { return Loaded().platform_name == "kiln"; }

bool HasSlot(size_t offset) {
  if (offset + sizeof(void*) > api()->struct_size) return false;
  void* slot = nullptr;
  std::memcpy(&slot, reinterpret_cast<const char*>(api()) + offset, sizeof(slot));
  return slot != nullptr;
}

// ----------------------------------------------------------------- Status --

Status Consume(PJRT_Error* error) {
  Status status;
  if (error == nullptr) return status;
  auto message = MAKE_ARGS(PJRT_Error_Message_Args);
  message.error = error;
  api()->PJRT_Error_Message(&message);
  if (message.message != nullptr) {
    status.message.assign(message.message, message.message_size);
  }
  auto code = MAKE_ARGS(PJRT_Error_GetCode_Args);
  code.error = error;
  PJRT_Error* code_error = api()->PJRT_Error_GetCode(&code);
  if (code_error != nullptr) {
    ADD_FAILURE() << "PJRT_Error_GetCode failed on a returned error";
    auto destroy = MAKE_ARGS(PJRT_Error_Destroy_Args);
    destroy.error = code_error;
    api()->PJRT_Error_Destroy(&destroy);
    status.code = PJRT_Error_Code_UNKNOWN;
  } else {
    status.code = code.code;
  }
  if (status.code == PJRT_Error_Code_OK) {
    ADD_FAILURE() << "a returned PJRT_Error has code OK (message: \"" << status.message
                  << "\"); a success must return null";
    status.code = PJRT_Error_Code_UNKNOWN;
  }
  auto destroy = MAKE_ARGS(PJRT_Error_Destroy_Args);
  destroy.error = error;
  api()->PJRT_Error_Destroy(&destroy);
  return status;
}

const char* CodeName(PJRT_Error_Code code) {
  switch (code) {
    case PJRT_Error_Code_OK: return "OK";
    case PJRT_Error_Code_CANCELLED: return "CANCELLED";
    case PJRT_Error_Code_UNKNOWN: return "UNKNOWN";
    case PJRT_Error_Code_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case PJRT_Error_Code_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case PJRT_Error_Code_NOT_FOUND: return "NOT_FOUND";
    case PJRT_Error_Code_ALREADY_EXISTS: return "ALREADY_EXISTS";
    case PJRT_Error_Code_PERMISSION_DENIED: return "PERMISSION_DENIED";
    case PJRT_Error_Code_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case PJRT_Error_Code_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case PJRT_Error_Code_ABORTED: return "ABORTED";
    case PJRT_Error_Code_OUT_OF_RANGE: return "OUT_OF_RANGE";
    case PJRT_Error_Code_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case PJRT_Error_Code_INTERNAL: return "INTERNAL";
    case PJRT_Error_Code_UNAVAILABLE: return "UNAVAILABLE";
    case PJRT_Error_Code_DATA_LOSS: return "DATA_LOSS";
    case PJRT_Error_Code_UNAUTHENTICATED: return "UNAUTHENTICATED";
  }
  return "(not a PJRT_Error_Code)";
}

std::ostream& operator<<(std::ostream& os, const Status& status) {
  os << CodeName(status.code);
  if (!status.ok()) os << ": \"" << status.message << "\"";
  return os;
}

::testing::AssertionResult IsOk(const Status& status) {
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected OK, got " << status;
}

::testing::AssertionResult HasCode(const Status& status, PJRT_Error_Code expected) {
  if (status.code == expected) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << CodeName(expected) << ", got " << status;
}

::testing::AssertionResult HasCodeIn(const Status& status,
                                     std::initializer_list<PJRT_Error_Code> expected) {
  for (PJRT_Error_Code code : expected) {
    if (status.code == code) return ::testing::AssertionSuccess();
  }
  auto failure = ::testing::AssertionFailure() << "expected one of {";
  for (PJRT_Error_Code code : expected) failure << " " << CodeName(code);
  return failure << " }, got " << status;
}

::testing::AssertionResult Contains(std::string_view text, std::string_view part) {
  if (text.find(part) != std::string_view::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// ------------------------------------------------------------------- RAII --

void ClientDeleter::operator()(PJRT_Client* client) const {
  auto args = MAKE_ARGS(PJRT_Client_Destroy_Args);
  args.client = client;
  EXPECT_PJRT_OK(api()->PJRT_Client_Destroy(&args)) << "PJRT_Client_Destroy";
}

void BufferDeleter::operator()(PJRT_Buffer* buffer) const {
  auto args = MAKE_ARGS(PJRT_Buffer_Destroy_Args);
  args.buffer = buffer;
  EXPECT_PJRT_OK(api()->PJRT_Buffer_Destroy(&args)) << "PJRT_Buffer_Destroy";
}

void EventDeleter::operator()(PJRT_Event* event) const {
  auto args = MAKE_ARGS(PJRT_Event_Destroy_Args);
  args.event = event;
  EXPECT_PJRT_OK(api()->PJRT_Event_Destroy(&args)) << "PJRT_Event_Destroy";
}

void TopologyDeleter::operator()(PJRT_TopologyDescription* topology) const {
  auto args = MAKE_ARGS(PJRT_TopologyDescription_Destroy_Args);
  args.topology = topology;
  EXPECT_PJRT_OK(api()->PJRT_TopologyDescription_Destroy(&args))
      << "PJRT_TopologyDescription_Destroy";
}

void ExecutableDeleter::operator()(PJRT_Executable* executable) const {
  auto args = MAKE_ARGS(PJRT_Executable_Destroy_Args);
  args.executable = executable;
  EXPECT_PJRT_OK(api()->PJRT_Executable_Destroy(&args)) << "PJRT_Executable_Destroy";
}

void LoadedExecutableDeleter::operator()(PJRT_LoadedExecutable* executable) const {
  auto args = MAKE_ARGS(PJRT_LoadedExecutable_Destroy_Args);
  args.executable = executable;
  EXPECT_PJRT_OK(api()->PJRT_LoadedExecutable_Destroy(&args)) << "PJRT_LoadedExecutable_Destroy";
}

// ---------------------------------------------------------------- Clients --

PJRT_NamedValue NamedInt64(const char* name, int64_t value) {
  PJRT_NamedValue named = MakeNamed(name, PJRT_NamedValue_kInt64);
  named.int64_value = value;
  return named;
}

PJRT_NamedValue NamedString(const char* name, const char* value) {
  PJRT_NamedValue named = MakeNamed(name, PJRT_NamedValue_kString);
  named.string_value = value;
  named.value_size = std::strlen(value);
  return named;
}

PJRT_NamedValue NamedFloat(const char* name, float value) {
  PJRT_NamedValue named = MakeNamed(name, PJRT_NamedValue_kFloat);
  named.float_value = value;
  return named;
}

PJRT_NamedValue NamedBool(const char* name, bool value) {
  PJRT_NamedValue named = MakeNamed(name, PJRT_NamedValue_kBool);
  named.bool_value = value;
  return named;
}

PJRT_NamedValue NamedInt64List(const char* name, const int64_t* values, size_t count) {
  PJRT_NamedValue named = MakeNamed(name, PJRT_NamedValue_kInt64List);
  named.int64_array_value = values;
  named.value_size = count;
  return named;
}

Status CreateClient(const std::vector<PJRT_NamedValue>& options, ClientPtr* client) {
  auto args = MAKE_ARGS(PJRT_Client_Create_Args);
  args.create_options = options.empty() ? nullptr : options.data();
  args.num_options = options.size();
  Status status = Consume(api()->PJRT_Client_Create(&args));
  if (status.ok()) {
    EXPECT_NE(args.client, nullptr) << "PJRT_Client_Create returned no client";
    client->reset(args.client);
  }
  return status;
}

ClientPtr MakeClient() {
  ClientPtr client;
  Status status = CreateClient({}, &client);
  EXPECT_TRUE(IsOk(status)) << "creating a default client";
  return client;
}

ClientPtr MakeClientWithDevices(int count) {
  if (IsKiln()) {
    ClientPtr client;
    Status status = CreateClient({NamedInt64("num_devices", count)}, &client);
    EXPECT_TRUE(IsOk(status)) << "creating a client with " << count << " devices";
    return client;
  }
  ClientPtr client = MakeClient();
  if (client == nullptr || AddressableDevices(client.get()).size() < static_cast<size_t>(count)) {
    return nullptr;
  }
  return client;
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) {
    had_value_ = true;
    old_value_ = old;
  }
  if (value == nullptr) {
    unsetenv(name);
  } else {
    setenv(name, value, /*overwrite=*/1);
  }
}

ScopedEnv::~ScopedEnv() {
  if (had_value_) {
    setenv(name_.c_str(), old_value_.c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

std::string PlatformName(PJRT_Client* client) {
  auto args = MAKE_ARGS(PJRT_Client_PlatformName_Args);
  args.client = client;
  EXPECT_PJRT_OK(api()->PJRT_Client_PlatformName(&args));
  if (args.platform_name == nullptr) return "";
  return std::string(args.platform_name, args.platform_name_size);
}

std::vector<PJRT_Device*> Devices(PJRT_Client* client) {
  auto args = MAKE_ARGS(PJRT_Client_Devices_Args);
  args.client = client;
  EXPECT_PJRT_OK(api()->PJRT_Client_Devices(&args));
  if (args.num_devices == 0) return {};
  return {args.devices, args.devices + args.num_devices};
}

std::vector<PJRT_Device*> AddressableDevices(PJRT_Client* client) {
  auto args = MAKE_ARGS(PJRT_Client_AddressableDevices_Args);
  args.client = client;
  EXPECT_PJRT_OK(api()->PJRT_Client_AddressableDevices(&args));
  if (args.num_addressable_devices == 0) return {};
  return {args.addressable_devices, args.addressable_devices + args.num_addressable_devices};
}

std::vector<PJRT_Memory*> AddressableMemories(PJRT_Client* client) {
  auto args = MAKE_ARGS(PJRT_Client_AddressableMemories_Args);
  args.client = client;
  EXPECT_PJRT_OK(api()->PJRT_Client_AddressableMemories(&args));
  if (args.num_addressable_memories == 0) return {};
  return {args.addressable_memories, args.addressable_memories + args.num_addressable_memories};
}

// ------------------------------------------------------ Devices, memories --

PJRT_DeviceDescription* Description(PJRT_Device* device) {
  auto args = MAKE_ARGS(PJRT_Device_GetDescription_Args);
  args.device = device;
  EXPECT_PJRT_OK(api()->PJRT_Device_GetDescription(&args));
  return args.device_description;
}

int DeviceId(PJRT_Device* device) {
  auto args = MAKE_ARGS(PJRT_DeviceDescription_Id_Args);
  args.device_description = Description(device);
  EXPECT_PJRT_OK(api()->PJRT_DeviceDescription_Id(&args));
  return args.id;
}

std::vector<PJRT_Memory*> DeviceMemories(PJRT_Device* device) {
  auto args = MAKE_ARGS(PJRT_Device_AddressableMemories_Args);
  args.device = device;
  EXPECT_PJRT_OK(api()->PJRT_Device_AddressableMemories(&args));
  if (args.num_memories == 0) return {};
  return {args.memories, args.memories + args.num_memories};
}

PJRT_Memory* DefaultMemory(PJRT_Device* device) {
  auto args = MAKE_ARGS(PJRT_Device_DefaultMemory_Args);
  args.device = device;
  EXPECT_PJRT_OK(api()->PJRT_Device_DefaultMemory(&args));
  return args.memory;
}

PJRT_Memory* FindMemory(PJRT_Device* device, std::string_view kind) {
  for (PJRT_Memory* memory : DeviceMemories(device)) {
    if (MemoryKind(memory) == kind) return memory;
  }
  return nullptr;
}

std::string MemoryKind(PJRT_Memory* memory) {
  auto args = MAKE_ARGS(PJRT_Memory_Kind_Args);
  args.memory = memory;
  EXPECT_PJRT_OK(api()->PJRT_Memory_Kind(&args));
  if (args.kind == nullptr) return "";
  return std::string(args.kind, args.kind_size);
}

int MemoryId(PJRT_Memory* memory) {
  auto args = MAKE_ARGS(PJRT_Memory_Id_Args);
  args.memory = memory;
  EXPECT_PJRT_OK(api()->PJRT_Memory_Id(&args));
  return args.id;
}

Status MemoryStats(PJRT_Device* device, PJRT_Device_MemoryStats_Args* stats) {
  *stats = MAKE_ARGS(PJRT_Device_MemoryStats_Args);
  stats->device = device;
  return Consume(api()->PJRT_Device_MemoryStats(stats));
}

std::string ValueName(const PJRT_NamedValue& value) {
  if (value.name == nullptr) return "";
  return std::string(value.name, value.name_size);
}

const PJRT_NamedValue* FindAttribute(const PJRT_NamedValue* attributes, size_t count,
                                     std::string_view name) {
  for (size_t i = 0; i < count; ++i) {
    if (ValueName(attributes[i]) == name) return &attributes[i];
  }
  return nullptr;
}

std::string KilnBackend(PJRT_Device* device) {
  auto args = MAKE_ARGS(PJRT_DeviceDescription_Attributes_Args);
  args.device_description = Description(device);
  if (Consume(api()->PJRT_DeviceDescription_Attributes(&args)).code != PJRT_Error_Code_OK) {
    return "";
  }
  const PJRT_NamedValue* backend = FindAttribute(args.attributes, args.num_attributes, "backend");
  if (backend == nullptr || backend->type != PJRT_NamedValue_kString) return "";
  return std::string(backend->string_value, backend->value_size);
}

// ----------------------------------------------------------------- Events --

Status Await(PJRT_Event* event) {
  auto args = MAKE_ARGS(PJRT_Event_Await_Args);
  args.event = event;
  return Consume(api()->PJRT_Event_Await(&args));
}

bool IsReady(PJRT_Event* event) {
  auto args = MAKE_ARGS(PJRT_Event_IsReady_Args);
  args.event = event;
  EXPECT_PJRT_OK(api()->PJRT_Event_IsReady(&args));
  return args.is_ready;
}

Status EventError(PJRT_Event* event) {
  auto args = MAKE_ARGS(PJRT_Event_Error_Args);
  args.event = event;
  return Consume(api()->PJRT_Event_Error(&args));
}

EventPtr CreateEvent() {
  auto args = MAKE_ARGS(PJRT_Event_Create_Args);
  EXPECT_PJRT_OK(api()->PJRT_Event_Create(&args));
  EXPECT_NE(args.event, nullptr) << "PJRT_Event_Create returned no event";
  return EventPtr(args.event);
}

Status SetEvent(PJRT_Event* event, PJRT_Error_Code code, std::string_view message) {
  auto args = MAKE_ARGS(PJRT_Event_Set_Args);
  args.event = event;
  args.error_code = code;
  args.error_message = message.data();
  args.error_message_size = message.size();
  return Consume(api()->PJRT_Event_Set(&args));
}

void CallbackRecorder::Callback(PJRT_Error* error, void* user_arg) {
  auto* self = static_cast<CallbackRecorder*>(user_arg);
  Status status = Consume(error);
  std::lock_guard<std::mutex> lock(self->mutex_);
  self->statuses_.push_back(std::move(status));
  self->changed_.notify_all();
}

Status CallbackRecorder::Register(PJRT_Event* event) {
  auto args = MAKE_ARGS(PJRT_Event_OnReady_Args);
  args.event = event;
  args.callback = &CallbackRecorder::Callback;
  args.user_arg = this;
  return Consume(api()->PJRT_Event_OnReady(&args));
}

bool CallbackRecorder::WaitFor(int count, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, timeout,
                           [&] { return statuses_.size() >= static_cast<size_t>(count); });
}

int CallbackRecorder::count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(statuses_.size());
}

std::vector<Status> CallbackRecorder::statuses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return statuses_;
}

Watchdog::Watchdog(std::chrono::seconds limit, std::string what) {
  thread_ = std::thread([this, limit, what = std::move(what)] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!done_.wait_for(lock, limit, [this] { return finished_; })) {
      std::fprintf(stderr,
                   "conformance: watchdog: %s did not finish within %lld s "
                   "(the plugin hangs); aborting the suite\n",
                   what.c_str(), static_cast<long long>(limit.count()));
      std::fflush(stderr);
      std::_Exit(3);
    }
  });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
  }
  done_.notify_all();
  thread_.join();
}

// ---------------------------------------------------------------- Buffers --

Status BufferFromHost(PJRT_Client* client, const HostTransfer& transfer, BufferPtr* buffer,
                      EventPtr* done) {
  auto args = MAKE_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = client;
  args.data = transfer.data;
  args.type = transfer.type;
  args.dims = transfer.dims.data();
  args.num_dims = transfer.dims.size();
  if (!transfer.byte_strides.empty()) {
    args.byte_strides = transfer.byte_strides.data();
    args.num_byte_strides = transfer.byte_strides.size();
  }
  args.host_buffer_semantics = transfer.semantics;
  args.device = transfer.device;
  args.memory = transfer.memory;
  Status status = Consume(api()->PJRT_Client_BufferFromHostBuffer(&args));
  if (!status.ok()) return status;
  EXPECT_NE(args.buffer, nullptr) << "BufferFromHostBuffer returned no buffer";
  buffer->reset(args.buffer);
  EventPtr event(args.done_with_host_buffer);
  EXPECT_NE(event, nullptr) << "BufferFromHostBuffer returned no done_with_host_buffer event";
  if (done != nullptr) {
    *done = std::move(event);
    return status;
  }
  bool zero_copy = transfer.semantics == PJRT_HostBufferSemantics_kImmutableZeroCopy ||
                   transfer.semantics == PJRT_HostBufferSemantics_kMutableZeroCopy;
  if (event != nullptr && !zero_copy) {
    EXPECT_TRUE(IsOk(Await(event.get()))) << "awaiting done_with_host_buffer";
  }
  return status;
}

Status ToHost(PJRT_Buffer* buffer, std::vector<uint8_t>* bytes, PJRT_Buffer_MemoryLayout* layout) {
  auto query = MAKE_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  query.src = buffer;
  query.host_layout = layout;
  Status status = Consume(api()->PJRT_Buffer_ToHostBuffer(&query));
  if (!status.ok()) return status;
  EventPtr query_event(query.event);  // a size query may or may not return one
  bytes->assign(query.dst_size, 0);
  // Size-0 arrays still get a non-null destination, as JAX passes them.
  static uint8_t placeholder;
  auto copy = MAKE_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  copy.src = buffer;
  copy.host_layout = layout;
  copy.dst = bytes->empty() ? &placeholder : bytes->data();
  copy.dst_size = bytes->size();
  status = Consume(api()->PJRT_Buffer_ToHostBuffer(&copy));
  if (!status.ok()) return status;
  EXPECT_NE(copy.event, nullptr) << "ToHostBuffer returned no event";
  if (copy.event == nullptr) return status;
  EventPtr event(copy.event);
  return Await(event.get());
}

std::vector<int64_t> Dimensions(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_Dimensions_Args);
  args.buffer = buffer;
  EXPECT_PJRT_OK(api()->PJRT_Buffer_Dimensions(&args));
  if (args.num_dims == 0) return {};
  return {args.dims, args.dims + args.num_dims};
}

PJRT_Buffer_Type ElementType(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_ElementType_Args);
  args.buffer = buffer;
  EXPECT_PJRT_OK(api()->PJRT_Buffer_ElementType(&args));
  return args.type;
}

PJRT_Device* BufferDevice(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_Device_Args);
  args.buffer = buffer;
  EXPECT_PJRT_OK(api()->PJRT_Buffer_Device(&args));
  return args.device;
}

PJRT_Memory* BufferMemory(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_Memory_Args);
  args.buffer = buffer;
  EXPECT_PJRT_OK(api()->PJRT_Buffer_Memory(&args));
  return args.memory;
}

bool IsDeleted(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_IsDeleted_Args);
  args.buffer = buffer;
  EXPECT_PJRT_OK(api()->PJRT_Buffer_IsDeleted(&args));
  return args.is_deleted;
}

EventPtr ReadyEvent(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_ReadyEvent_Args);
  args.buffer = buffer;
  EXPECT_PJRT_OK(api()->PJRT_Buffer_ReadyEvent(&args));
  return EventPtr(args.event);
}

size_t OnDeviceSize(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args);
  args.buffer = buffer;
  EXPECT_PJRT_OK(api()->PJRT_Buffer_OnDeviceSizeInBytes(&args));
  return args.on_device_size_in_bytes;
}

}  // namespace conformance

void PrintTo(PJRT_Error_Code code, std::ostream* os) { *os << conformance::CodeName(code); }

void PrintTo(PJRT_Buffer_Type type, std::ostream* os) { *os << conformance::TypeName(type); }
