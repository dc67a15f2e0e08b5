// Devices' infeed and outfeed queues and the channels between devices
// (stablehlo.infeed / outfeed, and send / recv with is_host_transfer =
// false). One Feeds per client; each device's programs see it through
// ForDevice. The host side (a backend's API, `kiln run --infeed`) queues
// infeed entries and takes outfeed entries.
//
// Waits are bounded: a program that reads an empty infeed or channel waits
// KILN_FEED_TIMEOUT_SECONDS (default 60) and then fails with
// DEADLINE_EXCEEDED, rather than hanging its device's queue forever.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/element_type.h"
#include "base/status.h"
#include "compiler/executor.h"

namespace kiln::runtime {

// One array of a feed entry: shape and dense row-major bytes.
struct FeedArray {
  Shape shape;
  std::vector<uint8_t> bytes;
};
// What one infeed / outfeed / send / recv op moves.
using FeedEntry = std::vector<FeedArray>;

class Feeds {
 public:
  Feeds();
  ~Feeds();
  Feeds(const Feeds&) = delete;
  Feeds& operator=(const Feeds&) = delete;

  // Queues `entry` for the next infeed op run on device `device`.
  void PushInfeed(int device, FeedEntry entry);
  // Takes the oldest outfeed entry of `device`, if any.
  std::optional<FeedEntry> PopOutfeed(int device);
  // Entries waiting in `device`'s infeed.
  size_t InfeedSize(int device);

  // What device `device`'s programs use (lives as long as this object).
  compiler::DeviceFeeds* ForDevice(int device);

  // How long a program waits on an empty infeed or channel.
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 private:
  class View;
  struct Queue {
    std::deque<FeedEntry> entries;
  };
  // Takes the front of `queue` into `data` once one arrives, checking its
  // shapes against `shapes`; `what` names the queue for messages.
  Status Take(Queue& queue, std::span<const Shape> shapes, std::span<void* const> data,
              const std::string& what);
  void Put(Queue& queue, std::span<const Shape> shapes, std::span<const void* const> data);

  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<int, Queue> infeeds_;
  std::map<int, Queue> outfeeds_;
  std::map<int64_t, Queue> channels_;
  std::map<int, std::unique_ptr<View>> views_;
  std::chrono::milliseconds timeout_;
};

}  // namespace kiln::runtime
