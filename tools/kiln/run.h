// `kiln run`: compile and run a program on the host (tools/kiln/run.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tool {

// Runs `bytes` (the file `path`) with `inputs` as `dense<...> : tensor<...>`
// literals; returns the process exit code (0: ran and every check passed).
int Run(const std::string& path, const std::vector<uint8_t>& bytes,
        const std::vector<std::string>& inputs);

}  // namespace kiln::tool
