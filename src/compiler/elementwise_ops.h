// The elementwise kernel op for each StableHLO elementwise op, shared by the
// elementwise rules (lower_elementwise.cc) and batched region bodies
// (scalar_program.cc).
#pragma once

#include <optional>
#include <string_view>

#include "base/element_type.h"
#include "base/status.h"
#include "ir/op_names.h"
#include "kernels/elementwise.h"
#include "kernels/reduce.h"

namespace kiln::compiler {

// The unary / binary kernel op of an op code; nullopt for other ops.
std::optional<kernels::UnaryOp> UnaryOpOf(ir::OpCode code);
std::optional<kernels::BinaryOp> BinaryOpOf(ir::OpCode code);

// The binary kernel op that folds like reduction op `op`.
kernels::BinaryOp BinaryOf(kernels::ReduceOp op);

// Whether the elementwise kernels compute in `type`: pred, the integers
// (sub-byte ones included), f16, bf16, f32, f64, c64, c128; not the f8
// family and other narrow floats.
bool ElementwiseKernelType(ElementType type);

// A comparison_direction spelling ("LT") as the kernels' direction.
StatusOr<kernels::CompareDirection> CompareDirectionOf(std::string_view name);

}  // namespace kiln::compiler
