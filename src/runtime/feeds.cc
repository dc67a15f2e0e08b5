#include "runtime/feeds.h"

#include <cstring>
#include <optional>

#include "base/env.h"

namespace kiln::runtime {

// The per-device face of Feeds that compiled programs call.
class Feeds::View : public compiler::DeviceFeeds {
 public:
  View(Feeds& feeds, int device) : feeds_(feeds), device_(device) {}

  Status Infeed(std::span<const Shape> shapes, std::span<void* const> data) override {
    Queue* queue;
    {
      std::lock_guard lock(feeds_.mutex_);
      queue = &feeds_.infeeds_[device_];
    }
    return feeds_.Take(*queue, shapes, data, StrCat("the infeed of device ", device_));
  }
  Status Outfeed(std::span<const Shape> shapes, std::span<const void* const> data) override {
    Queue* queue;
    {
      std::lock_guard lock(feeds_.mutex_);
      queue = &feeds_.outfeeds_[device_];
    }
    feeds_.Put(*queue, shapes, data);
    return Status::Ok();
  }
  Status Send(int64_t channel, std::span<const Shape> shapes,
              std::span<const void* const> data) override {
    Queue* queue;
    {
      std::lock_guard lock(feeds_.mutex_);
      queue = &feeds_.channels_[channel];
    }
    feeds_.Put(*queue, shapes, data);
    return Status::Ok();
  }
  Status Recv(int64_t channel, std::span<const Shape> shapes,
              std::span<void* const> data) override {
    Queue* queue;
    {
      std::lock_guard lock(feeds_.mutex_);
      queue = &feeds_.channels_[channel];
    }
    return feeds_.Take(*queue, shapes, data,
                       StrCat("channel ", channel, " (a recv on device ", device_, ")"));
  }

 private:
  Feeds& feeds_;
  int device_;
};

Feeds::Feeds() : timeout_(std::chrono::seconds(60)) {
  if (auto value = GetEnv("KILN_FEED_TIMEOUT_SECONDS")) {
    auto parsed = ParseInt64(*value, "KILN_FEED_TIMEOUT_SECONDS", 0, 24 * 3600);
    if (parsed.ok()) timeout_ = std::chrono::seconds(*parsed);
  }
}

Feeds::~Feeds() = default;

void Feeds::PushInfeed(int device, FeedEntry entry) {
  {
    std::lock_guard lock(mutex_);
    infeeds_[device].entries.push_back(std::move(entry));
  }
  arrived_.notify_all();
}

std::optional<FeedEntry> Feeds::PopOutfeed(int device) {
  std::lock_guard lock(mutex_);
  Queue& queue = outfeeds_[device];
  if (queue.entries.empty()) return std::nullopt;
  FeedEntry entry = std::move(queue.entries.front());
  queue.entries.pop_front();
  return entry;
}

size_t Feeds::InfeedSize(int device) {
  std::lock_guard lock(mutex_);
  return infeeds_[device].entries.size();
}

compiler::DeviceFeeds* Feeds::ForDevice(int device) {
  std::lock_guard lock(mutex_);
  std::unique_ptr<View>& view = views_[device];
  if (!view) view = std::make_unique<View>(*this, device);
  return view.get();
}

Status Feeds::Take(Queue& queue, std::span<const Shape> shapes, std::span<void* const> data,
                   const std::string& what) {
  std::unique_lock lock(mutex_);
  if (!arrived_.wait_for(lock, timeout_, [&queue] { return !queue.entries.empty(); })) {
    return Status(StatusCode::kDeadlineExceeded,
                  StrCat(what, " stayed empty for ", timeout_.count(), " ms: nothing was ",
                         what.starts_with("channel") ? "sent on it" : "queued for this op",
                         " (KILN_FEED_TIMEOUT_SECONDS sets the wait; `kiln run --infeed` "
                         "queues infeed entries)"));
  }
  FeedEntry& entry = queue.entries.front();
  if (entry.size() != shapes.size()) {
    return InvalidArgument(what, ": the op takes ", shapes.size(), " arrays, the queued entry has ",
                           entry.size());
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (entry[i].shape.element_type != shapes[i].element_type ||
        entry[i].shape.dims != shapes[i].dims) {
      return InvalidArgument(what, ": array ", i, " of the queued entry is ",
                             entry[i].shape.ToString(), ", the op expects ", shapes[i].ToString());
    }
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (!entry[i].bytes.empty()) std::memcpy(data[i], entry[i].bytes.data(), entry[i].bytes.size());
  }
  queue.entries.pop_front();
  return Status::Ok();
}

void Feeds::Put(Queue& queue, std::span<const Shape> shapes, std::span<const void* const> data) {
  FeedEntry entry;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto* bytes = static_cast<const uint8_t*>(data[i]);
    entry.push_back({shapes[i], std::vector<uint8_t>(bytes, bytes + shapes[i].ByteSize())});
  }
  {
    std::lock_guard lock(mutex_);
    queue.entries.push_back(std::move(entry));
  }
  arrived_.notify_all();
}

}  // namespace kiln::runtime
