// `kiln run`: compile and run a program on the host (tools/kiln/run.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::tool {

struct RunOptions {
  // The entry's arguments, `dense<...> : tensor<...>` literals.
  std::vector<std::string> inputs;
  // Entries for the program's infeed ops (literals joined by ';').
  std::vector<std::string> infeed;
  // Results (and interpreter.print values) in the StableHLO interpreter's
  // format (`tensor<2xi32> {` / `  [3, 3]` / `}`) rather than as dense
  // literals.
  bool interpreter_format = false;
  // Where interpreter.probe writes and check.expect_serialized_eq reads.
  std::string probe_dir;
};

// Runs `bytes` (the file `path`): prints the results, the outfeed entries
// and, for files of `// -----` separated cases, each case's checks. Returns
// the process exit code (0: ran and every check passed).
int Run(const std::string& path, const std::vector<uint8_t>& bytes, const RunOptions& options);

// The literals of the StableHLO interpreter's `--args=[A, B, ...]`; an
// error for text that is not a bracketed list.
StatusOr<std::vector<std::string>> SplitArgsList(std::string_view text);

// Compiles `bytes` (the file `path`) and prints the plan of its entry
// function: one line per node in execution order (fused loops with their
// members, `=>` before a reduction folded into the loop), with operand and
// result shapes, then the intermediate memory. With `runs` > 0, runs the
// plan that many times on generated arguments (after one warm-up run) and
// prints each node's mean time and share first. Returns the exit code.
// `partitions` > 0: plan for that many devices (SPMD partitioning on),
// else for as many as the program's meshes or mhlo.num_partitions say.
int Plan(const std::string& path, const std::vector<uint8_t>& bytes, int runs = 0,
         int64_t partitions = 0);
// How backend `backend` (KILN_BACKEND's names) splits the program's plan
// with the host kernels: the segments, each side's nodes, and the values
// copied between the device's memory and the host's; `partitions` as Plan.
int PlanForBackend(const std::string& path, const std::vector<uint8_t>& bytes,
                   const std::string& backend, int64_t partitions = 0);

}  // namespace kiln::tool
