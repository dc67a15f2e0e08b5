// The unfinished runs of one device that carry a launch id
// (PJRT_ExecuteOptions.launch_id), so that PJRT_Device_PoisonExecution can
// fail one before it finishes, as XLA's CPU client does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "runtime/event.h"

namespace kiln::runtime {

// Owned by its Device. Thread-safe; runs that outlive the device untrack
// themselves harmlessly.
class ExecutionTracker {
 public:
  // Tracks the run whose completion is `done` until `done` fires. Launch id
  // 0 means "no launch id" (the header's words) and is not tracked.
  void Track(int32_t launch_id, const std::shared_ptr<Event>& done);
  // Fails the earliest tracked, unfinished run of `launch_id` with `error`:
  // its outputs and completion event carry the error, and a run that has
  // not started yet never starts. False when there is no such run.
  bool Poison(int32_t launch_id, const Status& error);
  // How many runs are tracked (finished ones are dropped as they finish).
  size_t size() const;

 private:
  struct Run {
    int32_t launch_id;
    std::shared_ptr<Event> done;
  };
  struct Runs {
    mutable std::mutex mutex;
    uint64_t next = 0;
    std::map<uint64_t, Run> by_order;  // key: the order runs were tracked in
  };
  std::shared_ptr<Runs> runs_ = std::make_shared<Runs>();
};

}  // namespace kiln::runtime
