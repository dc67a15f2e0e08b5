// The structs behind PJRT's opaque handles, and the registry of live handles.
// Each handle wraps runtime objects; capi translates and owns nothing else.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "capi/call.h"
#include "capi/error.h"
#include "runtime/alias_buffer.h"
#include "runtime/async_tracking_event.h"
#include "runtime/async_transfer_manager.h"
#include "runtime/buffer.h"
#include "runtime/client.h"
#include "runtime/event.h"
#include "runtime/executable.h"
#include "runtime/execute_context.h"
#include "runtime/topology.h"

namespace kiln::capi {

enum class HandleKind {
  kClient,
  kDevice,
  kDeviceDescription,
  kMemory,
  kBuffer,
  kEvent,
  kTopology,
  kExecutable,
  kLoadedExecutable,
  kLayout,
  kTransferManager,
  kExecuteContext,
  kAsyncTrackingEvent,
  kAliasCallback,
  // The callback_data of PJRT_Buffer_CopyRawToHostFuture and of
  // PJRT_Buffer_DonateWithControlDependency: live until their callback runs.
  kRawCopyCallback,
  kDonationCallback,
};

// Live handles, so a null, destroyed or foreign handle is an error instead of a crash.
void RegisterHandle(const void* handle, HandleKind kind);
void UnregisterHandle(const void* handle);
bool IsLiveHandle(const void* handle, HandleKind kind);
// Unregisters `handle` if it is live and of `kind`, atomically: true for
// exactly one of several racing callers (one-shot callback data).
bool TakeHandle(const void* handle, HandleKind kind);

// PJRT_NamedValues over attributes this object owns: the C views point into
// `storage`, so it is movable (vectors keep their buffers) but not copyable.
struct NamedValues {
  NamedValues() = default;
  NamedValues(NamedValues&&) = default;
  NamedValues& operator=(NamedValues&&) = default;
  NamedValues(const NamedValues&) = delete;
  NamedValues& operator=(const NamedValues&) = delete;

  std::vector<runtime::Attribute> storage;
  std::vector<PJRT_NamedValue> values;
};
NamedValues ToNamedValues(std::vector<runtime::Attribute> attributes);

}  // namespace kiln::capi

struct PJRT_DeviceDescription {
  const kiln::runtime::DeviceDescription* description;
  kiln::capi::NamedValues attributes;
};

struct PJRT_Device {
  kiln::runtime::Device* device;
  PJRT_Client* client;
  PJRT_DeviceDescription description;
  std::vector<PJRT_Memory*> memories;  // default first
};

namespace kiln::capi {

// PJRT_Memory is not opaque since API 0.107: it starts with a function table.
struct KilnMemory : PJRT_Memory {
  runtime::MemorySpace* space = nullptr;
  PJRT_Client* client = nullptr;
  std::vector<PJRT_Device*> devices;
  std::mutex user_data_mutex;
  struct UserData {
    void* data;
    void (*dtor)(void*);
  };
  std::map<const void*, UserData> user_data;
  ~KilnMemory();
};

inline KilnMemory* AsKiln(PJRT_Memory* memory) { return static_cast<KilnMemory*>(memory); }

}  // namespace kiln::capi

struct PJRT_TopologyDescription {
  std::unique_ptr<kiln::runtime::Topology> owned;  // null when the client owns the topology
  const kiln::runtime::Topology* topology;
  std::vector<std::unique_ptr<PJRT_DeviceDescription>> descriptions;
  std::vector<PJRT_DeviceDescription*> description_list;
  kiln::capi::NamedValues attributes;
  std::string platform_version;
};

struct PJRT_Client {
  std::unique_ptr<kiln::runtime::Client> client;
  // Expires with the client, so buffers that outlive it can tell.
  std::shared_ptr<const bool> alive = std::make_shared<const bool>(true);
  std::vector<std::unique_ptr<PJRT_Device>> devices;
  std::vector<std::unique_ptr<kiln::capi::KilnMemory>> memories;
  std::vector<PJRT_Device*> device_list;  // every device of the job, by id
  std::vector<PJRT_Device*> addressable_device_list;
  std::vector<PJRT_Memory*> memory_list;
  std::unique_ptr<PJRT_TopologyDescription> topology;
  PJRT_Device* FindDevice(const kiln::runtime::Device* device) const {
    return device_list[device->id()];
  }
  PJRT_Memory* FindMemory(const kiln::runtime::MemorySpace* space) const {
    return memory_list[space->id()];
  }
};

struct PJRT_Buffer {
  std::unique_ptr<kiln::runtime::Buffer> buffer;
  PJRT_Client* client;
  std::weak_ptr<const bool> client_alive;
  // Row-major layout reported by GetMemoryLayout (kiln::capi::MinorToMajor):
  // filled only for ranks beyond the shared table's, and then lives as
  // long as the buffer.
  std::vector<int64_t> minor_to_major;
};

struct PJRT_Event {
  std::shared_ptr<kiln::runtime::Event> event;
};

namespace kiln::capi {
struct StreamState;  // host_transfer_api.cc
}  // namespace kiln::capi

// The stream a host recv callback fills (Kiln defines the header's opaque
// type). The callback's owner destroys the handle; the state lives on until
// the waiting run is done with it.
struct PJRT_CopyToDeviceStream {
  std::shared_ptr<kiln::capi::StreamState> state;
};

// A memory layout of the Layouts extension, as XLA's layout text: Kiln's
// arrays are dense and row-major, "{1,0}" for a matrix, "{}" for a scalar.
// Client, topology and buffer layouts belong to the caller
// (PJRT_Layouts_MemoryLayout_Destroy); an executable's belong to it.
struct PJRT_Layouts_MemoryLayout {
  std::string text;
  bool owned_by_executable = false;
};

// PJRT_Layouts_MemoryLayout_Serialize's bytes, freed by its deleter.
struct PJRT_Layouts_SerializedLayout {
  std::string bytes;
};

// A compiled program and the arrays its queries hand out (they live as long
// as the handle).
struct PJRT_Executable {
  PJRT_Executable() = default;
  PJRT_Executable(const PJRT_Executable&) = delete;
  PJRT_Executable& operator=(const PJRT_Executable&) = delete;
  ~PJRT_Executable();  // unregisters its layouts
  std::shared_ptr<const kiln::compiler::Program> program;
  std::vector<PJRT_Buffer_Type> output_types;
  std::vector<int64_t> output_dims;  // all outputs' dims, concatenated
  std::vector<size_t> output_ranks;
  std::vector<const char*> output_memory_kinds;
  std::vector<size_t> output_memory_kind_sizes;
  std::vector<const char*> parameter_memory_kinds;
  std::vector<size_t> parameter_memory_kind_sizes;
  std::string fingerprint;
  std::vector<PJRT_NamedValue> cost_properties;  // GetCostAnalysis
  // The Shardings extension: serialized xla.OpSharding per parameter and
  // output, with the pointer and size arrays handed out.
  struct Shardings {
    std::vector<std::string> bytes;
    std::vector<const char*> data;
    std::vector<size_t> sizes;
  };
  Shardings parameter_shardings, output_shardings;
  // OptimizedProgram of a partitioned program read from HLO: its
  // hlo_with_config with the SPMD shardings set (empty: the program's own).
  std::vector<uint8_t> optimized_hlo;
  // The Layouts extension: one layout per parameter and per output.
  std::vector<std::unique_ptr<PJRT_Layouts_MemoryLayout>> layout_storage;
  std::vector<PJRT_Layouts_MemoryLayout*> parameter_layouts, output_layouts;
};

struct PJRT_LoadedExecutable {
  std::unique_ptr<kiln::runtime::LoadedExecutable> executable;
  PJRT_Client* client;
  std::vector<PJRT_Device*> addressable_devices;
  std::vector<PJRT_LogicalDeviceIds> logical_ids;  // per addressable device
};

// Buffers filled later in pieces; they belong to `client`.
struct PJRT_AsyncHostToDeviceTransferManager {
  std::unique_ptr<kiln::runtime::AsyncHostToDeviceTransferManager> manager;
  PJRT_Client* client;
  std::weak_ptr<const bool> client_alive;
};

// Needs no client; shared with the runs it is passed to.
struct PJRT_ExecuteContext {
  std::shared_ptr<kiln::runtime::ExecuteContext> context;
};

// Listed among its device's async activities while it lives.
struct PJRT_AsyncTrackingEvent {
  std::unique_ptr<kiln::runtime::AsyncTrackingEvent> event;
};

// The promise of an alias buffer of `client`; PJRT_Client_FulfillAliasBuffer
// consumes it.
struct PJRT_FulfillAliasBufferCallback {
  std::unique_ptr<kiln::runtime::AliasPromise> promise;
  PJRT_Client* client;
};

namespace kiln::capi {

// Topology handle over `topology` (owned when `owned` is set).
std::unique_ptr<PJRT_TopologyDescription> MakeTopologyHandle(
    const runtime::Topology* topology, std::unique_ptr<runtime::Topology> owned,
    std::string platform_version);

// The host side of a run's send/recv (JAX's host callbacks) from the
// execute options' callbacks of device `device_index`; null when the options
// carry none.
std::shared_ptr<compiler::HostTransfer> HostTransferFor(const PJRT_ExecuteOptions* options,
                                                        size_t device_index);

// The destination memory of a call that names a device, a memory, or both
// (memory wins, as the header says); INVALID_ARGUMENT when neither is given
// or it belongs to another client than `client`.
StatusOr<runtime::MemorySpace*> ResolveDestination(PJRT_Client* client, PJRT_Device* device,
                                                   PJRT_Memory* memory);

// New handles, registered as live.
PJRT_Buffer* NewBuffer(PJRT_Client* client, std::unique_ptr<runtime::Buffer> buffer);
// `buffer`'s row-major minor_to_major (rank-1, ..., 0), valid as long as it.
std::span<const int64_t> MinorToMajor(const PJRT_Buffer& buffer);
PJRT_Event* NewEvent(std::shared_ptr<runtime::Event> event);
PJRT_Executable* NewExecutable(std::shared_ptr<const compiler::Program> program);
PJRT_LoadedExecutable* NewLoadedExecutable(PJRT_Client* client,
                                           std::unique_ptr<runtime::LoadedExecutable> loaded);

// A new layout owned by the caller, registered as live: dense row-major
// for `rank` dimensions.
PJRT_Layouts_MemoryLayout* NewRowMajorLayout(size_t rank);
// XLA's text of the dense row-major layout of `rank` dimensions: "{2,1,0}".
std::string RowMajorLayoutText(size_t rank);

// The handle when it is live and of the right kind, else INVALID_ARGUMENT naming `what`.
StatusOr<PJRT_Client*> UnwrapClient(PJRT_Client* handle, std::string_view what = "client");
StatusOr<PJRT_Device*> UnwrapDevice(PJRT_Device* handle, std::string_view what = "device");
// UnwrapDevice, and INVALID_ARGUMENT for a device of another process of the
// job (it has no memory and runs nothing here).
StatusOr<PJRT_Device*> UnwrapAddressableDevice(PJRT_Device* handle,
                                               std::string_view what = "device");
StatusOr<KilnMemory*> UnwrapMemory(PJRT_Memory* handle, std::string_view what = "memory");
// Also FAILED_PRECONDITION when the buffer's client has been destroyed.
StatusOr<PJRT_Buffer*> UnwrapBuffer(PJRT_Buffer* handle, std::string_view what = "buffer");
// Only liveness: for PJRT_Buffer_Destroy, which must work after the client is gone.
StatusOr<PJRT_Buffer*> UnwrapBufferForDestroy(PJRT_Buffer* handle);
StatusOr<PJRT_Event*> UnwrapEvent(PJRT_Event* handle, std::string_view what = "event");
StatusOr<PJRT_DeviceDescription*> UnwrapDescription(const PJRT_DeviceDescription* handle);
StatusOr<PJRT_Executable*> UnwrapExecutable(PJRT_Executable* handle,
                                            std::string_view what = "executable");
StatusOr<PJRT_LoadedExecutable*> UnwrapLoadedExecutable(PJRT_LoadedExecutable* handle,
                                                        std::string_view what = "executable");
StatusOr<PJRT_Layouts_MemoryLayout*> UnwrapLayout(PJRT_Layouts_MemoryLayout* handle,
                                                  std::string_view what = "layout");
StatusOr<PJRT_TopologyDescription*> UnwrapTopology(const PJRT_TopologyDescription* handle,
                                                   std::string_view what = "topology");
// Also FAILED_PRECONDITION when the manager's client has been destroyed.
StatusOr<PJRT_AsyncHostToDeviceTransferManager*> UnwrapTransferManager(
    PJRT_AsyncHostToDeviceTransferManager* handle);
// Only liveness: for the manager's Destroy, which works after the client is gone.
StatusOr<PJRT_AsyncHostToDeviceTransferManager*> UnwrapTransferManagerForDestroy(
    PJRT_AsyncHostToDeviceTransferManager* handle);
StatusOr<PJRT_ExecuteContext*> UnwrapExecuteContext(PJRT_ExecuteContext* handle,
                                                    std::string_view what = "context");
StatusOr<PJRT_AsyncTrackingEvent*> UnwrapAsyncTrackingEvent(PJRT_AsyncTrackingEvent* handle);
StatusOr<PJRT_FulfillAliasBufferCallback*> UnwrapAliasCallback(
    PJRT_FulfillAliasBufferCallback* handle);

// Creates a handle and registers it as live (`kind`); unregisters and frees one.
template <typename T, typename... Fields>
T* NewHandle(HandleKind kind, Fields&&... fields) {
  auto* handle = new T{std::forward<Fields>(fields)...};
  RegisterHandle(handle, kind);
  return handle;
}
template <typename T>
void DestroyHandle(T* handle) {
  UnregisterHandle(handle);
  delete handle;
}
// The body of a PJRT_X_Destroy: a null `handle` is the no-op the header
// allows; any other must be live (`unwrap` says why it is not) and is freed.
template <typename T, typename Unwrap>
PJRT_Error* DestroyLiveHandle(T* handle, Unwrap unwrap) {
  if (handle == nullptr) return nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(T* live, unwrap(handle));
  DestroyHandle(live);
  return nullptr;
}

}  // namespace kiln::capi
