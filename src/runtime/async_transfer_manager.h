// Buffers made before their bytes exist, filled later in pieces: the
// runtime form of PJRT_AsyncHostToDeviceTransferManager
// (PJRT_Client_CreateBuffersForAsyncHostToDevice). Each buffer's memory is
// allocated up front; pieces are copied on the device's queue, and a
// buffer becomes ready when its last piece (the one sent with is_last) and
// every piece before it have landed, or with the error set on it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "runtime/buffer.h"

namespace kiln::runtime {

class AsyncHostToDeviceTransferManager {
 public:
  // Allocates one buffer per shape in `space`.
  static StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>> Create(
      std::vector<Shape> shapes, MemorySpace* space);
  // A buffer whose last piece has not been sent becomes ready with
  // CANCELLED, so nothing waits for it forever. Pieces already sent finish.
  ~AsyncHostToDeviceTransferManager();
  AsyncHostToDeviceTransferManager(const AsyncHostToDeviceTransferManager&) = delete;
  AsyncHostToDeviceTransferManager& operator=(const AsyncHostToDeviceTransferManager&) = delete;

  size_t buffer_count() const { return buffers_.size(); }
  // The bytes buffer `index` holds. INVALID_ARGUMENT for an index out of range.
  StatusOr<size_t> buffer_size(int index) const;
  MemorySpace* memory_space() const { return space_; }
  Device* device() const;

  // Copies `size` bytes from `data` to byte `offset` of buffer `index`; the
  // returned event fires when the caller may reuse `data`. `is_last` marks
  // the buffer's last piece. INVALID_ARGUMENT for an index, offset or size
  // out of range or null data; FAILED_PRECONDITION once the buffer's last
  // piece was sent or an error was set on it.
  StatusOr<std::shared_ptr<Event>> TransferData(int index, const void* data, int64_t offset,
                                                int64_t size, bool is_last);
  // Copies a whole host array into buffer `index` as its last piece;
  // `host_strides` lay it out (the dense row-major strides when empty). Its
  // shape must be the buffer's.
  StatusOr<std::shared_ptr<Event>> TransferLiteral(int index, const void* data, const Shape& shape,
                                                   std::span<const int64_t> host_strides);
  // Buffer `index`, once: FAILED_PRECONDITION the second time.
  StatusOr<std::unique_ptr<Buffer>> RetrieveBuffer(int index);
  // Makes buffer `index` ready with `error`. FAILED_PRECONDITION when it is
  // ready already.
  Status SetBufferError(int index, Status error);
  // Key-value metadata about the transfers (later entries replace earlier).
  void AddMetadata(std::span<const std::pair<std::string, std::string>> entries);
  std::map<std::string, std::string> metadata() const;

 private:
  struct Slot;  // one buffer's memory, readiness and transfer bookkeeping
  AsyncHostToDeviceTransferManager(MemorySpace* space, std::vector<std::shared_ptr<Slot>> slots)
      : space_(space), buffers_(std::move(slots)) {}
  StatusOr<std::shared_ptr<Slot>> Find(int index) const;
  // Sends one piece of `size` bytes to `slot` whose copy is `copy`, run on
  // the device's queue with the device's ordinal and the slot's memory. It
  // may leave the copy on the backend's queue (EnqueueDeviceWork): `copy`
  // and what it holds live until the copy has completed.
  StatusOr<std::shared_ptr<Event>> Send(
      const std::shared_ptr<Slot>& slot, int index, bool is_last,
      std::function<Status(int ordinal, DeviceAddress memory)> copy);

  MemorySpace* space_;
  std::vector<std::shared_ptr<Slot>> buffers_;
  mutable std::mutex metadata_mutex_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace kiln::runtime
