// chlo ops that StableHLO text may carry and that are compositions of
// StableHLO ops: the implicitly broadcasting binary ops (chlo.broadcast_*),
// chlo.broadcast_select and chlo.constant_like. Each is rewritten into the
// StableHLO ops it stands for (broadcast_in_dim of the operands that need
// it, then the plain op) and those are lowered with their own rules, so they
// share their kernels, folding and checks. The elementwise chlo ops with
// kernels of their own are in lower_elementwise.cc, chlo.top_k in
// lower_solvers.cc.
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "compiler/lowering.h"

namespace kiln::compiler {
namespace {

struct BroadcastEntry {
  ir::OpCode code;
  const char* op;  // the op applied once the operands have the result's shape
};

constexpr BroadcastEntry kBroadcastOps[] = {
    {ir::OpCode::kChloBroadcastAdd, "stablehlo.add"},
    {ir::OpCode::kChloBroadcastAtan2, "stablehlo.atan2"},
    {ir::OpCode::kChloBroadcastDivide, "stablehlo.divide"},
    {ir::OpCode::kChloBroadcastMaximum, "stablehlo.maximum"},
    {ir::OpCode::kChloBroadcastMinimum, "stablehlo.minimum"},
    {ir::OpCode::kChloBroadcastMultiply, "stablehlo.multiply"},
    {ir::OpCode::kChloBroadcastNextAfter, "chlo.next_after"},
    {ir::OpCode::kChloBroadcastPolygamma, "chlo.polygamma"},
    {ir::OpCode::kChloBroadcastPower, "stablehlo.power"},
    {ir::OpCode::kChloBroadcastRemainder, "stablehlo.remainder"},
    {ir::OpCode::kChloBroadcastShiftLeft, "stablehlo.shift_left"},
    {ir::OpCode::kChloBroadcastShiftRightArithmetic, "stablehlo.shift_right_arithmetic"},
    {ir::OpCode::kChloBroadcastShiftRightLogical, "stablehlo.shift_right_logical"},
    {ir::OpCode::kChloBroadcastSubtract, "stablehlo.subtract"},
    {ir::OpCode::kChloBroadcastZeta, "chlo.zeta"},
    {ir::OpCode::kChloBroadcastAnd, "stablehlo.and"},
    {ir::OpCode::kChloBroadcastOr, "stablehlo.or"},
    {ir::OpCode::kChloBroadcastXor, "stablehlo.xor"},
    {ir::OpCode::kChloBroadcastComplex, "stablehlo.complex"},
    {ir::OpCode::kChloBroadcastCompare, "stablehlo.compare"},
};

StatusOr<std::vector<int64_t>> StaticDims(const ir::Operation& op) {
  const ir::Type& type = op.result(0)->type();
  if (!type.HasStaticShape()) {
    return Unimplemented("a dynamic result shape; Kiln runs programs whose shapes are static");
  }
  return type.dims();
}

// Operand `i` of `op` at the shape `dims`: the operand itself when it has
// that shape, else a broadcast_in_dim of it. `mapping` (broadcast_dimensions,
// for an operand of lower rank than the result) says which result dimension
// each operand dimension becomes; without it the trailing ones line up, as
// in numpy.
StatusOr<ir::Value*> Broadcast(Lowering& lowering, const ir::Operation& op, size_t i,
                               const std::vector<int64_t>& dims,
                               const std::optional<std::vector<int64_t>>& mapping) {
  ir::Value* operand = op.operand(i);
  const ir::Type& type = operand->type();
  if (!type.HasStaticShape()) {
    return Unimplemented("operand ", i, " has a dynamic shape; Kiln runs static shapes");
  }
  if (type.dims() == dims) return operand;
  const size_t rank = type.dims().size();
  std::vector<int64_t> to;
  if (rank == dims.size() || !mapping) {
    if (rank > dims.size()) {
      return InvalidArgument("operand ", i, " has rank ", rank, ", more than the result's ",
                             dims.size());
    }
    for (size_t d = 0; d < rank; ++d) to.push_back(static_cast<int64_t>(dims.size() - rank + d));
  } else {
    if (mapping->size() != rank) {
      return InvalidArgument("broadcast_dimensions has ", mapping->size(), " entries; operand ", i,
                             " has rank ", rank);
    }
    to = *mapping;
  }
  auto made = std::make_unique<ir::Operation>("stablehlo.broadcast_in_dim", op.location());
  made->AddOperand(operand);
  made->AddResult(ir::Type::Tensor(type.element(), dims));
  made->SetAttr("broadcast_dimensions", ir::Attribute::DenseI64Array(std::move(to)));
  KILN_ASSIGN_OR_RETURN(const ir::Operation* broadcast, lowering.LowerAdopted(std::move(made)));
  return broadcast->result(0);
}

// Makes `name` from `operands` with `op`'s result type and the attributes
// `op` has other than broadcast_dimensions, lowers it and binds `op`'s
// result to its result.
Status LowerAs(Lowering& lowering, const ir::Operation& op, const char* name,
               const std::vector<ir::Value*>& operands) {
  auto made = std::make_unique<ir::Operation>(name, op.location());
  for (ir::Value* operand : operands) made->AddOperand(operand);
  made->AddResult(op.result(0)->type());
  for (const ir::NamedAttribute& attribute : op.attributes()) {
    if (attribute.name != "broadcast_dimensions") made->SetAttr(attribute.name, attribute.value);
  }
  KILN_ASSIGN_OR_RETURN(const ir::Operation* lowered, lowering.LowerAdopted(std::move(made)));
  KILN_ASSIGN_OR_RETURN(ValueId result, lowering.Lookup(lowered->result(0)));
  lowering.Bind(op.result(0), result);
  return Status::Ok();
}

Status LowerBroadcastBinary(Lowering& lowering, const ir::Operation& op) {
  const char* name = nullptr;
  for (const BroadcastEntry& entry : kBroadcastOps) {
    if (entry.code == op.code()) name = entry.op;
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(op));
  std::optional<std::vector<int64_t>> mapping;
  if (ir::Attribute attribute = op.GetAttr("broadcast_dimensions")) {
    mapping = ir::IntegersOf(attribute);
    if (!mapping) return InvalidArgument("broadcast_dimensions must be a list of integers");
  }
  KILN_ASSIGN_OR_RETURN(auto* lhs, Broadcast(lowering, op, 0, dims, mapping));
  KILN_ASSIGN_OR_RETURN(auto* rhs, Broadcast(lowering, op, 1, dims, mapping));
  return LowerAs(lowering, op, name, {lhs, rhs});
}

// broadcast_select: all three operands broadcast numpy style.
Status LowerBroadcastSelect(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(op));
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < 3; ++i) {
    KILN_ASSIGN_OR_RETURN(auto* operand, Broadcast(lowering, op, i, dims, std::nullopt));
    operands.push_back(operand);
  }
  return LowerAs(lowering, op, "stablehlo.select", operands);
}

// constant_like: `value` (an integer or float attribute) made a 0-d
// constant of its own kind (i64 or f64), converted to the result's element
// type and broadcast to the result's shape; the folder makes it one
// constant.
Status LowerConstantLike(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(op));
  ir::Attribute value = op.GetAttr("value");
  std::vector<uint8_t> bytes(8);
  ir::Type element;
  if (value.Is(ir::AttrKind::kInteger)) {
    std::memcpy(bytes.data(), &value->int_value, 8);
    element = ir::Type::Element(ElementType::kS64);
  } else if (value.Is(ir::AttrKind::kFloat)) {
    std::memcpy(bytes.data(), &value->float_value, 8);
    element = ir::Type::Element(ElementType::kF64);
  } else if (value.Is(ir::AttrKind::kBool)) {
    const int64_t bit = value->bool_value ? 1 : 0;
    std::memcpy(bytes.data(), &bit, 8);
    element = ir::Type::Element(ElementType::kS64);
  } else {
    return Unimplemented("chlo.constant_like with a value that is not an integer, float or "
                         "bool attribute");
  }
  const ir::Type scalar = ir::Type::Tensor(element, {});
  auto constant = std::make_unique<ir::Operation>("stablehlo.constant", op.location());
  constant->AddResult(scalar);
  constant->SetAttr("value", ir::Attribute::DenseElements(scalar, std::move(bytes), false));
  KILN_ASSIGN_OR_RETURN(const ir::Operation* made, lowering.LowerAdopted(std::move(constant)));

  auto convert = std::make_unique<ir::Operation>("stablehlo.convert", op.location());
  convert->AddOperand(made->result(0));
  convert->AddResult(ir::Type::Tensor(op.result(0)->type().element(), {}));
  KILN_ASSIGN_OR_RETURN(made, lowering.LowerAdopted(std::move(convert)));

  auto broadcast = std::make_unique<ir::Operation>("stablehlo.broadcast_in_dim", op.location());
  broadcast->AddOperand(made->result(0));
  broadcast->AddResult(op.result(0)->type());
  broadcast->SetAttr("broadcast_dimensions", ir::Attribute::DenseI64Array({}));
  KILN_ASSIGN_OR_RETURN(made, lowering.LowerAdopted(std::move(broadcast)));
  KILN_ASSIGN_OR_RETURN(ValueId result, lowering.Lookup(made->result(0)));
  lowering.Bind(op.result(0), result);
  return Status::Ok();
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kChloBroadcastAdd, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastAtan2, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastDivide, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastMaximum, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastMinimum, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastMultiply, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastNextAfter, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastPolygamma, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastPower, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastRemainder, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastShiftLeft, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastShiftRightArithmetic, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastShiftRightLogical, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastSubtract, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastZeta, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastAnd, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastOr, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastXor, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastComplex, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastCompare, LowerBroadcastBinary},
    {ir::OpCode::kChloBroadcastSelect, LowerBroadcastSelect},
    {ir::OpCode::kChloConstantLike, LowerConstantLike},
};

}  // namespace

std::span<const LoweringRule> ChloLowerings() { return kRules; }

}  // namespace kiln::compiler
