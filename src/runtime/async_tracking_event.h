// A named asynchronous activity on a device: the runtime form of
// PJRT_AsyncTrackingEvent. A framework opens one around work Kiln does not
// see (XLA's ScopedAsyncTrackingEvent); while it lives, its device lists it
// among its async activities, so a trace or a hang report can name what
// was outstanding.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::runtime {

// The live tracking events of one device, oldest first. Shared with the
// events, so one that outlives its device still closes cleanly.
class AsyncActivities {
 public:
  std::vector<std::string> Describe() const;

 private:
  friend class AsyncTrackingEvent;
  uint64_t Open(std::string description);
  void Close(uint64_t key);

  mutable std::mutex mutex_;
  uint64_t next_ = 0;
  std::map<uint64_t, std::string> open_;
};

// Owned by its PJRT_AsyncTrackingEvent handle; listed in `activities` from
// construction to destruction.
class AsyncTrackingEvent {
 public:
  AsyncTrackingEvent(std::shared_ptr<AsyncActivities> activities, std::string description);
  ~AsyncTrackingEvent();
  AsyncTrackingEvent(const AsyncTrackingEvent&) = delete;
  AsyncTrackingEvent& operator=(const AsyncTrackingEvent&) = delete;

  const std::string& description() const { return description_; }

 private:
  std::shared_ptr<AsyncActivities> activities_;
  std::string description_;
  uint64_t key_;
};

}  // namespace kiln::runtime
