// What one execution carries besides its arguments: the runtime form of
// PJRT_ExecuteContext. Frameworks attach user data for FFI handlers to it
// (XLA's ExecuteContext); a run given one keeps it alive until it finishes.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "base/status.h"
#include "ffi/call.h"

namespace kiln::runtime {

// Owned by its PJRT_ExecuteContext handle and shared with the runs it was
// passed to. Thread-safe.
class ExecuteContext final : public ffi::UserData {
 public:
  // Frees a user datum when the context goes away.
  using Deleter = void (*)(void* data);

  ExecuteContext() = default;
  ExecuteContext(const ExecuteContext&) = delete;
  ExecuteContext& operator=(const ExecuteContext&) = delete;
  // Runs the deleter of every datum still attached.
  ~ExecuteContext() override;

  // Attaches `data` under `type_id` (FFI's TypeId); the context owns it from
  // now on when `deleter` is set. ALREADY_EXISTS if the id has data already.
  Status InsertUserData(int64_t type_id, void* data, Deleter deleter);
  // The datum under `type_id`, or null.
  void* LookupUserData(int64_t type_id) const override;
  size_t user_data_count() const;

 private:
  struct UserData {
    void* data;
    Deleter deleter;
  };
  mutable std::mutex mutex_;
  std::map<int64_t, UserData> user_data_;
};

}  // namespace kiln::runtime
