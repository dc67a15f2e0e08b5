// Ops on uneven tiles (issue 28; docs/sharding.md, "Uneven tiles"). A
// sharding constraint may split a dimension its axes do not divide (JAX
// refuses such shardings on arguments and results, not inside a program).
// XLA then computes on padded tiles: every device holds ceil(n / tiles)
// elements of the dimension, the last tiles reaching past the array's end.
// Kiln does the same (Lowering::HeldAsPadded): the constraint cuts padded
// tiles (zeros past the end), and the ops below compute on them, their
// results padded alike. What the padding holds is of no value, so an op
// that runs along a padded dimension first sets it to what cannot change
// its result (a reduction's init, zero for a contraction). Every other op
// sees the value whole: Lookup gathers the tiles and drops the padding.
//
// Rules: pointwise and elementwise ops, compare, broadcast_in_dim,
// transpose, reduce (along padded dimensions: masked, then partial sums or
// an all_reduce), dot_general and propagation_barrier.
#include <algorithm>
#include <cstring>
#include <optional>

#include "compiler/lowering.h"
#include "compiler/on_tiles.h"
#include "ir/op_description.h"

namespace kiln::compiler {
namespace {

using namespace on_tiles;  // NOLINT(google-build-using-namespace)

}  // namespace

StatusOr<ValueId> PaddedTile(Lowering& lowering, const ir::Value* value,
                             const TensorSharding& sharding, bool* zero_padding) {
  KILN_ASSIGN_OR_RETURN(Shape global, lowering.ShapeOf(value));
  if (zero_padding != nullptr) *zero_padding = false;
  if (const Lowering::Tiles* held = lowering.HeldAsPadded(value);
      held != nullptr && SameTiling(held->sharding, sharding, global.dims)) {
    return held->local;
  }
  if (sharding.LocalDims(global.dims).ok()) {
    // Even after all (a dimension the padded one was broadcast from): no
    // padding to hold anything.
    if (zero_padding != nullptr) *zero_padding = true;
    return lowering.LocalTile(value, sharding);
  }
  KILN_ASSIGN_OR_RETURN(std::optional<ValueId> early, lowering.TilePaddedEarly(value, sharding));
  if (early) return *early;
  KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.Lookup(value));
  if (zero_padding != nullptr) *zero_padding = true;
  return EmitTile(lowering, whole, global, sharding, /*padded=*/true);
}

StatusOr<ir::Value*> PaddedOperand(Lowering& lowering, const ir::Value* value,
                                   const TensorSharding& sharding) {
  KILN_ASSIGN_OR_RETURN(ValueId tile, PaddedTile(lowering, value, sharding));
  return lowering.StandIn(tile, LocalType(value->type(), lowering.graph().shape(tile).dims));
}

namespace {

// Holds `value` as `local`, padded tiles of `sharding` (even tiles when it
// divides the value, whole when it splits nothing).
Status BindPaddedResult(Lowering& lowering, const ir::Value* value, ValueId local,
                        const TensorSharding& sharding) {
  KILN_ASSIGN_OR_RETURN(Shape global, lowering.ShapeOf(value));
  if (sharding.IsReplicated()) {
    lowering.Bind(value, local);
  } else if (sharding.LocalDims(global.dims).ok()) {
    lowering.BindTiles(value, local, sharding);
  } else {
    lowering.BindPadded(value, local, sharding);
  }
  return Status::Ok();
}

// The padded tiles of the first operand of `op` held as them.
const Lowering::Tiles* FirstPadded(Lowering& lowering, const ir::Operation& op) {
  for (const ir::Value* operand : op.operands()) {
    if (const Lowering::Tiles* tiles = lowering.HeldAsPadded(operand)) return tiles;
  }
  return nullptr;
}

// Element k of the result from elements k of the operands: the result is
// padded as the first padded operand; scalars (select, clamp) stay whole.
StatusOr<bool> PaddedPointwise(Lowering& lowering, const ir::Operation& op) {
  if (op.num_results() != 1 || !IsRealTensor(op.result(0)->type())) return false;
  KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(0)));
  const Lowering::Tiles* first = FirstPadded(lowering, op);
  if (first == nullptr || first->sharding.dims.size() != result.dims.size()) return false;
  const TensorSharding sharding = first->sharding;
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<ir::Value*>> operands,
                        PointwiseOperands(lowering, op, [&](size_t i) {
                          return PaddedOperand(lowering, op.operand(i), sharding);
                        }));
  if (!operands) return false;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, sharding.PaddedDims(result.dims));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), *operands,
                                     {LocalType(op.result(0)->type(), local)}, {}, &op));
  KILN_RETURN_IF_ERROR(BindPaddedResult(lowering, op.result(0), results[0], sharding));
  return true;
}

// `op` of one padded operand (of `operand_sharding`), its result tiled by
// `sharding`: the op rebuilt on the tiles. Each result dimension comes from
// one operand dimension of the same size (or none), so the result's
// padding is the operand's, moved.
StatusOr<bool> PaddedOfOne(Lowering& lowering, const ir::Operation& op,
                           const TensorSharding& operand_sharding, const TensorSharding& sharding) {
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, sharding.PaddedDims(out.dims));
  KILN_ASSIGN_OR_RETURN(ir::Value * tile, PaddedOperand(lowering, op.operand(0), operand_sharding));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), {tile},
                                     {LocalType(op.result(0)->type(), local)}, {}, &op));
  KILN_RETURN_IF_ERROR(BindPaddedResult(lowering, op.result(0), results[0], sharding));
  return true;
}

// A zero of `type` as a graph constant.
ValueId Zero(Lowering& lowering, ElementType type) {
  return lowering.graph().AddConstant(Shape{type, {}}, std::vector<uint8_t>(ElementBytes(type)));
}

// reduce: along dimensions the tiles leave whole, each device reduces its
// tile (any body, several operands: argmax), the kept dimensions padded as
// they were. Along split ones (one operand, a body of one op whose init
// may be folded in once per device), the padding is first set to the init,
// and each device's result is a partial sum (add) or all_reduced (max,
// min, and, or), as on even tiles; the result must then split evenly.
StatusOr<bool> PaddedReduce(Lowering& lowering, const ir::Operation& op,
                            const TensorSharding& operand_sharding) {
  const size_t count = op.num_results();
  if (count == 0 || op.operands().size() != 2 * count) return false;
  std::optional<std::vector<int64_t>> reduced = ir::IntegersOf(op.GetAttr("dimensions"));
  if (!reduced) return false;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    if (!IsRealTensor(op.operand(i)->type())) return false;
    if (i >= count && lowering.HeldAsPadded(op.operand(i)) != nullptr) return false;
    if (i < count && op.operand(i)->type().dims() != op.operand(0)->type().dims()) return false;
  }
  KILN_ASSIGN_OR_RETURN(Shape in, lowering.ShapeOf(op.operand(0)));
  if (operand_sharding.dims.size() != in.dims.size()) return false;
  TensorSharding sharding = Unsplit(operand_sharding.mesh, 0);
  std::vector<AxisRef> partial;
  for (size_t d = 0; d < in.dims.size(); ++d) {
    if (std::find(reduced->begin(), reduced->end(), static_cast<int64_t>(d)) == reduced->end()) {
      sharding.dims.push_back(operand_sharding.dims[d]);
    } else {
      partial.insert(partial.end(), operand_sharding.dims[d].begin(),
                     operand_sharding.dims[d].end());
    }
  }
  std::string body;
  if (!partial.empty()) {
    body = ReductionOp(op, 1);
    const std::vector<AxisRef> partial_axes[] = {partial};
    if (count != 1 || body.empty() || !SimpleAxes(sharding, partial_axes) ||
        lowering.spmd()->num_partitions != operand_sharding.mesh.num_devices()) {
      return false;
    }
    KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
    if (!sharding.LocalDims(out.dims).ok()) return false;
  }
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < count; ++i) {
    bool zeros = false;
    KILN_ASSIGN_OR_RETURN(ValueId tile,
                          PaddedTile(lowering, op.operand(i), operand_sharding, &zeros));
    // (A sum's init is zero: padding cut as zeros needs no mask.)
    if (!partial.empty() && !(zeros && body == "stablehlo.add")) {
      // The padding along the reduced dimensions becomes the init.
      KILN_ASSIGN_OR_RETURN(ValueId init, lowering.Input(op, count + i));
      KILN_ASSIGN_OR_RETURN(tile, EmitMaskPadding(lowering, tile, init, in, operand_sharding));
    }
    operands.push_back(lowering.StandIn(tile, LocalType(op.operand(i)->type(),
                                                        lowering.graph().shape(tile).dims)));
  }
  for (size_t i = count; i < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId init, lowering.Input(op, i));
    operands.push_back(lowering.StandIn(init, op.operand(i)->type()));
  }
  std::vector<ir::Type> types;
  for (size_t r = 0; r < count; ++r) {
    KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(r)));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, sharding.PaddedDims(out.dims));
    types.push_back(LocalType(op.result(r)->type(), local));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), operands, types, {}, &op,
                                     /*regions=*/true));
  if (partial.empty()) {
    for (size_t r = 0; r < count; ++r) {
      KILN_RETURN_IF_ERROR(BindPaddedResult(lowering, op.result(r), results[r], sharding));
    }
    return true;
  }
  ValueId value = results[0];
  if (body == "stablehlo.add") {
    sharding.unreduced = partial;  // partial sums, summed where a use needs them
  } else {
    KILN_ASSIGN_OR_RETURN(value, ReduceOverAxes(lowering, op, value, types[0],
                                                operand_sharding.mesh, partial, body));
  }
  BindResult(lowering, op, 0, value, sharding);
  return true;
}

// dot_general with a padded operand: planned as on even tiles (PlanDot);
// free dimensions keep their padding in the result; padded contracting
// dimensions are masked to zero on both sides first, and leave partial
// sums (into an even result only).
StatusOr<bool> PaddedDot(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 2 || op.num_results() != 1) return false;
  const Lowering::Tiles* lhs = lowering.HeldAsPadded(op.operand(0));
  const Lowering::Tiles* rhs = lowering.HeldAsPadded(op.operand(1));
  KILN_ASSIGN_OR_RETURN(std::optional<DotPlan> plan,
                        PlanDot(lowering, op, lhs, rhs, false, /*padded=*/true));
  if (!plan) return false;
  std::vector<ir::Value*> operands;
  const TensorSharding* shardings[] = {&plan->lhs, &plan->rhs};
  for (size_t i = 0; i < 2; ++i) {
    bool zeros = false;
    KILN_ASSIGN_OR_RETURN(ValueId tile, PaddedTile(lowering, op.operand(i), *shardings[i], &zeros));
    if (!plan->partial.empty() && !zeros) {
      KILN_ASSIGN_OR_RETURN(Shape global, lowering.ShapeOf(op.operand(i)));
      KILN_ASSIGN_OR_RETURN(tile,
                            EmitMaskPadding(lowering, tile, Zero(lowering, global.element_type),
                                            global, *shardings[i]));
    }
    operands.push_back(lowering.StandIn(tile, LocalType(op.operand(i)->type(),
                                                        lowering.graph().shape(tile).dims)));
  }
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, plan->result.PaddedDims(out.dims));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), operands,
                                     {LocalType(op.result(0)->type(), local)}, {}, &op));
  if (!plan->partial.empty()) {
    plan->result.unreduced = plan->partial;
    BindResult(lowering, op, 0, results[0], plan->result);
    return true;
  }
  KILN_RETURN_IF_ERROR(BindPaddedResult(lowering, op.result(0), results[0], plan->result));
  return true;
}

}  // namespace

StatusOr<bool> ConstrainPadded(Lowering& lowering, const ir::Operation& op,
                               const TensorSharding& sharding) {
  if (op.operands().empty() || op.num_results() != 1 || lowering.in_manual_body() ||
      !sharding.unreduced.empty() || sharding.IsReplicated() || !SimpleAxes(sharding) ||
      lowering.spmd()->num_partitions != sharding.mesh.num_devices()) {
    return false;
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  if (!sharding.PaddedDims(shape.dims).ok()) return false;
  KILN_RETURN_IF_ERROR(lowering.SumPartials(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(ValueId tile, PaddedTile(lowering, op.operand(0), sharding));
  KILN_RETURN_IF_ERROR(BindPaddedResult(lowering, op.result(0), tile, sharding));
  return true;
}

StatusOr<bool> OnPaddedTiles(Lowering& lowering, const ir::Operation& op) {
  const Lowering::Tiles* first = FirstPadded(lowering, op);
  if (first == nullptr || lowering.in_manual_body()) return false;
  for (const ir::Value* operand : op.operands()) {
    if (lowering.HeldAsTiles(operand) != nullptr) return false;  // the even rules decide
  }
  const TensorSharding operand_sharding = first->sharding;
  const bool of_first = lowering.HeldAsPadded(op.operand(0)) == first;
  switch (op.code()) {
    case ir::OpCode::kBroadcastInDim:
    case ir::OpCode::kTranspose: {
      std::optional<TensorSharding> sharding = of_first ? MovedSharding(op, operand_sharding)
                                                        : std::nullopt;
      if (!sharding) return false;
      return PaddedOfOne(lowering, op, operand_sharding, *sharding);
    }
    case ir::OpCode::kReduce:
      return of_first ? PaddedReduce(lowering, op, operand_sharding) : false;
    case ir::OpCode::kDotGeneral: return PaddedDot(lowering, op);
    case ir::OpCode::kSdyPropagationBarrier: {
      if (!of_first || op.num_results() != 1) return false;
      const Lowering::Tiles kept = *first;
      lowering.BindPadded(op.result(0), kept.local, kept.sharding);
      return true;
    }
    default: break;
  }
  if (!ElementForElement(op)) return false;
  return PaddedPointwise(lowering, op);
}

}  // namespace kiln::compiler
