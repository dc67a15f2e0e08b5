#include "runtime/async_transfer_manager.h"

#include <optional>
#include <utility>

#include "runtime/device.h"
#include "runtime/memory_space.h"
#include "runtime/strided_copy.h"

namespace kiln::runtime {

using Manager = AsyncHostToDeviceTransferManager;

struct Manager::Slot {
  Shape shape;
  std::shared_ptr<DeviceMemory> memory;
  std::shared_ptr<Event> ready = Event::Create();
  std::mutex mutex;
  int64_t in_flight = 0;   // pieces sent whose copy has not finished
  bool last_sent = false;  // the piece marked last was sent (or the manager is gone)
  bool retrieved = false;
  Status first_error;  // of a piece's copy

  // A piece's copy finished with `status`; the last one makes the buffer ready.
  void Landed(const Status& status) {
    Status result;
    {
      std::lock_guard lock(mutex);
      --in_flight;
      if (!status.ok() && first_error.ok()) first_error = status;
      if (!last_sent || in_flight > 0) return;
      result = first_error;
    }
    ready->Set(std::move(result));
  }
};

StatusOr<std::unique_ptr<Manager>> Manager::Create(std::vector<Shape> shapes, MemorySpace* space) {
  std::vector<std::shared_ptr<Slot>> slots;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const size_t element_bytes = GetElementTypeInfo(shapes[i].element_type).storage_bytes;
    KILN_RETURN_IF_ERROR(ValidateDims(shapes[i].dims, element_bytes,
                                      StrCat("shape_specs[", i, "]")));
    auto slot = std::make_shared<Slot>();
    KILN_ASSIGN_OR_RETURN(slot->memory, space->Allocate(shapes[i].ByteSize()));
    slot->shape = std::move(shapes[i]);
    slots.push_back(std::move(slot));
  }
  return std::unique_ptr<Manager>(new Manager(space, std::move(slots)));
}

Manager::~AsyncHostToDeviceTransferManager() {
  for (size_t i = 0; i < buffers_.size(); ++i) {
    Slot& slot = *buffers_[i];
    {
      std::lock_guard lock(slot.mutex);
      if (slot.last_sent) continue;
      slot.last_sent = true;
    }
    slot.ready->Set(Status(StatusCode::kCancelled,
                           StrCat("the transfer manager was destroyed before buffer ", i, " (",
                                  slot.shape.ToString(), ") received its last transfer")));
  }
}

Device* Manager::device() const { return space_->device(); }

StatusOr<std::shared_ptr<Manager::Slot>> Manager::Find(int index) const {
  if (index < 0 || static_cast<size_t>(index) >= buffers_.size()) {
    const auto count = static_cast<int64_t>(buffers_.size());
    return InvalidArgument("buffer_index is ", index, "; expected 0 to ", count - 1,
                           " (the transfer manager holds ", count, " buffers)");
  }
  return buffers_[static_cast<size_t>(index)];
}

StatusOr<size_t> Manager::buffer_size(int index) const {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Slot> slot, Find(index));
  return slot->memory->size();
}

StatusOr<std::shared_ptr<Event>> Manager::Send(const std::shared_ptr<Slot>& slot, int index,
                                               bool is_last,
                                               std::function<Status(int, DeviceAddress)> copy) {
  {
    std::lock_guard lock(slot->mutex);
    if (std::optional<Status> ready = slot->ready->TryGetStatus()) {
      if (!ready->ok()) {
        return FailedPrecondition("buffer ", index, " (", slot->shape.ToString(),
                                  ") takes no more transfers: it has the error \"",
                                  ready->message(), "\"");
      }
      return FailedPrecondition("buffer ", index, " (", slot->shape.ToString(),
                                ") takes no more transfers: its last transfer has landed");
    }
    if (slot->last_sent) {
      return FailedPrecondition("buffer ", index, " (", slot->shape.ToString(),
                                ") takes no more transfers: its last transfer was sent already");
    }
    ++slot->in_flight;
    slot->last_sent = is_last;
  }
  auto done = Event::Create();
  // The copy (and the staged bytes it holds) lives until the device has
  // read them.
  auto shared = std::make_shared<std::function<Status(int, DeviceAddress)>>(std::move(copy));
  Device* target = device();
  EnqueueDeviceWork(
      Event::Ready(), &target->queue(), space_->backend().get(), target->ordinal(),
      [slot, shared, ordinal = target->ordinal()] {
        return (*shared)(ordinal, slot->memory->address());
      },
      done,
      [slot, shared](Status status) {
        slot->Landed(status);
        return status;
      });
  return done;
}

StatusOr<std::shared_ptr<Event>> Manager::TransferData(int index, const void* data, int64_t offset,
                                                       int64_t size, bool is_last) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Slot> slot, Find(index));
  const auto total = static_cast<int64_t>(slot->memory->size());
  if (offset < 0 || size < 0 || offset > total || size > total - offset) {
    return InvalidArgument("a transfer of ", size, " bytes at offset ", offset,
                           " does not fit buffer ", index, " (", slot->shape.ToString(), ", ",
                           total,
                           " bytes); expected 0 <= offset and offset + transfer_size <= ", total);
  }
  if (data == nullptr && size > 0) {
    return InvalidArgument("`data` is null for a transfer of ", size, " bytes to buffer ", index);
  }
  return Send(slot, index, is_last,
              [backend = space_->backend(), data, offset, size](int ordinal, DeviceAddress memory) {
                if (size == 0) return Status::Ok();
                memory.offset += static_cast<size_t>(offset);
                return backend->EnqueueHostToDevice(ordinal, memory, data,
                                                    static_cast<size_t>(size));
              });
}

StatusOr<std::shared_ptr<Event>> Manager::TransferLiteral(int index, const void* data,
                                                          const Shape& shape,
                                                          std::span<const int64_t> host_strides) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Slot> slot, Find(index));
  if (shape.element_type != slot->shape.element_type || shape.dims != slot->shape.dims) {
    return InvalidArgument("the literal for buffer ", index, " must be ", slot->shape.ToString(),
                           ", found ", shape.ToString());
  }
  const size_t element_bytes = GetElementTypeInfo(shape.element_type).storage_bytes;
  std::vector<int64_t> strides(host_strides.begin(), host_strides.end());
  if (strides.empty()) strides = DenseByteStrides(shape.dims, element_bytes);
  if (strides.size() != shape.dims.size()) {
    return InvalidArgument("the literal's layout has ", strides.size(), " byte strides; ",
                           shape.ToString(), " needs ", shape.dims.size());
  }
  if (StridedExtent(shape.dims, strides, element_bytes).overflow) {
    return InvalidArgument("the literal's byte strides reach beyond the address space");
  }
  if (data == nullptr && shape.ByteSize() > 0) {
    return InvalidArgument("`data` is null for the literal ", shape.ToString());
  }
  return Send(slot, index, /*is_last=*/true,
              [backend = space_->backend(), data, shape, strides,
               staging = std::make_shared<std::vector<unsigned char>>()](int ordinal,
                                                                         DeviceAddress memory) {
                return EnqueueHostArrayToDevice(*backend, ordinal, memory, data, shape, strides,
                                                *staging);
              });
}

StatusOr<std::unique_ptr<Buffer>> Manager::RetrieveBuffer(int index) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Slot> slot, Find(index));
  {
    std::lock_guard lock(slot->mutex);
    if (slot->retrieved) {
      return FailedPrecondition("buffer ", index, " (", slot->shape.ToString(),
                                ") was retrieved already; each buffer is retrieved once");
    }
    slot->retrieved = true;
  }
  return std::make_unique<Buffer>(slot->shape, space_, slot->memory, slot->ready);
}

Status Manager::SetBufferError(int index, Status error) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Slot> slot, Find(index));
  if (error.ok()) {
    return InvalidArgument("SetBufferError needs an error code other than OK");
  }
  if (!slot->ready->Set(std::move(error))) {
    return FailedPrecondition("buffer ", index, " (", slot->shape.ToString(),
                              ") is ready already; an error can be set only before its last "
                              "transfer lands");
  }
  return Status::Ok();
}

void Manager::AddMetadata(std::span<const std::pair<std::string, std::string>> entries) {
  std::lock_guard lock(metadata_mutex_);
  for (const auto& [key, value] : entries) metadata_[key] = value;
}

std::map<std::string, std::string> Manager::metadata() const {
  std::lock_guard lock(metadata_mutex_);
  return metadata_;
}

}  // namespace kiln::runtime
