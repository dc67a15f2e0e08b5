// Programs the suite compiles and runs, and the helpers to compile and run
// them through the C API (PJRT_Client_Compile, PJRT_LoadedExecutable_Execute).
#ifndef KILN_TESTS_CONFORMANCE_PROGRAMS_H_
#define KILN_TESTS_CONFORMANCE_PROGRAMS_H_

#include <string>
#include <string_view>
#include <vector>

#include "plugin.h"

namespace conformance {

// y = x + x over tensor<2xf32>, as StableHLO text.
extern const std::string_view kAddProgram;

// The same function as MLIR bytecode of the StableHLO dialect itself (what
// jaxlib's MLIR bindings write; a portable artifact is bytecode of VHLO).
extern const std::string_view kAddProgramStablehloBytecode;

// A serialized CompileOptionsProto: executable_build_options (field 3) with
// num_replicas = 1 (field 4) and num_partitions = 1 (field 5).
extern const std::string_view kCompileOptions;

// A PJRT_Program over `code` in `format`; both must outlive it.
PJRT_Program MakeProgram(std::string_view format, std::string& code);

// PJRT_Client_Compile of `code` with kCompileOptions.
Status Compile(PJRT_Client* client, std::string_view format, std::string_view code,
               LoadedExecutablePtr* executable);

// What an Execute call carries besides its arguments (PJRT_ExecuteOptions).
struct ExecuteExtras {
  std::vector<int64_t> non_donatable;
  int launch_id = 0;
  PJRT_ExecuteContext* context = nullptr;
};

// One Execute of `loaded` (may be null) on one device with `arguments`
// (`num_args` of them); the output and completion event go to `result` and
// `done`. Returns the call's status.
Status ExecuteOnce(PJRT_LoadedExecutable* loaded, std::vector<PJRT_Buffer*> arguments,
                   size_t num_args, BufferPtr* result, EventPtr* done,
                   const ExecuteExtras& extras = {});

// Runs `loaded` (the addition program) on {1.5, -2} and returns its output.
std::vector<float> RunAddition(PJRT_Client* client, PJRT_Device* device,
                               PJRT_LoadedExecutable* loaded);

}  // namespace conformance

#endif  // KILN_TESTS_CONFORMANCE_PROGRAMS_H_
