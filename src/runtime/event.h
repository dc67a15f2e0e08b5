// A one-shot completion signal carrying a status: the runtime form of PJRT_Event.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "base/status.h"

namespace kiln::runtime {

// Events are shared: whoever produces the work keeps one reference to set it,
// every waiter keeps another. Thread-safe.
class Event {
 public:
  using Callback = std::function<void(const Status&)>;

  // A pending event.
  static std::shared_ptr<Event> Create();
  // An event that is already ready with `status`.
  static std::shared_ptr<Event> Ready(Status status = Status::Ok());
  // An event that becomes ready when all `events` are; it carries the first error.
  static std::shared_ptr<Event> AfterAll(std::span<const std::shared_ptr<Event>> events);

  // Makes the event ready and runs its callbacks in this thread. Returns false
  // (and changes nothing) if the event was already set.
  bool Set(Status status = Status::Ok());
  bool IsReady() const;
  // The status once ready; nullopt while pending.
  std::optional<Status> TryGetStatus() const;
  // Blocks until ready and returns the status.
  Status Await() const;
  // Runs `callback` once when ready: now, in this thread, if it already is
  // (then without wrapping it in a Callback, which may allocate).
  template <typename F>
  void OnReady(F&& callback) {
    if (ready_.load(std::memory_order_acquire)) {
      callback(status_);
      return;
    }
    Queue(Callback(std::forward<F>(callback)));
  }

 private:
  // Adds `callback` to those Set runs, or runs it now if the event became
  // ready meanwhile.
  void Queue(Callback callback);

  // Every execute checks and sets events, mostly ready ones: `ready_` is
  // read without the lock (status_ never changes once it is set), and Set
  // wakes the condition variable only when Await waits on it.
  mutable std::mutex mutex_;
  mutable std::condition_variable ready_cv_;
  std::atomic<bool> ready_{false};
  mutable int waiters_ = 0;  // guarded by mutex_
  Status status_;
  std::vector<Callback> callbacks_;
};

}  // namespace kiln::runtime
