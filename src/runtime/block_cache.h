// Freed device blocks kept for the next allocation of the same size, for
// any DeviceBackend: host memory (glibc unmaps blocks of 32 MiB and more on
// free, so the next call faults in and zeroes new pages) and OpenCL buffers
// (clCreateBuffer's memory is faulted in on first use too; PoCL's 16M-float
// x + 1 took about 50 ms a call through JAX with fresh buffers, 10 ms
// with cached ones) alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace kiln::runtime {

class BlockCache {
 public:
  struct Options {
    size_t min_bytes = 0;  // smaller blocks are freed at once
    size_t limit_bytes = size_t{1024} << 20;
    size_t slots = 16;
    // An environment variable that overrides limit_bytes, in MiB (0 turns
    // the cache off); unreadable values leave the default. Empty: none.
    const char* limit_variable = nullptr;
  };

  // `release` frees a block the cache lets go of (evicted, too large, or
  // held when the cache is cleared or destroyed).
  BlockCache(Options options, std::function<void(void*)> release);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // A cached block of exactly `bytes`, or null.
  void* Take(size_t bytes);

  // Keeps `block` (of `bytes`) if it fits; else releases it. Evicts the
  // oldest blocks while the cache would exceed its limit or has no free
  // slot.
  void Give(void* block, size_t bytes);

  // Releases every cached block (say, before retrying an allocation the
  // device refused for want of memory). Returns the bytes released.
  size_t Clear();

  size_t cached_bytes() const;

 private:
  struct Slot {
    void* block = nullptr;
    size_t bytes = 0;
    uint64_t age = 0;  // when it was cached
  };

  Options options_;
  std::function<void(void*)> release_;
  mutable std::mutex mutex_;
  std::vector<Slot> slots_;
  size_t cached_ = 0;
  uint64_t clock_ = 0;
};

}  // namespace kiln::runtime
