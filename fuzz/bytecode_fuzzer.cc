// libFuzzer target for the MLIR bytecode container reader
// (src/frontend/bytecode). Any input must give a File or an INVALID_ARGUMENT,
// never a crash, a hang or unbounded memory; a File it accepts must also dump.
//
// Not wired into CMake yet. To build and run with clang 15 (from /work/main):
//
//   clang++-15 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     fuzz/bytecode_fuzzer.cc src/frontend/bytecode/*.cc src/base/status.cc \
//     -o /tmp/bytecode_fuzzer
//   mkdir -p /tmp/bytecode-corpus
//   /tmp/bytecode_fuzzer /tmp/bytecode-corpus fuzz/corpus/bytecode ../shared/corpus/vhlo \
//     -max_total_time=60 -rss_limit_mb=2048 -timeout=10
//
// The first corpus directory collects new inputs; the others seed it. Inputs
// that once crashed are kept in fuzz/corpus/bytecode and replayed by the unit
// test BytecodeCorpusTest.FuzzerRegressionInputs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "frontend/bytecode/file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kiln::frontend::bytecode::File;
  using kiln::frontend::bytecode::ReadFile;
  kiln::StatusOr<File> file = ReadFile(std::span<const uint8_t>(data, size));
  if (file.ok()) {
    (void)kiln::frontend::bytecode::DumpFile(*file);
    // Spot-check the promise that every stored index is in range.
    for (const File::Operation& op : file->operations) {
      if (op.name >= file->op_names.size() || op.location >= file->attributes.size()) std::abort();
      for (uint64_t id : op.operand_ids) {
        if (id >= file->num_value_ids) std::abort();
      }
    }
  } else if (file.status().code() != kiln::StatusCode::kInvalidArgument) {
    std::abort();
  }
  return 0;
}
