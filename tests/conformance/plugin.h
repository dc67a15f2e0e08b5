// The conformance suite's fixture library. It loads one PJRT plugin through
// dlopen + GetPjrtApi (never by linking it) and wraps the C API in small status,
// RAII and transfer helpers, so that tests state behaviour, not boilerplate.
//
// Tests of behaviour only Kiln promises live in test suites whose names start
// with "Kiln" (after any instantiation prefix) and skip themselves on other
// plugins (SKIP_UNLESS_KILN); --gtest_filter=-*Kiln* leaves them out.
#ifndef KILN_TESTS_CONFORMANCE_PLUGIN_H_
#define KILN_TESTS_CONFORMANCE_PLUGIN_H_

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"

namespace conformance {

// The code and the whole message of a PJRT_Error (OK when there was none).
struct Status {
  PJRT_Error_Code code = PJRT_Error_Code_OK;
  std::string message;
  bool ok() const { return code == PJRT_Error_Code_OK; }
};

// ---------------------------------------------------------------- Loading --

// The plugin's entry point, as exported by every PJRT plugin.
using GetPjrtApiFunction = const PJRT_Api* (*)();

// Loads the plugin at `path`, resolves GetPjrtApi and runs
// PJRT_Plugin_Initialize (its result is kept for a test to check). Returns ""
// on success, else why the plugin could not be loaded.
std::string LoadPlugin(const std::string& path);

// The loaded plugin's function table; valid after LoadPlugin succeeded.
const PJRT_Api* api();

// The plugin's GetPjrtApi, for tests that call it again.
GetPjrtApiFunction get_pjrt_api();

// The path LoadPlugin was given.
const std::string& plugin_path();

// What PJRT_Plugin_Initialize returned when LoadPlugin called it.
const Status& initialize_status();

// The platform name of a default client, read once by LoadPlugin ("" if no
// client could be created then).
const std::string& platform_name();

// True if the plugin's table has a non-null slot `offset` bytes into PJRT_Api
// (a plugin built against an older header has a shorter table).
bool HasSlot(size_t offset);
#define HAS_SLOT(name) ::conformance::HasSlot(offsetof(PJRT_Api, name))

// Skips the current test when the plugin lacks the function `name`.
#define REQUIRE_SLOT(name)                                                  \
  do {                                                                      \
    if (!HAS_SLOT(name)) GTEST_SKIP() << #name " is absent from the table"; \
  } while (false)

// ----------------------------------------------------------------- Status --

// Reads `error`'s code and message through the API, then destroys it. A null
// `error` is OK.
Status Consume(PJRT_Error* error);

// The name of `code`, e.g. "INVALID_ARGUMENT".
const char* CodeName(PJRT_Error_Code code);
std::ostream& operator<<(std::ostream& os, const Status& status);

::testing::AssertionResult IsOk(const Status& status);
::testing::AssertionResult HasCode(const Status& status, PJRT_Error_Code expected);
::testing::AssertionResult HasCodeIn(const Status& status,
                                     std::initializer_list<PJRT_Error_Code> expected);
// True if `text` contains `part` (messages are compared by substring).
::testing::AssertionResult Contains(std::string_view text, std::string_view part);

#define EXPECT_PJRT_OK(call) EXPECT_TRUE(::conformance::IsOk(::conformance::Consume(call)))
#define ASSERT_PJRT_OK(call) ASSERT_TRUE(::conformance::IsOk(::conformance::Consume(call)))

// Skips the test if `status` is UNIMPLEMENTED and the plugin is not Kiln
// (other plugins may leave optional functions out; Kiln promises them).
#define SKIP_IF_UNIMPLEMENTED(status)                                                 \
  do {                                                                                \
    if ((status).code == PJRT_Error_Code_UNIMPLEMENTED && !::conformance::IsKiln()) { \
      GTEST_SKIP() << "not implemented by this plugin: " << (status);                 \
    }                                                                                 \
  } while (false)

// ------------------------------------------------------------------- Args --

// An args struct of type T, zero-filled, with struct_size = `struct_size`.
template <typename T>
T MakeArgs(size_t struct_size) {
  static_assert(std::is_trivially_copyable_v<T>);
  T args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = struct_size;
  return args;
}
// The current header's args struct `type`, zero-filled and sized.
#define MAKE_ARGS(type) ::conformance::MakeArgs<type>(type##_STRUCT_SIZE)

// ------------------------------------------------------------------- RAII --

// Deleters destroy through the API and report a failed destroy as a test
// failure.
struct ClientDeleter {
  void operator()(PJRT_Client* client) const;
};
struct BufferDeleter {
  void operator()(PJRT_Buffer* buffer) const;
};
struct EventDeleter {
  void operator()(PJRT_Event* event) const;
};
struct TopologyDeleter {
  void operator()(PJRT_TopologyDescription* topology) const;
};
struct ExecutableDeleter {
  void operator()(PJRT_Executable* executable) const;
};
struct LoadedExecutableDeleter {
  void operator()(PJRT_LoadedExecutable* executable) const;
};
using ClientPtr = std::unique_ptr<PJRT_Client, ClientDeleter>;
using BufferPtr = std::unique_ptr<PJRT_Buffer, BufferDeleter>;
using EventPtr = std::unique_ptr<PJRT_Event, EventDeleter>;
using TopologyPtr = std::unique_ptr<PJRT_TopologyDescription, TopologyDeleter>;
using ExecutablePtr = std::unique_ptr<PJRT_Executable, ExecutableDeleter>;
using LoadedExecutablePtr = std::unique_ptr<PJRT_LoadedExecutable, LoadedExecutableDeleter>;

// ---------------------------------------------------------------- Clients --

// Named values for create options. `name` and string values are borrowed:
// they must outlive the PJRT_NamedValue.
PJRT_NamedValue NamedInt64(const char* name, int64_t value);
PJRT_NamedValue NamedString(const char* name, const char* value);
PJRT_NamedValue NamedFloat(const char* name, float value);
PJRT_NamedValue NamedBool(const char* name, bool value);
PJRT_NamedValue NamedInt64List(const char* name, const int64_t* values, size_t count);

// Creates a client with `options`.
Status CreateClient(const std::vector<PJRT_NamedValue>& options, ClientPtr* client);

// A client with default options; records a failure and returns null if that
// fails.
ClientPtr MakeClient();

// A client with at least `count` addressable devices: on Kiln by asking for
// them (num_devices option); on other plugins the default client if it has
// enough. Null (with no failure) when the plugin cannot give `count`.
ClientPtr MakeClientWithDevices(int count);

// Declares `var`, a client with at least `count` devices, or skips the test.
#define ASSIGN_CLIENT_WITH_DEVICES(var, count)                                \
  ::conformance::ClientPtr var = ::conformance::MakeClientWithDevices(count); \
  if (::testing::Test::HasFailure()) return;                                  \
  if (var == nullptr) GTEST_SKIP() << "needs " << (count) << " devices"

// True if the plugin's platform name is "kiln" (see platform_name()).
bool IsKiln();
#define SKIP_UNLESS_KILN() \
  if (!::conformance::IsKiln()) GTEST_SKIP() << "Kiln-specific behaviour"

// Unsets or sets an environment variable for one scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);  // value null: unset
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  bool had_value_ = false;
  std::string old_value_;
};

// Client queries; each records a test failure if the call fails.
std::string PlatformName(PJRT_Client* client);
std::vector<PJRT_Device*> Devices(PJRT_Client* client);
std::vector<PJRT_Device*> AddressableDevices(PJRT_Client* client);

// A fresh client and its first addressable device for each test.
class ClientFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
    device_ = AddressableDevices(client_.get())[0];
  }
  ClientPtr client_;
  PJRT_Device* device_ = nullptr;
};
std::vector<PJRT_Memory*> AddressableMemories(PJRT_Client* client);

// ------------------------------------------------------ Devices, memories --

PJRT_DeviceDescription* Description(PJRT_Device* device);
int DeviceId(PJRT_Device* device);
std::vector<PJRT_Memory*> DeviceMemories(PJRT_Device* device);
PJRT_Memory* DefaultMemory(PJRT_Device* device);
// The memory of `device` whose kind is `kind`, or null.
PJRT_Memory* FindMemory(PJRT_Device* device, std::string_view kind);
std::string MemoryKind(PJRT_Memory* memory);
int MemoryId(PJRT_Memory* memory);
// Device_MemoryStats; `stats` is filled on success.
Status MemoryStats(PJRT_Device* device, PJRT_Device_MemoryStats_Args* stats);

// Plain views of attribute lists, for checking them.
std::string ValueName(const PJRT_NamedValue& value);
// Kiln's "backend" device attribute ("host", "opencl"), or "" for a plugin
// without one: what a backend-specific expectation checks.
std::string KilnBackend(PJRT_Device* device);
const PJRT_NamedValue* FindAttribute(const PJRT_NamedValue* attributes, size_t count,
                                     std::string_view name);

// ----------------------------------------------------------------- Events --

Status Await(PJRT_Event* event);
bool IsReady(PJRT_Event* event);
Status EventError(PJRT_Event* event);
// A user event (Event_Create); null and a failure if that fails.
EventPtr CreateEvent();
Status SetEvent(PJRT_Event* event, PJRT_Error_Code code, std::string_view message);

// Counts PJRT_Event_OnReady callbacks and keeps the status of each.
class CallbackRecorder {
 public:
  // The callback to register, with `this` as user_arg.
  static void Callback(PJRT_Error* error, void* user_arg);
  Status Register(PJRT_Event* event);  // Event_OnReady with Callback
  // Waits until at least `count` calls arrived or `timeout` passed.
  bool WaitFor(int count, std::chrono::milliseconds timeout);
  int count() const;
  std::vector<Status> statuses() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Status> statuses_;
};

// Ends the process with a message if not disarmed within `limit`: a hang in
// the plugin then fails fast and says where, instead of at ctest's timeout.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds limit, std::string what);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  std::thread thread_;
};

// ---------------------------------------------------------------- Buffers --

// A host → device transfer, as PJRT_Client_BufferFromHostBuffer takes it.
struct HostTransfer {
  const void* data = nullptr;
  PJRT_Buffer_Type type = PJRT_Buffer_Type_F32;
  std::vector<int64_t> dims;
  std::vector<int64_t> byte_strides;  // empty: dense row-major
  PJRT_HostBufferSemantics semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  PJRT_Device* device = nullptr;
  PJRT_Memory* memory = nullptr;
};

// Runs `transfer`. If `done` is non-null it receives done_with_host_buffer;
// otherwise that event is awaited (copying semantics) or just destroyed
// (zero-copy semantics, where it fires only when the buffer is freed).
Status BufferFromHost(PJRT_Client* client, const HostTransfer& transfer, BufferPtr* buffer,
                      EventPtr* done = nullptr);

// The PJRT_Buffer_Type of a C++ element type.
template <typename T>
constexpr PJRT_Buffer_Type BufferTypeOf();
template <>
constexpr PJRT_Buffer_Type BufferTypeOf<float>() {
  return PJRT_Buffer_Type_F32;
}
template <>
constexpr PJRT_Buffer_Type BufferTypeOf<double>() {
  return PJRT_Buffer_Type_F64;
}
template <>
constexpr PJRT_Buffer_Type BufferTypeOf<int8_t>() {
  return PJRT_Buffer_Type_S8;
}
template <>
constexpr PJRT_Buffer_Type BufferTypeOf<uint8_t>() {
  return PJRT_Buffer_Type_U8;
}
template <>
constexpr PJRT_Buffer_Type BufferTypeOf<int32_t>() {
  return PJRT_Buffer_Type_S32;
}
template <>
constexpr PJRT_Buffer_Type BufferTypeOf<int64_t>() {
  return PJRT_Buffer_Type_S64;
}

// A dense buffer on `device` holding `values` with shape `dims`; null and a
// failure if the transfer fails.
template <typename T>
BufferPtr MakeBuffer(PJRT_Client* client, PJRT_Device* device, const std::vector<T>& values,
                     std::vector<int64_t> dims) {
  HostTransfer transfer;
  transfer.data = values.data();
  transfer.type = BufferTypeOf<T>();
  transfer.dims = std::move(dims);
  transfer.device = device;
  BufferPtr buffer;
  Status status = BufferFromHost(client, transfer, &buffer);
  EXPECT_TRUE(IsOk(status)) << "creating a buffer";
  return buffer;
}

// Copies `buffer` to host memory (ToHostBuffer: size query, copy, await).
// `layout` null means the default (dense row-major).
Status ToHost(PJRT_Buffer* buffer, std::vector<uint8_t>* bytes,
              PJRT_Buffer_MemoryLayout* layout = nullptr);

// `buffer`'s elements as T (dense row-major); empty and a failure on error.
template <typename T>
std::vector<T> Read(PJRT_Buffer* buffer) {
  std::vector<uint8_t> bytes;
  Status status = ToHost(buffer, &bytes);
  EXPECT_TRUE(IsOk(status)) << "reading a buffer back";
  if (!status.ok()) return {};
  EXPECT_EQ(bytes.size() % sizeof(T), 0u);
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

// Buffer queries; each records a failure if the call fails.
std::vector<int64_t> Dimensions(PJRT_Buffer* buffer);
PJRT_Buffer_Type ElementType(PJRT_Buffer* buffer);
PJRT_Device* BufferDevice(PJRT_Buffer* buffer);
PJRT_Memory* BufferMemory(PJRT_Buffer* buffer);
bool IsDeleted(PJRT_Buffer* buffer);
// The buffer's ready event (PJRT_Buffer_ReadyEvent); null and a failure if
// the call fails.
EventPtr ReadyEvent(PJRT_Buffer* buffer);
size_t OnDeviceSize(PJRT_Buffer* buffer);

// ---------------------------------------------------------- Element types --

// Every PJRT_Buffer_Type a buffer can hold (all but INVALID and TOKEN).
const std::vector<PJRT_Buffer_Type>& AllElementTypes();
// Bytes per element in a host buffer: sub-byte types take one byte each,
// unpacked, as numpy and ml_dtypes hold them.
size_t HostElementSize(PJRT_Buffer_Type type);
// Bits of each host byte a sub-byte type uses (8 for byte-sized and wider).
int ElementBits(PJRT_Buffer_Type type);
// True for the signed sub-byte integers (S1, S2, S4), stored sign-extended.
bool IsSignedSubByteInteger(PJRT_Buffer_Type type);
const char* TypeName(PJRT_Buffer_Type type);

}  // namespace conformance

// Prints error codes by name in gtest messages.
void PrintTo(PJRT_Error_Code code, std::ostream* os);
void PrintTo(PJRT_Buffer_Type type, std::ostream* os);

#endif  // KILN_TESTS_CONFORMANCE_PLUGIN_H_
