#include "runtime/memory_space.h"

#include "runtime/device.h"

namespace kiln::runtime {

std::string_view MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kDevice: return "device";
    case MemoryKind::kPinnedHost: return "pinned_host";
    case MemoryKind::kUnpinnedHost: return "unpinned_host";
  }
  return "device";
}

std::optional<MemoryKind> MemoryKindNamed(std::string_view name) {
  for (MemoryKind kind : kMemoryKinds) {
    if (MemoryKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

MemorySpace::MemorySpace(int id, MemoryKind kind, Device* device,
                         std::shared_ptr<DeviceBackend> backend)
    : id_(id), kind_(kind), device_(device), backend_(std::move(backend)) {
  debug_string_ = StrCat("kiln:", device->id(), ":", MemoryKindName(kind), " (memory space ", id,
                         ")");
  to_string_ = StrCat("MEMORY_SPACE_", id, "(", MemoryKindName(kind), ", device=", device->id(),
                      ")");
}

std::string_view MemorySpace::kind_name() const { return MemoryKindName(kind_); }

StatusOr<std::shared_ptr<DeviceMemory>> MemorySpace::Allocate(size_t bytes) {
  auto memory = DeviceMemory::Allocate(backend_, counters_, kind_, device_->id(), bytes);
  if (!memory.ok()) {
    Status status = memory.status();
    return status.AddNote(StrCat("allocating in ", debug_string_));
  }
  return memory;
}

}  // namespace kiln::runtime
