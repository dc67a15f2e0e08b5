#include "runtime/client.h"

#include <cstdint>
#include <cstring>

#include "base/env.h"
#include "compiler/compile.h"
#include "frontend/compile_options.h"
#include "frontend/hlo/hlo_reader.h"
#include "frontend/program.h"
#include "runtime/cross_process.h"
#include "runtime/strided_copy.h"
#include "version.h"

namespace kiln::runtime {
namespace {

constexpr uintptr_t kZeroCopyAlignment = 16;

StatusOr<int64_t> NumDevicesFromValue(const AttributeValue& value) {
  if (const auto* number = std::get_if<int64_t>(&value)) {
    if (*number < 1 || *number > kMaxDevices) {
      return InvalidArgument("create option num_devices: expected an integer in [1, ", kMaxDevices,
                             "], found ", *number);
    }
    return *number;
  }
  if (const auto* text = std::get_if<std::string>(&value)) {
    return ParseInt64(*text, "create option num_devices", 1, kMaxDevices);
  }
  return InvalidArgument(
      "create option num_devices: expected an int64 (or a string holding a decimal integer), "
      "found a value of another type");
}

}  // namespace

StatusOr<ClientOptions> ClientOptions::FromAttributes(std::span<const Attribute> options) {
  ClientOptions result;
  if (auto env = GetEnv("KILN_NUM_DEVICES")) {
    KILN_ASSIGN_OR_RETURN(int64_t count, ParseInt64(*env, "environment variable KILN_NUM_DEVICES",
                                                    1, kMaxDevices));
    result.num_devices = static_cast<int>(count);
  }
  for (const Attribute& option : options) {
    if (option.name == "num_devices") {
      KILN_ASSIGN_OR_RETURN(int64_t count, NumDevicesFromValue(option.value));
      result.num_devices = static_cast<int>(count);
    } else if (option.name == "node_id" || option.name == "num_nodes" ||
               option.name == "partition_index") {
      const auto* number = std::get_if<int64_t>(&option.value);
      if (number == nullptr || *number < 0 || *number > kMaxDevices) {
        return InvalidArgument("create option ", option.name,
                               ": expected an int64 in [0, 4096], found a value of another type "
                               "or out of range");
      }
      if (option.name == "node_id") result.job.node_id = static_cast<int>(*number);
      if (option.name == "num_nodes") result.job.num_nodes = static_cast<int>(*number);
    } else {
      return InvalidArgument("unknown client create option \"", option.name,
                             "\"; Kiln accepts: num_devices (int64), node_id and num_nodes (int64, "
                             "from jax.distributed), partition_index (int64, unused)");
    }
  }
  if (result.job.num_nodes < 1 || result.job.node_id >= result.job.num_nodes) {
    return InvalidArgument("create options node_id ", result.job.node_id, " and num_nodes ",
                           result.job.num_nodes,
                           ": expected num_nodes >= 1 and node_id in [0, num_nodes)");
  }
  return result;
}

Client::Client(const ClientOptions& options, std::shared_ptr<DeviceBackend> backend)
    : backend_(std::move(backend)),
      platform_version_(StrCat("kiln ", kKilnVersion)),
      job_(options.job),
      topology_(options.num_devices * options.job.num_nodes, backend_->DeviceKind(),
                options.job.num_nodes) {
  // Global ids: process p's local device i is p * count + i.
  const int count = options.num_devices;
  for (int process = 0; process < job_.num_nodes; ++process) {
    for (int local = 0; local < count; ++local) {
      const int id = process * count + local;
      if (process == job_.node_id) {
        devices_.push_back(std::make_unique<Device>(this, id, backend_->DeviceKind(), process,
                                                    local));
        addressable_pointers_.push_back(devices_.back().get());
      } else {
        devices_.push_back(Device::Remote(this, id, backend_->DeviceKind(), process, local));
      }
    }
  }
  // Memory space ids: "device" memories 0..N-1 of the N addressable
  // devices, then "pinned_host" N..2N-1, then "unpinned_host" 2N..3N-1.
  for (MemoryKind kind : kMemoryKinds) {
    for (Device* device : addressable_pointers_) {
      int id = static_cast<int>(memory_spaces_.size());
      memory_spaces_.push_back(std::make_unique<MemorySpace>(id, kind, device, backend_));
      device->AddMemorySpace(memory_spaces_.back().get());
    }
  }
  const std::vector<Attribute> backend_attributes = backend_->DeviceAttributes();
  for (auto& device : devices_) {
    device->DescribeBackend(backend_->Name(), backend_attributes);
    device_pointers_.push_back(device.get());
  }
  for (auto& space : memory_spaces_) memory_space_pointers_.push_back(space.get());
}

Client::~Client() {
  // A task on one queue may enqueue onto another (a copy waits for its source
  // transfer), so drain every queue until a whole pass runs nothing new; only
  // then may any queue be destroyed.
  // Completions of work an asynchronous backend still holds fire events
  // whose continuations may enqueue more: wait for them too.
  for (uint64_t before = UINT64_MAX;;) {
    uint64_t after = backend_->Synchronize();
    for (Device* device : addressable_pointers_) after += device->queue().Drain();
    if (after == before) break;
    before = after;
  }
  devices_.clear();
}

StatusOr<std::unique_ptr<Client>> Client::Create(const ClientOptions& options,
                                                 std::shared_ptr<DeviceBackend> backend) {
  if (options.num_devices < 1 || options.num_devices > kMaxDevices) {
    return InvalidArgument("num_devices must be in [1, ", kMaxDevices, "], found ",
                           options.num_devices);
  }
  if (options.job.num_nodes > 1) {
    if (int64_t{options.num_devices} * options.job.num_nodes > kMaxDevices) {
      return InvalidArgument(options.job.num_nodes, " processes of ", options.num_devices,
                             " devices exceed Kiln's ", kMaxDevices, " devices");
    }
  }
  ClientOptions agreed = options;
  if (options.job.num_nodes > 1) {
    KILN_RETURN_IF_ERROR(AgreeOnTopology(agreed.job, options.num_devices, KilnBuildId()));
  }
  auto client = std::unique_ptr<Client>(new Client(agreed, std::move(backend)));
  if (options.job.num_nodes > 1) {
    KILN_ASSIGN_OR_RETURN(client->cross_process_,
                          CrossProcessCollectives::Create(agreed.job, options.num_devices));
  }
  return client;
}

StatusOr<Device*> Client::LookupDevice(int id) const {
  if (id < 0 || id >= static_cast<int>(devices_.size())) {
    return InvalidArgument("no Kiln device has id ", id, "; this client has ", devices_.size(),
                           " devices, ids 0 to ", devices_.size() - 1);
  }
  return devices_[id].get();
}

void Client::UpdateProcessInfo(std::vector<ProcessInfo> infos) {
  if (cross_process_) cross_process_->UpdateProcessInfo(std::move(infos));
}

StatusOr<Device*> Client::LookupAddressableDevice(int local_hardware_id) const {
  for (Device* device : addressable_pointers_) {
    if (device->local_hardware_id() == local_hardware_id) return device;
  }
  return InvalidArgument("no addressable Kiln device has local hardware id ", local_hardware_id,
                         "; this process has ", addressable_pointers_.size(),
                         " devices, local hardware ids 0 to ", addressable_pointers_.size() - 1);
}

StatusOr<std::shared_ptr<const compiler::Program>> CompileProgram(std::span<const uint8_t> code,
                                                                  std::string_view format,
                                                                  std::span<const uint8_t> options,
                                                                  bool keep_unfused) {
  KILN_ASSIGN_OR_RETURN(frontend::CompileOptions parsed, frontend::ParseCompileOptions(options));
  KILN_ASSIGN_OR_RETURN(ir::Module module, frontend::LoadProgram(code, format));
  KILN_ASSIGN_OR_RETURN(auto program, compiler::Compile(module, std::move(parsed), keep_unfused));
  if (format == "hlo" || format == "hlo_with_config") {
    // XLA's client turns the optimized program back into an HloModule: the
    // module it sent converts exactly, Kiln's StableHLO text may not (CHLO).
    // A module without a program shape keeps the text.
    StatusOr<std::vector<uint8_t>> optimized = frontend::hlo::OptimizedProgramOf(code, format);
    if (optimized.ok()) {
      auto with_hlo = std::make_shared<compiler::Program>(*program);
      with_hlo->hlo_with_config = std::move(optimized).value();
      program = std::move(with_hlo);
    }
  }
  return std::shared_ptr<const compiler::Program>(std::move(program));
}

namespace {

// INVALID_ARGUMENT unless the devices `options` asks for exist in `topology`.
Status CheckFitsTopology(const frontend::CompileOptions& options, const Topology& topology) {
  const int64_t devices = topology.num_devices();
  const int64_t needed = options.num_replicas * options.num_partitions;
  if (needed > devices) {
    return InvalidArgument(options.num_replicas, " replicas x ", options.num_partitions,
                           " partitions need ", needed, " devices; the topology has ", devices);
  }
  std::vector<int64_t> ids;
  for (const auto& replica : options.device_assignment) {
    ids.insert(ids.end(), replica.begin(), replica.end());
  }
  if (options.device_ordinal >= 0) ids.push_back(options.device_ordinal);
  for (int64_t id : ids) {
    if (id < 0 || id >= devices) {
      return InvalidArgument("the compile options place the program on device ", id,
                             "; the topology's devices are 0 to ", devices - 1);
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::shared_ptr<const compiler::Program>> CompileForTopology(
    const Topology& topology, std::span<const uint8_t> code, std::string_view format,
    std::span<const uint8_t> options) {
  KILN_ASSIGN_OR_RETURN(auto program, CompileProgram(code, format, options));
  KILN_RETURN_IF_ERROR(CheckFitsTopology(program->options, topology));
  KILN_RETURN_IF_ERROR(LoadedExecutable::CheckLoadable(*program));
  return program;
}

StatusOr<std::unique_ptr<LoadedExecutable>> Client::Compile(std::span<const uint8_t> code,
                                                            std::string_view format,
                                                            std::span<const uint8_t> options) {
  KILN_ASSIGN_OR_RETURN(auto program,
                        CompileProgram(code, format, options, backend_->CompilesNodes()));
  return LoadedExecutable::Create(this, std::move(program));
}

StatusOr<std::unique_ptr<LoadedExecutable>> Client::Load(
    std::shared_ptr<const compiler::Program> program, std::span<const uint8_t> options) {
  if (options.empty()) return LoadedExecutable::Create(this, std::move(program));
  return CompileText(program->text, options);
}

StatusOr<std::unique_ptr<LoadedExecutable>> Client::CompileText(std::string_view text,
                                                                std::span<const uint8_t> options) {
  return Compile(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "mlir",
                 options);
}

StatusOr<std::unique_ptr<LoadedExecutable>> Client::DeserializeAndLoad(
    std::span<const uint8_t> bytes, std::span<const uint8_t> options) {
  KILN_ASSIGN_OR_RETURN(SerializedExecutable parts, ParseSerializedExecutable(bytes));
  if (!options.empty()) parts.options.assign(options.begin(), options.end());
  return CompileText(parts.text, parts.options);
}

StatusOr<std::vector<int>> Client::DefaultDeviceAssignment(int num_replicas,
                                                           int num_partitions) const {
  if (num_replicas < 1 || num_partitions < 1) {
    return InvalidArgument("a device assignment needs at least 1 replica and 1 partition, found ",
                           num_replicas, " replicas and ", num_partitions, " partitions");
  }
  int64_t needed = int64_t{num_replicas} * num_partitions;
  if (needed > static_cast<int64_t>(devices_.size())) {
    return InvalidArgument("a device assignment of ", num_replicas, " replicas x ", num_partitions,
                           " partitions needs ", needed, " devices; this client has ",
                           devices_.size(), " (set KILN_NUM_DEVICES or the num_devices option)");
  }
  // As XLA's default placer: partition-major device ids.
  std::vector<int> assignment(static_cast<size_t>(needed));
  for (int replica = 0; replica < num_replicas; ++replica) {
    for (int partition = 0; partition < num_partitions; ++partition) {
      assignment[static_cast<size_t>(replica) * num_partitions + partition] = partition *
                                                                                  num_replicas +
                                                                              replica;
    }
  }
  return assignment;
}

Status Client::CheckOwns(const MemorySpace* space, std::string_view what) const {
  if (space == nullptr || space->device()->client() != this) {
    return InvalidArgument(what, " belongs to another client; expected a memory space or device of "
                                 "the client the call was made on");
  }
  return Status::Ok();
}

StatusOr<HostTransfer> Client::BufferFromHostBuffer(const HostBuffer& host,
                                                    MemorySpace* memory_space) {
  KILN_RETURN_IF_ERROR(CheckOwns(memory_space, "the destination memory space"));
  const size_t element_bytes = GetElementTypeInfo(host.shape.element_type).storage_bytes;
  KILN_RETURN_IF_ERROR(ValidateDims(host.shape.dims, element_bytes, "host buffer"));
  const size_t rank = host.shape.dims.size();
  std::vector<int64_t> strides = host.byte_strides;
  if (strides.empty()) strides = DenseByteStrides(host.shape.dims, element_bytes);
  if (strides.size() != rank) {
    return InvalidArgument("host buffer: expected ", rank, " byte strides (one per dimension of ",
                           host.shape.ToString(), "), found ", strides.size());
  }
  const size_t bytes = host.shape.ByteSize();
  if (host.data == nullptr && bytes > 0) {
    return InvalidArgument("host buffer: data is null for the non-empty array ",
                           host.shape.ToString());
  }
  ByteExtent extent = StridedExtent(host.shape.dims, strides, element_bytes);
  if (extent.overflow) {
    return InvalidArgument("host buffer: byte strides reach beyond the address space");
  }
  Device* device = memory_space->device();
  const bool dense = IsDenseRowMajor(host.shape.dims, strides, element_bytes);
  const bool zero_copy = host.semantics == HostBufferSemantics::kImmutableZeroCopy ||
                         host.semantics == HostBufferSemantics::kMutableZeroCopy;
  auto done = Event::Create();

  // Alias the caller's memory when it may, as XLA's CPU client does: no copy at all.
  if (zero_copy && dense && bytes > 0 && backend_->IsHostAddressable(memory_space->kind()) &&
      reinterpret_cast<uintptr_t>(host.data) % kZeroCopyAlignment == 0) {
    auto counters = memory_space->counters();
    counters->RecordAllocation(static_cast<int64_t>(bytes));
    auto memory = DeviceMemory::Borrow(
        const_cast<void*>(host.data), bytes,
        [done, counters, bytes] {
          counters->RecordFree(static_cast<int64_t>(bytes));
          done->Set();
        },
        memory_space->kind());
    auto buffer = std::make_unique<Buffer>(host.shape, memory_space, std::move(memory),
                                           Event::Ready());
    return HostTransfer{std::move(buffer), std::move(done)};
  }

  KILN_ASSIGN_OR_RETURN(std::shared_ptr<DeviceMemory> memory, memory_space->Allocate(bytes));
  if (host.semantics == HostBufferSemantics::kImmutableOnlyDuringCall) {
    // The data may vanish when we return: copy now, on the caller's thread.
    Status status = CopyHostArrayToDevice(*backend_, memory->address(), host.data, host.shape,
                                          strides);
    done->Set();
    auto buffer = std::make_unique<Buffer>(host.shape, memory_space, std::move(memory),
                                           Event::Ready(status));
    return HostTransfer{std::move(buffer), std::move(done)};
  }
  auto ready = Event::Create();
  // The caller may reuse its data once the copy has run, even if it failed.
  ready->OnReady([done](const Status&) { done->Set(); });
  // The device memory and the staged copy (of a strided array) live until
  // the device has read them.
  auto staging = std::make_shared<std::vector<unsigned char>>();
  EnqueueDeviceWork(
      Event::Ready(), &device->queue(), backend_.get(), device->ordinal(),
      [backend = backend_.get(), ordinal = device->ordinal(), memory, staging,
       host_data = host.data, shape = host.shape, strides] {
        return EnqueueHostArrayToDevice(*backend, ordinal, memory->address(), host_data, shape,
                                        strides, *staging);
      },
      ready, [memory, staging](Status status) { return status; });
  auto buffer = std::make_unique<Buffer>(host.shape, memory_space, std::move(memory), ready);
  return HostTransfer{std::move(buffer), std::move(done)};
}

StatusOr<std::unique_ptr<Buffer>> Client::CreateUninitializedBuffer(Shape shape,
                                                                    MemorySpace* memory_space) {
  KILN_RETURN_IF_ERROR(CheckOwns(memory_space, "the destination memory space"));
  KILN_RETURN_IF_ERROR(ValidateDims(shape.dims,
                                    GetElementTypeInfo(shape.element_type).storage_bytes,
                                    "uninitialized buffer"));
  KILN_ASSIGN_OR_RETURN(auto memory, memory_space->Allocate(shape.ByteSize()));
  return std::make_unique<Buffer>(std::move(shape), memory_space, std::move(memory),
                                  Event::Ready());
}

StatusOr<std::unique_ptr<Buffer>> Client::CreateViewOfDeviceBuffer(
    void* data, Shape shape, MemorySpace* memory_space, std::function<void()> on_delete) {
  KILN_RETURN_IF_ERROR(CheckOwns(memory_space, "the view's memory space"));
  KILN_RETURN_IF_ERROR(ValidateDims(shape.dims,
                                    GetElementTypeInfo(shape.element_type).storage_bytes,
                                    "device buffer view"));
  if (data == nullptr && shape.ByteSize() > 0) {
    return InvalidArgument("device buffer view: the device pointer is null for the non-empty "
                           "array ",
                           shape.ToString());
  }
  auto memory = DeviceMemory::Borrow(data, shape.ByteSize(), std::move(on_delete),
                                     memory_space->kind());
  return std::make_unique<Buffer>(std::move(shape), memory_space, std::move(memory),
                                  Event::Ready());
}

StatusOr<std::unique_ptr<Buffer>> Client::CreateErrorBuffer(Shape shape, MemorySpace* memory_space,
                                                            Status error) {
  KILN_RETURN_IF_ERROR(CheckOwns(memory_space, "the error buffer's memory space"));
  KILN_RETURN_IF_ERROR(ValidateDims(shape.dims,
                                    GetElementTypeInfo(shape.element_type).storage_bytes,
                                    "error buffer"));
  if (error.ok()) {
    return InvalidArgument("an error buffer needs an error code other than OK");
  }
  auto memory = DeviceMemory::Borrow(nullptr, 0, nullptr);
  return std::make_unique<Buffer>(std::move(shape), memory_space, std::move(memory),
                                  Event::Ready(std::move(error)));
}

StatusOr<std::unique_ptr<Buffer>> Client::CopyToMemorySpace(const Buffer& source,
                                                            MemorySpace* memory_space) {
  KILN_RETURN_IF_ERROR(CheckOwns(source.memory_space(), "the source buffer"));
  KILN_RETURN_IF_ERROR(CheckOwns(memory_space, "the destination"));
  KILN_ASSIGN_OR_RETURN(auto source_memory, source.memory());
  const size_t bytes = source.shape().ByteSize();
  KILN_ASSIGN_OR_RETURN(auto memory, memory_space->Allocate(bytes));
  auto ready = Event::Create();
  Device* device = memory_space->device();
  EnqueueDeviceWork(
      source.ready_event(), &device->queue(), backend_.get(), device->ordinal(),
      [backend = backend_.get(), ordinal = device->ordinal(), destination = memory, source_memory,
       bytes] {
        return backend->EnqueueDeviceToDevice(ordinal, destination->address(),
                                              source_memory->address(), bytes);
      },
      ready, [memory, source_memory](Status status) { return status; });
  return std::make_unique<Buffer>(source.shape(), memory_space, std::move(memory), ready);
}

StatusOr<std::shared_ptr<Event>> Client::ToHostBuffer(const Buffer& source, void* dst,
                                                      std::span<const int64_t> dst_byte_strides) {
  KILN_ASSIGN_OR_RETURN(auto memory, source.memory());
  const Shape& shape = source.shape();
  const size_t element_bytes = GetElementTypeInfo(shape.element_type).storage_bytes;
  if (dst_byte_strides.size() != shape.dims.size()) {
    return InvalidArgument("host layout: expected ", shape.dims.size(), " byte strides for ",
                           shape.ToString(), ", found ", dst_byte_strides.size());
  }
  std::vector<int64_t> dst_strides(dst_byte_strides.begin(), dst_byte_strides.end());
  auto done = Event::Create();
  auto src_strides = DenseByteStrides(shape.dims, element_bytes);
  Device* device = source.device();
  if (backend_->IsHostAddressable(memory->kind())) {
    EnqueueWhenReady(
        source.ready_event(), &device->queue(),
        [memory, dst, dst_strides, src_strides, dims = shape.dims, element_bytes] {
          CopyStrided(dst, dst_strides, memory->data(), src_strides, dims, element_bytes);
          return Status::Ok();
        },
        done);
    return done;
  }
  // Read straight into `dst` when its layout is dense; else into a staged
  // copy, laid out in `dst` once the device has written it.
  const bool dense = IsDenseRowMajor(shape.dims, dst_strides, element_bytes);
  auto staging = dense ? nullptr : std::make_shared<std::vector<unsigned char>>(memory->size());
  EnqueueDeviceWork(
      source.ready_event(), &device->queue(), backend_.get(), device->ordinal(),
      [backend = backend_.get(), ordinal = device->ordinal(), memory, dst, staging] {
        void* into = staging ? staging->data() : dst;
        return backend->EnqueueDeviceToHost(ordinal, into, memory->address(), memory->size());
      },
      done,
      [memory, dst, staging, dst_strides, src_strides, dims = shape.dims,
       element_bytes](Status status) {
        if (status.ok() && staging) {
          CopyStrided(dst, dst_strides, staging->data(), src_strides, dims, element_bytes);
        }
        return status;
      });
  return done;
}

namespace {

// OUT_OF_RANGE unless [offset, offset + size) lies within `memory`.
Status CheckRawRange(const DeviceMemory& memory, int64_t offset, int64_t size) {
  const auto total = static_cast<int64_t>(memory.size());
  if (offset < 0 || size < 0 || offset > total || size > total - offset) {
    return OutOfRange("raw copy of ", size, " bytes at offset ", offset,
                      " is outside the buffer's ", total, " bytes");
  }
  return Status::Ok();
}

}  // namespace

void Client::EnqueueRawCopy(const Buffer& source, std::shared_ptr<DeviceMemory> memory,
                            std::shared_ptr<Event> after, std::function<void*()> destination,
                            int64_t offset, int64_t size, std::shared_ptr<Event> done) {
  Device* device = source.device();
  EnqueueDeviceWork(
      after, &device->queue(), backend_.get(), device->ordinal(),
      [backend = backend_.get(), ordinal = device->ordinal(), memory,
       destination = std::move(destination), offset, size] {
        return backend->EnqueueDeviceToHost(ordinal, destination(),
                                            memory->address(static_cast<size_t>(offset)),
                                            static_cast<size_t>(size));
      },
      std::move(done), [memory](Status status) { return status; });
}

StatusOr<std::shared_ptr<Event>> Client::CopyRawToHost(const Buffer& source, void* dst,
                                                       int64_t offset, int64_t size) {
  KILN_ASSIGN_OR_RETURN(auto memory, source.memory());
  KILN_RETURN_IF_ERROR(CheckRawRange(*memory, offset, size));
  if (dst == nullptr && size > 0) return InvalidArgument("raw copy: the destination is null");
  auto done = Event::Create();
  EnqueueRawCopy(
      source, std::move(memory), source.ready_event(), [dst] { return dst; }, offset, size, done);
  return done;
}

StatusOr<FutureHostCopy> Client::CopyRawToHostFuture(const Buffer& source, int64_t offset,
                                                     int64_t size) {
  KILN_ASSIGN_OR_RETURN(auto memory, source.memory());
  KILN_RETURN_IF_ERROR(CheckRawRange(*memory, offset, size));
  FutureHostCopy copy{std::make_shared<HostDestination>(size), Event::Create()};
  const std::shared_ptr<Event> both[] = {source.ready_event(), copy.destination->set()};
  EnqueueRawCopy(
      source, std::move(memory), Event::AfterAll(both),
      [destination = copy.destination] { return destination->dst(); }, offset, size, copy.done);
  return copy;
}

bool HostDestination::Claim() { return !claimed_.exchange(true); }

Status HostDestination::Provide(void* dst) {
  if (!Claim()) return FailedPrecondition("the destination of this raw copy was set already");
  if (dst == nullptr && bytes_ > 0) {
    set_->Set(InvalidArgument("raw copy: the destination provided for ", bytes_, " bytes is null"));
    return Status::Ok();
  }
  dst_ = dst;
  set_->Set();
  return Status::Ok();
}

Status HostDestination::Fail(Status error) {
  if (!Claim()) return FailedPrecondition("the destination of this raw copy was set already");
  set_->Set(std::move(error));
  return Status::Ok();
}

StatusOr<AliasBuffer> Client::CreateAliasBuffer(Shape shape, MemorySpace* memory_space) {
  KILN_RETURN_IF_ERROR(CheckOwns(memory_space, "the alias buffer's memory space"));
  KILN_RETURN_IF_ERROR(ValidateDims(shape.dims,
                                    GetElementTypeInfo(shape.element_type).storage_bytes,
                                    "alias buffer"));
  return AliasBuffer::Create(std::move(shape), memory_space);
}

}  // namespace kiln::runtime
