// A device array: shape, placement, memory and readiness. The runtime form of PJRT_Buffer.
#pragma once

#include <memory>
#include <mutex>

#include "base/element_type.h"
#include "runtime/device_memory.h"
#include "runtime/event.h"

namespace kiln::runtime {

class Device;
class MemorySpace;

// Owned by its PJRT_Buffer handle. Memory is shared with in-flight work, so
// deleting or destroying a buffer while a transfer runs is safe.
class Buffer {
 public:
  Buffer(Shape shape, MemorySpace* memory_space, std::shared_ptr<DeviceMemory> memory,
         std::shared_ptr<Event> ready);

  const Shape& shape() const { return shape_; }
  MemorySpace* memory_space() const { return memory_space_; }
  Device* device() const;
  // Fires when the contents are written (or with the error that prevented it).
  const std::shared_ptr<Event>& ready_event() const { return ready_; }

  // The memory, or FAILED_PRECONDITION naming the buffer if it was deleted.
  StatusOr<std::shared_ptr<DeviceMemory>> memory() const;
  // The data pointer, or null once deleted. Valid while the memory is alive.
  void* unsafe_data() const;

  // Releases the memory; with external references outstanding the release
  // waits for the last DecreaseExternalReferenceCount.
  void Delete();
  bool IsDeleted() const;
  // Hands the memory to an execution that consumes the buffer (donation):
  // the buffer reports itself deleted. FAILED_PRECONDITION if it is deleted,
  // INVALID_ARGUMENT while external references (e.g. a NumPy view) exist.
  StatusOr<std::shared_ptr<DeviceMemory>> Donate();
  Status IncreaseExternalReferenceCount();
  Status DecreaseExternalReferenceCount();

  // PJRT_Buffer_Bitcast: a buffer of `shape` over this buffer's memory,
  // ready when this one is; this buffer is consumed (it reports itself
  // deleted, as after a donation), so no two live buffers share memory.
  // INVALID_ARGUMENT unless `shape` has the same size in bits; UNIMPLEMENTED
  // when it changes a sub-byte element type (Kiln stores those unpacked).
  StatusOr<std::unique_ptr<Buffer>> Bitcast(Shape shape);
  // PJRT_Buffer_DonateWithControlDependency: this buffer's memory moves
  // into a new buffer of the same shape that becomes ready once both this
  // buffer's contents and `dependency` are (with the first error).
  StatusOr<std::unique_ptr<Buffer>> DonateWithControlDependency(
      const std::shared_ptr<Event>& dependency);

 private:
  Shape shape_;
  MemorySpace* memory_space_;
  std::shared_ptr<Event> ready_;
  mutable std::mutex mutex_;
  std::shared_ptr<DeviceMemory> memory_;    // null once deleted
  std::shared_ptr<DeviceMemory> external_;  // kept alive for external references
  int64_t external_references_ = 0;
  bool deleted_ = false;
};

}  // namespace kiln::runtime
