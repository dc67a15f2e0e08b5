// Quantized tensors (!quant.uniform). A quantized value is held as its
// storage integers (ShapeOf gives the storage type), so constants, bitcasts,
// control flow and pure data movement run unchanged. uniform_quantize and
// uniform_dequantize have kernels (kernels/quantize.h); every other op with a
// quantized operand or result runs as the spec defines its semantics:
// dequantize the operands, run the op in the expressed type, quantize the
// results (the op is rebuilt with float types and lowered by its own rule).
#include <memory>

#include "compiler/lowering.h"
#include "kernels/quantize.h"

namespace kiln::compiler {
namespace {

// Ops that only move, select or pass elements along: on storage integers
// they compute exactly what they compute on quantized values.
bool MovesElements(ir::OpCode code) {
  switch (code) {
    case ir::OpCode::kConstant:
    case ir::OpCode::kBitcastConvert:
    case ir::OpCode::kReshape:
    case ir::OpCode::kTranspose:
    case ir::OpCode::kBroadcastInDim:
    case ir::OpCode::kSlice:
    case ir::OpCode::kDynamicSlice:
    case ir::OpCode::kDynamicUpdateSlice:
    case ir::OpCode::kConcatenate:
    case ir::OpCode::kReverse:
    case ir::OpCode::kGather:
    case ir::OpCode::kPad:
    case ir::OpCode::kSelect:
    case ir::OpCode::kGetDimensionSize:
    case ir::OpCode::kOptimizationBarrier:
    case ir::OpCode::kTuple:
    case ir::OpCode::kGetTupleElement:
    case ir::OpCode::kWhile:
    case ir::OpCode::kIf:
    case ir::OpCode::kCase:
    case ir::OpCode::kReturn:
    case ir::OpCode::kFuncReturn:
    case ir::OpCode::kCustomCall:
    case ir::OpCode::kComposite:
    // Ops with bodies move elements and let the body compute: the body's
    // own ops on quantized scalars dequantize, compute and quantize (the
    // spec's semantics), and the kernels' fast paths only accept bodies on
    // plain element types, so these run their regions on storage values.
    case ir::OpCode::kReduce:
    case ir::OpCode::kReduceWindow:
    case ir::OpCode::kSort:
    case ir::OpCode::kScatter:
    case ir::OpCode::kSelectAndScatter:
    case ir::OpCode::kMap: return true;
    default: return false;
  }
}

bool IsQuantized(const ir::Value* value) { return QuantizationOf(value->type()) != nullptr; }

// A quantized array's parameters, owned, for a run function to keep.
struct Params {
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
  int64_t channels = 1, inner = 1, storage_min = 0, storage_max = 0;
  ElementType storage = ElementType::kS8, expressed = ElementType::kF32;

  kernels::Quantization View() const {
    return {scales, zero_points, channels, inner, storage_min, storage_max};
  }
};

StatusOr<Params> ParamsOf(const ir::Type& type) {
  const ir::QuantizedParams* q = QuantizationOf(type);
  if (q == nullptr) return Internal("not a quantized tensor");
  Params params{q->scales,       q->zero_points,   1, 1, q->storage_min, q->storage_max,
                q->storage_type, q->expressed_type};
  if (q->scales.empty() || q->scales.size() != q->zero_points.size()) {
    return InvalidArgument("a quantized type needs as many zero points as scales, found ",
                           q->scales.size(), " and ", q->zero_points.size());
  }
  if (q->quantized_dimension) {
    const auto axis = static_cast<size_t>(*q->quantized_dimension);
    const std::vector<int64_t>& dims = type.dims();
    if (axis >= dims.size() || static_cast<size_t>(dims[axis]) != q->scales.size()) {
      return InvalidArgument("per-axis quantization along dimension ", axis,
                             " needs one scale "
                             "per slice; found ",
                             q->scales.size(), " scales");
    }
    params.channels = dims[axis];
    for (size_t d = axis + 1; d < dims.size(); ++d) params.inner *= dims[d];
  } else if (q->scales.size() != 1) {
    return InvalidArgument("per-tensor quantization has one scale, found ", q->scales.size());
  }
  return params;
}

// Emits value (storage integers of `type`) -> its expressed floats.
StatusOr<ValueId> EmitDequantize(Lowering& lowering, const ir::Operation& op, ValueId value,
                                 const ir::Type& type) {
  KILN_ASSIGN_OR_RETURN(Params params, ParamsOf(type));
  const int64_t count = type.NumElements();
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(op, {value}, {Shape{params.expressed, type.dims()}},
                                          [params, count](RunContext& ctx) {
                                            return kernels::Dequantize(params.storage, ctx.in(0),
                                                                       params.expressed, ctx.out(0),
                                                                       count, params.View());
                                          }));
  return outputs[0];
}

// Emits floats of element type `from` -> storage integers of `type`.
StatusOr<ValueId> EmitQuantize(Lowering& lowering, const ir::Operation& op, ValueId value,
                               ElementType from, const ir::Type& type) {
  KILN_ASSIGN_OR_RETURN(Params params, ParamsOf(type));
  const int64_t count = type.NumElements();
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(op, {value}, {Shape{params.storage, type.dims()}},
                                          [params, from, count](RunContext& ctx) {
                                            return kernels::Quantize(from, ctx.in(0),
                                                                     params.storage, ctx.out(0),
                                                                     count, params.View());
                                          }));
  return outputs[0];
}

// uniform_quantize: float -> quantized, or quantized -> quantized
// (requantize through the operand's expressed type).
Status LowerUniformQuantize(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ValueId value, lowering.Input(op, 0));
  const ir::Type& from = op.operand(0)->type();
  ElementType expressed = ElementType::kF32;
  if (IsQuantized(op.operand(0))) {
    KILN_ASSIGN_OR_RETURN(value, EmitDequantize(lowering, op, value, from));
    expressed = QuantizationOf(from)->expressed_type;
  } else {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
    expressed = shape.element_type;
  }
  KILN_ASSIGN_OR_RETURN(ValueId result,
                        EmitQuantize(lowering, op, value, expressed, op.result(0)->type()));
  lowering.Bind(op.result(0), result);
  return Status::Ok();
}

Status LowerUniformDequantize(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ValueId value, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(ValueId result, EmitDequantize(lowering, op, value, op.operand(0)->type()));
  lowering.Bind(op.result(0), result);
  return Status::Ok();
}

ir::Type ExpressedType(const ir::Type& type) {
  const ir::QuantizedParams* q = QuantizationOf(type);
  return q == nullptr ? type : ir::Type::Tensor(ir::Type::Element(q->expressed_type), type.dims());
}

// Any other op: dequantize -> the op on expressed floats -> quantize.
Status LowerThroughExpressedType(Lowering& lowering, const ir::Operation& op) {
  if (op.num_regions() > 0) {
    return Unimplemented(op.name(),
                         " on quantized tensors: Kiln runs quantized elementwise, "
                         "dot_general, convolution and data-movement ops, not ops with bodies");
  }
  // The dequantized operands become the results of a placeholder op, so the
  // rebuilt op can name them as IR values.
  auto placeholder = std::make_unique<ir::Operation>("kiln.dequantized", op.location());
  std::vector<std::pair<size_t, ValueId>> dequantized;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    if (!IsQuantized(op.operand(i))) continue;
    KILN_ASSIGN_OR_RETURN(ValueId value, lowering.Input(op, i));
    KILN_ASSIGN_OR_RETURN(value, EmitDequantize(lowering, op, value, op.operand(i)->type()));
    placeholder->AddResult(ExpressedType(op.operand(i)->type()));
    dequantized.emplace_back(i, value);
  }
  const ir::Operation& floats = lowering.Adopt(std::move(placeholder));
  auto rebuilt = std::make_unique<ir::Operation>(op.name(), op.location());
  size_t next = 0;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    if (next < dequantized.size() && dequantized[next].first == i) {
      lowering.Bind(floats.result(next), dequantized[next].second);
      rebuilt->AddOperand(floats.result(next++));
    } else {
      rebuilt->AddOperand(op.operand(i));
    }
  }
  for (size_t r = 0; r < op.num_results(); ++r) {
    rebuilt->AddResult(ExpressedType(op.result(r)->type()));
  }
  for (const ir::NamedAttribute& attribute : op.attributes()) {
    rebuilt->SetAttr(attribute.name, attribute.value);
  }
  KILN_ASSIGN_OR_RETURN(const ir::Operation* lowered, lowering.LowerAdopted(std::move(rebuilt)));
  for (size_t r = 0; r < op.num_results(); ++r) {
    KILN_ASSIGN_OR_RETURN(ValueId value, lowering.Lookup(lowered->result(r)));
    if (IsQuantized(op.result(r))) {
      const ElementType expressed = QuantizationOf(op.result(r)->type())->expressed_type;
      KILN_ASSIGN_OR_RETURN(value,
                            EmitQuantize(lowering, op, value, expressed, op.result(r)->type()));
    }
    lowering.Bind(op.result(r), value);
  }
  return Status::Ok();
}

}  // namespace

bool NeedsQuantizedLowering(const ir::Operation& op) {
  if (op.code() == ir::OpCode::kUniformQuantize || op.code() == ir::OpCode::kUniformDequantize) {
    return true;
  }
  if (MovesElements(op.code())) return false;
  for (const ir::Value* operand : op.operands()) {
    if (IsQuantized(operand)) return true;
  }
  for (size_t r = 0; r < op.num_results(); ++r) {
    if (IsQuantized(op.result(r))) return true;
  }
  return false;
}

Status LowerQuantized(Lowering& lowering, const ir::Operation& op) {
  if (op.code() == ir::OpCode::kUniformQuantize) return LowerUniformQuantize(lowering, op);
  if (op.code() == ir::OpCode::kUniformDequantize) return LowerUniformDequantize(lowering, op);
  return LowerThroughExpressedType(lowering, op);
}

}  // namespace kiln::compiler
