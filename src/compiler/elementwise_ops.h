// The elementwise kernel op for each StableHLO elementwise op, shared by the
// elementwise rules (lower_elementwise.cc) and batched region bodies
// (scalar_program.cc).
#pragma once

#include <optional>
#include <string_view>

#include "base/status.h"
#include "ir/op_names.h"
#include "kernels/elementwise.h"

namespace kiln::compiler {

// The unary / binary kernel op of an op code; nullopt for other ops.
std::optional<kernels::UnaryOp> UnaryOpOf(ir::OpCode code);
std::optional<kernels::BinaryOp> BinaryOpOf(ir::OpCode code);

// A comparison_direction spelling ("LT") as the kernels' direction.
StatusOr<kernels::CompareDirection> CompareDirectionOf(std::string_view name);

}  // namespace kiln::compiler
