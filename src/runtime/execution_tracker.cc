#include "runtime/execution_tracker.h"

#include <algorithm>

namespace kiln::runtime {

void ExecutionTracker::DropFinished() {
  std::erase_if(runs_, [](const Run& run) {
    std::shared_ptr<Event> done = run.done.lock();
    return done == nullptr || done->IsReady();
  });
}

void ExecutionTracker::Track(int32_t launch_id, const std::shared_ptr<Event>& done) {
  if (launch_id == 0) return;
  std::lock_guard lock(mutex_);
  DropFinished();
  runs_.push_back(Run{launch_id, done});
}

bool ExecutionTracker::Poison(int32_t launch_id, const Status& error) {
  for (;;) {
    std::shared_ptr<Event> done;
    {
      std::lock_guard lock(mutex_);
      DropFinished();
      auto it = std::find_if(runs_.begin(), runs_.end(),
                             [&](const Run& run) { return run.launch_id == launch_id; });
      if (it == runs_.end()) return false;
      done = it->done.lock();
      runs_.erase(it);
    }
    // A run that finished between the lookup and here keeps its result;
    // the next one of the launch id is tried.
    if (done != nullptr && done->Set(error)) return true;
  }
}

size_t ExecutionTracker::size() const {
  std::lock_guard lock(mutex_);
  return static_cast<size_t>(std::count_if(runs_.begin(), runs_.end(), [](const Run& run) {
    std::shared_ptr<Event> done = run.done.lock();
    return done != nullptr && !done->IsReady();
  }));
}

}  // namespace kiln::runtime
