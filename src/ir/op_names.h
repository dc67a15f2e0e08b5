// OpCode: a number for every op Kiln IR knows (the rows of ir/ops.def).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln::ir {

enum class OpCode : uint16_t {
  kUnknown,
#define KILN_OP(name, ...) k##name,
#define KILN_UNARY(name, ...) k##name,
#define KILN_BINARY(name, ...) k##name,
#define KILN_SYNTAX_ONLY(...)
#include "ir/ops.def"
#undef KILN_OP
#undef KILN_UNARY
#undef KILN_BINARY
#undef KILN_SYNTAX_ONLY
  kEnd,  // not an op: the number of OpCodes
};

// The number of OpCodes, kUnknown included: the size of tables indexed by op.
inline constexpr size_t kNumOpCodes = static_cast<size_t>(OpCode::kEnd);

// The OpCode of a full op name, or kUnknown.
OpCode LookupOpCode(std::string_view name);
// The full name of a known op ("stablehlo.add"); "" for kUnknown.
std::string_view OpCodeName(OpCode code);

}  // namespace kiln::ir
