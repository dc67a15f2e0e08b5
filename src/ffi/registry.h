// Kiln's registry of FFI handlers and types: what users register through
// jax.ffi (the PJRT FFI extension, XLA_FFI_Handler_Register, Kiln's Python
// package) and custom calls find when a program is compiled. Process-wide,
// like XLA's: a target registered before any client exists is found by the
// clients made later. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"
#include "xla/ffi/api/c_api.h"

namespace kiln::ffi {

// The platform name handlers are registered for to run on Kiln (compared
// without regard to case: "kiln", "KILN").
inline constexpr std::string_view kPlatform = "kiln";
bool IsKilnPlatform(std::string_view platform);

// A typed FFI handler (custom_call api_version 4).
struct TypedTarget {
  std::string name;
  XLA_FFI_Handler_Bundle bundle{};
  XLA_FFI_Handler_Traits traits = 0;
};

// A handler of the custom-call API before FFI (api_version 1-3): a plain
// function whose signature the call's api_version says.
struct LegacyTarget {
  std::string name;
  void* function = nullptr;
};

// Frees an object of a registered type (XLA_FFI_TypeInfo::deleter).
using Deleter = void (*)(void* object);

class Registry {
 public:
  // The process's registry.
  static Registry& Global();

  // Registers `bundle` for `name` on `platform` (which must name Kiln). The
  // same bundle again is accepted; another one for a registered name is
  // ALREADY_EXISTS.
  Status RegisterTyped(std::string_view name, std::string_view platform,
                       const XLA_FFI_Handler_Bundle& bundle, XLA_FFI_Handler_Traits traits);
  Status RegisterLegacy(std::string_view name, std::string_view platform, void* function);
  // The targets registered under `name`, or null. Targets are never
  // removed: the pointers live as long as the process.
  const TypedTarget* FindTyped(std::string_view name) const;
  const LegacyTarget* FindLegacy(std::string_view name) const;

  // Registers the type `name`: with `requested` 0 Kiln picks its id, else
  // the id is `requested` (the id XLA's own registry gave the same type,
  // when a user registers it for "cpu" and "kiln" through one TypeId).
  // Registering a name again returns its id if `requested` is 0 or that id;
  // another id, or an id another name has, is ALREADY_EXISTS.
  StatusOr<int64_t> RegisterType(std::string_view name, int64_t requested, Deleter deleter);
  // Whether `type_id` is registered, and its deleter (null when none).
  bool KnownType(int64_t type_id) const;
  Deleter DeleterOf(int64_t type_id) const;
  std::string TypeName(int64_t type_id) const;

 private:
  struct Type {
    std::string name;
    Deleter deleter = nullptr;
  };
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<TypedTarget>, std::less<>> typed_;
  std::map<std::string, std::unique_ptr<LegacyTarget>, std::less<>> legacy_;
  std::map<std::string, int64_t, std::less<>> type_ids_;
  std::map<int64_t, Type> types_;
  int64_t next_type_id_;

  Registry();
};

}  // namespace kiln::ffi
