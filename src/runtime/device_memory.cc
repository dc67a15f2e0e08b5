#include "runtime/device_memory.h"

namespace kiln::runtime {
namespace {

alignas(64) unsigned char empty_region[64];

void RaiseToAtLeast(std::atomic<int64_t>& target, int64_t value) {
  int64_t current = target.load();
  while (current < value && !target.compare_exchange_weak(current, value)) {
  }
}

}  // namespace

void MemoryCounters::RecordAllocation(int64_t bytes) {
  int64_t in_use = bytes_in_use += bytes;
  num_allocs += 1;
  RaiseToAtLeast(peak_bytes_in_use, in_use);
  RaiseToAtLeast(largest_alloc_size, bytes);
}

void MemoryCounters::ClearPeaks() {
  peak_bytes_in_use = bytes_in_use.load();
  largest_alloc_size = 0;
}

StatusOr<std::shared_ptr<DeviceMemory>> DeviceMemory::Allocate(
    std::shared_ptr<DeviceBackend> backend, std::shared_ptr<MemoryCounters> counters,
    MemoryKind kind, int ordinal, size_t bytes) {
  auto memory = std::make_shared<DeviceMemory>(Key());
  memory->size_ = bytes;
  memory->kind_ = kind;
  memory->ordinal_ = ordinal;
  if (bytes == 0) {
    memory->data_ = empty_region;
    return memory;
  }
  KILN_ASSIGN_OR_RETURN(memory->data_, backend->Allocate(kind, ordinal, bytes));
  memory->backend_ = std::move(backend);
  memory->counters_ = std::move(counters);
  memory->counters_->RecordAllocation(static_cast<int64_t>(bytes));
  return memory;
}

std::shared_ptr<DeviceMemory> DeviceMemory::Borrow(void* data, size_t bytes,
                                                   std::function<void()> on_release,
                                                   MemoryKind kind) {
  auto memory = std::make_shared<DeviceMemory>(Key());
  memory->data_ = data != nullptr ? data : empty_region;
  memory->size_ = bytes;
  memory->on_release_ = std::move(on_release);
  memory->kind_ = kind;
  return memory;
}

std::shared_ptr<DeviceMemory> DeviceMemory::Pending(size_t bytes) {
  auto memory = std::make_shared<DeviceMemory>(Key());
  memory->size_ = bytes;
  memory->pending_ = true;
  return memory;
}

Status DeviceMemory::Fulfill(std::shared_ptr<DeviceMemory> target) {
  if (target->size() != size_) {
    return InvalidArgument("the memory given to an alias holds ", target->size(),
                           " bytes; the alias expects ", size_);
  }
  if (target->Reaches(*this)) {
    return InvalidArgument("an alias cannot be given its own memory (directly or through "
                           "other aliases)");
  }
  bool expected = true;
  if (!pending_.compare_exchange_strong(expected, false)) {
    return FailedPrecondition("this memory was not waiting for another allocation (it is not "
                              "an alias's, or the alias was fulfilled already)");
  }
  target_ = std::move(target);
  forward_.store(target_.get(), std::memory_order_release);
  return Status::Ok();
}

bool DeviceMemory::Reaches(const DeviceMemory& other) const {
  for (const DeviceMemory* link = this; link != nullptr;
       link = link->forward_.load(std::memory_order_acquire)) {
    if (link == &other) return true;
  }
  return false;
}

DeviceMemory::~DeviceMemory() {
  if (backend_ != nullptr) {
    backend_->Deallocate(kind_, ordinal_, data_, size_);
    counters_->RecordFree(static_cast<int64_t>(size_));
  }
  if (on_release_) on_release_();
}

}  // namespace kiln::runtime
