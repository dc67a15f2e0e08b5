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

namespace {

// Bits per element as XLA counts them for a bitcast: pred is a whole byte.
int64_t ElementBits(ElementType type) {
  return type == ElementType::kPred ? 8 : GetElementTypeInfo(type).bit_width;
}

int64_t SizeInBits(const Shape& shape) {
  return shape.NumElements() * ElementBits(shape.element_type);
}

bool IsSubByte(ElementType type) { return ElementBits(type) < 8; }

}  // namespace

StatusOr<std::unique_ptr<Buffer>> Buffer::Bitcast(Shape shape) {
  KILN_RETURN_IF_ERROR(ValidateDims(shape.dims,
                                    GetElementTypeInfo(shape.element_type).storage_bytes,
                                    "bitcast shape"));
  if (SizeInBits(shape) != SizeInBits(shape_)) {
    return InvalidArgument("a bitcast keeps the size: ", shape_.ToString(), " holds ",
                           SizeInBits(shape_), " bits, ", shape.ToString(), " ", SizeInBits(shape));
  }
  if (shape.element_type != shape_.element_type &&
      (IsSubByte(shape.element_type) || IsSubByte(shape_.element_type))) {
    return Unimplemented("bitcasting ", shape_.ToString(), " to ", shape.ToString(),
                         ": Kiln stores sub-byte elements unpacked, one per byte, so a bitcast "
                         "that changes a sub-byte element type would repack them");
  }
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<DeviceMemory> memory, Donate());
  return std::make_unique<Buffer>(std::move(shape), memory_space_, std::move(memory), ready_);
}

StatusOr<std::unique_ptr<Buffer>> Buffer::DonateWithControlDependency(
    const std::shared_ptr<Event>& dependency) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<DeviceMemory> memory, Donate());
  const std::shared_ptr<Event> both[] = {ready_, dependency};
  return std::make_unique<Buffer>(shape_, memory_space_, std::move(memory), Event::AfterAll(both));
}

}  // namespace kiln::runtime
