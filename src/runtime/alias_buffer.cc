#include "runtime/alias_buffer.h"

#include "runtime/memory_space.h"

namespace kiln::runtime {

AliasBuffer AliasBuffer::Create(Shape shape, MemorySpace* space) {
  auto memory = DeviceMemory::Pending(shape.ByteSize());
  auto ready = Event::Create();
  AliasBuffer alias;
  alias.buffer = std::make_unique<Buffer>(shape, space, memory, ready);
  alias.promise.reset(new AliasPromise(std::move(shape), space, std::move(memory),
                                       std::move(ready)));
  return alias;
}

bool AliasPromise::Keep() {
  std::lock_guard lock(mutex_);
  if (kept_) return false;
  kept_ = true;
  return true;
}

Status AliasPromise::Fail(Status error) {
  if (!Keep()) {
    return FailedPrecondition("the alias buffer ", shape_.ToString(),
                              " was fulfilled already; each alias is fulfilled once");
  }
  ready_->Set(std::move(error));
  return Status::Ok();
}

Status AliasPromise::Fulfill(Buffer& source) {
  if (!Keep()) {
    return FailedPrecondition("the alias buffer ", shape_.ToString(),
                              " was fulfilled already; each alias is fulfilled once");
  }
  Status status = [&]() -> Status {
    if (source.shape().element_type != shape_.element_type || source.shape().dims != shape_.dims) {
      return InvalidArgument("the buffer fulfilling an alias must have its shape ",
                             shape_.ToString(), ", found ", source.shape().ToString());
    }
    if (source.memory_space() != space_) {
      return InvalidArgument("the buffer fulfilling an alias must be in the alias's memory "
                             "space, found it in ",
                             source.memory_space()->debug_string());
    }
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<DeviceMemory> current, source.memory());
    if (current->Reaches(*memory_)) {
      return InvalidArgument("an alias cannot be fulfilled with itself, or with an alias "
                             "that was given its memory");
    }
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<DeviceMemory> memory, source.Donate());
    KILN_RETURN_IF_ERROR(memory_->Fulfill(std::move(memory)));
    source.ready_event()->OnReady([ready = ready_](const Status& done) { ready->Set(done); });
    return Status::Ok();
  }();
  if (!status.ok()) ready_->Set(status);
  return status;
}

}  // namespace kiln::runtime
