#include "ir/op_names.h"

#include <string>
#include <unordered_map>

namespace kiln::ir {
namespace {

constexpr std::string_view kNames[] = {
    "",
#define KILN_OP(name, spelling, ...) spelling,
#define KILN_UNARY(name, spelling, ...) spelling,
#define KILN_BINARY(name, spelling, ...) spelling,
#define KILN_SYNTAX_ONLY(...)
#include "ir/ops.def"
#undef KILN_OP
#undef KILN_UNARY
#undef KILN_BINARY
#undef KILN_SYNTAX_ONLY
};

}  // namespace

OpCode LookupOpCode(std::string_view name) {
  static const auto* table = [] {
    auto* map = new std::unordered_map<std::string_view, OpCode>;
    for (size_t i = 1; i < std::size(kNames); ++i) map->emplace(kNames[i], static_cast<OpCode>(i));
    return map;
  }();
  auto it = table->find(name);
  return it == table->end() ? OpCode::kUnknown : it->second;
}

std::string_view OpCodeName(OpCode code) {
  auto index = static_cast<size_t>(code);
  return index < std::size(kNames) ? kNames[index] : "";
}

}  // namespace kiln::ir
