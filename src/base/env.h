// Reading KILN_* environment variables with validation.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln {

// The variable's value, or nullopt when it is unset or empty.
std::optional<std::string> GetEnv(const char* name);

// Parses a whole decimal integer (an optional '-', then digits, nothing
// else) in [min, max]; INVALID_ARGUMENT naming `what` and the text found
// otherwise. The one way Kiln reads integers from input: std::stoll throws.
StatusOr<int64_t> ParseInt64(std::string_view text, std::string_view what,
                             int64_t min = std::numeric_limits<int64_t>::min(),
                             int64_t max = std::numeric_limits<int64_t>::max());

}  // namespace kiln
