// libFuzzer target for the StableHLO text parser (src/frontend/text). Any
// input must give a module or an INVALID_ARGUMENT, never a crash, a hang or
// unbounded memory; a module it accepts must print (pretty and generic) and
// parse back to a module that prints the same.
//
// Not wired into CMake yet. To build and run with clang 15 (from /work/main):
//
//   clang++-15 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     fuzz/text_parser_fuzzer.cc src/frontend/text/*.cc src/ir/attribute.cc \
//     src/ir/float_format.cc src/ir/module.cc src/ir/op_names.cc src/ir/op_syntax.cc \
//     src/ir/type.cc src/ir/printer.cc src/ir/printer_attributes.cc src/ir/printer_ops.cc \
//     src/ir/printer_region_ops.cc src/base/status.cc src/base/element_type.cc \
//     -o /tmp/text_parser_fuzzer
//   mkdir -p /tmp/text-corpus
//   /tmp/text_parser_fuzzer /tmp/text-corpus fuzz/corpus/text tests/data/text \
//     tests/data/text_errors -max_total_time=60 -rss_limit_mb=2048 -timeout=10 \
//     -max_len=65536
//
// The first corpus directory collects new inputs; the others seed it. Inputs
// that once crashed are kept in fuzz/corpus/text and replayed by the unit test
// TextFuzzRegressionTest.SavedInputsParseOrFailCleanly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "frontend/text/parser.h"
#include "ir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kiln::StatusOr<kiln::ir::Module> module = kiln::frontend::text::ParseModule(text);
  if (!module.ok()) {
    if (module.status().code() != kiln::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  for (bool generic : {false, true}) {
    kiln::ir::PrintOptions options;
    options.generic = generic;
    options.locations = true;
    std::string printed = kiln::ir::PrintModule(*module, options);
    kiln::StatusOr<kiln::ir::Module> again = kiln::frontend::text::ParseModule(printed);
    // What Kiln prints, Kiln must read, and print the same way again.
    if (!again.ok() || kiln::ir::PrintModule(*again, options) != printed) std::abort();
  }
  return 0;
}
