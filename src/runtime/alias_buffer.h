// Alias buffers (PJRT_Client_CreateAliasBuffer / FulfillAliasBuffer): a
// buffer made now whose memory another buffer provides later, so a
// framework can hand out a result before the run that computes it exists.
#pragma once

#include <memory>
#include <mutex>

#include "runtime/buffer.h"

namespace kiln::runtime {

// The producer side of an alias buffer: fulfilled once, with a buffer or an
// error. Thread-safe; holds nothing of the client but the memory space's
// address, which it only compares.
class AliasPromise {
 public:
  // Moves `source`'s memory into the alias (`source` reports itself
  // donated); the alias becomes ready when `source`'s contents are.
  // INVALID_ARGUMENT when `source` differs in shape or memory space, is the
  // alias itself (or an alias given its memory) or is referenced externally;
  // FAILED_PRECONDITION when it was deleted or donated, or when the promise
  // was kept already. Any error but the last also fails the alias with it.
  Status Fulfill(Buffer& source);
  // Fails the alias with `error` (its ready event carries it).
  // FAILED_PRECONDITION when the promise was kept already.
  Status Fail(Status error);

 private:
  friend struct AliasBuffer;
  AliasPromise(Shape shape, const MemorySpace* space, std::shared_ptr<DeviceMemory> memory,
               std::shared_ptr<Event> ready)
      : shape_(std::move(shape)),
        space_(space),
        memory_(std::move(memory)),
        ready_(std::move(ready)) {}
  // Marks the promise kept; false when it was already.
  bool Keep();

  const Shape shape_;
  const MemorySpace* const space_;
  const std::shared_ptr<DeviceMemory> memory_;  // pending until fulfilled
  const std::shared_ptr<Event> ready_;
  std::mutex mutex_;
  bool kept_ = false;
};

// A new alias buffer of `shape` in `space` and its promise.
struct AliasBuffer {
  static AliasBuffer Create(Shape shape, MemorySpace* space);
  std::unique_ptr<Buffer> buffer;
  std::unique_ptr<AliasPromise> promise;
};

}  // namespace kiln::runtime
