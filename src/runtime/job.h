// A job of several processes (jax.distributed): the key-value store the
// framework shares between them, and the topology the processes agree on
// through it before any device exists.
//
// Every process runs the same number of Kiln devices. Device ids are
// global: process p's local device i is p * devices_per_process + i, so
// jax.devices() lists 0..N-1 in process order.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::runtime {

// The store PJRT_Client_Create's key-value callbacks give (JAX's
// coordination service). Keys are write-once: a second Put of a key fails.
// Thread-safe.
class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;
  virtual Status Put(std::string_view key, std::string_view value) = 0;
  // Waits up to `timeout` for the key; DEADLINE_EXCEEDED (or the store's
  // own error) when it does not appear.
  virtual StatusOr<std::string> Get(std::string_view key, std::chrono::milliseconds timeout) = 0;
};

// What the framework last said of one process of the job
// (PJRT_Client_UpdateGlobalProcessInfo).
struct ProcessInfo {
  int process = 0;
  uint64_t incarnation = 0;
  std::string state;  // "connected", "disconnected", "failed", ...
  std::string error;  // why it failed, when it did
};

// Where this process stands in its job.
struct JobOptions {
  int node_id = 0;
  int num_nodes = 1;
  // Set when num_nodes > 1.
  std::shared_ptr<KeyValueStore> store;
  // Which of the job's clients this is (0 for each process's first): its
  // keys in the store start with "kiln/<incarnation>/". Set by
  // AgreeOnTopology.
  int incarnation = 0;
};

// What identifies this Kiln library: its version and the GNU build id of
// the shared object holding this code ("kiln <version> <build id>"), which
// changes with every different build.
std::string KilnBuildId();

// How long initialization waits for the other processes
// (KILN_INIT_TIMEOUT_SECONDS, default 300 s).
std::chrono::milliseconds InitTimeout();

// Publishes this process's build and device count and reads every other
// process's, and sets job.incarnation: the first n for which this process
// had not yet published (keys are write-once), so the n-th clients of the
// job's processes meet. FAILED_PRECONDITION naming the process and both values when a
// build or a device count differs, DEADLINE_EXCEEDED naming the processes
// that did not publish within InitTimeout(). `build` identifies the Kiln
// library (its version and source revision).
Status AgreeOnTopology(JobOptions& job, int devices_per_process, std::string_view build);

}  // namespace kiln::runtime
