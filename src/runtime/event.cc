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
  std::vector<Callback> callbacks;
  {
    std::lock_guard lock(mutex_);
    if (ready_) return false;
    ready_ = true;
    status_ = std::move(status);
    callbacks.swap(callbacks_);
  }
  ready_cv_.notify_all();
  for (auto& callback : callbacks) callback(status_);
  return true;
}

bool Event::IsReady() const {
  std::lock_guard lock(mutex_);
  return ready_;
}

std::optional<Status> Event::TryGetStatus() const {
  std::lock_guard lock(mutex_);
  if (!ready_) return std::nullopt;
  return status_;
}

Status Event::Await() const {
  std::unique_lock lock(mutex_);
  ready_cv_.wait(lock, [this] { return ready_; });
  return status_;
}

void Event::OnReady(Callback callback) {
  {
    std::lock_guard lock(mutex_);
    if (!ready_) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  // status_ never changes once ready_, so reading it unlocked is safe.
  callback(status_);
}

}  // namespace kiln::runtime
