#include "runtime/execute_context.h"

namespace kiln::runtime {

ExecuteContext::~ExecuteContext() {
  for (auto& [type_id, entry] : user_data_) {
    if (entry.deleter != nullptr) entry.deleter(entry.data);
  }
}

Status ExecuteContext::InsertUserData(int64_t type_id, void* data, Deleter deleter) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = user_data_.try_emplace(type_id, UserData{data, deleter});
  if (!inserted) {
    return Status(StatusCode::kAlreadyExists,
                  StrCat("the execute context already holds user data of type id ", type_id,
                         "; expected one datum per type id"));
  }
  return Status::Ok();
}

void* ExecuteContext::LookupUserData(int64_t type_id) const {
  std::lock_guard lock(mutex_);
  auto it = user_data_.find(type_id);
  return it == user_data_.end() ? nullptr : it->second.data;
}

size_t ExecuteContext::user_data_count() const {
  std::lock_guard lock(mutex_);
  return user_data_.size();
}

}  // namespace kiln::runtime
