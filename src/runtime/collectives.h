// Where the runs of one launch meet for their collectives. A launch is the
// runs of one executable started together on several devices (one
// PJRT_LoadedExecutable_Execute over its devices, or `kiln run`'s
// run_parallel); each run is a process, numbered by its flattened id
// (replica * num_partitions + partition). A collective is a meeting of the
// processes of one group at the same collective of their programs: the
// n-th collective a process runs meets the n-th collective of each of its
// peers, so collectives meet in program order however the devices' queues
// interleave with other work.
//
// A meeting publishes each member's pointers (its operands), waits for
// every member, lets each compute its own result from all the operands
// (Kiln's devices share the host's memory), then waits until every member
// has finished reading before anyone returns.
//
// A group with members in other processes of a job (jax.distributed) meets
// in two tiers: the members this process runs meet in memory, and one of
// them, the process's leader (its first member in group order), speaks for
// them to the other processes' leaders through the job's
// CrossProcessCollectives. An all-reduce folds the process's operands into
// the leader's, all-reduces between leaders and copies the result back; a
// reduce-scatter or all-gather whose processes' members are consecutive in
// the group does the same with a reduce-scatter or all-gather between
// leaders, one block per process. Gloo then has one rank per process, not
// one per device: fewer steps, and each process sends its data once. (A
// gather of interleaved processes' members has every device take part
// itself.) A generic meeting gathers each member's bytes into every
// member's memory, and `work` reads the copies.
//
// Waits are bounded: a member waits KILN_COLLECTIVE_TIMEOUT_SECONDS (default
// 300) for the others, then fails with DEADLINE_EXCEEDED. When a run of the
// launch fails, the launch is aborted: members waiting, or arriving later,
// fail with that error instead of waiting for a peer that will not come.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/executor.h"
#include "runtime/feeds.h"

namespace kiln::runtime {

class CrossProcessCollectives;

// What a launch needs to meet processes that run in other processes of
// the job: the transport, and the global device id of every process of the
// program (flattened id -> device id, the device assignment).
struct CrossProcessLink {
  CrossProcessCollectives* transport = nullptr;
  std::vector<int64_t> device_of;
};

// The time limit KILN_COLLECTIVE_TIMEOUT_SECONDS sets (default 300 s).
std::chrono::milliseconds CollectiveTimeout();

class Launch {
 public:
  // A launch of the runs of processes `processes` (flattened ids).
  explicit Launch(std::vector<int64_t> processes,
                  std::chrono::milliseconds timeout = CollectiveTimeout());
  // A launch whose groups may hold processes run elsewhere in the job.
  Launch(std::vector<int64_t> processes, CrossProcessLink link,
         std::chrono::milliseconds timeout = CollectiveTimeout());
  ~Launch();
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  // What the run of process `process` uses; lives as long as the launch.
  // Null for a process the launch does not run.
  compiler::DeviceCollectives* Member(int64_t process);

  // A run of the launch failed: every member waiting, or arriving later,
  // fails with `status`. The first abort's status is kept.
  void Abort(const Status& status);
  // The status the launch was first aborted with (OK while it was not).
  Status cause();

 private:
  class MemberImpl;
  struct Meeting;

  // `phase` tells apart the meetings of one collective (the tiers'
  // in-memory steps).
  Status Meet(int64_t process, int64_t sequence, std::span<const int64_t> group,
              std::span<void* const> mine, FunctionRef<Status(std::span<void* const> all)> work,
              int phase = 0);
  // Meet for a group with members in other processes: through link_.
  Status MeetAcross(int64_t process, int64_t sequence, std::span<const int64_t> group,
                    std::span<void* const> mine, std::span<const int64_t> bytes,
                    FunctionRef<Status(std::span<void* const> all)> work);
  // AllReduce (or ReduceScatter when `scatter`) for a group with members
  // in other processes: through link_.
  Status ReduceAcross(int64_t process, int64_t sequence, std::span<const int64_t> group,
                      ElementType type, kernels::BinaryOp op, void* data, int64_t count,
                      bool scatter);
  // AllGather for a group with members in other processes: through link_.
  Status AllGatherAcross(int64_t process, int64_t sequence, std::span<const int64_t> group,
                         const void* data, int64_t bytes, void* out);
  // Global device ids taking part in a transport operation, and one
  // member's place among them.
  struct Clique {
    std::vector<int64_t> devices;
    size_t rank = 0;
  };
  // A cross-process group seen from one member (see the file comment).
  struct Tiers {
    Clique group;                // every member's device, this member's place
    std::vector<int64_t> local;  // the members this launch runs, in group order
    size_t local_rank = 0;       // this member's place among them
    Clique leaders;              // each process's leader, processes in group order
    bool blocked = false;        // every process has local.size() members, consecutive
  };
  StatusOr<Tiers> TiersOf(int64_t process, int64_t sequence, std::span<const int64_t> group) const;
  // Runs `transfer` (one operation of the transport) unless the launch
  // was aborted; a failure aborts it.
  Status Across(int64_t sequence, FunctionRef<Status(const std::string& what)> transfer);
  // The leader's transport operation between the tiers' in-memory steps:
  // `gather` (every local member's part into the leader's memory, or its
  // fold) runs in every local member, `transfer` in the leader alone, then
  // `scatter` (the result back) in every member but the leader; each step
  // ends when every local member's has. A process with one member skips
  // the meetings.
  Status Tiered(int64_t process, int64_t sequence, const Tiers& tiers, std::span<void* const> mine,
                FunctionRef<Status(std::span<void* const> all)> gather,
                FunctionRef<Status(std::span<void* const> all, const std::string& what)> transfer,
                FunctionRef<Status(std::span<void* const> all)> scatter);
  // True when every process of `group` runs in this launch.
  bool AllLocal(std::span<const int64_t> group) const;

  std::vector<int64_t> processes_;
  CrossProcessLink link_;
  std::vector<std::unique_ptr<MemberImpl>> members_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  Status aborted_;  // what members see: the cause, saying it was another run's
  Status cause_;
  // Open meetings by (the members' collective count, phase, the group's
  // first process).
  std::map<std::tuple<int64_t, int, int64_t>, std::shared_ptr<Meeting>> meetings_;
};

// `kiln run`'s process grid for interpreter.run_parallel: one thread per
// process, one launch for their collectives, and the grid-wide infeed and
// outfeed of the interpreter, which are `feeds`' queues of device 0 (its
// channels are shared by all processes). send / recv with
// is_host_transfer, which the interpreter passes between processes, go
// through the same channels. Feed and channel waits last up to 30 s while
// processes run (they wait for each other).
class GridRunner final : public compiler::ProcessGrid {
 public:
  explicit GridRunner(Feeds& feeds) : feeds_(feeds) {}
  void PushInfeed(std::span<const Shape> shapes, std::span<const void* const> data) override;
  Status RunAll(int64_t count,
                FunctionRef<Status(int64_t process, compiler::DeviceCollectives* collectives,
                                   compiler::DeviceFeeds* feeds, compiler::HostTransfer* host)>
                    run) override;

 private:
  Feeds& feeds_;
};

}  // namespace kiln::runtime
