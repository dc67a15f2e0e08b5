// `kiln run`: compile and run a program on the host (tools/kiln/run.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tool {

// Runs `bytes` (the file `path`) with `inputs` as `dense<...> : tensor<...>`
// literals and `infeed` entries (literals joined by ';') queued for its
// infeed ops; prints the results and the outfeed entries. Returns the process
// exit code (0: ran and every check passed).
int Run(const std::string& path, const std::vector<uint8_t>& bytes,
        const std::vector<std::string>& inputs, const std::vector<std::string>& infeed = {});

// Compiles `bytes` (the file `path`) and prints the plan of its entry
// function: one line per node in execution order (fused loops with their
// members, `=>` before a reduction folded into the loop), with operand and
// result shapes, then the intermediate memory. With `runs` > 0, runs the
// plan that many times on generated arguments (after one warm-up run) and
// prints each node's mean time and share first. Returns the exit code.
int Plan(const std::string& path, const std::vector<uint8_t>& bytes, int runs = 0);

}  // namespace kiln::tool
