// The dynamic-shape ops whose result type is static — what remains of them
// after JAX refines a shape-polymorphic program for concrete shapes. Their
// shape operand only restates the result type, so they lower as their static
// forms; a truly dynamic result is UNIMPLEMENTED (Kiln plans static shapes).
// dynamic_pad, real_dynamic_slice, dynamic_gather and dynamic_conv take
// their padding / bounds / slice sizes as tensors: when those are known at
// compile time (constants, or folded), the op becomes its static form with
// them as attributes; otherwise they are read when the program runs and
// checked against the result type (INVALID_ARGUMENT from the run when they
// disagree), as are the shape operands of the ops above.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "base/small_vector.h"
#include "compiler/lowering.h"
#include "kernels/copy.h"
#include "kernels/gather.h"

namespace kiln::compiler {
namespace {

// The integers of operand `i` when they are known at compile time.
StatusOr<std::optional<std::vector<int64_t>>> KnownInts(Lowering& lowering, const ir::Operation& op,
                                                        size_t i) {
  KILN_ASSIGN_OR_RETURN(ValueId id, lowering.Input(op, i));
  const ValueInfo& value = lowering.graph().values[static_cast<size_t>(id)];
  if (value.constant == nullptr) return std::optional<std::vector<int64_t>>();
  std::vector<int64_t> ints;
  for (int64_t k = 0; k < value.shape.NumElements(); ++k) {
    ints.push_back(kernels::LoadIndex(value.shape.element_type, value.constant->data(), k));
  }
  return std::optional<std::vector<int64_t>>(std::move(ints));
}

// The integers of run-time input `i` of a node.
SmallVector<int64_t> InputInts(const RunContext& ctx, size_t i) {
  const Shape& shape = ctx.in_shape(i);
  SmallVector<int64_t> ints(static_cast<size_t>(shape.NumElements()));
  for (size_t k = 0; k < ints.size(); ++k) {
    ints[k] = kernels::LoadIndex(shape.element_type, ctx.in(i), static_cast<int64_t>(k));
  }
  return ints;
}

std::string Join(std::span<const int64_t> values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += StrCat(i > 0 ? ", " : "", values[i]);
  return text + "]";
}

// Checks that shape operand `i` of `op` (`what`) equals `expected`, which
// the result type implies: at compile time when it is a constant, else by a
// node when the program runs.
Status CheckShapeOperand(Lowering& lowering, const ir::Operation& op, size_t i,
                         std::vector<int64_t> expected, std::string what) {
  KILN_ASSIGN_OR_RETURN(auto known, KnownInts(lowering, op, i));
  if (known) {
    if (*known != expected) {
      return InvalidArgument(what, " is ", Join(*known), "; the result type needs ",
                             Join(expected));
    }
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(ValueId id, lowering.Input(op, i));
  return lowering
      .EmitNode(
          op, {id}, {},
          [expected = std::move(expected), what = std::move(what)](RunContext& ctx) {
            const SmallVector<int64_t> actual = InputInts(ctx, 0);
            if (!std::equal(actual.begin(), actual.end(), expected.begin(), expected.end())) {
              return InvalidArgument(what, " is ", Join(actual),
                                     " at run time; the result type needs ", Join(expected));
            }
            return Status::Ok();
          },
          {}, {}, /*foldable=*/false)
      .status();
}

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

// A dynamic op whose shape operand `shape_operand` restates its result's
// dimensions: the static op, plus the check of that operand.
Status LowerAsStaticChecked(Lowering& lowering, const ir::Operation& op, ir::OpCode static_code,
                            size_t shape_operand) {
  KILN_RETURN_IF_ERROR(LowerAsStatic(lowering, op, static_code));
  return CheckShapeOperand(lowering, op, shape_operand, op.result(0)->type().dims(),
                           StrCat(op.name(), "'s output shape"));
}

Status LowerDynamicIota(Lowering& lowering, const ir::Operation& op) {
  return LowerAsStaticChecked(lowering, op, ir::OpCode::kIota, 0);
}

Status LowerDynamicBroadcastInDim(Lowering& lowering, const ir::Operation& op) {
  return LowerAsStaticChecked(lowering, op, ir::OpCode::kBroadcastInDim, 1);
}

Status LowerDynamicReshape(Lowering& lowering, const ir::Operation& op) {
  return LowerAsStaticChecked(lowering, op, ir::OpCode::kReshape, 1);
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

// The static result type of `op`, or UNIMPLEMENTED.
StatusOr<Shape> StaticResult(Lowering& lowering, const ir::Operation& op) {
  if (!op.result(0)->type().HasStaticShape()) {
    return Unimplemented("a dynamic result shape; Kiln runs programs whose shapes are static");
  }
  return lowering.ShapeOf(op.result(0));
}

// dynamic_pad(operand, padding_value, low, high, interior) -> pad; with
// paddings known only at run time, a pad planned per run.
Status LowerDynamicPad(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(auto known_low, KnownInts(lowering, op, 2));
  KILN_ASSIGN_OR_RETURN(auto known_high, KnownInts(lowering, op, 3));
  KILN_ASSIGN_OR_RETURN(auto known_interior, KnownInts(lowering, op, 4));
  if (known_low && known_high && known_interior) {
    return LowerWithAttributes(lowering, op, "stablehlo.pad", {0, 1},
                               {{"edge_padding_low", ir::Attribute::DenseI64Array(*known_low)},
                                {"edge_padding_high", ir::Attribute::DenseI64Array(*known_high)},
                                {"interior_padding",
                                 ir::Attribute::DenseI64Array(*known_interior)}});
  }
  KILN_ASSIGN_OR_RETURN(Shape out, StaticResult(lowering, op));
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  const size_t bytes = ElementBytes(operand.element_type);
  return lowering.Emit(op, [bytes, in = operand.dims, out = out.dims](RunContext& ctx) -> Status {
    const SmallVector<int64_t> low = InputInts(ctx, 2);
    const SmallVector<int64_t> high = InputInts(ctx, 3);
    const SmallVector<int64_t> interior = InputInts(ctx, 4);
    for (size_t d = 0; d < in.size(); ++d) {
      const int64_t size = in[d] == 0 ? low[d] + high[d]
                                      : low[d] + high[d] + in[d] + (in[d] - 1) * interior[d];
      if (interior[d] < 0 || size != out[d]) {
        return InvalidArgument("dynamic_pad of dimension ", d, " (size ", in[d], ") with low ",
                               low[d], ", high ", high[d], ", interior ", interior[d], " gives ",
                               size, " elements; the result type has ", out[d],
                               interior[d] < 0 ? " (interior padding must be >= 0)" : "");
      }
    }
    int64_t total = 1;
    for (int64_t d : out) total *= d;
    RunPad(bytes, PlanPad(in, out, low, interior), total, ctx.in(0), ctx.in(1), ctx.out(0));
    return Status::Ok();
  });
}

// real_dynamic_slice(operand, start, limit, strides) -> slice; with bounds
// known only at run time, a strided copy checked per run.
Status LowerRealDynamicSlice(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(auto known_start, KnownInts(lowering, op, 1));
  KILN_ASSIGN_OR_RETURN(auto known_limit, KnownInts(lowering, op, 2));
  KILN_ASSIGN_OR_RETURN(auto known_strides, KnownInts(lowering, op, 3));
  if (known_start && known_limit && known_strides) {
    return LowerWithAttributes(lowering, op, "stablehlo.slice", {0},
                               {{"start_indices", ir::Attribute::DenseI64Array(*known_start)},
                                {"limit_indices", ir::Attribute::DenseI64Array(*known_limit)},
                                {"strides", ir::Attribute::DenseI64Array(*known_strides)}});
  }
  KILN_ASSIGN_OR_RETURN(Shape out, StaticResult(lowering, op));
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  const size_t bytes = ElementBytes(operand.element_type);
  return lowering.Emit(op, [bytes, in = operand.dims, out = out.dims](RunContext& ctx) -> Status {
    const SmallVector<int64_t> start = InputInts(ctx, 1);
    const SmallVector<int64_t> limit = InputInts(ctx, 2);
    const SmallVector<int64_t> step = InputInts(ctx, 3);
    const SmallVector<int64_t> dense(Strides(in));
    SmallVector<int64_t> strides(in.size());
    int64_t offset = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      const bool valid = step[d] > 0 && start[d] >= 0 && start[d] <= limit[d] && limit[d] <= in[d];
      const int64_t size = valid ? (limit[d] - start[d] + step[d] - 1) / step[d] : -1;
      if (size != out[d]) {
        return InvalidArgument("real_dynamic_slice of dimension ", d, " (size ", in[d], ") from ",
                               start[d], " to ", limit[d], " by ", step[d],
                               valid ? StrCat(" gives ", size, " elements; the result type has ",
                                              out[d])
                                     : std::string(": needs 0 <= start <= limit <= size and "
                                                   "stride > 0"));
      }
      offset += start[d] * dense[d];
      strides[d] = step[d] * dense[d];
    }
    kernels::CopyStrided(bytes, out,
                         static_cast<const uint8_t*>(ctx.in(0)) +
                             offset * static_cast<int64_t>(bytes),
                         strides, ctx.out(0));
    return Status::Ok();
  });
}

// dynamic_gather(operand, start_indices, slice_sizes) -> gather. Its result
// type fixes the slice sizes (offset dimensions take theirs from it,
// collapsed and batching dimensions are 1), so run-time sizes are checked
// against those.
Status LowerDynamicGather(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(auto sizes, KnownInts(lowering, op, 2));
  if (sizes) {
    return LowerWithAttributes(lowering, op, "stablehlo.gather", {0, 1},
                               {{"slice_sizes", ir::Attribute::DenseI64Array(*sizes)}});
  }
  KILN_ASSIGN_OR_RETURN(Shape out, StaticResult(lowering, op));
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  ir::Attribute numbers = op.GetAttr("dimension_numbers");
  if (!numbers.Is(ir::AttrKind::kStruct)) {
    return InvalidArgument("dynamic_gather without #stablehlo.gather dimension numbers");
  }
  const std::vector<int64_t> offset_dims = FieldInts(numbers, "offset_dims");
  const std::vector<int64_t> collapsed = FieldInts(numbers, "collapsed_slice_dims");
  const std::vector<int64_t> batching = FieldInts(numbers, "operand_batching_dims");
  std::vector<int64_t> implied;
  size_t next_offset = 0;
  for (size_t d = 0; d < operand.dims.size(); ++d) {
    const auto dim = static_cast<int64_t>(d);
    if (Contains(collapsed, dim) || Contains(batching, dim)) {
      implied.push_back(1);
    } else if (next_offset < offset_dims.size()) {
      implied.push_back(out.dims[static_cast<size_t>(offset_dims[next_offset++])]);
    } else {
      return InvalidArgument("dynamic_gather: operand dimension ", d,
                             " is neither collapsed, "
                             "batching nor an offset dimension of the result");
    }
  }
  KILN_RETURN_IF_ERROR(LowerWithAttributes(lowering, op, "stablehlo.gather", {0, 1},
                                           {{"slice_sizes",
                                             ir::Attribute::DenseI64Array(implied)}}));
  return CheckShapeOperand(lowering, op, 2, std::move(implied), "dynamic_gather's slice_sizes");
}

// dynamic_conv(lhs, rhs, padding [spatial, 2]) -> convolution; with padding
// known only at run time, the convolution reads it per run.
Status LowerDynamicConv(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(auto padding, KnownInts(lowering, op, 2));
  if (padding) {
    return LowerWithAttributes(lowering, op, "stablehlo.convolution", {0, 1},
                               {{"padding", ir::Attribute::DenseI64Array(*padding)}});
  }
  KILN_RETURN_IF_ERROR(StaticResult(lowering, op).status());
  KILN_ASSIGN_OR_RETURN(ValueId padding_id, lowering.Input(op, 2));
  return LowerConvolutionWithPadding(lowering, op, padding_id);
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
