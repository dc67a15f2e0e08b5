#include "api_functions.h"

#include "plugin.h"

namespace conformance {

const std::vector<ApiFunction>& ApiFunctions() {
#define CONFORMANCE_API_FUNCTION(name)                              \
  {#name, offsetof(PJRT_Api, name), name##_Args_STRUCT_SIZE, false, \
   [](void* args) -> PJRT_Error* { return api()->name(static_cast<name##_Args*>(args)); }},
#define CONFORMANCE_API_VOID_FUNCTION(name)                                                        \
  {#name, offsetof(PJRT_Api, name), name##_Args_STRUCT_SIZE, true, [](void* args) -> PJRT_Error* { \
     api()->name(static_cast<name##_Args*>(args));                                                 \
     return nullptr;                                                                               \
   }},
  static const std::vector<ApiFunction> functions = {
#include "api_functions.inc"
  };
#undef CONFORMANCE_API_FUNCTION
#undef CONFORMANCE_API_VOID_FUNCTION
  return functions;
}

// Every args struct fits in kMaxArgsSize bytes.
#define CONFORMANCE_API_FUNCTION(name) \
  static_assert(sizeof(name##_Args) <= kMaxArgsSize, #name "_Args too big");
#define CONFORMANCE_API_VOID_FUNCTION(name) CONFORMANCE_API_FUNCTION(name)
#include "api_functions.inc"
#undef CONFORMANCE_API_FUNCTION
#undef CONFORMANCE_API_VOID_FUNCTION

// The list covers the whole table: one entry per slot of the header's PJRT_Api.
constexpr size_t kListedFunctions = 0
#define CONFORMANCE_API_FUNCTION(name) +1
#define CONFORMANCE_API_VOID_FUNCTION(name) +1
#include "api_functions.inc"
#undef CONFORMANCE_API_FUNCTION
#undef CONFORMANCE_API_VOID_FUNCTION
    ;
static_assert(kListedFunctions * sizeof(void*) ==
                  PJRT_Api_STRUCT_SIZE - offsetof(PJRT_Api, PJRT_Error_Destroy),
              "api_functions.inc is out of date with pjrt_c_api.h");

void PrintTo(const ApiFunction& function, std::ostream* os) { *os << function.name; }

}  // namespace conformance
