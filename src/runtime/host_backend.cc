// Kiln's virtual CPU devices: every device's memory is host memory.
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "runtime/device_backend.h"

namespace kiln::runtime {
namespace {

constexpr size_t kAlignment = 64;

class HostBackend final : public DeviceBackend {
 public:
  std::string_view DeviceKind() const override { return "kiln-cpu"; }
  bool MemoryIsHostAddressable() const override { return true; }

  int64_t MemoryLimitBytes() const override {
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return 0;
    return static_cast<int64_t>(pages) * page_size;
  }

  StatusOr<void*> Allocate(MemoryKind, int, size_t bytes) override {
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* data = std::aligned_alloc(kAlignment, rounded);
    if (data == nullptr) {
      return ResourceExhausted("out of host memory: could not allocate ", bytes, " bytes");
    }
    return data;
  }

  void Deallocate(MemoryKind, int, void* data, size_t) override { std::free(data); }

  Status CopyHostToDevice(void* device_dst, const void* host_src, size_t bytes) override {
    if (bytes > 0) std::memcpy(device_dst, host_src, bytes);
    return Status::Ok();
  }
  Status CopyDeviceToHost(void* host_dst, const void* device_src, size_t bytes) override {
    if (bytes > 0) std::memcpy(host_dst, device_src, bytes);
    return Status::Ok();
  }
  Status CopyDeviceToDevice(void* device_dst, const void* device_src, size_t bytes) override {
    if (bytes > 0) std::memmove(device_dst, device_src, bytes);
    return Status::Ok();
  }
};

}  // namespace

std::shared_ptr<DeviceBackend> CreateHostBackend() { return std::make_shared<HostBackend>(); }

}  // namespace kiln::runtime
