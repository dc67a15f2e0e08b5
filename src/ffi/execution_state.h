// The state a typed handler keeps (XLA_FFI_State_Set/Get): one object per
// execution stage that makes one, deleted by its type's deleter. The Call
// keeps the instantiate stage's for its whole life; each execution keeps
// those of its prepare and initialize stages, cleared when it ends.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "base/status.h"
#include "xla/ffi/api/c_api.h"

namespace kiln::ffi {

class ExecutionState {
 public:
  ExecutionState() = default;
  ~ExecutionState();
  ExecutionState(const ExecutionState&) = delete;
  ExecutionState& operator=(const ExecutionState&) = delete;

  // Stores `state` of type `type_id` for `stage`; each stage sets it once.
  Status Set(XLA_FFI_ExecutionStage stage, int64_t type_id, void* state);
  // The state `stage` set, which must be of type `type_id`.
  StatusOr<void*> Get(XLA_FFI_ExecutionStage stage, int64_t type_id) const;
  // Deletes every state set, as the destructor does.
  void Clear();

 private:
  struct Slot {
    int64_t type_id = 0;
    void* state = nullptr;
    bool set = false;
  };
  mutable std::mutex mutex_;
  std::array<Slot, 5> slots_{};
  std::atomic<bool> used_{false};  // a state was set since the last Clear
};

}  // namespace kiln::ffi
