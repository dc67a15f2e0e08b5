// Reading KILN_* environment variables with validation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln {

// The variable's value, or nullopt when it is unset or empty.
std::optional<std::string> GetEnv(const char* name);

// Parses a whole decimal integer in [min, max]; `what` names the source in errors.
StatusOr<int64_t> ParseInt64(std::string_view text, std::string_view what, int64_t min,
                             int64_t max);

}  // namespace kiln
