// OpCode: a number for every op name Kiln IR knows (op_names.def).
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln::ir {

enum class OpCode : uint16_t {
  kUnknown,
#define KILN_OP(name, spelling) k##name,
#include "ir/op_names.def"
#undef KILN_OP
};

// The OpCode of a full op name, or kUnknown.
OpCode LookupOpCode(std::string_view name);
// The full name of a known op ("stablehlo.add"); "" for kUnknown.
std::string_view OpCodeName(OpCode code);

}  // namespace kiln::ir
