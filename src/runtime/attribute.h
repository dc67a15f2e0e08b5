// A named value: the runtime form of PJRT_NamedValue (attributes, options).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace kiln::runtime {

using AttributeValue = std::variant<std::string, int64_t, std::vector<int64_t>, float, bool>;

struct Attribute {
  std::string name;
  AttributeValue value;
};

}  // namespace kiln::runtime
