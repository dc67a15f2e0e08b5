// Host memory ranges a framework registered for direct transfers
// (PJRT_Client_DmaMap / DmaUnmap). Kiln's host devices read any host
// memory, so mapping pins nothing; the ranges are still kept, so that
// mapping a range twice, mapping one that overlaps another, or unmapping
// a pointer never mapped is an error, as it is on a device that pins.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "base/status.h"

namespace kiln::runtime {

// Owned by the Client. Thread-safe.
class DmaMappings {
 public:
  // Registers [data, data + size). INVALID_ARGUMENT for a null `data`, a
  // zero `size` or a range past the end of the address space;
  // FAILED_PRECONDITION when it overlaps a mapped range.
  Status Map(const void* data, size_t size);
  // Releases the range that starts at `data`. INVALID_ARGUMENT when no
  // mapped range starts there.
  Status Unmap(const void* data);
  // True when one mapped range covers [data, data + size).
  bool IsMapped(const void* data, size_t size) const;
  size_t count() const;

 private:
  mutable std::mutex mutex_;
  std::map<uintptr_t, size_t> ranges_;  // start -> size in bytes
};

}  // namespace kiln::runtime
