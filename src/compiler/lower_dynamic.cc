// The dynamic-shape ops whose result type is static — what remains of them
// after JAX refines a shape-polymorphic program for concrete shapes. Their
// shape operand only restates the result type, so they lower as their static
// forms; a truly dynamic result is UNIMPLEMENTED (Kiln plans static shapes).
#include "compiler/lowering.h"

namespace kiln::compiler {
namespace {

Status LowerAsStatic(Lowering& lowering, const ir::Operation& op, ir::OpCode static_code) {
  const ir::Type& type = op.result(0)->type();
  if (!type.Is(ir::TypeKind::kTensor) || !type.HasStaticShape()) {
    return Unimplemented("a dynamic result shape; Kiln runs programs whose shapes are static "
                         "(JAX refines shape-polymorphic programs before compiling them)");
  }
  for (const LoweringRule& rule : ShapeLowerings()) {
    if (rule.code == static_code) return rule.lower(lowering, op);
  }
  return Internal("no lowering for the static form of ", op.name());
}

Status LowerDynamicIota(Lowering& lowering, const ir::Operation& op) {
  return LowerAsStatic(lowering, op, ir::OpCode::kIota);
}

Status LowerDynamicBroadcastInDim(Lowering& lowering, const ir::Operation& op) {
  return LowerAsStatic(lowering, op, ir::OpCode::kBroadcastInDim);
}

Status LowerDynamicReshape(Lowering& lowering, const ir::Operation& op) {
  return LowerAsStatic(lowering, op, ir::OpCode::kReshape);
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kDynamicIota, LowerDynamicIota},
    {ir::OpCode::kDynamicBroadcastInDim, LowerDynamicBroadcastInDim},
    {ir::OpCode::kDynamicReshape, LowerDynamicReshape},
};

}  // namespace

std::span<const LoweringRule> DynamicLowerings() { return kRules; }

}  // namespace kiln::compiler
