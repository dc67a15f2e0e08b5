#include "runtime/async_tracking_event.h"

#include <utility>

namespace kiln::runtime {

std::vector<std::string> AsyncActivities::Describe() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> descriptions;
  for (const auto& [key, description] : open_) descriptions.push_back(description);
  return descriptions;
}

uint64_t AsyncActivities::Open(std::string description) {
  std::lock_guard lock(mutex_);
  const uint64_t key = next_++;
  open_.emplace(key, std::move(description));
  return key;
}

void AsyncActivities::Close(uint64_t key) {
  std::lock_guard lock(mutex_);
  open_.erase(key);
}

AsyncTrackingEvent::AsyncTrackingEvent(std::shared_ptr<AsyncActivities> activities,
                                       std::string description)
    : activities_(std::move(activities)),
      description_(std::move(description)),
      key_(activities_->Open(description_)) {}

AsyncTrackingEvent::~AsyncTrackingEvent() { activities_->Close(key_); }

}  // namespace kiln::runtime
