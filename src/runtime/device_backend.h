// The interface a hardware backend fills. Kiln's runtime objects (client,
// devices, memory spaces, buffers) reach device memory only through it, so a
// new backend replaces this class and the kernels, and keeps everything else.
// docs/architecture.md, "Adding a backend", walks through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "base/status.h"

namespace kiln::runtime {

// The memory kinds every Kiln device exposes.
enum class MemoryKind : uint8_t {
  kDevice,        // the device's own memory; the default memory space
  kPinnedHost,    // host memory the device can reach; JAX's "pinned_host"
  kUnpinnedHost,  // ordinary host memory; JAX's "unpinned_host"
};
// Every kind, in the order each device lists its memory spaces.
inline constexpr MemoryKind kMemoryKinds[] = {MemoryKind::kDevice, MemoryKind::kPinnedHost,
                                              MemoryKind::kUnpinnedHost};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // The PJRT device kind string, e.g. "kiln-cpu".
  virtual std::string_view DeviceKind() const = 0;
  // True when device memory is ordinary host memory that the framework may
  // read in place (PJRT_Buffer_IsOnCpu) and that Kiln may alias host buffers with.
  virtual bool MemoryIsHostAddressable() const = 0;
  // Bytes a device may allocate in total, reported in memory stats.
  virtual int64_t MemoryLimitBytes() const = 0;

  // Allocates `bytes` (> 0) of `kind` memory for device `ordinal`, aligned to
  // at least 64 bytes. RESOURCE_EXHAUSTED when it cannot.
  virtual StatusOr<void*> Allocate(MemoryKind kind, int ordinal, size_t bytes) = 0;
  virtual void Deallocate(MemoryKind kind, int ordinal, void* data, size_t bytes) = 0;

  // Dense byte copies. They run on the device's work queue, never on the caller's thread.
  virtual Status CopyHostToDevice(void* device_dst, const void* host_src, size_t bytes) = 0;
  virtual Status CopyDeviceToHost(void* host_dst, const void* device_src, size_t bytes) = 0;
  virtual Status CopyDeviceToDevice(void* device_dst, const void* device_src, size_t bytes) = 0;
};

// The backend of Kiln's virtual devices: device memory is host memory.
std::shared_ptr<DeviceBackend> CreateHostBackend();

}  // namespace kiln::runtime
