#include "runtime/executable.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <new>
#include <optional>

#include "kernels/parallel.h"
#include "runtime/client.h"
#include "runtime/collectives.h"
#include "runtime/memory_space.h"
#include "runtime/work_queue.h"

namespace kiln::runtime {
namespace {

// A fresh run id for what FFI handlers see (XLA_FFI_RunId_Get): one per
// execution, shared by the devices of a launch.
int64_t NextRunId() {
  static std::atomic<int64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'E', 'X', 'E', '1'};

uint64_t Checksum(std::span<const uint8_t> bytes) {
  uint64_t hash = 1469598103934665603ull;
  for (uint8_t byte : bytes) hash = (hash ^ byte) * 1099511628211ull;
  return hash;
}

void PutU64(std::vector<uint8_t>& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

uint64_t GetU64(std::span<const uint8_t> bytes, size_t offset) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(bytes[offset + i]) << (8 * i);
  return value;
}

}  // namespace

// Layout: magic (8) | checksum of the rest (8) | options size (8) | options |
// text size (8) | text.
std::vector<uint8_t> SerializeExecutable(const compiler::Program& program) {
  std::vector<uint8_t> body;
  PutU64(body, program.options.serialized.size());
  body.insert(body.end(), program.options.serialized.begin(), program.options.serialized.end());
  PutU64(body, program.text.size());
  body.insert(body.end(), program.text.begin(), program.text.end());
  std::vector<uint8_t> out(kMagic, kMagic + sizeof(kMagic));
  PutU64(out, Checksum(body));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

StatusOr<SerializedExecutable> ParseSerializedExecutable(std::span<const uint8_t> bytes) {
  if (bytes.size() < 24 || !std::equal(kMagic, kMagic + sizeof(kMagic), bytes.begin())) {
    return InvalidArgument("not a Kiln executable: expected ",
                           bytes.size() < 24 ? "at least 24 "
                                               "bytes starting with"
                                             : "the magic",
                           " \"KILNEXE1\", found ", bytes.size(), " bytes");
  }
  const std::span<const uint8_t> body = bytes.subspan(16);
  if (Checksum(body) != GetU64(bytes, 8)) {
    return InvalidArgument("the serialized Kiln executable is corrupted: its checksum does not "
                           "match its ",
                           body.size(), " bytes");
  }
  SerializedExecutable parts;
  const uint64_t options_size = GetU64(body, 0);
  if (options_size > body.size() - 8 || body.size() - 8 - options_size < 8) {
    return InvalidArgument("the serialized Kiln executable is truncated: the options claim ",
                           options_size, " bytes");
  }
  parts.options.assign(body.begin() + 8, body.begin() + 8 + static_cast<ptrdiff_t>(options_size));
  const size_t text_at = 8 + static_cast<size_t>(options_size);
  const uint64_t text_size = GetU64(body, text_at);
  if (text_size != body.size() - text_at - 8) {
    return InvalidArgument("the serialized Kiln executable is truncated: the program claims ",
                           text_size, " bytes, ", body.size() - text_at - 8, " remain");
  }
  parts.text.assign(reinterpret_cast<const char*>(body.data()) + text_at + 8, text_size);
  return parts;
}

StatusOr<std::unique_ptr<LoadedExecutable>> LoadedExecutable::Create(
    Client* client, std::shared_ptr<const compiler::Program> program) {
  KILN_RETURN_IF_ERROR(CheckLoadable(*program));
  const frontend::CompileOptions& options = program->options;
  std::vector<int> ids;
  if (!options.device_assignment.empty()) {
    for (const auto& replica : options.device_assignment) {
      for (int64_t id : replica) ids.push_back(static_cast<int>(id));
    }
  } else if (options.device_ordinal >= 0) {
    ids.push_back(static_cast<int>(options.device_ordinal));
  } else {
    KILN_ASSIGN_OR_RETURN(
        ids, client->DefaultDeviceAssignment(static_cast<int>(options.num_replicas),
                                             static_cast<int>(options.num_partitions)));
  }
  std::vector<Device*> devices;
  for (int id : ids) {
    KILN_ASSIGN_OR_RETURN(auto* device, client->LookupDevice(id));
    devices.push_back(device);
  }
  std::unique_ptr<LoadedExecutable> executable(new LoadedExecutable(client, std::move(program),
                                                                    std::move(devices)));
  KILN_ASSIGN_OR_RETURN(executable->device_plan_,
                        DevicePlan::Build(*executable->program_, *client->backend()));
  return executable;
}

Status LoadedExecutable::CheckLoadable(const compiler::Program& program) {
  const frontend::CompileOptions& options = program.options;
  // Replicas run the program as it is, each on its own device; so do
  // partitions of a program written per partition. A program the framework
  // wants partitioned (global shapes with shardings) needs the SPMD
  // partitioner, which Kiln does not have yet.
  if (options.num_partitions > 1 && options.use_spmd_partitioning && !program.partitioned) {
    return Unimplemented("SPMD partitioning of a program over ", options.num_partitions,
                         " partitions (jit with shardings, shard_map, pmap) is not built yet; "
                         "Kiln runs replicated programs and programs written per partition");
  }
  return Status::Ok();
}

LoadedExecutable::LoadedExecutable(Client* client, std::shared_ptr<const compiler::Program> program,
                                   std::vector<Device*> assignment)
    : client_(client), program_(std::move(program)), assignment_(std::move(assignment)) {
  for (Device* device : assignment_) {
    if (device->addressable()) devices_.push_back(device);
  }
}

std::vector<std::vector<int64_t>> LoadedExecutable::device_assignment() const {
  std::vector<std::vector<int64_t>> assignment(static_cast<size_t>(num_replicas()));
  size_t next = 0;
  for (auto& replica : assignment) {
    for (int p = 0; p < num_partitions(); ++p) replica.push_back(assignment_[next++]->id());
  }
  return assignment;
}

std::shared_ptr<Launch> LoadedExecutable::MakeLaunch(std::vector<int64_t> processes) const {
  if (!spans_processes() || client_->cross_process() == nullptr) {
    return std::make_shared<Launch>(std::move(processes));
  }
  CrossProcessLink link;
  link.transport = client_->cross_process();
  for (Device* device : assignment_) link.device_of.push_back(device->id());
  return std::make_shared<Launch>(std::move(processes), std::move(link));
}

void LoadedExecutable::Delete() {
  std::lock_guard lock(mutex_);
  deleted_ = true;
}

bool LoadedExecutable::IsDeleted() const {
  std::lock_guard lock(mutex_);
  return deleted_;
}

namespace {

// Which arguments this call donates: those the program may take, minus the
// caller's exceptions. A donated buffer may not be passed twice.
StatusOr<SmallVector<bool, 16>> DonatedArguments(const compiler::Program& program,
                                                 std::span<Buffer* const> arguments,
                                                 std::span<const int64_t> non_donatable) {
  SmallVector<bool, 16> donated(arguments.size(), false);
  bool any = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    donated[i] = i < program.parameter_donatable.size() && program.parameter_donatable[i];
    any = any || donated[i];
  }
  for (int64_t index : non_donatable) {
    if (index < 0 || index >= static_cast<int64_t>(arguments.size())) {
      return InvalidArgument(program.name, ": non-donatable input index ", index,
                             " is out of range; the program takes ", arguments.size(),
                             " arguments");
    }
    donated[static_cast<size_t>(index)] = false;
  }
  for (size_t i = 0; any && i < arguments.size(); ++i) {
    if (!donated[i]) continue;
    for (size_t k = 0; k < arguments.size(); ++k) {
      if (k != i && arguments[k] == arguments[i]) {
        return InvalidArgument(program.name, ": argument ", i,
                               " is donated, so it cannot also be passed as argument ", k);
      }
    }
  }
  return donated;
}

}  // namespace

Status LoadedExecutable::CheckArguments(std::span<Buffer* const> arguments, Device* device) const {
  if (IsDeleted()) {
    return FailedPrecondition("the executable ", program_->name, " was deleted");
  }
  const compiler::Program& program = *program_;
  if (!device->addressable()) {
    return InvalidArgument(program.name, ": ", device->description().debug_string,
                           " belongs to process ", device->process_index(), "; process ",
                           client_->process_index(), " runs only its own devices");
  }
  if (arguments.size() != program.parameter_shapes.size()) {
    return InvalidArgument(program.name, " takes ", program.parameter_shapes.size(),
                           " arguments, found ", arguments.size());
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Buffer& argument = *arguments[i];
    const Shape& expected = program.parameter_shapes[i];
    // JAX's first token for ordered effects is a bool[0] array; XLA's CPU
    // backend takes it for a token parameter, and so does Kiln.
    const bool token_from_jax = expected.element_type == ElementType::kToken &&
                                argument.shape().element_type == ElementType::kPred &&
                                argument.shape().dims == std::vector<int64_t>{0};
    if (!token_from_jax && (argument.shape().element_type != expected.element_type ||
                            argument.shape().dims != expected.dims)) {
      return InvalidArgument(program.name, ": argument ", i, " must be ", expected.ToString(),
                             ", found ", argument.shape().ToString());
    }
    if (argument.device() != device) {
      return InvalidArgument(program.name, ": argument ", i, " is on ",
                             argument.device()->description().debug_string, ", expected it on ",
                             device->description().debug_string);
    }
    if (argument.IsDeleted()) {
      return InvalidArgument(program.name, ": argument ", i, " (", argument.shape().ToString(),
                             ") has been deleted or donated; it holds no data");
    }
  }
  return Status::Ok();
}

int64_t LoadedExecutable::ProcessOf(const Device* device) const {
  for (size_t i = 0; i < assignment_.size(); ++i) {
    if (assignment_[i] == device) return static_cast<int64_t>(i);
  }
  return 0;
}

StatusOr<LoadedExecutable::Prepared> LoadedExecutable::Prepare(
    std::span<Buffer* const> arguments, Device* device, const Donations& donated,
    std::shared_ptr<compiler::HostTransfer> host) {
  const compiler::Program& program = *program_;
  Prepared prepared;
  // The run waits for the arguments that are not ready yet (or failed).
  std::vector<std::shared_ptr<Event>> pending;
  for (Buffer* argument : arguments) {
    std::shared_ptr<Event> ready = argument->ready_event();
    std::optional<Status> status = ready->TryGetStatus();
    if (!status || !status->ok()) pending.push_back(std::move(ready));
  }
  if (!pending.empty()) prepared.ready = Event::AfterAll(pending);
  // Everything is checked: take the arguments' memory, donating where asked.
  prepared.inputs.reserve(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    auto memory = donated[i] ? arguments[i]->Donate() : arguments[i]->memory();
    if (!memory.ok()) {
      return Status(memory.status().code(),
                    StrCat(program.name, ": argument ", i, ": ", memory.status().message()));
    }
    prepared.inputs.push_back(std::move(*memory));
  }
  // Each result lands in the memory space of its kind on this device.
  const size_t num_results = program.result_shapes.size();
  SmallVector<MemorySpace*, 16> spaces(num_results, device->default_memory_space());
  for (size_t r = 0; r < program.result_memory_kinds.size() && r < num_results; ++r) {
    std::optional<MemoryKind> kind = MemoryKindNamed(program.result_memory_kinds[r]);
    if (kind && device->FindMemorySpace(*kind) != nullptr) {
      spaces[r] = device->FindMemorySpace(*kind);
    }
  }
  // Results written over a donated argument's memory: only memory Kiln owns
  // (never a zero-copy view of the caller's host array), in the result's
  // memory space, that nothing else holds but runs still to write it, which
  // this run waits for (the argument's ready event). A training step
  // dispatched before the last one ran donates that one's pending result:
  // counting those writers kept every step from reusing it, and 2000
  // chained updates of a 4 MB parameter held 7.3 GB (XLA: 236 MB).
  std::vector<std::shared_ptr<DeviceMemory>> reused;
  prepared.input_in_output.assign(arguments.size(), -1);
  for (size_t i = 0; i < arguments.size(); ++i) {
    const int result = program.parameter_aliased_result[i];
    if (!donated[i] || result < 0 || !program.alias_in_place[i]) continue;
    const std::shared_ptr<DeviceMemory>& memory = prepared.inputs[i];
    // Holds only go away meanwhile: counting references before writers
    // can only overstate the other holders.
    const long holders = memory.use_count();
    const long writers = memory->writer_holds();
    if (arguments[i]->memory_space() == spaces[static_cast<size_t>(result)] && memory->owned() &&
        holders - 1 - writers <= 0) {
      reused.resize(num_results);
      reused[static_cast<size_t>(result)] = memory;
      // The run holds it once, as the output it writes.
      prepared.inputs[i] = nullptr;
      prepared.input_in_output[i] = result;
    }
  }
  prepared.run.done = Event::Create();
  prepared.outputs.reserve(num_results);
  prepared.run.outputs.reserve(num_results);
  for (size_t r = 0; r < num_results; ++r) {
    const Shape& shape = program.result_shapes[r];
    std::shared_ptr<DeviceMemory> memory;
    if (r < reused.size()) memory = std::move(reused[r]);
    if (memory == nullptr) {
      KILN_ASSIGN_OR_RETURN(memory, spaces[r]->Allocate(shape.ByteSize()));
    }
    prepared.outputs.push_back(memory);
    prepared.run.outputs.push_back(std::make_unique<Buffer>(shape, spaces[r], std::move(memory),
                                                            prepared.run.done));
  }
  prepared.device = device;
  prepared.process = ProcessOf(device);
  prepared.run_id = NextRunId();
  prepared.host = std::move(host);
  return prepared;
}

namespace {

// Host copies of a run's memory that the host cannot address (a device's
// own memory): the whole program then runs on the host kernels over these,
// its inputs copied in before and its outputs copied back after (issue 31:
// the host fallback, until a backend runs nodes itself).
class Staging {
 public:
  // A host block of `bytes`, aligned as device memory is.
  unsigned char* Block(size_t bytes) {
    blocks_.emplace_back(new (std::align_val_t(64)) unsigned char[std::max<size_t>(bytes, 1)]);
    return blocks_.back().get();
  }

 private:
  struct Free {
    void operator()(unsigned char* block) const {
      ::operator delete[](block, std::align_val_t(64));
    }
  };
  std::vector<std::unique_ptr<unsigned char[], Free>> blocks_;
};

}  // namespace

// The work of one run, holding what it needs: the program, the arguments'
// and outputs' memory, and where its collectives, feeds and host transfers
// go. Runs inline on the caller's stack or, wrapped, on a device's queue.
// The outputs' writer holds (DeviceMemory::writer_holds) last as long as
// the job.
class LoadedExecutable::Job {
 public:
  Job(const LoadedExecutable& executable, Prepared& prepared, std::shared_ptr<Launch> launch)
      : program_(executable.program_),
        envs_(executable.envs_),
        inputs_(std::move(prepared.inputs)),
        input_in_output_(prepared.input_in_output),
        outputs_(std::move(prepared.outputs)),
        host_(std::move(prepared.host)),
        feeds_(prepared.device->client()->feeds().ForDevice(prepared.device->id())),
        launch_(std::move(launch)),
        done_(prepared.run.done),
        context_(std::move(prepared.context)),
        process_(prepared.process),
        replicas_(std::max(1, executable.num_replicas())),
        partitions_(std::max(1, executable.num_partitions())),
        device_ordinal_(prepared.device->ordinal()),
        run_id_(prepared.run_id),
        backend_(executable.client_->backend().get()),
        device_plan_(executable.device_plan_) {
    for (const auto& memory : outputs_) memory->AddWriterHold();
  }
  ~Job() {
    for (const auto& memory : outputs_) memory->DropWriterHold();
  }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  Status operator()();

  // The completion of work the run left on the device's queue (an
  // asynchronous backend's, DeviceBackend::Completion), or null.
  std::shared_ptr<QueueEvent> TakePending() { return std::move(pending_); }

 private:
  // The run's parameter and result tables: device memory the host can
  // address as is, the rest through staged host copies.
  struct Tables {
    Tables(size_t inputs, size_t outputs)
        : parameters(inputs, nullptr), results(outputs, nullptr), staged(outputs, false) {}
    SmallVector<const void*, 16> parameters;
    SmallVector<void*, 16> results;
    SmallVector<bool, 16> staged;  // per output: results[r] is a staged copy
    Staging staging;
  };
  // Fills `tables`, copying staged inputs (and outputs that start as a
  // donated input) to the host.
  Status Place(Tables& tables) const;

  std::shared_ptr<const compiler::Program> program_;
  std::shared_ptr<EnvPool> envs_;
  std::vector<std::shared_ptr<DeviceMemory>> inputs_;
  SmallVector<int, 16> input_in_output_;
  std::vector<std::shared_ptr<DeviceMemory>> outputs_;
  std::shared_ptr<compiler::HostTransfer> host_;
  compiler::DeviceFeeds* feeds_;
  std::shared_ptr<Launch> launch_;
  std::shared_ptr<Event> done_;
  std::shared_ptr<const ExecuteContext> context_;
  int64_t process_;
  int64_t replicas_;
  int64_t partitions_;
  int device_ordinal_;
  int64_t run_id_;
  // The client's, which outlives its runs (~Client drains every queue).
  DeviceBackend* backend_;
  // Shared: a run may outlive its executable (the framework may drop it
  // while the run is queued). Null for every program the host kernels run
  // whole, so most runs copy no reference count.
  std::shared_ptr<const DevicePlan> device_plan_;
  std::shared_ptr<QueueEvent> pending_;
  // Runs through device_plan_ when every argument and output is in the
  // device's own memory; false: the host kernels run the whole program.
  StatusOr<bool> RunDevicePlan(compiler::ExecutionEnv& env);
};

StatusOr<bool> LoadedExecutable::Job::RunDevicePlan(compiler::ExecutionEnv& env) {
  if (device_plan_ == nullptr) return false;
  SmallVector<DeviceAddress, 16> parameters, results;
  for (const auto& memory : outputs_) {
    if (memory->kind() != MemoryKind::kDevice) return false;
    results.push_back(memory->address());
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const int in_output = i < input_in_output_.size() ? input_in_output_[i] : -1;
    const DeviceMemory& memory = in_output >= 0 ? *outputs_[static_cast<size_t>(in_output)]
                                                : *inputs_[i];
    if (memory.kind() != MemoryKind::kDevice) return false;
    parameters.push_back(memory.address());
  }
  KILN_RETURN_IF_ERROR(device_plan_->Run(*backend_, device_ordinal_, parameters, results, env));
  KILN_ASSIGN_OR_RETURN(pending_, backend_->Completion(device_ordinal_));
  return true;
}

Status LoadedExecutable::Job::Place(Tables& tables) const {
  for (size_t r = 0; r < outputs_.size(); ++r) {
    const DeviceMemory& memory = *outputs_[r];
    if (backend_->IsHostAddressable(memory.kind())) {
      tables.results[r] = memory.data();
      continue;
    }
    tables.results[r] = tables.staging.Block(memory.size());
    tables.staged[r] = true;
    // An output written over a donated input starts as that input.
    if (std::find(input_in_output_.begin(), input_in_output_.end(), static_cast<int>(r)) !=
        input_in_output_.end()) {
      KILN_RETURN_IF_ERROR(backend_->CopyDeviceToHost(tables.results[r], memory.address(),
                                                      memory.size()));
    }
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const int in_output = i < input_in_output_.size() ? input_in_output_[i] : -1;
    if (in_output >= 0) {
      tables.parameters[i] = tables.results[static_cast<size_t>(in_output)];
      continue;
    }
    const DeviceMemory& memory = *inputs_[i];
    if (backend_->IsHostAddressable(memory.kind())) {
      tables.parameters[i] = memory.data();
      continue;
    }
    unsigned char* block = tables.staging.Block(memory.size());
    KILN_RETURN_IF_ERROR(backend_->CopyDeviceToHost(block, memory.address(), memory.size()));
    tables.parameters[i] = block;
  }
  return Status::Ok();
}

Status LoadedExecutable::Job::operator()() {
  // Poisoned before it started (PJRT_Device_PoisonExecution): the run's
  // event carries the error already; the launch's peers are released.
  if (std::optional<Status> poisoned = done_->TryGetStatus()) {
    if (launch_) launch_->Abort(*poisoned);
    return *poisoned;
  }
  std::unique_ptr<compiler::ExecutionEnv> env;
  {
    std::lock_guard lock(envs_->mutex);
    if (!envs_->idle.empty()) {
      env = std::move(envs_->idle.back());
      envs_->idle.pop_back();
    }
  }
  if (!env) env = std::make_unique<compiler::ExecutionEnv>();
  Tables tables(inputs_.size(), outputs_.size());
  env->host = host_.get();
  env->feeds = feeds_;
  env->collectives = launch_ ? launch_->Member(process_) : nullptr;
  env->replica_id = process_ / partitions_;
  env->partition_id = process_ % partitions_;
  env->num_replicas = replicas_;
  env->num_partitions = partitions_;
  env->device_ordinal = device_ordinal_;
  env->run_id = run_id_;
  env->ffi_user_data = context_.get();
  // Kernels allocate little, but an allocation failure must reach the
  // framework through the run's event rather than end the process.
  Status status;
  try {
    // Through the device plan, which stages nothing; else on the host
    // kernels over `tables`.
    StatusOr<bool> planned = RunDevicePlan(*env);
    if (!planned.ok()) {
      status = planned.status();
    } else if (!*planned) {
      status = Place(tables);
      std::optional<kernels::KeepWorkersWarm> warm;
      if (status.ok() && program_->keep_workers_warm) warm.emplace();
      if (status.ok()) {
        status = compiler::Execute(*program_->graph, tables.parameters, tables.results, *env);
      }
    }
  } catch (const std::bad_alloc&) {
    status = ResourceExhausted("out of host memory while running ", program_->name);
  } catch (const std::exception& error) {
    status = Internal("running ", program_->name, " failed: ", error.what());
  }
  for (size_t r = 0; status.ok() && r < outputs_.size(); ++r) {
    if (tables.staged[r]) {
      status = backend_->CopyHostToDevice(outputs_[r]->address(), tables.results[r],
                                          outputs_[r]->size());
    }
  }
  if (!status.ok() && launch_) launch_->Abort(status);
  env->host = nullptr;
  env->feeds = nullptr;
  env->collectives = nullptr;
  env->ffi_user_data = nullptr;
  std::lock_guard lock(envs_->mutex);
  envs_->idle.push_back(std::move(env));
  return status;
}

std::function<void()> LoadedExecutable::Work(Prepared& prepared, std::shared_ptr<Launch> launch,
                                             WorkQueue* queue) {
  // std::function copies what it holds: the job goes in by reference count.
  return [job = std::make_shared<Job>(*this, prepared, std::move(launch)), done = prepared.run.done,
          queue]() mutable {
    Status result = RunTask(*job, queue->name());
    std::shared_ptr<QueueEvent> pending = result.ok() ? job->TakePending() : nullptr;
    queue->WorkerFinishing();
    if (pending == nullptr) {
      // Released before the event fires, so that a waiter sees the run's
      // holds on its buffers gone.
      job.reset();
      done->Set(std::move(result));
      return;
    }
    // The device's queue still holds the run's work: the job (its buffers)
    // lives until it completes, and the worker goes on meanwhile.
    pending->OnDone([job = std::move(job), done = std::move(done)](Status status) mutable {
      job.reset();
      done->Set(std::move(status));
    });
  };
}

StatusOr<LoadedExecutable::Run> LoadedExecutable::Execute(
    std::span<Buffer* const> arguments, Device* device, std::span<const int64_t> non_donatable,
    std::shared_ptr<compiler::HostTransfer> host) {
  ExecuteOptions options;
  options.non_donatable = non_donatable;
  if (host != nullptr) options.host = [&host](size_t) { return host; };
  return ExecuteOne(arguments, device, options);
}

StatusOr<LoadedExecutable::Run> LoadedExecutable::ExecuteOne(std::span<Buffer* const> arguments,
                                                             Device* device,
                                                             const ExecuteOptions& options) {
  if (program_->has_collectives && spans_processes()) {
    // Its collectives meet other processes: through a launch of one run.
    std::vector<Buffer*> list(arguments.begin(), arguments.end());
    KILN_ASSIGN_OR_RETURN(std::vector<Run> runs,
                          ExecuteLaunch(std::span(&list, 1), std::span(&device, 1), options));
    return std::move(runs.front());
  }
  KILN_RETURN_IF_ERROR(CheckArguments(arguments, device));
  KILN_ASSIGN_OR_RETURN(Donations donated,
                        DonatedArguments(*program_, arguments, options.non_donatable));
  KILN_ASSIGN_OR_RETURN(Prepared prepared, Prepare(arguments, device, donated,
                                                   options.host ? options.host(0) : nullptr));
  prepared.context = options.context;
  if (options.launch_id != 0) prepared.run_id = options.launch_id;
  device->executions().Track(options.launch_id, prepared.run.done);
  Start(prepared, /*may_run_inline=*/true);
  return std::move(prepared.run);
}

void LoadedExecutable::Start(Prepared& prepared, bool may_run_inline) {
  // A small program whose arguments are ready runs now on this thread if
  // its device is idle (XLA's CPU client runs cheap programs inline too).
  if (may_run_inline && program_->run_inline && prepared.host == nullptr &&
      prepared.ready == nullptr) {
    WorkQueue& queue = prepared.device->queue();
    std::shared_ptr<Event> done = prepared.run.done;
    bool ran = queue.RunNowIfIdle([&] {
      Status result;
      {
        // Released before the event fires, as a queued task's captures are.
        Job job(*this, prepared, nullptr);
        result = RunTask(job, queue.name());
        // Work left on the device's queue is waited for here: the caller's
        // thread ran the job, and the job lives on its stack.
        if (std::shared_ptr<QueueEvent> pending = result.ok() ? job.TakePending() : nullptr) {
          result = pending->Wait();
        }
      }
      done->Set(std::move(result));
    });
    if (ran) return;
  }
  std::shared_ptr<Event> ready = prepared.ready ? prepared.ready : Event::Ready();
  WorkQueue* queue = &prepared.device->queue();
  ready->OnReady([work = Work(prepared, nullptr, queue), done = prepared.run.done,
                  queue](const Status& status) mutable {
    if (!status.ok()) {
      work = nullptr;
      done->Set(status);
      return;
    }
    queue->Enqueue(std::move(work));
  });
}

StatusOr<std::vector<LoadedExecutable::Run>> LoadedExecutable::ExecuteLaunch(
    std::span<const std::vector<Buffer*>> arguments, std::span<Device* const> devices,
    const ExecuteOptions& options) {
  if (arguments.size() != devices.size()) {
    return InvalidArgument(program_->name, ": ", arguments.size(), " argument lists for ",
                           devices.size(), " devices");
  }
  if (devices.size() == 1 && !(program_->has_collectives && spans_processes())) {
    KILN_ASSIGN_OR_RETURN(Run run, ExecuteOne(arguments[0], devices[0], options));
    std::vector<Run> runs;
    runs.push_back(std::move(run));
    return runs;
  }
  // Check every device's arguments before anything is taken or runs.
  std::vector<Donations> donated;
  for (size_t d = 0; d < devices.size(); ++d) {
    for (size_t e = 0; e < d; ++e) {
      if (devices[e] == devices[d]) {
        return InvalidArgument(program_->name, ": ", devices[d]->description().debug_string,
                               " is listed twice in one launch");
      }
    }
    Status checked = CheckArguments(arguments[d], devices[d]);
    if (!checked.ok() && devices.size() > 1) {
      return Status(checked.code(), StrCat("device ", d, ": ", checked.message()));
    }
    KILN_RETURN_IF_ERROR(checked);
    KILN_ASSIGN_OR_RETURN(Donations flags,
                          DonatedArguments(*program_, arguments[d], options.non_donatable));
    donated.push_back(std::move(flags));
  }
  std::vector<Prepared> prepared;
  for (size_t d = 0; d < devices.size(); ++d) {
    KILN_ASSIGN_OR_RETURN(Prepared one, Prepare(arguments[d], devices[d], donated[d],
                                                options.host ? options.host(d) : nullptr));
    one.context = options.context;
    if (options.launch_id != 0) one.run_id = options.launch_id;
    if (!prepared.empty()) one.run_id = prepared.front().run_id;
    prepared.push_back(std::move(one));
  }
  // Only runs that will start are tracked (a failed Prepare drops the others).
  for (const Prepared& one : prepared) {
    one.device->executions().Track(options.launch_id, one.run.done);
  }
  std::vector<Run> runs;
  if (!program_->has_collectives) {
    // A launch over several devices leaves each run to its device's
    // worker, so that the devices run side by side rather than one after
    // another on this thread (programs of up to ~100 us run inline).
    for (Prepared& one : prepared) {
      Start(one, /*may_run_inline=*/false);
      runs.push_back(std::move(one.run));
    }
    return runs;
  }
  // Runs that meet must start in one order on every device's queue, or two
  // launches could each hold a device the other waits for. Once every
  // device's arguments are ready, the launch's tasks are queued together
  // under one lock, so queues see launches in one order and no worker waits
  // for an argument.
  std::vector<int64_t> processes;
  std::vector<std::shared_ptr<Event>> ready;
  for (const Prepared& one : prepared) {
    processes.push_back(one.process);
    if (one.ready != nullptr) ready.push_back(one.ready);
  }
  std::shared_ptr<Launch> launch = MakeLaunch(std::move(processes));
  struct Task {
    WorkQueue* queue;
    std::function<void()> work;
    std::shared_ptr<Event> done;
  };
  auto tasks = std::make_shared<std::vector<Task>>();
  for (Prepared& one : prepared) {
    tasks->push_back({&one.device->queue(), Work(one, launch, &one.device->queue()), one.run.done});
    runs.push_back(std::move(one.run));
  }
  Event::AfterAll(ready)->OnReady([tasks](const Status& status) {
    if (!status.ok()) {
      for (Task& task : *tasks) {
        task.work = nullptr;
        task.done->Set(status);
      }
      return;
    }
    static std::mutex order;
    std::lock_guard lock(order);
    for (Task& task : *tasks) task.queue->Enqueue(std::move(task.work));
  });
  return runs;
}

}  // namespace kiln::runtime
