#include "runtime/dma_mappings.h"

#include <cstdio>
#include <limits>
#include <string>

namespace kiln::runtime {
namespace {

std::string Range(uintptr_t start, size_t size) {
  char text[64];
  std::snprintf(text, sizeof(text), "[0x%llx, 0x%llx)", static_cast<unsigned long long>(start),
                static_cast<unsigned long long>(start + size));
  return text;
}

}  // namespace

Status DmaMappings::Map(const void* data, size_t size) {
  const auto start = reinterpret_cast<uintptr_t>(data);
  if (data == nullptr) {
    return InvalidArgument("DMA map: `data` is null; expected the start of a host range");
  }
  if (size == 0) {
    return InvalidArgument("DMA map: `size` is 0; expected the length of the host range at ", data,
                           " in bytes");
  }
  if (size > std::numeric_limits<uintptr_t>::max() - start) {
    return InvalidArgument("DMA map: ", size, " bytes at ", data,
                           " run past the end of the address space");
  }
  std::lock_guard lock(mutex_);
  // The first range starting at or after `start`, and the one before it.
  auto next = ranges_.lower_bound(start);
  if (next != ranges_.end() && next->first == start && next->second == size) {
    return FailedPrecondition("DMA map: ", Range(start, size), " is already mapped");
  }
  if (next != ranges_.end() && next->first < start + size) {
    return FailedPrecondition("DMA map: ", Range(start, size), " overlaps the mapped range ",
                              Range(next->first, next->second), "; unmap that first");
  }
  if (next != ranges_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second > start) {
      return FailedPrecondition("DMA map: ", Range(start, size), " overlaps the mapped range ",
                                Range(previous->first, previous->second), "; unmap that first");
    }
  }
  ranges_.emplace(start, size);
  return Status::Ok();
}

Status DmaMappings::Unmap(const void* data) {
  std::lock_guard lock(mutex_);
  auto it = ranges_.find(reinterpret_cast<uintptr_t>(data));
  if (it == ranges_.end()) {
    return InvalidArgument("DMA unmap: no mapped range starts at ", data, "; ", ranges_.size(),
                           " range(s) are mapped, and unmapping takes the pointer given to "
                           "the map");
  }
  ranges_.erase(it);
  return Status::Ok();
}

bool DmaMappings::IsMapped(const void* data, size_t size) const {
  const auto start = reinterpret_cast<uintptr_t>(data);
  std::lock_guard lock(mutex_);
  auto next = ranges_.upper_bound(start);
  if (next == ranges_.begin()) return false;
  auto range = std::prev(next);
  return start - range->first <= range->second && size <= range->second - (start - range->first);
}

size_t DmaMappings::count() const {
  std::lock_guard lock(mutex_);
  return ranges_.size();
}

}  // namespace kiln::runtime
