#include "runtime/block_cache.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "base/env.h"

namespace kiln::runtime {

BlockCache::BlockCache(Options options, std::function<void(void*)> release)
    : options_(options), release_(std::move(release)), slots_(std::max<size_t>(1, options.slots)) {
  if (options_.limit_variable == nullptr) return;
  if (std::optional<std::string> text = GetEnv(options_.limit_variable)) {
    StatusOr<int64_t> megabytes = ParseInt64(*text, options_.limit_variable, 0, int64_t{1} << 30);
    if (megabytes.ok()) options_.limit_bytes = static_cast<size_t>(*megabytes) << 20;
  }
}

BlockCache::~BlockCache() { Clear(); }

void* BlockCache::Take(size_t bytes) {
  if (bytes < options_.min_bytes) return nullptr;
  std::lock_guard lock(mutex_);
  for (Slot& slot : slots_) {
    if (slot.block != nullptr && slot.bytes == bytes) {
      void* block = slot.block;
      slot = Slot{};
      cached_ -= bytes;
      return block;
    }
  }
  return nullptr;
}

void BlockCache::Give(void* block, size_t bytes) {
  if (block == nullptr) return;
  if (bytes < options_.min_bytes || bytes > options_.limit_bytes) {
    release_(block);
    return;
  }
  std::vector<void*> evicted;
  {
    std::lock_guard lock(mutex_);
    Slot* free_slot = nullptr;
    for (Slot& slot : slots_) {
      if (slot.block == nullptr) {
        free_slot = &slot;
        break;
      }
    }
    while (cached_ + bytes > options_.limit_bytes || free_slot == nullptr) {
      Slot* oldest = nullptr;
      for (Slot& slot : slots_) {
        if (slot.block != nullptr && (oldest == nullptr || slot.age < oldest->age)) oldest = &slot;
      }
      evicted.push_back(oldest->block);
      cached_ -= oldest->bytes;
      *oldest = Slot{};
      free_slot = oldest;
    }
    *free_slot = Slot{block, bytes, ++clock_};
    cached_ += bytes;
  }
  for (void* old : evicted) release_(old);
}

size_t BlockCache::Clear() {
  std::vector<void*> held;
  size_t bytes = 0;
  {
    std::lock_guard lock(mutex_);
    for (Slot& slot : slots_) {
      if (slot.block == nullptr) continue;
      held.push_back(slot.block);
      slot = Slot{};
    }
    bytes = cached_;
    cached_ = 0;
  }
  for (void* block : held) release_(block);
  return bytes;
}

size_t BlockCache::cached_bytes() const {
  std::lock_guard lock(mutex_);
  return cached_;
}

}  // namespace kiln::runtime
