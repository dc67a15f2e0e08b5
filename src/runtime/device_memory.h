// A region of device memory, freed when its last reference drops.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "runtime/device_backend.h"

namespace kiln::runtime {

// Allocation counters of one memory space; shared with every allocation in it
// so a buffer that outlives its client still frees cleanly.
struct MemoryCounters {
  std::atomic<int64_t> bytes_in_use{0};
  std::atomic<int64_t> peak_bytes_in_use{0};
  std::atomic<int64_t> num_allocs{0};
  std::atomic<int64_t> largest_alloc_size{0};

  void RecordAllocation(int64_t bytes);
  void RecordFree(int64_t bytes) { bytes_in_use -= bytes; }
  // Restarts peak and largest from the current use (PJRT_Device_ClearMemoryStats).
  void ClearPeaks();
};

class DeviceMemory {
 public:
  // Allocates `bytes` from `backend`, counted in `counters`. Zero bytes
  // allocate nothing and point at a static, aligned, empty region.
  static StatusOr<std::shared_ptr<DeviceMemory>> Allocate(std::shared_ptr<DeviceBackend> backend,
                                                          std::shared_ptr<MemoryCounters> counters,
                                                          MemoryKind kind, int ordinal,
                                                          size_t bytes);
  // Memory Kiln does not own (a view, or an aliased host buffer); `on_release`
  // runs once when the last reference drops. Not counted in memory stats.
  // `kind` says what `data` is to the backend (a host pointer for the host
  // kinds; the backend's own handle for kDevice).
  static std::shared_ptr<DeviceMemory> Borrow(void* data, size_t bytes,
                                              std::function<void()> on_release,
                                              MemoryKind kind = MemoryKind::kDevice);
  // Memory of `bytes` that another allocation provides later (an alias
  // buffer's, PJRT_Client_CreateAliasBuffer): data() is null until
  // Fulfill. Work reads data() only once the owning buffer is ready, and
  // the buffer becomes ready only after Fulfill.
  static std::shared_ptr<DeviceMemory> Pending(size_t bytes);
  // Makes this pending memory `target`'s (kept alive with it); `target`
  // may itself be pending, and data() follows it. FAILED_PRECONDITION
  // unless pending and unfulfilled; INVALID_ARGUMENT when the sizes differ
  // or `target` leads back to this memory.
  Status Fulfill(std::shared_ptr<DeviceMemory> target);
  // True when this is `other` or, pending, was given `other`'s memory
  // (directly or through other pending memory).
  bool Reaches(const DeviceMemory& other) const;

  // Made only by the functions above (the key is theirs); public so that
  // std::make_shared puts the memory's record and its count in one block.
  class Key {
    friend class DeviceMemory;
    Key() = default;
  };
  explicit DeviceMemory(Key) {}
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  void* data() const {
    const DeviceMemory* forward = forward_.load(std::memory_order_acquire);
    return forward != nullptr ? forward->data() : data_;
  }
  size_t size() const { return size_; }
  bool owned() const { return backend_ != nullptr; }
  // Where the memory is, for the backend's copies: data() with the kind it
  // was allocated as (followed through Fulfill, as data() is).
  DeviceAddress address(size_t offset = 0) const {
    const DeviceMemory* forward = forward_.load(std::memory_order_acquire);
    if (forward != nullptr) return forward->address(offset);
    return DeviceAddress{data_, kind_, offset};
  }
  MemoryKind kind() const { return address().kind; }

  // How many queued or running program runs hold this memory as an output
  // they write (LoadedExecutable::Work). A run that is given the memory
  // through a donated argument waits for the run that writes it (the
  // argument's ready event), so such holds do not keep it from writing
  // its result there in place; any other holder does.
  int writer_holds() const { return writer_holds_.load(std::memory_order_acquire); }
  void AddWriterHold() { writer_holds_.fetch_add(1, std::memory_order_acq_rel); }
  void DropWriterHold() { writer_holds_.fetch_sub(1, std::memory_order_acq_rel); }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  MemoryKind kind_ = MemoryKind::kDevice;
  int ordinal_ = 0;
  std::shared_ptr<DeviceBackend> backend_;
  std::shared_ptr<MemoryCounters> counters_;
  std::function<void()> on_release_;
  // Pending memory: whether it waits for Fulfill, and the memory it became
  // (owned by target_; forward_ is set last, so a reader that sees it sees
  // target_ too).
  std::atomic<bool> pending_{false};
  std::atomic<int> writer_holds_{0};
  std::shared_ptr<DeviceMemory> target_;
  std::atomic<const DeviceMemory*> forward_{nullptr};
};

}  // namespace kiln::runtime
