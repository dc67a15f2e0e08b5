// Kiln's virtual CPU devices: every device's memory is host memory.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/block_cache.h"
#include "runtime/device_backend.h"

namespace kiln::runtime {
namespace {

constexpr size_t kAlignment = 64;

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

  // Freed blocks of 1 MiB and more (KILN_HOST_BLOCK_CACHE_MB bounds what
  // it holds, default 1024; 0 turns it off). Smaller ones go back to malloc,
  // which keeps them itself.
  BlockCache cache_{{.min_bytes = size_t{1} << 20,
                     .limit_bytes = size_t{1024} << 20,
                     .slots = 16,
                     .limit_variable = "KILN_HOST_BLOCK_CACHE_MB"},
                    [](void* block) { std::free(block); }};
};

}  // namespace

std::shared_ptr<DeviceBackend> CreateHostBackend() { return std::make_shared<HostBackend>(); }

}  // namespace kiln::runtime
