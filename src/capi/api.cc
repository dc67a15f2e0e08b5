// GetPjrtApi, the PJRT entry (and KilnRegisterHostFunction, below). The
// PJRT_Api table is filled from the header's own slot list
// (pjrt_api_slots.inc, generated at configure time), so every slot is set:
// Kiln's implementation where functions.h declares one, and a stub returning
// UNIMPLEMENTED naming the function otherwise. Every call goes through
// Entry, which checks args, catches exceptions and traces.
#include <chrono>
#include <exception>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include "capi/call.h"
#include "capi/functions.h"
#include "capi/trace.h"
#include "runtime/host_functions.h"

namespace kiln::capi {
namespace {

template <typename Name, auto Function>
struct Entry;

template <typename Name, typename Result, typename Args, Result (*Function)(Args*)>
struct Entry<Name, Function> {
  static PJRT_Error* Run(Args* args) {
    if (args == nullptr) {
      return MakeError(InvalidArgument(Name::value,
                                       " was called with null args; expected a "
                                       "pointer to ",
                                       Name::value, "_Args"));
    }
    try {
      if constexpr (std::is_void_v<Result>) {
        Function(args);
        return nullptr;
      } else {
        return Function(args);
      }
    } catch (const std::bad_alloc&) {
      return MakeError(ResourceExhausted(Name::value, ": out of memory"));
    } catch (const std::exception& exception) {
      return MakeError(Internal(Name::value, ": unexpected exception: ", exception.what()));
    } catch (...) {
      return MakeError(Internal(Name::value, ": unexpected exception"));
    }
  }

  static Result Call(Args* args) {
    SetCurrentFunction(Name::value);
    if (!TraceEnabled()) return Finish(Run(args));
    auto start = std::chrono::steady_clock::now();
    PJRT_Error* error = Run(args);
    WriteTraceLine(Name::value, args == nullptr ? std::string(" args=null") : DescribeArgs(*args),
                   error, std::chrono::steady_clock::now() - start);
    return Finish(error);
  }

  static Result Finish(PJRT_Error* error) {
    if constexpr (std::is_void_v<Result>) {
      // Error_Destroy / Error_Message cannot report errors; drop any.
      if (error != nullptr) error->vtable->destroy(error);
    } else {
      return error;
    }
  }
};

// The handle an unimplemented function acts on: the first of these fields the
// args struct has (in this order, so an output such as PJRT_Compile's
// `executable` is never mistaken for the input).
template <typename Args>
std::pair<const void*, const char*> PrimaryHandle(const Args& args) {
  if constexpr (requires { args.client; }) return {args.client, "client"};
  else if constexpr (requires { args.topology; })
    return {args.topology, "topology"};
  else if constexpr (requires { args.loaded_executable; })
    return {args.loaded_executable, "loaded_executable"};
  else if constexpr (requires { args.executable; })
    return {args.executable, "executable"};
  else if constexpr (requires { args.buffer; })
    return {args.buffer, "buffer"};
  else if constexpr (requires { args.device; })
    return {args.device, "device"};
  else if constexpr (requires { args.memory; })
    return {args.memory, "memory"};
  else if constexpr (requires { args.stream; })
    return {args.stream, "stream"};
  else if constexpr (requires { args.transfer_manager; })
    return {args.transfer_manager, "transfer_manager"};
  else
    return {nullptr, nullptr};
}

constexpr bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// What an unimplemented slot does: the same argument checks as a real
// function, then UNIMPLEMENTED naming it. Destroying a null handle is the
// no-op the header promises. `Dependent` only delays instantiation until a
// slot actually needs a stub.
template <typename Name, typename Function, typename Dependent>
struct Stub;

template <typename Name, typename Args, typename Dependent>
struct Stub<Name, PJRT_Error*(Args*), Dependent> {
  static PJRT_Error* Run(Args* args) {
    constexpr size_t kMinimum = offsetof(Args, extension_start) + sizeof(args->extension_start);
    KILN_CAPI_RETURN_IF_ERROR(CheckStructSize(args->struct_size, kMinimum, "extension_start"));
    auto [handle, field] = PrimaryHandle(*args);
    if (field != nullptr) {
      if (handle == nullptr) {
        if (EndsWith(Name::value, "_Destroy")) return nullptr;
        return MakeError(InvalidArgument(Name::value, ": `", field, "` is null"));
      }
    }
    return MakeError(Unimplemented(Name::value, " is not implemented by Kiln ",
                                   "(this plugin build does not support it yet)"));
  }
};

// One name type and one slot picker per slot. The picker is a template so the
// branch naming a member Impl lacks is discarded rather than compiled.
#define KILN_SLOT(name)                                                     \
  struct Name_##name {                                                      \
    static constexpr const char* value = #name;                             \
  };                                                                        \
  template <typename T>                                                     \
  auto Pick_##name() {                                                      \
    if constexpr (requires { &T::name; }) {                                 \
      return &Entry<Name_##name, &T::name>::Call;                           \
    } else {                                                                \
      return &Entry<Name_##name, &Stub<Name_##name, ::name, T>::Run>::Call; \
    }                                                                       \
  }
#include "pjrt_api_slots.inc"
#undef KILN_SLOT

// Names of the extensions' functions, for errors and traces.
#define KILN_EXTENSION_NAME(name)               \
  struct Name_##name {                          \
    static constexpr const char* value = #name; \
  };
KILN_EXTENSION_NAME(PJRT_Shardings_PJRT_Executable_ParameterShardings)
KILN_EXTENSION_NAME(PJRT_Shardings_PJRT_Executable_OutputShardings)
KILN_EXTENSION_NAME(PJRT_FFI_Type_Register)
KILN_EXTENSION_NAME(PJRT_FFI_UserData_Add)
KILN_EXTENSION_NAME(PJRT_FFI_Register_Handler)
KILN_EXTENSION_NAME(PJRT_Layouts_MemoryLayout_Destroy)
KILN_EXTENSION_NAME(PJRT_Layouts_MemoryLayout_Serialize)
KILN_EXTENSION_NAME(PJRT_Layouts_PJRT_Client_GetDefaultLayout)
KILN_EXTENSION_NAME(PJRT_Layouts_PJRT_Buffer_MemoryLayout)
KILN_EXTENSION_NAME(PJRT_Layouts_PJRT_Topology_GetDefaultLayout)
KILN_EXTENSION_NAME(PJRT_Layouts_PJRT_Executable_GetOutputLayouts)
KILN_EXTENSION_NAME(PJRT_Layouts_PJRT_Executable_GetParameterLayouts)
#undef KILN_EXTENSION_NAME
#define KILN_EXTENSION_ENTRY(name) &Entry<Name_##name, &Impl::name>::Call

// The extensions Kiln offers, chained from PJRT_Api::extension_start:
// Shardings (JAX reads partitioned executables' parameter and output
// shardings through it), Layouts (XLA's client reads executables' layouts
// through it instead of rebuilding HLO from the optimized program) and FFI
// (jax.ffi handlers and types; docs/ffi.md).
PJRT_Extension_Base* MakeExtensions() {
  static PJRT_FFI_Extension ffi = [] {
    PJRT_FFI_Extension extension{};
    extension.base.struct_size = PJRT_FFI_Extension_STRUCT_SIZE;
    extension.base.type = PJRT_Extension_Type_FFI;
    extension.base.next = nullptr;
    extension.type_register = KILN_EXTENSION_ENTRY(PJRT_FFI_Type_Register);
    extension.user_data_add = KILN_EXTENSION_ENTRY(PJRT_FFI_UserData_Add);
    extension.register_handler = KILN_EXTENSION_ENTRY(PJRT_FFI_Register_Handler);
    return extension;
  }();
  static PJRT_Layouts_Extension layouts = [] {
    PJRT_Layouts_Extension extension{};
    extension.base.struct_size = PJRT_Layouts_Extension_STRUCT_SIZE;
    extension.base.type = PJRT_Extension_Type_Layouts;
    extension.base.next = &ffi.base;
    extension.PJRT_Layouts_MemoryLayout_Destroy = KILN_EXTENSION_ENTRY(
        PJRT_Layouts_MemoryLayout_Destroy);
    extension.PJRT_Layouts_MemoryLayout_Serialize = KILN_EXTENSION_ENTRY(
        PJRT_Layouts_MemoryLayout_Serialize);
    extension.PJRT_Layouts_PJRT_Client_GetDefaultLayout = KILN_EXTENSION_ENTRY(
        PJRT_Layouts_PJRT_Client_GetDefaultLayout);
    extension.PJRT_Layouts_PJRT_Buffer_MemoryLayout = KILN_EXTENSION_ENTRY(
        PJRT_Layouts_PJRT_Buffer_MemoryLayout);
    extension.PJRT_Layouts_PJRT_Topology_GetDefaultLayout = KILN_EXTENSION_ENTRY(
        PJRT_Layouts_PJRT_Topology_GetDefaultLayout);
    extension.PJRT_Layouts_PJRT_Executable_GetOutputLayouts = KILN_EXTENSION_ENTRY(
        PJRT_Layouts_PJRT_Executable_GetOutputLayouts);
    extension.PJRT_Layouts_PJRT_Executable_GetParameterLayouts = KILN_EXTENSION_ENTRY(
        PJRT_Layouts_PJRT_Executable_GetParameterLayouts);
    return extension;
  }();
  static PJRT_Shardings_Extension shardings = [] {
    PJRT_Shardings_Extension extension{};
    extension.base.struct_size = PJRT_Shardings_Extension_STRUCT_SIZE;
    extension.base.type = PJRT_Extension_Type_Shardings;
    extension.base.next = &layouts.base;
    extension.PJRT_Shardings_PJRT_Executable_ParameterShardings = KILN_EXTENSION_ENTRY(
        PJRT_Shardings_PJRT_Executable_ParameterShardings);
    extension.PJRT_Shardings_PJRT_Executable_OutputShardings = KILN_EXTENSION_ENTRY(
        PJRT_Shardings_PJRT_Executable_OutputShardings);
    return extension;
  }();
  return &shardings.base;
}
#undef KILN_EXTENSION_ENTRY

PJRT_Api MakeApi() {
  PJRT_Api api{};
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  api.extension_start = MakeExtensions();
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.extension_start = nullptr;
  api.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;
#define KILN_SLOT(name) api.name = Pick_##name<Impl>();
#include "pjrt_api_slots.inc"
#undef KILN_SLOT
  return api;
}

// Every slot of the header's PJRT_Api is in the generated list.
#define KILN_SLOT(name) +1
constexpr size_t kSlotCount = 0
#include "pjrt_api_slots.inc"
    ;
#undef KILN_SLOT
static_assert(sizeof(PJRT_Api) == offsetof(PJRT_Api, pjrt_api_version) + sizeof(PJRT_Api_Version) +
                                      kSlotCount * sizeof(void*),
              "pjrt_api_slots.inc does not list every PJRT_Api slot");

}  // namespace
}  // namespace kiln::capi

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  static const PJRT_Api api = kiln::capi::MakeApi();
  return &api;
}

// Not part of PJRT: the host process lends Kiln functions by name
// (runtime/host_functions.h; Kiln's Python package passes SciPy's LAPACK,
// as jaxlib does for XLA's CPU backend). 1 when taken, 0 when the name is
// not one Kiln uses or either argument is null.
extern "C" __attribute__((visibility("default"))) int KilnRegisterHostFunction(const char* name,
                                                                               void* function) {
  if (name == nullptr) return 0;
  return kiln::runtime::RegisterHostFunction(name, function) ? 1 : 0;
}
