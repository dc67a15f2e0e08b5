// The Kiln client: devices, memory spaces, and every way to make a buffer.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "runtime/alias_buffer.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/dma_mappings.h"
#include "runtime/executable.h"
#include "runtime/feeds.h"
#include "runtime/job.h"
#include "runtime/topology.h"

namespace kiln::runtime {

class CrossProcessCollectives;

inline constexpr int kDefaultNumDevices = 1;
inline constexpr int64_t kMaxDevices = 4096;

// Options of PJRT_Client_Create, after validation.
struct ClientOptions {
  // Devices of this process (every process of a job has as many).
  int num_devices = kDefaultNumDevices;
  // This process's place in its job; its store is set by the caller.
  JobOptions job;

  // Defaults, then KILN_NUM_DEVICES, then the given options (which win).
  // Known options: num_devices (int64, or a string holding a decimal integer,
  // as JAX's jax_pjrt_client_create_options config passes it); node_id and
  // num_nodes (int64, what jax.distributed passes); partition_index
  // (accepted, unused: Kiln's job is one slice).
  static StatusOr<ClientOptions> FromAttributes(std::span<const Attribute> options);
};

// How long the caller keeps a host buffer valid (PJRT_HostBufferSemantics).
enum class HostBufferSemantics {
  kImmutableOnlyDuringCall,
  kImmutableUntilTransferCompletes,
  kImmutableZeroCopy,
  kMutableZeroCopy,
};

// A host array handed to BufferFromHostBuffer.
struct HostBuffer {
  const void* data = nullptr;
  Shape shape;
  std::vector<int64_t> byte_strides;  // empty: dense row-major
  HostBufferSemantics semantics = HostBufferSemantics::kImmutableOnlyDuringCall;
};

struct HostTransfer {
  std::unique_ptr<Buffer> buffer;
  // Fires when the caller may free or reuse the host data.
  std::shared_ptr<Event> done_with_host_buffer;
};

// Where a raw copy to the host (CopyRawToHostFuture) writes, known only
// later: set once, with the host pointer or with the error that cancels
// the copy. Thread-safe.
class HostDestination {
 public:
  explicit HostDestination(int64_t bytes) : bytes_(bytes) {}
  // The copy may now write its bytes to `dst`; a null `dst` for a non-empty
  // copy fails it. FAILED_PRECONDITION when set already.
  Status Provide(void* dst);
  // Cancels the copy with `error`. FAILED_PRECONDITION when set already.
  Status Fail(Status error);
  // Fires once Provide or Fail was called.
  const std::shared_ptr<Event>& set() const { return set_; }
  // The pointer given to Provide (once set() fired OK).
  void* dst() const { return dst_; }

 private:
  // True for the first caller of Provide or Fail.
  bool Claim();

  const int64_t bytes_;
  std::atomic<bool> claimed_{false};
  void* dst_ = nullptr;  // written before set_ fires, read after
  std::shared_ptr<Event> set_ = Event::Create();
};

// A raw copy whose destination comes later, and its completion.
struct FutureHostCopy {
  std::shared_ptr<HostDestination> destination;
  std::shared_ptr<Event> done;
};

// Reads, verifies and compiles a program (`format` as in PJRT_Program;
// `options` a serialized CompileOptionsProto) without placing it on devices.
// `keep_unfused`: for a backend that compiles nodes (Program::unfused_graph).
StatusOr<std::shared_ptr<const compiler::Program>> CompileProgram(std::span<const uint8_t> code,
                                                                  std::string_view format,
                                                                  std::span<const uint8_t> options,
                                                                  bool keep_unfused = false);
// CompileProgram for the devices of `topology` (PJRT_Compile, no client):
// INVALID_ARGUMENT when the options' replicas, partitions or device
// assignment need devices the topology lacks.
StatusOr<std::shared_ptr<const compiler::Program>> CompileForTopology(
    const Topology& topology, std::span<const uint8_t> code, std::string_view format,
    std::span<const uint8_t> options);

class Client {
 public:
  static StatusOr<std::unique_ptr<Client>> Create(const ClientOptions& options,
                                                  std::shared_ptr<DeviceBackend> backend);
  // Waits for queued transfers, then releases devices and memory spaces.
  ~Client();

  static std::string_view platform_name() { return "kiln"; }
  const std::string& platform_version() const { return platform_version_; }
  int process_index() const { return job_.node_id; }
  int process_count() const { return job_.num_nodes; }
  // Every device of the job, by id; the addressable ones are this process's.
  const std::vector<Device*>& devices() const { return device_pointers_; }
  const std::vector<Device*>& addressable_devices() const { return addressable_pointers_; }
  // What the framework last said of the job's processes; a collective that
  // fails names the ones not connected.
  void UpdateProcessInfo(std::vector<ProcessInfo> infos);
  // Collectives with other processes of the job; null in a job of one.
  CrossProcessCollectives* cross_process() const { return cross_process_.get(); }
  const std::vector<MemorySpace*>& memory_spaces() const { return memory_space_pointers_; }
  const Topology& topology() const { return topology_; }
  const std::shared_ptr<DeviceBackend>& backend() const { return backend_; }

  StatusOr<Device*> LookupDevice(int id) const;
  StatusOr<Device*> LookupAddressableDevice(int local_hardware_id) const;
  // Device ids for (replica, partition) pairs, replica-major: [r * partitions + p].
  StatusOr<std::vector<int>> DefaultDeviceAssignment(int num_replicas, int num_partitions) const;

  StatusOr<HostTransfer> BufferFromHostBuffer(const HostBuffer& host, MemorySpace* memory_space);
  StatusOr<std::unique_ptr<Buffer>> CreateUninitializedBuffer(Shape shape,
                                                              MemorySpace* memory_space);
  // A buffer over memory Kiln does not own; `on_delete` runs when it is released.
  StatusOr<std::unique_ptr<Buffer>> CreateViewOfDeviceBuffer(void* data, Shape shape,
                                                             MemorySpace* memory_space,
                                                             std::function<void()> on_delete);
  // A buffer that holds no data and whose ready event carries `error`.
  StatusOr<std::unique_ptr<Buffer>> CreateErrorBuffer(Shape shape, MemorySpace* memory_space,
                                                      Status error);
  // Copies `source` into another memory space (of any device of this client).
  StatusOr<std::unique_ptr<Buffer>> CopyToMemorySpace(const Buffer& source,
                                                      MemorySpace* memory_space);
  // Copies the array into `dst`, laid out with `dst_byte_strides`, once it is ready.
  StatusOr<std::shared_ptr<Event>> ToHostBuffer(const Buffer& source, void* dst,
                                                std::span<const int64_t> dst_byte_strides);
  // Copies `size` raw bytes from `offset` of the buffer's storage into `dst`.
  StatusOr<std::shared_ptr<Event>> CopyRawToHost(const Buffer& source, void* dst, int64_t offset,
                                                 int64_t size);
  // CopyRawToHost whose destination the caller provides later
  // (PJRT_Buffer_CopyRawToHostFuture): the copy runs once the buffer is
  // ready and the destination is set; failing the destination fails it.
  StatusOr<FutureHostCopy> CopyRawToHostFuture(const Buffer& source, int64_t offset, int64_t size);
  // A buffer whose memory another buffer of this client provides later
  // (PJRT_Client_CreateAliasBuffer).
  StatusOr<AliasBuffer> CreateAliasBuffer(Shape shape, MemorySpace* memory_space);

  // Reads, verifies and compiles a program handed to PJRT_Client_Compile
  // (`format` as in PJRT_Program; `options` a serialized CompileOptionsProto)
  // and loads it on its devices.
  StatusOr<std::unique_ptr<LoadedExecutable>> Compile(std::span<const uint8_t> code,
                                                      std::string_view format,
                                                      std::span<const uint8_t> options);
  // Loads a compiled program (PJRT_Client_Load) on the devices of its
  // device assignment; `options`, when not empty, replace the ones it was
  // compiled with (it is compiled again from its text).
  StatusOr<std::unique_ptr<LoadedExecutable>> Load(std::shared_ptr<const compiler::Program> program,
                                                   std::span<const uint8_t> options);

  // Loads an executable from LoadedExecutable::Serialize bytes; `options`,
  // when not empty, replace the serialized compile options. Bytes Kiln did
  // not write, or corrupted ones, are INVALID_ARGUMENT.
  StatusOr<std::unique_ptr<LoadedExecutable>> DeserializeAndLoad(std::span<const uint8_t> bytes,
                                                                 std::span<const uint8_t> options);

  // INVALID_ARGUMENT unless `space` belongs to this client.
  Status CheckOwns(const MemorySpace* space, std::string_view what) const;

  // The devices' infeed / outfeed queues and the channels between them
  // (stablehlo.infeed, outfeed, send / recv between devices).
  Feeds& feeds() { return feeds_; }
  // Host ranges registered with PJRT_Client_DmaMap.
  DmaMappings& dma_mappings() { return dma_mappings_; }

 private:
  Client(const ClientOptions& options, std::shared_ptr<DeviceBackend> backend);
  // Compiles StableHLO text (a serialized or loaded program's) with `options`.
  StatusOr<std::unique_ptr<LoadedExecutable>> CompileText(std::string_view text,
                                                          std::span<const uint8_t> options);
  // Copies `size` bytes at `offset` of `memory` (`source`'s) to the host
  // pointer `destination` gives, once `after` fires; `done` fires after.
  void EnqueueRawCopy(const Buffer& source, std::shared_ptr<DeviceMemory> memory,
                      std::shared_ptr<Event> after, std::function<void*()> destination,
                      int64_t offset, int64_t size, std::shared_ptr<Event> done);

  std::shared_ptr<DeviceBackend> backend_;
  std::string platform_version_;
  JobOptions job_;
  std::unique_ptr<CrossProcessCollectives> cross_process_;
  Topology topology_;
  // Before the devices: runs still queued on them may use it.
  Feeds feeds_;
  DmaMappings dma_mappings_;
  // Memory spaces are declared before devices so that devices (and their
  // queues, which may still touch memory spaces) are destroyed first.
  std::vector<std::unique_ptr<MemorySpace>> memory_spaces_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<Device*> device_pointers_;
  std::vector<Device*> addressable_pointers_;
  std::vector<MemorySpace*> memory_space_pointers_;
};

}  // namespace kiln::runtime
