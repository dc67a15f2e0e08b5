#include "runtime/execution_tracker.h"

namespace kiln::runtime {

void ExecutionTracker::Track(int32_t launch_id, const std::shared_ptr<Event>& done) {
  if (launch_id == 0) return;
  uint64_t key;
  {
    std::lock_guard lock(runs_->mutex);
    key = runs_->next++;
    runs_->by_order.emplace(key, Run{launch_id, done});
  }
  // Outside the lock: a finished run's callback runs here and now.
  done->OnReady([weak = std::weak_ptr<Runs>(runs_), key](const Status&) {
    if (auto runs = weak.lock()) {
      std::lock_guard lock(runs->mutex);
      runs->by_order.erase(key);
    }
  });
}

bool ExecutionTracker::Poison(int32_t launch_id, const Status& error) {
  for (;;) {
    std::shared_ptr<Event> done;
    {
      std::lock_guard lock(runs_->mutex);
      for (auto it = runs_->by_order.begin(); it != runs_->by_order.end(); ++it) {
        if (it->second.launch_id == launch_id) {
          done = it->second.done;
          runs_->by_order.erase(it);
          break;
        }
      }
    }
    if (done == nullptr) return false;
    // A run that finished between the lookup and here keeps its result;
    // the next one of the launch id is tried.
    if (done->Set(error)) return true;
  }
}

size_t ExecutionTracker::size() const {
  std::lock_guard lock(runs_->mutex);
  return runs_->by_order.size();
}

}  // namespace kiln::runtime
