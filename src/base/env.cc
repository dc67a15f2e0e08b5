#include "base/env.h"

#include <charconv>
#include <cstdlib>

namespace kiln {

std::optional<std::string> GetEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

StatusOr<int64_t> ParseInt64(std::string_view text, std::string_view what, int64_t min,
                             int64_t max) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    return InvalidArgument(what, ": expected a decimal integer that fits in 64 bits, found \"",
                           text, "\"");
  }
  if (text.empty() || ec != std::errc() || ptr != end) {
    return InvalidArgument(what, ": expected a decimal integer, found \"", text, "\"");
  }
  if (value < min || value > max) {
    return InvalidArgument(what, ": expected an integer in [", min, ", ", max, "], found ", value);
  }
  return value;
}

}  // namespace kiln
