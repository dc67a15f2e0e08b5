#include "ffi/execution_state.h"

#include "ffi/registry.h"

namespace kiln::ffi {

ExecutionState::~ExecutionState() { Clear(); }

void ExecutionState::Clear() {
  // Most handlers keep no state: a call then clears nothing, locks nothing
  // and writes nothing (a plain load costs less than an exchange).
  if (!used_.load(std::memory_order_acquire)) return;
  if (!used_.exchange(false, std::memory_order_acq_rel)) return;
  std::lock_guard lock(mutex_);
  for (Slot& slot : slots_) {
    if (slot.set && slot.state != nullptr) {
      if (Deleter deleter = Registry::Global().DeleterOf(slot.type_id)) deleter(slot.state);
    }
    slot = Slot{};
  }
}

Status ExecutionState::Set(XLA_FFI_ExecutionStage stage, int64_t type_id, void* state) {
  const auto index = static_cast<size_t>(stage);
  if (index >= slots_.size()) return InvalidArgument("FFI state for unknown stage ", index);
  std::lock_guard lock(mutex_);
  Slot& slot = slots_[index];
  if (slot.set) {
    return FailedPrecondition("FFI state of stage ", index, " is already set (to type \"",
                              Registry::Global().TypeName(slot.type_id), "\")");
  }
  slot = Slot{type_id, state, true};
  used_.store(true, std::memory_order_release);
  return Status::Ok();
}

StatusOr<void*> ExecutionState::Get(XLA_FFI_ExecutionStage stage, int64_t type_id) const {
  const auto index = static_cast<size_t>(stage);
  if (index >= slots_.size()) return InvalidArgument("FFI state for unknown stage ", index);
  std::lock_guard lock(mutex_);
  const Slot& slot = slots_[index];
  if (!slot.set) return NotFound("no FFI state was set at stage ", index);
  if (slot.type_id != type_id) {
    return InvalidArgument("FFI state of stage ", index, " is of type \"",
                           Registry::Global().TypeName(slot.type_id), "\", not \"",
                           Registry::Global().TypeName(type_id), "\"");
  }
  return slot.state;
}

}  // namespace kiln::ffi
