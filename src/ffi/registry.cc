#include "ffi/registry.h"

#include <cctype>

namespace kiln::ffi {

bool IsKilnPlatform(std::string_view platform) {
  if (platform.size() != kPlatform.size()) return false;
  for (size_t i = 0; i < platform.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(platform[i])) != kPlatform[i]) return false;
  }
  return true;
}

// Kiln's own ids start far above the small counters XLA's registry hands
// out, so that one XLA_FFI_TypeId registered for "cpu" and "kiln" (in
// either order) gets an id both registries accept.
Registry::Registry() : next_type_id_(int64_t{1} << 40) {}

Registry& Registry::Global() {
  static Registry* registry = new Registry();  // never destroyed: handlers outlive exit
  return *registry;
}

namespace {

Status CheckPlatform(std::string_view name, std::string_view platform) {
  if (IsKilnPlatform(platform)) return Status::Ok();
  return InvalidArgument("FFI target \"", name, "\" is registered for platform \"", platform,
                         "\"; Kiln's registry takes handlers for platform \"", kPlatform,
                         "\" (jax.ffi.register_ffi_target(..., platform=\"kiln\"))");
}

bool SameBundle(const XLA_FFI_Handler_Bundle& a, const XLA_FFI_Handler_Bundle& b) {
  return a.instantiate == b.instantiate && a.prepare == b.prepare && a.initialize == b.initialize &&
         a.execute == b.execute;
}

}  // namespace

Status Registry::RegisterTyped(std::string_view name, std::string_view platform,
                               const XLA_FFI_Handler_Bundle& bundle,
                               XLA_FFI_Handler_Traits traits) {
  KILN_RETURN_IF_ERROR(CheckPlatform(name, platform));
  if (name.empty()) return InvalidArgument("an FFI target needs a name, found an empty one");
  if (bundle.execute == nullptr) {
    return InvalidArgument("FFI target \"", name, "\": the execute handler is null");
  }
  std::lock_guard lock(mutex_);
  auto found = typed_.find(name);
  if (found != typed_.end()) {
    if (SameBundle(found->second->bundle, bundle)) return Status::Ok();
    return Status(StatusCode::kAlreadyExists,
                  StrCat("FFI target \"", name, "\" is already registered for platform \"",
                         kPlatform, "\" with other handlers"));
  }
  auto target = std::make_unique<TypedTarget>();
  target->name = std::string(name);
  target->bundle = bundle;
  target->traits = traits;
  typed_.emplace(std::string(name), std::move(target));
  return Status::Ok();
}

Status Registry::RegisterLegacy(std::string_view name, std::string_view platform, void* function) {
  KILN_RETURN_IF_ERROR(CheckPlatform(name, platform));
  if (name.empty()) return InvalidArgument("a custom call target needs a name, found an empty one");
  if (function == nullptr) {
    return InvalidArgument("custom call target \"", name, "\": the function is null");
  }
  std::lock_guard lock(mutex_);
  auto found = legacy_.find(name);
  if (found != legacy_.end()) {
    if (found->second->function == function) return Status::Ok();
    return Status(StatusCode::kAlreadyExists,
                  StrCat("custom call target \"", name, "\" is already registered for platform \"",
                         kPlatform, "\" with another function"));
  }
  auto target = std::make_unique<LegacyTarget>();
  target->name = std::string(name);
  target->function = function;
  legacy_.emplace(std::string(name), std::move(target));
  return Status::Ok();
}

const TypedTarget* Registry::FindTyped(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto found = typed_.find(name);
  return found == typed_.end() ? nullptr : found->second.get();
}

const LegacyTarget* Registry::FindLegacy(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto found = legacy_.find(name);
  return found == legacy_.end() ? nullptr : found->second.get();
}

StatusOr<int64_t> Registry::RegisterType(std::string_view name, int64_t requested,
                                         Deleter deleter) {
  if (name.empty()) return InvalidArgument("an FFI type needs a name, found an empty one");
  if (requested < 0) {
    return InvalidArgument("FFI type \"", name, "\": type ids are positive, found ", requested);
  }
  std::lock_guard lock(mutex_);
  auto found = type_ids_.find(name);
  if (found != type_ids_.end()) {
    if (requested == 0 || requested == found->second) {
      if (deleter != nullptr) types_[found->second].deleter = deleter;
      return found->second;
    }
    return Status(StatusCode::kAlreadyExists,
                  StrCat("FFI type \"", name, "\" is registered with id ", found->second, ", not ",
                         requested));
  }
  int64_t id = requested;
  if (id == 0) {
    while (types_.contains(next_type_id_)) ++next_type_id_;
    id = next_type_id_++;
  } else if (auto taken = types_.find(id); taken != types_.end()) {
    return Status(StatusCode::kAlreadyExists,
                  StrCat("FFI type \"", name, "\" asks for id ", id, ", which type \"",
                         taken->second.name, "\" has"));
  }
  type_ids_.emplace(std::string(name), id);
  types_[id] = Type{std::string(name), deleter};
  return id;
}

bool Registry::KnownType(int64_t type_id) const {
  std::lock_guard lock(mutex_);
  return types_.contains(type_id);
}

Deleter Registry::DeleterOf(int64_t type_id) const {
  std::lock_guard lock(mutex_);
  auto found = types_.find(type_id);
  return found == types_.end() ? nullptr : found->second.deleter;
}

std::string Registry::TypeName(int64_t type_id) const {
  std::lock_guard lock(mutex_);
  auto found = types_.find(type_id);
  return found == types_.end() ? StrCat("(unregistered type id ", type_id, ")")
                               : found->second.name;
}

}  // namespace kiln::ffi
