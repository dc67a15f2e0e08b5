// Kiln's virtual CPU devices: every device's memory is host memory.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "base/env.h"
#include "runtime/device_backend.h"

namespace kiln::runtime {
namespace {

constexpr size_t kAlignment = 64;

// Freed blocks of kMinCachedBytes and more, kept for the next allocation of
// the same rounded size. glibc maps blocks of 32 MiB and more afresh on
// every allocation and unmaps them on free (its adaptive mmap threshold
// stops there), so a program returning a 32 MiB array would otherwise
// fault in and zero new pages on every call. A few slots and a byte limit
// (KILN_HOST_BLOCK_CACHE_MB, default 1024; 0 turns the cache off) bound
// what it holds; it allocates nothing itself.
class BlockCache {
 public:
  static constexpr size_t kMinCachedBytes = size_t{1} << 20;

  BlockCache() {
    // An unreadable value leaves the default, as before.
    if (std::optional<std::string> text = GetEnv("KILN_HOST_BLOCK_CACHE_MB")) {
      StatusOr<int64_t> megabytes = ParseInt64(*text, "KILN_HOST_BLOCK_CACHE_MB", 0,
                                               int64_t{1} << 30);
      if (megabytes.ok()) limit_ = static_cast<size_t>(*megabytes) << 20;
    }
  }
  ~BlockCache() {
    for (Slot& slot : slots_) std::free(slot.data);
  }

  // A cached block of exactly `bytes`, or null.
  void* Take(size_t bytes) {
    if (bytes < kMinCachedBytes) return nullptr;
    std::lock_guard lock(mutex_);
    for (Slot& slot : slots_) {
      if (slot.data != nullptr && slot.bytes == bytes) {
        void* data = slot.data;
        slot = Slot{};
        cached_ -= bytes;
        return data;
      }
    }
    return nullptr;
  }

  // Keeps `data` (of `bytes`) if it fits; else frees it. Evicts the
  // oldest blocks while the cache would exceed its limit or has no free
  // slot.
  void Give(void* data, size_t bytes) {
    if (bytes < kMinCachedBytes || bytes > limit_) {
      std::free(data);
      return;
    }
    void* evicted[kSlots] = {};
    size_t count = 0;
    {
      std::lock_guard lock(mutex_);
      Slot* free_slot = FreeSlot();
      while (cached_ + bytes > limit_ || free_slot == nullptr) {
        Slot& oldest = Oldest();
        evicted[count++] = oldest.data;
        cached_ -= oldest.bytes;
        oldest = Slot{};
        free_slot = &oldest;
      }
      *free_slot = Slot{data, bytes, ++clock_};
      cached_ += bytes;
    }
    for (size_t k = 0; k < count; ++k) std::free(evicted[k]);
  }

 private:
  static constexpr size_t kSlots = 16;
  struct Slot {
    void* data = nullptr;
    size_t bytes = 0;
    uint64_t age = 0;  // when it was cached
  };

  // An empty slot, or null.
  Slot* FreeSlot() {
    for (Slot& slot : slots_) {
      if (slot.data == nullptr) return &slot;
    }
    return nullptr;
  }

  // The occupied slot cached longest ago (the cache is not empty).
  Slot& Oldest() {
    Slot* oldest = nullptr;
    for (Slot& slot : slots_) {
      if (slot.data != nullptr && (oldest == nullptr || slot.age < oldest->age)) oldest = &slot;
    }
    return *oldest;
  }

  std::mutex mutex_;
  Slot slots_[kSlots];
  size_t cached_ = 0;
  uint64_t clock_ = 0;
  size_t limit_ = size_t{1024} << 20;
};

class HostBackend final : public DeviceBackend {
 public:
  std::string_view Name() const override { return "host"; }
  std::string_view DeviceKind() const override { return "kiln-cpu"; }
  bool IsHostAddressable(MemoryKind) const override { return true; }

  int64_t MemoryLimitBytes() const override {
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return 0;
    return static_cast<int64_t>(pages) * page_size;
  }

  StatusOr<void*> Allocate(MemoryKind, int, size_t bytes) override {
    const size_t rounded = Rounded(bytes);
    if (void* cached = cache_.Take(rounded)) return cached;
    if (rounded >= kHugeBytes) {
      void* data = std::aligned_alloc(kHugePage, rounded);
      if (data != nullptr) {
        madvise(data, rounded, MADV_HUGEPAGE);
        return data;
      }
    }
    void* data = rounded <= kSmallBytes ? AllocateSmall(rounded)
                                        : std::aligned_alloc(kAlignment, rounded);
    if (data == nullptr) {
      return ResourceExhausted("out of host memory: could not allocate ", bytes, " bytes");
    }
    return data;
  }

  void Deallocate(MemoryKind, int, void* data, size_t bytes) override {
    if (data == nullptr) return;
    const size_t rounded = Rounded(bytes);
    if (rounded <= kSmallBytes) {
      std::free(static_cast<void**>(data)[-1]);
      return;
    }
    cache_.Give(data, rounded);
  }

  Status CopyHostToDevice(DeviceAddress destination, const void* host_source,
                          size_t bytes) override {
    if (bytes > 0) std::memcpy(At(destination), host_source, bytes);
    return Status::Ok();
  }
  Status CopyDeviceToHost(void* host_destination, DeviceAddress source, size_t bytes) override {
    if (bytes > 0) std::memcpy(host_destination, At(source), bytes);
    return Status::Ok();
  }
  Status CopyDeviceToDevice(DeviceAddress destination, DeviceAddress source,
                            size_t bytes) override {
    if (bytes > 0) std::memmove(At(destination), At(source), bytes);
    return Status::Ok();
  }

 private:
  // Blocks of kHugeBytes and more are rounded to and aligned on 2 MiB and
  // advised as huge-page memory (MADV_HUGEPAGE; transparent huge pages are
  // often in "madvise" mode): layer norm's loops over 16 MiB arrays ran
  // 6.5-7.4 ms per call through JAX with 4 KiB pages, 5.0-5.6 ms with these.
  // The rounding costs at most a quarter of such a block, none for sizes
  // that are multiples of 2 MiB.
  static constexpr size_t kHugePage = size_t{2} << 20, kHugeBytes = size_t{8} << 20;
  static size_t Rounded(size_t bytes) {
    const size_t unit = bytes >= kHugeBytes ? kHugePage : kAlignment;
    return (bytes + unit - 1) / unit * unit;
  }

  // Blocks of up to kSmallBytes (a small program's results) come from
  // malloc, over-allocated and aligned here, with malloc's pointer in the
  // word before the block: glibc's aligned_alloc splits a larger chunk on
  // every call, about 2,000 instructions of a jitted x + 1's execute
  // (callgrind) where malloc takes about a hundred.
  static unsigned char* At(DeviceAddress address) {
    return static_cast<unsigned char*>(address.handle) + address.offset;
  }

  static constexpr size_t kSmallBytes = 4096;
  static void* AllocateSmall(size_t rounded) {
    void* raw = std::malloc(rounded + kAlignment + sizeof(void*));
    if (raw == nullptr) return nullptr;
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(raw) + sizeof(void*) + kAlignment - 1) &
                              ~(kAlignment - 1);
    reinterpret_cast<void**>(aligned)[-1] = raw;
    return reinterpret_cast<void*>(aligned);
  }

  BlockCache cache_;
};

}  // namespace

std::shared_ptr<DeviceBackend> CreateHostBackend() { return std::make_shared<HostBackend>(); }

}  // namespace kiln::runtime
