// A table of every function slot of PJRT_Api (from api_functions.inc), so
// that tests can check and call each slot generically.
#ifndef KILN_TESTS_CONFORMANCE_API_FUNCTIONS_H_
#define KILN_TESTS_CONFORMANCE_API_FUNCTIONS_H_

#include <cstddef>
#include <ostream>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"

namespace conformance {

// One function slot of PJRT_Api.
struct ApiFunction {
  const char* name;   // e.g. "PJRT_Client_Devices"
  size_t offset;      // of the slot in PJRT_Api
  size_t args_size;   // the current header's name##_Args_STRUCT_SIZE
  bool returns_void;  // PJRT_Error_Destroy and PJRT_Error_Message
  // Calls the loaded plugin's function with `args` as its args struct; the
  // error, if any, is the caller's (null for void functions).
  PJRT_Error* (*call)(void* args);
};

// Every slot of the current header's PJRT_Api, in table order.
const std::vector<ApiFunction>& ApiFunctions();

// The largest sizeof(name##_Args): storage big enough for any args struct.
constexpr size_t kMaxArgsSize = 512;

// Names the parameter in gtest output.
void PrintTo(const ApiFunction& function, std::ostream* os);

}  // namespace conformance

#endif  // KILN_TESTS_CONFORMANCE_API_FUNCTIONS_H_
