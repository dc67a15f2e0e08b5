// The steps of a contraction's lowering (lower_linalg.cc), shared with the
// lowerings built from them (chlo.ragged_dot, lower_ragged_dot.cc).
#pragma once

#include <span>
#include <vector>

#include "compiler/lowering.h"

namespace kiln::compiler {

// The type a contraction with result type `result` computes in: narrow
// floats in f32, sub-byte integers in s32 (both converted back after),
// everything else in the result type.
ElementType ComputeTypeFor(ElementType result);

// `input` with its dimensions permuted: output dimension j is input
// dimension permutation[j] (a strided copy, or a view when nothing moves).
StatusOr<ValueId> EmitPermute(Lowering& lowering, const ir::Operation& op, ValueId input,
                              std::span<const int64_t> permutation);

// `input` converted to `type` (no node when it already is).
StatusOr<ValueId> EmitConvert(Lowering& lowering, const ir::Operation& op, ValueId input,
                              ElementType type);

// out = contraction of lhs and rhs over the given dimensions, bound to
// `bound`; its shape `out` is [batch..., lhs free..., rhs free...], as
// dot_general's.
Status EmitContraction(Lowering& lowering, const ir::Operation& op, ValueId lhs, ValueId rhs,
                       const Shape& out, std::span<const int64_t> lhs_batch,
                       std::span<const int64_t> lhs_contract, std::span<const int64_t> rhs_batch,
                       std::span<const int64_t> rhs_contract, ir::Value* bound);

}  // namespace kiln::compiler
