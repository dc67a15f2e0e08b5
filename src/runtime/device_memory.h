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
  static StatusOr<std::shared_ptr<DeviceMemory>> Allocate(
      std::shared_ptr<DeviceBackend> backend, std::shared_ptr<MemoryCounters> counters,
      MemoryKind kind, int ordinal, size_t bytes);
  // Memory Kiln does not own (a view, or an aliased host buffer); `on_release`
  // runs once when the last reference drops. Not counted in memory stats.
  static std::shared_ptr<DeviceMemory> Borrow(void* data, size_t bytes,
                                              std::function<void()> on_release);

  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool owned() const { return backend_ != nullptr; }

 private:
  DeviceMemory() = default;

  void* data_ = nullptr;
  size_t size_ = 0;
  MemoryKind kind_ = MemoryKind::kDevice;
  int ordinal_ = 0;
  std::shared_ptr<DeviceBackend> backend_;
  std::shared_ptr<MemoryCounters> counters_;
  std::function<void()> on_release_;
};

}  // namespace kiln::runtime
