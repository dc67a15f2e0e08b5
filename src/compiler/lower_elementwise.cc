// Lowering of the elementwise ops onto kernels/elementwise.h.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "compiler/elementwise_ops.h"
#include "compiler/lowering.h"
#include "compiler/plan_listing.h"
#include "kernels/elementwise.h"
#include "kernels/tile_f32.h"

namespace kiln::compiler {
namespace {

using kernels::BinaryOp;
using kernels::UnaryOp;

struct UnaryEntry {
  ir::OpCode code;
  UnaryOp op;
};
// The kernel of each elementwise row of ops.def.
#define KILN_OP(...)
#define KILN_SYNTAX_ONLY(...)
#define KILN_BINARY(...)
#define KILN_UNARY(name, spelling, form, attributes, classes, result, kernel, traits) \
  {ir::OpCode::k##name, UnaryOp::kernel},
constexpr UnaryEntry kUnary[] = {
#include "ir/ops.def"
};
#undef KILN_UNARY
#undef KILN_BINARY
#define KILN_UNARY(...)
#define KILN_BINARY(name, spelling, form, attributes, classes, result, kernel, traits) \
  {ir::OpCode::k##name, BinaryOp::kernel},

struct BinaryEntry {
  ir::OpCode code;
  BinaryOp op;
};
constexpr BinaryEntry kBinary[] = {
#include "ir/ops.def"
};
#undef KILN_OP
#undef KILN_SYNTAX_ONLY
#undef KILN_UNARY
#undef KILN_BINARY

// What fused loops know of a map of one op on `type` (Pointwise::F32):
// nothing unless the type is f32 and the op has a tile kernel.
Pointwise::F32 F32Map(ElementType type, Pointwise::F32::Kind kind, uint8_t op,
                      kernels::TileKernel tile) {
  if (type != ElementType::kF32 || tile == nullptr) return {};
  return {kind, op, tile};
}

// `kind` over operand 0, element for element.
Status EmitUnary(Lowering& lowering, const ir::Operation& op, UnaryOp kind) {
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  const ElementType type = shape.element_type;
  return lowering.EmitPointwise(
      op,
      [kind, type](std::span<const void* const> in, void* out, int64_t n) {
        return kernels::Unary(kind, type, in[0], out, n);
      },
      F32Map(type, Pointwise::F32::Kind::kUnary, static_cast<uint8_t>(kind),
             kernels::TileUnaryF32(kind)));
}

Status LowerUnary(Lowering& lowering, const ir::Operation& op) {
  UnaryOp kind{};
  for (const UnaryEntry& entry : kUnary) {
    if (entry.code == op.code()) kind = entry.op;
  }
  return EmitUnary(lowering, op, kind);
}

}  // namespace

StatusOr<bool> LowerMhloElementwiseCall(Lowering& lowering, const ir::Operation& op,
                                        std::string_view target) {
  struct MhloEntry {
    std::string_view target;
    UnaryOp op;
  };
  static constexpr MhloEntry kMhloUnary[] = {
      {"mhlo.erf", UnaryOp::kErf},     {"mhlo.acos", UnaryOp::kAcos},
      {"mhlo.acosh", UnaryOp::kAcosh}, {"mhlo.asin", UnaryOp::kAsin},
      {"mhlo.asinh", UnaryOp::kAsinh}, {"mhlo.atan", UnaryOp::kAtan},
      {"mhlo.atanh", UnaryOp::kAtanh}, {"mhlo.cosh", UnaryOp::kCosh},
      {"mhlo.sinh", UnaryOp::kSinh},   {"mhlo.tan", UnaryOp::kTan}};
  const MhloEntry* entry = nullptr;
  for (const MhloEntry& candidate : kMhloUnary) {
    if (candidate.target == target) entry = &candidate;
  }
  if (entry == nullptr) return false;
  if (op.operands().size() != 1 || op.num_results() != 1) {
    return InvalidArgument("custom_call @", target,
                           " takes one operand and gives one result, "
                           "found ",
                           op.operands().size(), " operands and ", op.num_results(), " results");
  }
  KILN_RETURN_IF_ERROR(EmitUnary(lowering, op, entry->op));
  return true;
}

namespace {

Status LowerBinary(Lowering& lowering, const ir::Operation& op) {
  BinaryOp kind{};
  for (const BinaryEntry& entry : kBinary) {
    if (entry.code == op.code()) kind = entry.op;
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  const ElementType type = shape.element_type;
  return lowering.EmitPointwise(
      op,
      [kind, type](std::span<const void* const> in, void* out, int64_t n) {
        return kernels::Binary(kind, type, in[0], in[1], out, n);
      },
      F32Map(type, Pointwise::F32::Kind::kBinary, static_cast<uint8_t>(kind),
             kernels::TileBinaryF32(kind)));
}

// A division whose divisor is a broadcast (of a smaller array, a scalar,
// a constant) or a constant, in a real floating type, becomes a
// multiplication by the divisor's reciprocal computed before the
// broadcast: one division per divisor element instead of per result
// element. XLA's CPU backend does the same (docs/framework-notes.md), so
// results also match it to the bit more often than exact division would.
// Not for bf16: XLA computes it in f32 there, and its reciprocal is never
// rounded to bf16, which gives exact division's bf16 results; rounding the
// reciprocal to bf16 differed from them in a quarter of the elements.
// Null when the rewrite does not apply.
StatusOr<const ir::Operation*> DivideAsReciprocalMultiply(Lowering& lowering,
                                                          const ir::Operation& op) {
  const ir::Type& type = op.result(0)->type();
  if (!type.Is(ir::TypeKind::kTensor) || !type.element().Is(ir::TypeKind::kElement)) {
    return nullptr;
  }
  const ElementType element = type.element().element_type();
  const bool real_float = element == ElementType::kF16 || element == ElementType::kF32 ||
                          element == ElementType::kF64;
  const ir::Operation* divisor = op.operand(1)->defining_op();
  if (!real_float || !type.HasStaticShape() || divisor == nullptr) return nullptr;
  // A constant dividend (the 1 of the reciprocal made here) is left alone:
  // folding handles constant / constant, and 1 / x is already that.
  const auto constant = [](const ir::Operation* made) {
    return made != nullptr && (made->code() == ir::OpCode::kConstant ||
                               (made->code() == ir::OpCode::kBroadcastInDim &&
                                made->operand(0)->defining_op() != nullptr &&
                                made->operand(0)->defining_op()->code() == ir::OpCode::kConstant));
  };
  if (constant(op.operand(0)->defining_op())) return nullptr;
  const bool broadcast = divisor->code() == ir::OpCode::kBroadcastInDim;
  if (!broadcast && divisor->code() != ir::OpCode::kConstant) return nullptr;
  // The reciprocal of what is broadcast (or of the constant itself).
  ir::Value* base = broadcast ? divisor->operand(0) : op.operand(1);
  const ir::Type& base_type = base->type();
  if (!base_type.HasStaticShape() || base_type.element() != type.element()) return nullptr;
  const ir::Type scalar = ir::Type::Tensor(type.element(), {});
  std::vector<uint8_t> one(ElementBytes(element));
  const double unit_value = 1.0;
  KILN_RETURN_IF_ERROR(kernels::Convert(ElementType::kF64, &unit_value, element, one.data(), 1));
  auto unit = std::make_unique<ir::Operation>("stablehlo.constant", op.location());
  unit->AddResult(scalar);
  unit->SetAttr("value", ir::Attribute::DenseElements(scalar, std::move(one), false));
  KILN_ASSIGN_OR_RETURN(const ir::Operation* made, lowering.LowerAdopted(std::move(unit)));
  auto ones = std::make_unique<ir::Operation>("stablehlo.broadcast_in_dim", op.location());
  ones->AddOperand(made->result(0));
  ones->AddResult(base_type);
  ones->SetAttr("broadcast_dimensions", ir::Attribute::DenseI64Array({}));
  KILN_ASSIGN_OR_RETURN(made, lowering.LowerAdopted(std::move(ones)));
  auto reciprocal = std::make_unique<ir::Operation>("stablehlo.divide", op.location());
  reciprocal->AddOperand(made->result(0));
  reciprocal->AddOperand(base);
  reciprocal->AddResult(base_type);
  KILN_ASSIGN_OR_RETURN(made, lowering.LowerAdopted(std::move(reciprocal)));
  if (broadcast) {
    auto spread = std::make_unique<ir::Operation>("stablehlo.broadcast_in_dim", op.location());
    spread->AddOperand(made->result(0));
    spread->AddResult(op.operand(1)->type());
    spread->SetAttr("broadcast_dimensions", divisor->GetAttr("broadcast_dimensions"));
    KILN_ASSIGN_OR_RETURN(made, lowering.LowerAdopted(std::move(spread)));
  }
  auto product = std::make_unique<ir::Operation>("stablehlo.multiply", op.location());
  product->AddOperand(op.operand(0));
  product->AddOperand(made->result(0));
  product->AddResult(type);
  return lowering.LowerAdopted(std::move(product));
}

Status LowerDivide(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(const ir::Operation* product, DivideAsReciprocalMultiply(lowering, op));
  if (product == nullptr) return LowerBinary(lowering, op);
  KILN_ASSIGN_OR_RETURN(ValueId result, lowering.Lookup(product->result(0)));
  lowering.Bind(op.result(0), result);
  return Status::Ok();
}

StatusOr<kernels::CompareDirection> Direction(std::string_view name) {
  using kernels::CompareDirection;
  if (name == "EQ") return CompareDirection::kEq;
  if (name == "NE") return CompareDirection::kNe;
  if (name == "GE") return CompareDirection::kGe;
  if (name == "GT") return CompareDirection::kGt;
  if (name == "LE") return CompareDirection::kLe;
  if (name == "LT") return CompareDirection::kLt;
  return InvalidArgument("unknown comparison_direction '", name, "'");
}

Status LowerCompare(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(kernels::CompareDirection direction,
                        Direction(EnumAttr(op, "comparison_direction")));
  const kernels::CompareKind kind = EnumAttr(op, "compare_type") == "TOTALORDER"
                                        ? kernels::CompareKind::kTotalOrder
                                        : kernels::CompareKind::kFloat;
  const ElementType type = shape.element_type;
  return lowering.EmitPointwise(op, [direction, kind, type](std::span<const void* const> in,
                                                            void* out, int64_t n) {
    return kernels::Compare(direction, kind, type, in[0], in[1], static_cast<bool*>(out), n);
  });
}

Status LowerSelect(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape pred, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(0)));
  const bool scalar = pred.dims.empty() && !shape.dims.empty();
  // A constant predicate that is all true or all false picks an operand.
  KILN_ASSIGN_OR_RETURN(ValueId pred_id, lowering.Input(op, 0));
  if (const auto& data = lowering.graph().values[static_cast<size_t>(pred_id)].constant;
      data && !data->empty() &&
      std::all_of(data->begin(), data->end(), [&](uint8_t b) { return b == data->front(); })) {
    KILN_ASSIGN_OR_RETURN(ValueId picked, lowering.Input(op, data->front() != 0 ? 1 : 2));
    lowering.Bind(op.result(0), picked);
    return Status::Ok();
  }
  const ElementType type = shape.element_type;
  const int64_t count = shape.NumElements();
  if (!scalar) {
    return lowering.EmitPointwise(op, [type](std::span<const void* const> in, void* out,
                                             int64_t n) {
      return kernels::Select(type, static_cast<const bool*>(in[0]), false, in[1], in[2], out, n);
    });
  }
  const size_t before = lowering.graph().nodes.size();
  KILN_RETURN_IF_ERROR(lowering.Emit(op, [scalar, type, count](RunContext& ctx) {
    return kernels::Select(type, static_cast<const bool*>(ctx.in(0)), scalar, ctx.in(1), ctx.in(2),
                           ctx.out(0), count);
  }));
  // Not a fused loop's member (its predicate is one element), but a
  // backend generating code reads the op (Node::source).
  if (lowering.graph().nodes.size() > before) {
    Node& node = lowering.graph().nodes.back();
    node.source = DetachForListing(op, {shape});
  }
  return Status::Ok();
}

Status LowerClamp(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape min, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape max, lowering.ShapeOf(op.operand(2)));
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(0)));
  const bool min_scalar = min.dims.empty() && !shape.dims.empty();
  const bool max_scalar = max.dims.empty() && !shape.dims.empty();
  const ElementType type = shape.element_type;
  const int64_t count = shape.NumElements();
  if (!min_scalar && !max_scalar) {
    return lowering.EmitPointwise(op, [type](std::span<const void* const> in, void* out,
                                             int64_t n) {
      return kernels::Clamp(type, in[0], false, in[1], in[2], false, out, n);
    });
  }
  return lowering.Emit(op, [=](RunContext& ctx) {
    return kernels::Clamp(type, ctx.in(0), min_scalar, ctx.in(1), ctx.in(2), max_scalar, ctx.out(0),
                          count);
  });
}

Status LowerConvert(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape from, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape to, lowering.ShapeOf(op.result(0)));
  if (from.element_type == to.element_type) {
    KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, 0));
    lowering.Bind(op.result(0), input);
    return Status::Ok();
  }
  return lowering.EmitPointwise(op, [from = from.element_type, to = to.element_type](
                                        std::span<const void* const> in, void* out, int64_t n) {
    return kernels::Convert(from, in[0], to, out, n);
  });
}

Status LowerComplex(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  const int64_t count = shape.NumElements();
  return lowering.Emit(op, [type = shape.element_type, count](RunContext& ctx) {
    return kernels::MakeComplex(type, ctx.in(0), ctx.in(1), ctx.out(0), count);
  });
}

// The elementwise rows of ops.def lower onto their kernel; the entries after
// them replace a generated one (Rules() keeps an op's last entry).
#define KILN_OP(...)
#define KILN_SYNTAX_ONLY(...)
#define KILN_UNARY(name, ...) {ir::OpCode::k##name, LowerUnary},
#define KILN_BINARY(name, ...) {ir::OpCode::k##name, LowerBinary},
constexpr LoweringRule kRules[] = {
#include "ir/ops.def"
    {ir::OpCode::kDivide, LowerDivide},   {ir::OpCode::kCompare, LowerCompare},
    {ir::OpCode::kSelect, LowerSelect},   {ir::OpCode::kClamp, LowerClamp},
    {ir::OpCode::kConvert, LowerConvert}, {ir::OpCode::kComplex, LowerComplex},
};
#undef KILN_OP
#undef KILN_SYNTAX_ONLY
#undef KILN_UNARY
#undef KILN_BINARY

}  // namespace

std::span<const LoweringRule> ElementwiseLowerings() { return kRules; }

std::optional<kernels::UnaryOp> UnaryOpOf(ir::OpCode code) {
  for (const UnaryEntry& entry : kUnary) {
    if (entry.code == code) return entry.op;
  }
  return std::nullopt;
}

std::optional<kernels::BinaryOp> BinaryOpOf(ir::OpCode code) {
  for (const BinaryEntry& entry : kBinary) {
    if (entry.code == code) return entry.op;
  }
  return std::nullopt;
}

kernels::BinaryOp BinaryOf(kernels::ReduceOp op) {
  switch (op) {
    case kernels::ReduceOp::kAdd: return kernels::BinaryOp::kAdd;
    case kernels::ReduceOp::kMultiply: return kernels::BinaryOp::kMultiply;
    case kernels::ReduceOp::kMaximum: return kernels::BinaryOp::kMaximum;
    case kernels::ReduceOp::kMinimum: return kernels::BinaryOp::kMinimum;
    case kernels::ReduceOp::kAnd: return kernels::BinaryOp::kAnd;
    case kernels::ReduceOp::kOr: return kernels::BinaryOp::kOr;
    case kernels::ReduceOp::kXor: return kernels::BinaryOp::kXor;
  }
  return kernels::BinaryOp::kAdd;
}

bool ElementwiseKernelType(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS1:
    case ElementType::kS2:
    case ElementType::kS4:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
    case ElementType::kU1:
    case ElementType::kU2:
    case ElementType::kU4:
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64:
    case ElementType::kC64:
    case ElementType::kC128: return true;
    default: return false;
  }
}

StatusOr<kernels::CompareDirection> CompareDirectionOf(std::string_view name) {
  return Direction(name);
}

}  // namespace kiln::compiler
