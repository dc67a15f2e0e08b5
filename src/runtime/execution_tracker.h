// The unfinished runs of one device that carry a launch id
// (PJRT_ExecuteOptions.launch_id), so that PJRT_Device_PoisonExecution can
// fail one before it finishes, as XLA's CPU client does.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/event.h"

namespace kiln::runtime {

// Owned by its Device. Thread-safe. Finished runs are dropped when the next
// run is tracked or a poison looks: JAX passes a launch id with every
// execute, and a callback per run cost a map node and a closure each time.
class ExecutionTracker {
 public:
  // Tracks the run whose completion is `done` until `done` fires. Launch id
  // 0 means "no launch id" (the header's words) and is not tracked.
  void Track(int32_t launch_id, const std::shared_ptr<Event>& done);
  // Fails the earliest tracked, unfinished run of `launch_id` with `error`:
  // its outputs and completion event carry the error, and a run that has
  // not started yet never starts. False when there is no such run.
  bool Poison(int32_t launch_id, const Status& error);
  // How many tracked runs have not finished.
  size_t size() const;

 private:
  struct Run {
    int32_t launch_id;
    std::weak_ptr<Event> done;
  };
  // Drops the runs that finished (or whose event is gone); mutex_ held.
  void DropFinished();

  mutable std::mutex mutex_;
  std::vector<Run> runs_;  // in the order they were tracked
};

}  // namespace kiln::runtime
