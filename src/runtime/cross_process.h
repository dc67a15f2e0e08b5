// Collectives between processes of a job, on Gloo over TCP (as XLA's CPU
// client does): one Gloo rank per participating device, one communicator
// per (clique of global device ids, rank), made on first use through the
// job's key-value store and kept. Cliques whose devices are all in this
// process never come here (runtime/collectives.h meets them in memory).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/element_type.h"
#include "base/function_ref.h"
#include "base/status.h"
#include "kernels/elementwise.h"
#include "runtime/job.h"

namespace gloo::transport {
class Device;
}  // namespace gloo::transport

namespace kiln::runtime {

class CrossProcessCollectives {
 public:
  // For process `job.node_id` of a job whose processes run
  // `devices_per_process` devices each. Gloo listens on
  // KILN_GLOO_HOSTNAME, else the address of KILN_GLOO_IFACE, else the
  // address this host's name resolves to.
  static StatusOr<std::unique_ptr<CrossProcessCollectives>> Create(const JobOptions& job,
                                                                   int devices_per_process);
  ~CrossProcessCollectives();

  // The process running global device `device`.
  int ProcessOf(int64_t device) const { return static_cast<int>(device / devices_per_process_); }

  // Records the framework's view of the job's processes (see AllGather).
  void UpdateProcessInfo(std::vector<ProcessInfo> infos);

  // Replaces `data` (`count` elements of `type`) by its `op`-fold over the
  // members of `devices` (Gloo's ring all-reduce, Kiln's kernels folding);
  // errors as AllGather's.
  Status AllReduce(std::span<const int64_t> devices, size_t rank, ElementType type,
                   kernels::BinaryOp op, void* data, int64_t count,
                   std::chrono::milliseconds timeout, std::string_view what);

  // Folds `data` (`count` elements of `type`, devices.size() equal
  // blocks) so that block `rank` holds the fold over the members (a ring:
  // each member sends and receives (n-1)/n of the data); the other blocks
  // are left partial. Errors as AllGather's.
  Status ReduceScatter(std::span<const int64_t> devices, size_t rank, ElementType type,
                       kernels::BinaryOp op, void* data, int64_t count,
                       std::chrono::milliseconds timeout, std::string_view what);

  // Gathers `mine` (the same size on every member) from each member of
  // `devices` (global device ids, in the clique's order; this call is
  // member `rank`) into `all`, member m's bytes at m * mine.size() (`mine`
  // may already lie at its place there). Waits
  // up to `timeout` for the others. A peer that died or did not come is
  // UNAVAILABLE or DEADLINE_EXCEEDED naming `what`, the clique and its
  // processes; the communicator is then dropped, so a later call makes a
  // new one.
  Status AllGather(std::span<const int64_t> devices, size_t rank, std::span<const uint8_t> mine,
                   std::span<uint8_t> all, std::chrono::milliseconds timeout,
                   std::string_view what);

 private:
  struct Communicator;
  CrossProcessCollectives(JobOptions job, int devices_per_process,
                          std::shared_ptr<gloo::transport::Device> device);
  // The communicator of (devices, rank), connected on first use.
  StatusOr<std::shared_ptr<Communicator>> CommunicatorFor(std::span<const int64_t> devices,
                                                          size_t rank,
                                                          std::chrono::milliseconds timeout);
  // Small all-reduces and reduce-scatters in one round (see kDirectBytes):
  // folds `data` over the communicator's members, whole or, when
  // `scatter`, this member's block of it.
  Status DirectReduce(Communicator& communicator, size_t rank, ElementType type,
                      kernels::BinaryOp op, void* data, int64_t count, bool scatter,
                      std::chrono::milliseconds timeout);
  // "devices [..] (processes [..])" for messages.
  std::string CliqueText(std::span<const int64_t> devices) const;
  // Runs `operation` on the communicator of (devices, rank); a Gloo
  // failure (an exception) becomes Failed()'s status.
  Status Run(std::span<const int64_t> devices, size_t rank, std::chrono::milliseconds timeout,
             std::string_view what, FunctionRef<Status(Communicator&)> operation);
  // The status for a Gloo failure `error` of `what` on `communicator`,
  // which is dropped.
  Status Failed(std::span<const int64_t> devices, size_t rank, Communicator& communicator,
                const std::exception& error, std::chrono::milliseconds timeout,
                std::string_view what);
  // Which of the clique's other processes are gone, found through the
  // store after `prefix`'s communicator failed (for the message).
  std::string Missing(std::span<const int64_t> devices, const std::string& prefix, bool late);
  // What the framework said of the clique's processes that are not
  // connected ("" when it said nothing of them).
  std::string ProcessStates(std::span<const int64_t> devices);

  JobOptions job_;
  int devices_per_process_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::mutex mutex_;
  std::vector<ProcessInfo> processes_;
  std::map<std::pair<std::vector<int64_t>, size_t>, std::shared_ptr<Communicator>> communicators_;
  // How many communicators each (clique, rank) has had: a new one after a
  // failure rendezvouses under fresh keys (the store's keys are write-once).
  std::map<std::pair<std::vector<int64_t>, size_t>, int> generations_;
};

}  // namespace kiln::runtime
