#include "runtime/event.h"

#include <atomic>

namespace kiln::runtime {

std::shared_ptr<Event> Event::Create() { return std::make_shared<Event>(); }

std::shared_ptr<Event> Event::Ready(Status status) {
  auto event = Create();
  event->Set(std::move(status));
  return event;
}

std::shared_ptr<Event> Event::AfterAll(std::span<const std::shared_ptr<Event>> events) {
  if (events.empty()) return Ready();
  if (events.size() == 1) return events[0];
  struct Join {
    std::shared_ptr<Event> result = Event::Create();
    std::atomic<size_t> remaining;
    std::mutex mutex;
    Status first_error;
  };
  auto join = std::make_shared<Join>();
  join->remaining = events.size();
  for (const auto& event : events) {
    event->OnReady([join](const Status& status) {
      if (!status.ok()) {
        std::lock_guard lock(join->mutex);
        if (join->first_error.ok()) join->first_error = status;
      }
      if (join->remaining.fetch_sub(1) == 1) {
        Status error;
        {
          std::lock_guard lock(join->mutex);
          error = join->first_error;
        }
        join->result->Set(std::move(error));
      }
    });
  }
  return join->result;
}

bool Event::Set(Status status) {
  if (ready_.load(std::memory_order_acquire)) return false;
  std::vector<Callback> callbacks;
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (ready_.load(std::memory_order_relaxed)) return false;
    status_ = std::move(status);
    ready_.store(true, std::memory_order_release);
    callbacks.swap(callbacks_);
    wake = waiters_ > 0;
  }
  if (wake) ready_cv_.notify_all();
  for (auto& callback : callbacks) callback(status_);
  return true;
}

bool Event::IsReady() const { return ready_.load(std::memory_order_acquire); }

std::optional<Status> Event::TryGetStatus() const {
  // status_ never changes once ready_, so reading it unlocked is safe.
  if (!ready_.load(std::memory_order_acquire)) return std::nullopt;
  return status_;
}

Status Event::Await() const {
  if (!ready_.load(std::memory_order_acquire)) {
    std::unique_lock lock(mutex_);
    ++waiters_;
    ready_cv_.wait(lock, [this] { return ready_.load(std::memory_order_relaxed); });
    --waiters_;
  }
  return status_;
}

void Event::Queue(Callback callback) {
  {
    std::lock_guard lock(mutex_);
    if (!ready_.load(std::memory_order_relaxed)) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  callback(status_);
}

}  // namespace kiln::runtime
