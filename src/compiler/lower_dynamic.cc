// The dynamic-shape ops whose result type is static — what remains of them
// after JAX refines a shape-polymorphic program for concrete shapes. Their
// shape operand only restates the result type, so they lower as their static
// forms; a truly dynamic result is UNIMPLEMENTED (Kiln plans static shapes).
// dynamic_pad, real_dynamic_slice, dynamic_gather and dynamic_conv take
// their padding / bounds / slice sizes as tensors: when those are known at
// compile time (constants, or folded), the op becomes its static form with
// them as attributes.
#include <memory>

#include "compiler/lowering.h"
#include "kernels/gather.h"

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

// The integers of operand `i`, which must be known at compile time.
StatusOr<std::vector<int64_t>> ConstantInts(Lowering& lowering, const ir::Operation& op,
                                            size_t i, std::string_view what) {
  KILN_ASSIGN_OR_RETURN(ValueId id, lowering.Input(op, i));
  const ValueInfo& value = lowering.graph().values[static_cast<size_t>(id)];
  if (value.constant == nullptr) {
    return Unimplemented(op.name(), "'s ", what, " must be known when the program is compiled "
                         "(a constant): Kiln plans static shapes");
  }
  std::vector<int64_t> ints;
  for (int64_t k = 0; k < value.shape.NumElements(); ++k) {
    ints.push_back(kernels::LoadIndex(value.shape.element_type, value.constant->data(), k));
  }
  return ints;
}

// Lowers `op` as the static op `name`: operands `keep` of `op`, its result
// type, its attributes, plus `extra` attributes made from shape operands.
Status LowerWithAttributes(Lowering& lowering, const ir::Operation& op, std::string name,
                           std::initializer_list<size_t> keep,
                           std::vector<std::pair<std::string, ir::Attribute>> extra) {
  if (!op.result(0)->type().HasStaticShape()) {
    return Unimplemented("a dynamic result shape; Kiln runs programs whose shapes are static");
  }
  auto made = std::make_unique<ir::Operation>(std::move(name), op.location());
  for (size_t i : keep) made->AddOperand(op.operand(i));
  made->AddResult(op.result(0)->type());
  for (const ir::NamedAttribute& attribute : op.attributes()) {
    made->SetAttr(attribute.name, attribute.value);
  }
  for (auto& [attribute_name, value] : extra) made->SetAttr(attribute_name, std::move(value));
  // The shape operands were not checked against the operands' shapes yet:
  // LowerAdopted verifies the static form first.
  KILN_ASSIGN_OR_RETURN(const ir::Operation* static_op, lowering.LowerAdopted(std::move(made)));
  KILN_ASSIGN_OR_RETURN(ValueId result, lowering.Lookup(static_op->result(0)));
  lowering.Bind(op.result(0), result);
  return Status::Ok();
}

// dynamic_pad(operand, padding_value, low, high, interior) -> pad.
Status LowerDynamicPad(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(auto low, ConstantInts(lowering, op, 2, "edge_padding_low"));
  KILN_ASSIGN_OR_RETURN(auto high, ConstantInts(lowering, op, 3, "edge_padding_high"));
  KILN_ASSIGN_OR_RETURN(auto interior, ConstantInts(lowering, op, 4, "interior_padding"));
  return LowerWithAttributes(lowering, op, "stablehlo.pad", {0, 1},
                             {{"edge_padding_low", ir::Attribute::DenseI64Array(low)},
                              {"edge_padding_high", ir::Attribute::DenseI64Array(high)},
                              {"interior_padding", ir::Attribute::DenseI64Array(interior)}});
}

// real_dynamic_slice(operand, start, limit, strides) -> slice.
Status LowerRealDynamicSlice(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(auto start, ConstantInts(lowering, op, 1, "start_indices"));
  KILN_ASSIGN_OR_RETURN(auto limit, ConstantInts(lowering, op, 2, "limit_indices"));
  KILN_ASSIGN_OR_RETURN(auto strides, ConstantInts(lowering, op, 3, "strides"));
  return LowerWithAttributes(lowering, op, "stablehlo.slice", {0},
                             {{"start_indices", ir::Attribute::DenseI64Array(start)},
                              {"limit_indices", ir::Attribute::DenseI64Array(limit)},
                              {"strides", ir::Attribute::DenseI64Array(strides)}});
}

// dynamic_gather(operand, start_indices, slice_sizes) -> gather.
Status LowerDynamicGather(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(auto sizes, ConstantInts(lowering, op, 2, "slice_sizes"));
  return LowerWithAttributes(lowering, op, "stablehlo.gather", {0, 1},
                             {{"slice_sizes", ir::Attribute::DenseI64Array(sizes)}});
}

// dynamic_conv(lhs, rhs, padding [spatial, 2]) -> convolution.
Status LowerDynamicConv(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(auto padding, ConstantInts(lowering, op, 2, "padding"));
  return LowerWithAttributes(lowering, op, "stablehlo.convolution", {0, 1},
                             {{"padding", ir::Attribute::DenseI64Array(padding)}});
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kDynamicIota, LowerDynamicIota},
    {ir::OpCode::kDynamicBroadcastInDim, LowerDynamicBroadcastInDim},
    {ir::OpCode::kDynamicReshape, LowerDynamicReshape},
    {ir::OpCode::kDynamicPad, LowerDynamicPad},
    {ir::OpCode::kRealDynamicSlice, LowerRealDynamicSlice},
    {ir::OpCode::kDynamicGather, LowerDynamicGather},
    {ir::OpCode::kDynamicConv, LowerDynamicConv},
};

}  // namespace

std::span<const LoweringRule> DynamicLowerings() { return kRules; }

}  // namespace kiln::compiler
