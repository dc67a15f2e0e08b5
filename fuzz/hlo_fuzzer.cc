// libFuzzer target for the HLO reader (src/frontend/hlo): any input must
// give a module or an INVALID_ARGUMENT / UNIMPLEMENTED error, never a crash,
// a hang or unbounded memory. Seeded by `make test-fuzz` with the protos of
// build/test-data/hlo (tests/data/make_hlo_protos.py) and fuzz/corpus/hlo.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "frontend/hlo/hlo_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::StatusOr<kiln::ir::Module> module = kiln::frontend::hlo::ReadHloModule(
      std::span<const uint8_t>(data, size));
  if (!module.ok() && module.status().code() != kiln::StatusCode::kInvalidArgument &&
      module.status().code() != kiln::StatusCode::kUnimplemented) {
    std::abort();
  }
  return 0;
}
