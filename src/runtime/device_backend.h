// The interface a hardware backend fills. Kiln's runtime objects (client,
// devices, memory spaces, buffers) reach device memory only through it, so a
// new backend replaces this class and the kernels, and keeps everything else.
// docs/architecture.md, "Adding a backend", walks through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtime/attribute.h"

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

// A place in memory a backend allocated: the handle its Allocate returned
// (a host pointer for host memory, a cl_mem for OpenCL device memory), the
// memory's kind, and a byte offset into it. Only the backend reads a
// handle of memory that is not host-addressable.
struct DeviceAddress {
  void* handle = nullptr;
  MemoryKind kind = MemoryKind::kDevice;
  size_t offset = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // The backend's name as KILN_BACKEND and device attributes give it: "host".
  virtual std::string_view Name() const = 0;
  // The PJRT device kind string, e.g. "kiln-cpu".
  virtual std::string_view DeviceKind() const = 0;
  // Attributes every device of this backend reports besides Kiln's own
  // (PJRT_DeviceDescription_Attributes): the hardware's name, vendor, ...
  virtual std::vector<Attribute> DeviceAttributes() const { return {}; }
  // True when memory of `kind` is ordinary host memory: the runtime and the
  // host kernels read and write it through its handle, and for kDevice the
  // framework may read it in place (PJRT_Buffer_IsOnCpu) and Kiln may alias
  // host buffers with it. Otherwise programs run on staged host copies.
  virtual bool IsHostAddressable(MemoryKind kind) const = 0;
  bool MemoryIsHostAddressable() const { return IsHostAddressable(MemoryKind::kDevice); }
  // Bytes a device may allocate in total, reported in memory stats.
  virtual int64_t MemoryLimitBytes() const = 0;

  // Allocates `bytes` (> 0) of `kind` memory for device `ordinal`, aligned to
  // at least 64 bytes. RESOURCE_EXHAUSTED when it cannot.
  virtual StatusOr<void*> Allocate(MemoryKind kind, int ordinal, size_t bytes) = 0;
  virtual void Deallocate(MemoryKind kind, int ordinal, void* data, size_t bytes) = 0;

  // Dense byte copies between any kinds of memory; they run on the
  // device's work queue, never on the caller's thread.
  virtual Status CopyHostToDevice(DeviceAddress destination, const void* host_source,
                                  size_t bytes) = 0;
  virtual Status CopyDeviceToHost(void* host_destination, DeviceAddress source, size_t bytes) = 0;
  virtual Status CopyDeviceToDevice(DeviceAddress destination, DeviceAddress source,
                                    size_t bytes) = 0;
};

// The backend of Kiln's virtual devices: device memory is host memory.
std::shared_ptr<DeviceBackend> CreateHostBackend();

}  // namespace kiln::runtime
