// A compiled program loaded on the client's devices: PJRT's
// LoadedExecutable. Execute enqueues the program on a device's work queue
// once the arguments are ready and returns at once with the output buffers,
// whose ready event fires when the run finishes (with its error, if any).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "base/small_vector.h"
#include "compiler/compile.h"
#include "compiler/executor.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/device_plan.h"
#include "runtime/execute_context.h"

namespace kiln::runtime {

class Client;
class Launch;
class WorkQueue;

// The parts of a serialized executable: the program as StableHLO text and
// the compile options it was compiled with. Kiln's compiler is fast, so a
// deserialized executable is recompiled from its text.
struct SerializedExecutable {
  std::string text;
  std::vector<uint8_t> options;
};
// Kiln's executable format: magic "KILNEXE1", a checksum, then the parts.
std::vector<uint8_t> SerializeExecutable(const compiler::Program& program);
StatusOr<SerializedExecutable> ParseSerializedExecutable(std::span<const uint8_t> bytes);

// How one Execute call runs, besides its arguments and devices.
struct ExecuteOptions {
  // Arguments the framework does not let this call donate.
  std::span<const int64_t> non_donatable;
  // Device d's host transfer (JAX's host callbacks); may be empty.
  std::function<std::shared_ptr<compiler::HostTransfer>(size_t)> host;
  // PJRT_ExecuteOptions.launch_id: non-zero ids are tracked on each device
  // until the run finishes, so PJRT_Device_PoisonExecution can fail it.
  int32_t launch_id = 0;
  // The call's execute context, kept alive until every run finished.
  std::shared_ptr<const ExecuteContext> context;
};

class LoadedExecutable {
 public:
  // Places `program` on the devices of its device assignment (the compile
  // options', else the client's default one).
  static StatusOr<std::unique_ptr<LoadedExecutable>> Create(
      Client* client, std::shared_ptr<const compiler::Program> program);
  // UNIMPLEMENTED when Kiln cannot run `program` on any client (it needs
  // the SPMD partitioner), so compiling for a topology fails as early.
  static Status CheckLoadable(const compiler::Program& program);

  const compiler::Program& program() const { return *program_; }
  const std::shared_ptr<const compiler::Program>& shared_program() const { return program_; }
  Client* client() const { return client_; }
  // The devices of this process among the device assignment's, in its
  // (replica-major) order.
  const std::vector<Device*>& addressable_devices() const { return devices_; }
  // True when the device assignment holds devices of other processes.
  bool spans_processes() const { return devices_.size() != assignment_.size(); }
  // device_assignment()[replica][partition] = device id.
  std::vector<std::vector<int64_t>> device_assignment() const;
  int num_replicas() const { return static_cast<int>(program_->options.num_replicas); }
  int num_partitions() const { return static_cast<int>(program_->options.num_partitions); }

  // Frees the executable's resources; later Execute calls fail.
  void Delete();
  bool IsDeleted() const;

  struct Run {
    std::vector<std::unique_ptr<Buffer>> outputs;
    std::shared_ptr<Event> done;  // fires when the run finished
  };
  // Runs the program on `device` with `arguments` (checked against the
  // program's parameters before anything runs). Arguments the program may
  // take as donations are donated (they report themselves deleted; an
  // aliased result may reuse their memory) unless listed in `non_donatable`.
  // `host` serves the program's host send/recv (JAX's host callbacks) and
  // is kept alive until the run finishes; null when the caller has none.
  StatusOr<Run> Execute(std::span<Buffer* const> arguments, Device* device,
                        std::span<const int64_t> non_donatable = {},
                        std::shared_ptr<compiler::HostTransfer> host = nullptr);
  // Execute with the options of a PJRT Execute call (options.host(0) serves
  // the run). A jitted call of a small program spends most of its time
  // here rather than in its kernels, so this path allocates only what the
  // run keeps: the outputs, their events and memory.
  StatusOr<Run> ExecuteOne(std::span<Buffer* const> arguments, Device* device,
                           const ExecuteOptions& options);
  // Runs the program on several devices at once (one PJRT Execute call):
  // `arguments[d]` on `devices[d]`, every list checked before anything
  // runs. Each run is the process of its device's place in the device
  // assignment, and the runs' collectives meet each other (a launch).
  StatusOr<std::vector<Run>> ExecuteLaunch(std::span<const std::vector<Buffer*>> arguments,
                                           std::span<Device* const> devices,
                                           const ExecuteOptions& options = {});

 private:
  // Per argument: whether this call donates it.
  using Donations = SmallVector<bool, 16>;
  // One device's run between checking and queueing: the arguments' memory
  // (taken, donations done), the outputs, and what the run waits for.
  struct Prepared {
    Device* device = nullptr;
    int64_t process = 0;  // replica * num_partitions + partition
    // What the run waits for; null when its arguments are ready already.
    std::shared_ptr<Event> ready;
    std::vector<std::shared_ptr<DeviceMemory>> inputs, outputs;
    // Per input: the output whose memory it is (a donated argument written
    // in place; `inputs` then holds null), or -1.
    SmallVector<int, 16> input_in_output;
    std::shared_ptr<compiler::HostTransfer> host;
    std::shared_ptr<const ExecuteContext> context;
    // What FFI handlers see as the run id: one per launch.
    int64_t run_id = 0;
    Run run;
  };
  Status CheckArguments(std::span<Buffer* const> arguments, Device* device) const;
  StatusOr<Prepared> Prepare(std::span<Buffer* const> arguments, Device* device,
                             const Donations& donated,
                             std::shared_ptr<compiler::HostTransfer> host);
  // Runs `prepared` once its arguments are ready: now on this thread when
  // `may_run_inline`, the program is small (Program::run_inline), its
  // arguments ready and its device idle, else on the device's queue.
  void Start(Prepared& prepared, bool may_run_inline);
  class Job;
  // The task for `queue` that runs `prepared` (its memory moves into the
  // task) and fires its event: at once, or when work it left on the
  // device's queue completes (DeviceBackend::Completion). Runs of a launch
  // meet through `launch` (null: the run meets nobody).
  std::function<void()> Work(Prepared& prepared, std::shared_ptr<Launch> launch, WorkQueue* queue);
  // The process a run on `device` is: its place in the device assignment.
  int64_t ProcessOf(const Device* device) const;

  LoadedExecutable(Client* client, std::shared_ptr<const compiler::Program> program,
                   std::vector<Device*> assignment);
  // The launch the runs on `processes` meet in; with the job's transport
  // when the program spans processes.
  std::shared_ptr<Launch> MakeLaunch(std::vector<int64_t> processes) const;

  Client* client_;
  std::shared_ptr<const compiler::Program> program_;
  std::vector<Device*> assignment_;  // one device per (replica, partition)
  std::vector<Device*> devices_;     // the addressable ones
  mutable std::mutex mutex_;
  bool deleted_ = false;
  // Environments of finished runs, reused so steady-state calls allocate no
  // arenas; shared with runs in flight, which may outlive the executable.
  struct EnvPool {
    std::mutex mutex;
    std::vector<std::unique_ptr<compiler::ExecutionEnv>> idle;
  };
  std::shared_ptr<EnvPool> envs_ = std::make_shared<EnvPool>();
  // The program split between the client's backend and the host kernels,
  // when the backend compiles nodes (runtime/device_plan.h); null: every
  // run goes through the host kernels.
  std::shared_ptr<const DevicePlan> device_plan_;

 public:
  // Null when runs do not use one.
  const DevicePlan* device_plan() const { return device_plan_.get(); }
};

}  // namespace kiln::runtime
