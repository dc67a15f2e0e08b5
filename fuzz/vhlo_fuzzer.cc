// libFuzzer target for the VHLO reader (src/frontend/vhlo) on top of the
// bytecode container reader. Any input must give a module or an
// INVALID_ARGUMENT / UNIMPLEMENTED error, never a crash, a hang or
// unbounded memory. Built by `make test-fuzz` (fuzz/CMakeLists.txt), seeded
// with ../shared/corpus/vhlo and tests/data/artifacts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "frontend/vhlo/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  kiln::StatusOr<kiln::ir::Module> module = kiln::frontend::vhlo::ReadPortableArtifact(bytes);
  if (module.ok()) {
    if (module->op().name() != "builtin.module") std::abort();
  } else if (module.status().code() != kiln::StatusCode::kInvalidArgument &&
             module.status().code() != kiln::StatusCode::kUnimplemented) {
    std::abort();
  }
  kiln::StatusOr<kiln::frontend::vhlo::ArtifactInfo> info =
      kiln::frontend::vhlo::InspectPortableArtifact(bytes);
  if (!info.ok() && info.status().code() != kiln::StatusCode::kInvalidArgument) std::abort();
  return 0;
}
