#include "runtime/buffer.h"

#include "runtime/memory_space.h"

namespace kiln::runtime {

Buffer::Buffer(Shape shape, MemorySpace* memory_space, std::shared_ptr<DeviceMemory> memory,
               std::shared_ptr<Event> ready)
    : shape_(std::move(shape)),
      memory_space_(memory_space),
      ready_(std::move(ready)),
      memory_(std::move(memory)) {}

Device* Buffer::device() const { return memory_space_->device(); }

StatusOr<std::shared_ptr<DeviceMemory>> Buffer::memory() const {
  std::lock_guard lock(mutex_);
  if (deleted_) {
    return FailedPrecondition("the buffer ", shape_.ToString(),
                              " has been deleted or donated; it holds no data");
  }
  return memory_;
}

void* Buffer::unsafe_data() const {
  std::lock_guard lock(mutex_);
  if (memory_ != nullptr) return memory_->data();
  if (external_ != nullptr) return external_->data();
  return nullptr;
}

void Buffer::Delete() {
  std::shared_ptr<DeviceMemory> released;
  {
    std::lock_guard lock(mutex_);
    if (deleted_) return;
    deleted_ = true;
    if (external_references_ > 0) {
      external_ = std::move(memory_);
    } else {
      released = std::move(memory_);
    }
  }
  // `released` frees here, outside the lock (unless in-flight work still holds it).
}

bool Buffer::IsDeleted() const {
  std::lock_guard lock(mutex_);
  return deleted_;
}

StatusOr<std::shared_ptr<DeviceMemory>> Buffer::Donate() {
  std::lock_guard lock(mutex_);
  if (deleted_) {
    return FailedPrecondition("the donated buffer ", shape_.ToString(),
                              " has been deleted or donated already");
  }
  if (external_references_ > 0) {
    return InvalidArgument("the buffer ", shape_.ToString(), " is donated but has ",
                           external_references_,
                           " external references (e.g. a NumPy view of it); expected none");
  }
  deleted_ = true;
  return std::move(memory_);
}

Status Buffer::IncreaseExternalReferenceCount() {
  std::lock_guard lock(mutex_);
  if (deleted_) {
    return FailedPrecondition("cannot add an external reference to the deleted buffer ",
                              shape_.ToString());
  }
  ++external_references_;
  return Status::Ok();
}

Status Buffer::DecreaseExternalReferenceCount() {
  std::shared_ptr<DeviceMemory> released;
  {
    std::lock_guard lock(mutex_);
    if (external_references_ == 0) {
      return FailedPrecondition("the buffer ", shape_.ToString(),
                                " has no external references to release");
    }
    if (--external_references_ == 0) released = std::move(external_);
  }
  return Status::Ok();
}

}  // namespace kiln::runtime
