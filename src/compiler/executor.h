// Runs a compiled Graph: resolves every value to memory (the caller's
// parameters and result buffers, constants, the arena), then runs the nodes
// in order. The runtime calls it on a device's work queue; the compiler
// calls it to fold constants.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/function_ref.h"
#include "compiler/graph.h"
#include "kernels/elementwise.h"

namespace kiln::ffi {
class UserData;
}  // namespace kiln::ffi

namespace kiln::compiler {

// State of one execution, reused across executions of one executable so
// that steady-state calls allocate nothing: the arenas of the graph and its
// nested graphs, and who is running (for replica_id / partition_id).
// Transfers between a running program and its host: stablehlo.send / recv
// with is_host_transfer, which JAX emits for host callbacks (jax.debug.print,
// pure_callback, io_callback). The runtime's caller supplies one per run.
class HostTransfer {
 public:
  virtual ~HostTransfer() = default;
  // Hands `data` (dense row-major, `shape`) to the host on `channel`.
  virtual Status Send(int64_t channel, const Shape& shape, const void* data) = 0;
  // Fills `data` (dense row-major, `shape`) from the host on `channel`;
  // returns once it is filled, or with the host's error.
  virtual Status Recv(int64_t channel, const Shape& shape, void* data) = 0;
};

// A device's queues beyond its programs' arguments and results: infeed
// (values the host queued for the device's programs), outfeed (values its
// programs leave for the host), and channels between devices (send / recv
// with is_host_transfer = false). The runtime implements it, one per device
// (runtime/feeds.h). An entry is the list of arrays one op moves, dense
// row-major, in operand or result order.
class DeviceFeeds {
 public:
  virtual ~DeviceFeeds() = default;
  // Takes the next infeed entry into `data` (one buffer per shape); waits a
  // bounded time for one to be queued.
  virtual Status Infeed(std::span<const Shape> shapes, std::span<void* const> data) = 0;
  virtual Status Outfeed(std::span<const Shape> shapes, std::span<const void* const> data) = 0;
  // Queues an entry on `channel` for the device that receives on it.
  virtual Status Send(int64_t channel, std::span<const Shape> shapes,
                      std::span<const void* const> data) = 0;
  // Takes the next entry sent on `channel`; waits a bounded time.
  virtual Status Recv(int64_t channel, std::span<const Shape> shapes,
                      std::span<void* const> data) = 0;
};

// Where a run meets the runs of the same launch on other devices (one
// PJRT Execute over several devices, or `kiln run`'s run_parallel) for a
// collective. Processes are numbered as the spec's flattened ids:
// replica_id * num_partitions + partition_id. The runtime implements it,
// one per run (runtime/collectives.h).
class DeviceCollectives {
 public:
  virtual ~DeviceCollectives() = default;
  // Meets the other processes of `group` (flattened ids in the group's
  // order; this run's process is one of them) at this run's next
  // collective. Each member publishes `mine` (the same number of pointers,
  // typically its operands, pointer i to `bytes[i]` bytes, the same sizes
  // on every member); once every member has, `work` runs with all of them
  // (member m's pointer i at m * mine.size() + i). `work` only reads its
  // peers' bytes: a member in another process is read from a copy. The
  // call returns once every member's `work` has returned, so no member
  // reuses memory another still reads. Fails when members do not arrive
  // within the launch's time limit, or when another member's run failed.
  virtual Status Meet(std::span<const int64_t> group, std::span<void* const> mine,
                      std::span<const int64_t> bytes,
                      FunctionRef<Status(std::span<void* const> all)> work) = 0;

  // True when every member of `group` runs in this process: pointers they
  // publish (Meet) are their own memory, never copies. A backend's
  // collectives in device memory need it (runtime/device_plan.cc).
  virtual bool AllInProcess(std::span<const int64_t> group) {
    (void)group;
    return true;
  }

  // A faster way for an all-reduce of `group` by `op` on `type`, where the
  // transport has one (a ring between processes): when true, AllReduce may
  // be called instead of Meet. Every member decides alike (it depends on
  // the arguments only).
  virtual bool ReducesInPlace(std::span<const int64_t> group, ElementType type,
                              kernels::BinaryOp op) {
    (void)group, (void)type, (void)op;
    return false;
  }
  // Where ReducesInPlace: folds `data` (`count` elements of `type`, the
  // group's size of equal blocks) over the group so that this member's
  // block (its place in the group) holds the fold; the other blocks are
  // left partial. Counts as this run's next collective.
  virtual Status ReduceScatter(std::span<const int64_t> group, ElementType type,
                               kernels::BinaryOp op, void* data, int64_t count) {
    (void)group, (void)type, (void)op, (void)data, (void)count;
    return Unimplemented("this transport has no in-place reduce-scatter");
  }
  // A direct way to gather `group`'s bytes (one transfer into the result,
  // no staging), where the transport has one; every member decides alike.
  virtual bool GathersInPlace(std::span<const int64_t> group) {
    (void)group;
    return false;
  }
  // Writes every member's `bytes` bytes at `data`, in group order, to
  // `out`, counting as this run's next collective.
  virtual Status AllGather(std::span<const int64_t> group, const void* data, int64_t bytes,
                           void* out) {
    (void)group, (void)data, (void)bytes, (void)out;
    return Unimplemented("this transport has no direct all-gather");
  }
  // Replaces `data` (`count` elements of `type`) by its `op`-fold over the
  // group's members, counting as this run's next collective.
  virtual Status AllReduce(std::span<const int64_t> group, ElementType type, kernels::BinaryOp op,
                           void* data, int64_t count) {
    (void)group, (void)type, (void)op, (void)data, (void)count;
    return Unimplemented("this transport has no in-place all-reduce");
  }
};

// A grid of processes run at once: the StableHLO interpreter's
// run_parallel, which `kiln run` executes (the runtime implements it,
// runtime/collectives.h). Processes are numbered by flattened id.
class ProcessGrid {
 public:
  virtual ~ProcessGrid() = default;
  // Queues an entry on the grid's infeed (run_parallel's `infeed`
  // functions), which all processes read.
  virtual void PushInfeed(std::span<const Shape> shapes, std::span<const void* const> data) = 0;
  // Runs `run` for processes 0..count-1 concurrently, each with the meeting
  // place of one launch for its collectives and the grid's feeds and
  // channels (also for send / recv with is_host_transfer, which the
  // interpreter routes between processes); returns the first failure.
  virtual Status RunAll(int64_t count,
                        FunctionRef<Status(int64_t process, DeviceCollectives* collectives,
                                           DeviceFeeds* feeds, HostTransfer* host)>
                            run) = 0;
};

// The StableHLO interpreter's own effects, which `kiln run` provides for
// its ops: interpreter.print's lines, and the folder interpreter.probe writes
// its tensors to (as NumPy files listed in index.csv, the interpreter's
// layout) and check.expect_serialized_eq reads them from.
class InterpreterIo {
 public:
  virtual ~InterpreterIo() = default;
  // Writes one printed value (whole lines; called from any thread).
  virtual void Print(const std::string& text) = 0;
  // The probe folder; empty when none was given.
  virtual const std::string& probe_dir() const = 0;
  // A fresh number for the next probe's file name.
  virtual int64_t NextProbeFile() = 0;
};

class ExecutionEnv {
 public:
  // The interpreter's effects (`kiln run`); null elsewhere.
  InterpreterIo* interpreter = nullptr;
  // The host side of send/recv for this run; null when the caller gave none.
  HostTransfer* host = nullptr;
  // The device's infeed, outfeed and channels; null when the caller gave none.
  DeviceFeeds* feeds = nullptr;
  // This run's process among the launch's; null collectives when the caller
  // runs one process alone (a collective then meets only itself).
  DeviceCollectives* collectives = nullptr;
  // Runs interpreter.run_parallel's processes; null outside `kiln run`.
  ProcessGrid* grid = nullptr;
  int64_t replica_id = 0;
  int64_t partition_id = 0;
  // What FFI handlers may ask of the run (ffi::InvokeInfo): the device's
  // local hardware id, the launch's run id, and the user data of the run's
  // execute context (null: none).
  int32_t device_ordinal = 0;
  int64_t run_id = 0;
  const ffi::UserData* ffi_user_data = nullptr;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  // When set, Execute adds each node's wall time (seconds) of `timed_graph`
  // (not of region bodies) to timed_nodes[node index]: `kiln plan --time`.
  const Graph* timed_graph = nullptr;
  std::vector<double>* timed_nodes = nullptr;
  // The interpreter's check ops (`kiln run`): how many ran, which failed.
  int64_t checks_run = 0;
  std::vector<std::string> check_failures;

  // Memory for `graph`'s arena, at least `bytes`, 64-byte aligned; one per
  // graph, reused by later calls (a graph's runs never overlap in one env).
  // Null when the memory cannot be allocated.
  uint8_t* Arena(const Graph* graph, int64_t bytes);
  // Scratch of `graph`'s runs, kept like its arena so that a steady-state
  // call allocates nothing: the value pointer table, and the argument list a
  // region body is called with.
  uint8_t** ValueTable(const Graph* graph, size_t size);
  const void** RegionArguments(const Graph* graph, size_t size);
  // A node's own array of `size` pointers (`key`: the node), kept like the
  // arenas: for kernels that pass buffer lists to region bodies.
  void** Pointers(const void* key, size_t size);
  // A node's working state (`key`: the node), built from `args` on its
  // first run and kept for later ones: for kernels whose helpers hold
  // buffers (batched region bodies, accumulators).
  template <typename T, typename... Args>
  T& State(const void* key, Args&&... args) {
    std::shared_ptr<void>& slot = states_[key];
    if (!slot) slot = std::make_shared<T>(std::forward<Args>(args)...);
    return *static_cast<T*>(slot.get());
  }

 private:
  struct Block {
    std::unique_ptr<uint8_t[]> storage;
    uint8_t* aligned = nullptr;
    int64_t bytes = 0;
    std::vector<uint8_t*> table;
    std::vector<const void*> arguments;
  };
  std::unordered_map<const Graph*, Block> arenas_;
  std::unordered_map<const void*, std::vector<void*>> pointers_;
  std::unordered_map<const void*, std::shared_ptr<void>> states_;
};

// What a node's kernel sees when it runs.
class RunContext {
 public:
  RunContext(const Graph& graph, const Node& node, std::span<uint8_t* const> memory,
             ExecutionEnv& env)
      : graph_(graph), node_(node), memory_(memory), env_(env) {}

  const void* in(size_t i) const { return memory_[static_cast<size_t>(node_.inputs[i])]; }
  void* out(size_t i) const { return memory_[static_cast<size_t>(node_.outputs[i])]; }
  const Shape& in_shape(size_t i) const { return graph_.shape(node_.inputs[i]); }
  const Shape& out_shape(size_t i) const { return graph_.shape(node_.outputs[i]); }
  size_t num_inputs() const { return node_.inputs.size(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  const Node& node() const { return node_; }
  ExecutionEnv& env() const { return env_; }
  const Graph& graph() const { return graph_; }
  // Every value's memory in this run, by value id: for nodes that run other
  // nodes (the row groups of compiler/row_groups.cc).
  std::span<uint8_t* const> memory() const { return memory_; }

  // Runs region `index` of this node on `args`, writing its results into
  // `results` (which may alias args only when the region's results are
  // computed before any write; callers pass distinct buffers).
  Status RunRegion(size_t index, std::span<const void* const> args,
                   std::span<void* const> results) const;

 private:
  const Graph& graph_;
  const Node& node_;
  std::span<uint8_t* const> memory_;
  ExecutionEnv& env_;
};

// Runs `graph`: `parameters[i]` holds parameter i, `results[i]` receives
// result i (dense, of the result's shape). Errors name the failing node's op
// and the user's source location.
Status Execute(const Graph& graph, std::span<const void* const> parameters,
               std::span<void* const> results, ExecutionEnv& env);

}  // namespace kiln::compiler
