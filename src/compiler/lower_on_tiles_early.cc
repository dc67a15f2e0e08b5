// Values made on tiles from the start (issue 28; docs/sharding.md): Kiln's
// form of Shardy's backward propagation. The lowering walks the program
// forward, so a value its operands leave whole is computed whole; when a
// later use wants it as tiles (an output sharding, a sharding constraint,
// an op whose other operands are tiles), cutting the whole array would
// leave every device computing all of it. Instead the op that made it is
// made again on the running device's tile, its operands' tiles made the
// same way in turn, down to parameters, constants and iotas: a sharded
// initialisation (`jax.random.normal` under `out_shardings`) or a mask
// built from iotas costs each device its share. The whole array dies
// unless another use needs it (EliminateDeadNodes).
//
// Ops made again: those whose element k comes from elements k of their
// operands (pointwise, elementwise, compare, a same-width bitcast_convert),
// broadcast_in_dim, transpose, a reshape whose factors keep every axis
// (each device's tile is its operand's tile reshaped), slice, pad,
// reverse, concatenate and dynamic_slice where the tiling splits only
// dimensions they leave alone, gather over tiles of its batch dimensions
// and of offset dimensions its slices take whole, iota, splat
// constants, and dot_general and
// single-operand reduce over tiles of the dimensions they keep (their
// contracted and reduced dimensions whole, so no partial sums arise). A
// value of any other op is cut as before, and so is one whose operands'
// tiles would need a gather (TileWithoutGather): its whole array exists.
#include <algorithm>
#include <optional>
#include <vector>

#include "compiler/lowering.h"
#include "compiler/on_tiles.h"
#include "ir/op_description.h"

namespace kiln::compiler {
namespace {

using namespace on_tiles;  // NOLINT(google-build-using-namespace)

// Producers followed at most, nested (each level a few stack frames): a
// chain longer than this (a long unrolled computation) is cut where it
// stops. The threefry bits of jax.random go 42 deep.
constexpr int kMaxEarlyDepth = 128;

// on_tiles::ElementForElement's ops of one result, and a same-width
// bitcast_convert.
bool MadeElementForElement(const ir::Operation& op) {
  if (op.num_results() != 1) return false;
  if (op.code() == ir::OpCode::kBitcastConvert) {
    return op.operands().size() == 1 && op.operand(0)->type().dims() == op.result(0)->type().dims();
  }
  return on_tiles::ElementForElement(op);
}

// Whether the running device's tile of `operand` under `sharding` comes
// without the devices meeting: the operand is whole (or was gathered
// already), or held as those tiles or coarser ones. Else remaking a value
// from it would gather it (a whole matrix, for a product whose whole
// result is at hand and only needs cutting).
bool TileWithoutGather(Lowering& lowering, const ir::Value* operand,
                       const TensorSharding& sharding) {
  if (lowering.HeldWhole(operand)) return true;
  const Lowering::Tiles* held = lowering.HeldAsTiles(operand);
  if (held == nullptr) return true;
  const TensorSharding& have = held->sharding;
  if (!have.unreduced.empty() || have.dims.size() != sharding.dims.size() ||
      !SameMesh(have.mesh, sharding.mesh)) {
    return false;
  }
  for (size_t d = 0; d < have.dims.size(); ++d) {
    if (have.dims[d].size() > sharding.dims[d].size()) return false;
    const std::vector<AxisRef> prefix(sharding.dims[d].begin(),
                                      sharding.dims[d].begin() +
                                          static_cast<std::ptrdiff_t>(have.dims[d].size()));
    if (!SameAxes(have.dims[d], prefix)) return false;
  }
  return true;
}

// TileWithoutGather for padded tiles (`padded`): the operand is whole, or
// held as padded tiles of `sharding`.
bool WithoutGather(Lowering& lowering, const ir::Value* operand, const TensorSharding& sharding,
                   bool padded) {
  if (!padded) return TileWithoutGather(lowering, operand, sharding);
  if (lowering.HeldWhole(operand)) return true;
  if (lowering.HeldAsTiles(operand) != nullptr) return false;
  const Lowering::Tiles* held = lowering.HeldAsPadded(operand);
  return held == nullptr || SameTiling(held->sharding, sharding, operand->type().dims());
}

// Operand `i`'s tile under `sharding`: TileOf, or its padded tile.
StatusOr<ir::Value*> OperandTile(Lowering& lowering, const ir::Operation& op, size_t i,
                                 const TensorSharding& sharding, bool padded) {
  if (!padded) return TileOf(lowering, op, i, sharding);
  return PaddedOperand(lowering, op.operand(i), sharding);
}

// `op`'s result (of global dims `global`) made as the running device's
// tile of `sharding`, `local` its dims (`padded`: its padded tile);
// nullopt for an op not made again.
StatusOr<std::optional<ValueId>> MakeOnTile(Lowering& lowering, const ir::Operation& op,
                                            const TensorSharding& sharding,
                                            const std::vector<int64_t>& local, bool padded) {
  const ir::Type& type = op.result(0)->type();
  const std::vector<int64_t>& global = type.dims();
  const ir::Type local_type = LocalType(type, local);
  auto made = [&](StatusOr<std::vector<ValueId>> results) -> StatusOr<std::optional<ValueId>> {
    KILN_RETURN_IF_ERROR(results.status());
    return std::optional<ValueId>(results.value()[0]);
  };
  switch (op.code()) {
    case ir::OpCode::kBroadcastInDim: {
      if (!IsRealTensor(op.operand(0)->type())) return std::optional<ValueId>();
      std::optional<std::vector<int64_t>> mapping = ir::IntegersOf(
          op.GetAttr("broadcast_dimensions"));
      const std::vector<int64_t>& from = op.operand(0)->type().dims();
      if (!mapping || mapping->size() != from.size()) return std::optional<ValueId>();
      // A dimension broadcast from size 1 stays whole; one carried over
      // takes the result's axes.
      TensorSharding inner = Unsplit(sharding.mesh, from.size());
      for (size_t k = 0; k < from.size(); ++k) {
        const auto to = static_cast<size_t>((*mapping)[k]);
        if ((*mapping)[k] < 0 || to >= global.size()) return std::optional<ValueId>();
        if (sharding.dims[to].empty() || from[k] == 1) continue;
        if (from[k] != global[to]) return std::optional<ValueId>();
        inner.dims[k] = sharding.dims[to];
      }
      KILN_ASSIGN_OR_RETURN(ir::Value * source, OperandTile(lowering, op, 0, inner, padded));
      return made(LowerRebuilt(lowering, op, op.name(), {source}, {local_type}, {}, &op));
    }
    case ir::OpCode::kTranspose: {
      std::optional<std::vector<int64_t>> permutation = ir::IntegersOf(op.GetAttr("permutation"));
      if (!permutation || permutation->size() != global.size()) return std::optional<ValueId>();
      TensorSharding inner = Unsplit(sharding.mesh, global.size());
      for (size_t i = 0; i < permutation->size(); ++i) {
        const auto from = static_cast<size_t>((*permutation)[i]);
        if ((*permutation)[i] < 0 || from >= global.size()) return std::optional<ValueId>();
        inner.dims[from] = sharding.dims[i];
      }
      if (!WithoutGather(lowering, op.operand(0), inner, padded)) return std::optional<ValueId>();
      KILN_ASSIGN_OR_RETURN(ir::Value * source, OperandTile(lowering, op, 0, inner, padded));
      return made(LowerRebuilt(lowering, op, op.name(), {source}, {local_type}, {}, &op));
    }
    case ir::OpCode::kReshape: {
      // The result's tiling taken back through the reshape's factors
      // (on_tiles::PlanReshapeByFactors): every axis must stay.
      if (padded || !IsRealTensor(op.operand(0)->type())) return std::optional<ValueId>();
      std::optional<FactorPlan> plan = PlanReshapeByFactors(sharding, global,
                                                            op.operand(0)->type().dims());
      if (!plan || !plan->all_kept ||
          !WithoutGather(lowering, op.operand(0), plan->result, padded)) {
        return std::optional<ValueId>();
      }
      KILN_ASSIGN_OR_RETURN(ir::Value * source, OperandTile(lowering, op, 0, plan->result, padded));
      return made(LowerRebuilt(lowering, op, op.name(), {source}, {local_type}, {}, &op));
    }
    case ir::OpCode::kSlice:
    case ir::OpCode::kPad:
    case ir::OpCode::kReverse:
    case ir::OpCode::kConcatenate:
    case ir::OpCode::kDynamicSlice: {
      // Ops that take whole the dimensions they work along: where the
      // wanted tiling splits only others, each operand's tile under the
      // same tiling gives the result's tile (a slice's or a
      // dynamic_slice's extent along a split dimension becomes the
      // tile's).
      if (padded) return std::optional<ValueId>();
      std::vector<bool> touched(global.size(), false);
      const size_t data = op.code() == ir::OpCode::kConcatenate ? op.operands().size() : 1;
      for (size_t i = 0; i < data; ++i) {
        if (!IsRealTensor(op.operand(i)->type()) ||
            op.operand(i)->type().dims().size() != global.size()) {
          return std::optional<ValueId>();
        }
        for (size_t d = 0; d < global.size(); ++d) {
          touched[d] = touched[d] || op.operand(i)->type().dims()[d] != global[d];
        }
      }
      if (op.code() == ir::OpCode::kReverse) {
        for (int64_t d : IntsAttr(op, "dimensions")) {
          if (d < 0 || static_cast<size_t>(d) >= global.size()) return std::optional<ValueId>();
          touched[static_cast<size_t>(d)] = true;
        }
      }
      if (op.code() == ir::OpCode::kPad) {
        // (Negative low and high padding of one size shift a dimension.)
        const std::vector<int64_t> low = IntsAttr(op, "edge_padding_low");
        const std::vector<int64_t> interior = IntsAttr(op, "interior_padding");
        if (low.size() != global.size() || interior.size() != global.size()) {
          return std::optional<ValueId>();
        }
        for (size_t d = 0; d < global.size(); ++d) {
          touched[d] = touched[d] || interior[d] != 0 || low[d] != 0;
        }
      }
      for (size_t d = 0; d < global.size(); ++d) {
        if (touched[d] && !sharding.dims[d].empty()) return std::optional<ValueId>();
      }
      for (size_t i = 0; i < data; ++i) {
        if (!WithoutGather(lowering, op.operand(i), sharding, padded))
          return std::optional<ValueId>();
      }
      std::vector<ir::Value*> operands;
      for (size_t i = 0; i < op.operands().size(); ++i) {
        if (i < data) {
          KILN_ASSIGN_OR_RETURN(ir::Value * tile, OperandTile(lowering, op, i, sharding, padded));
          operands.push_back(tile);
        } else {
          KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.Input(op, i));  // start indices
          operands.push_back(lowering.StandIn(whole, op.operand(i)->type()));
        }
      }
      ir::Operation attributes("kiln.attributes");
      CopyAttributes(op, attributes);
      if (op.code() == ir::OpCode::kSlice) {
        std::vector<int64_t> limits = IntsAttr(op, "limit_indices");
        if (limits.size() != global.size()) return std::optional<ValueId>();
        for (size_t d = 0; d < global.size(); ++d) {
          if (!sharding.dims[d].empty()) limits[d] = local[d];
        }
        attributes.SetAttr("limit_indices", ir::Attribute::DenseI64Array(std::move(limits)));
      } else if (op.code() == ir::OpCode::kDynamicSlice) {
        std::vector<int64_t> sizes = IntsAttr(op, "slice_sizes");
        if (sizes.size() != global.size()) return std::optional<ValueId>();
        for (size_t d = 0; d < global.size(); ++d) {
          if (!sharding.dims[d].empty()) sizes[d] = local[d];
        }
        attributes.SetAttr("slice_sizes", ir::Attribute::DenseI64Array(std::move(sizes)));
      }
      return made(LowerRebuilt(lowering, op, op.name(), operands, {local_type}, {}, &attributes));
    }
    case ir::OpCode::kIota: {
      const int64_t dimension = IntAttr(op, "iota_dimension", -1);
      if (dimension < 0 || static_cast<size_t>(dimension) >= global.size()) {
        return std::optional<ValueId>();
      }
      const auto d = static_cast<size_t>(dimension);
      if (sharding.dims[d].empty()) {
        return made(LowerRebuilt(lowering, op, op.name(), {}, {local_type}, {}, &op));
      }
      // Counting along a split dimension: the device's run of a line of
      // the whole count, broadcast over the tile's other dimensions.
      const ir::Type line = LocalType(type, {global[d]});
      ir::Operation count("kiln.attributes");
      count.SetAttr("iota_dimension",
                    ir::Attribute::Integer(0, ir::Type::Element(ElementType::kS64)));
      KILN_ASSIGN_OR_RETURN(std::vector<ValueId> whole,
                            LowerRebuilt(lowering, op, op.name(), {}, {line}, {}, &count));
      TensorSharding along = Unsplit(sharding.mesh, 1);
      along.dims[0] = sharding.dims[d];
      KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(0)));
      shape.dims = {global[d]};
      KILN_ASSIGN_OR_RETURN(ValueId run, EmitTile(lowering, whole[0], shape, along, padded));
      ir::Operation spread("kiln.attributes");
      spread.SetAttr("broadcast_dimensions", ir::Attribute::DenseI64Array({dimension}));
      return made(LowerRebuilt(lowering, op, "stablehlo.broadcast_in_dim",
                               {lowering.StandIn(run, LocalType(type, {local[d]}))}, {local_type},
                               {}, &spread));
    }
    case ir::OpCode::kDotGeneral: {
      // Result dimensions: batch, the left's free ones, the right's free
      // ones; each takes its axes back to its operands' dimensions, the
      // contracted ones stay whole (no partial sums).
      ir::Attribute numbers = op.GetAttr("dot_dimension_numbers");
      if (!numbers.Is(ir::AttrKind::kStruct) || op.operands().size() != 2) {
        return std::optional<ValueId>();
      }
      const std::vector<int64_t> batch[] = {FieldInts(numbers, "lhs_batching_dimensions"),
                                            FieldInts(numbers, "rhs_batching_dimensions")};
      const std::vector<int64_t> contract[] = {FieldInts(numbers, "lhs_contracting_dimensions"),
                                               FieldInts(numbers, "rhs_contracting_dimensions")};
      if (batch[0].size() != batch[1].size() || batch[0].size() > global.size()) {
        return std::optional<ValueId>();
      }
      TensorSharding inner[] = {Unsplit(sharding.mesh, op.operand(0)->type().dims().size()),
                                Unsplit(sharding.mesh, op.operand(1)->type().dims().size())};
      size_t next = 0;
      for (size_t i = 0; i < batch[0].size(); ++i, ++next) {
        for (size_t side = 0; side < 2; ++side) {
          const auto d = static_cast<size_t>(batch[side][i]);
          if (batch[side][i] < 0 || d >= inner[side].dims.size()) return std::optional<ValueId>();
          inner[side].dims[d] = sharding.dims[next];
        }
      }
      for (size_t side = 0; side < 2; ++side) {
        for (size_t d = 0; d < inner[side].dims.size(); ++d) {
          const auto k = static_cast<int64_t>(d);
          if (std::find(batch[side].begin(), batch[side].end(), k) != batch[side].end() ||
              std::find(contract[side].begin(), contract[side].end(), k) != contract[side].end()) {
            continue;
          }
          if (next >= global.size()) return std::optional<ValueId>();
          inner[side].dims[d] = sharding.dims[next++];
        }
      }
      if (next != global.size() || !WithoutGather(lowering, op.operand(0), inner[0], padded) ||
          !WithoutGather(lowering, op.operand(1), inner[1], padded)) {
        return std::optional<ValueId>();
      }
      KILN_ASSIGN_OR_RETURN(ir::Value * lhs, OperandTile(lowering, op, 0, inner[0], padded));
      KILN_ASSIGN_OR_RETURN(ir::Value * rhs, OperandTile(lowering, op, 1, inner[1], padded));
      return made(LowerRebuilt(lowering, op, op.name(), {lhs, rhs}, {local_type}, {}, &op));
    }
    case ir::OpCode::kReduce: {
      // One operand: the kept dimensions take the result's axes, the
      // reduced ones stay whole (each device reduces whole rows).
      std::optional<std::vector<int64_t>> reduced = ir::IntegersOf(op.GetAttr("dimensions"));
      if (op.operands().size() != 2 || !reduced || !IsRealTensor(op.operand(0)->type())) {
        return std::optional<ValueId>();
      }
      const size_t rank = op.operand(0)->type().dims().size();
      TensorSharding inner = Unsplit(sharding.mesh, rank);
      size_t next = 0;
      for (size_t d = 0; d < rank; ++d) {
        if (std::find(reduced->begin(), reduced->end(), static_cast<int64_t>(d)) !=
            reduced->end()) {
          continue;
        }
        if (next >= global.size()) return std::optional<ValueId>();
        inner.dims[d] = sharding.dims[next++];
      }
      if (next != global.size() || !WithoutGather(lowering, op.operand(0), inner, padded)) {
        return std::optional<ValueId>();
      }
      KILN_ASSIGN_OR_RETURN(ir::Value * source, OperandTile(lowering, op, 0, inner, padded));
      KILN_ASSIGN_OR_RETURN(ValueId init, lowering.Input(op, 1));
      return made(LowerRebuilt(lowering, op, op.name(),
                               {source, lowering.StandIn(init, op.operand(1)->type())},
                               {local_type}, {}, &op, /*regions=*/true));
    }
    case ir::OpCode::kGather: {
      // The result's batch dimensions take their axes back to the indices'
      // dimensions (and a batching pair's operand dimension); an offset
      // dimension the slices take whole, to its operand dimension. Indexed
      // and collapsed operand dimensions stay whole.
      ir::Attribute numbers = op.GetAttr("dimension_numbers");
      if (padded || !numbers.Is(ir::AttrKind::kStruct) || op.operands().size() != 2 ||
          !IsRealTensor(op.operand(0)->type()) || !IsRealTensor(op.operand(1)->type())) {
        return std::optional<ValueId>();
      }
      const std::vector<int64_t> offset_dims = FieldInts(numbers, "offset_dims");
      const std::vector<int64_t> collapsed = FieldInts(numbers, "collapsed_slice_dims");
      const std::vector<int64_t> operand_batching = FieldInts(numbers, "operand_batching_dims");
      const std::vector<int64_t> indices_batching = FieldInts(numbers,
                                                              "start_indices_batching_dims");
      const std::vector<int64_t> index_map = FieldInts(numbers, "start_index_map");
      const int64_t index_vector_dim = FieldInt(numbers, "index_vector_dim");
      std::vector<int64_t> sizes = IntsAttr(op, "slice_sizes");
      const std::vector<int64_t>& operand = op.operand(0)->type().dims();
      const std::vector<int64_t>& indices = op.operand(1)->type().dims();
      if (sizes.size() != operand.size() || operand_batching.size() != indices_batching.size()) {
        return std::optional<ValueId>();
      }
      TensorSharding inner[] = {Unsplit(sharding.mesh, operand.size()),
                                Unsplit(sharding.mesh, indices.size())};
      size_t next_offset = 0;
      for (size_t d = 0; d < operand.size(); ++d) {
        const auto dim = static_cast<int64_t>(d);
        if (Contains(collapsed, dim) || Contains(operand_batching, dim)) continue;
        if (next_offset >= offset_dims.size()) return std::optional<ValueId>();
        const auto r = static_cast<size_t>(offset_dims[next_offset++]);
        if (r >= global.size()) return std::optional<ValueId>();
        if (sharding.dims[r].empty()) continue;
        if (Contains(index_map, dim) || sizes[d] != operand[d]) return std::optional<ValueId>();
        inner[0].dims[d] = sharding.dims[r];
        sizes[d] = local[r];
      }
      size_t next_batch = 0;
      for (size_t d = 0; d < indices.size(); ++d) {
        if (static_cast<int64_t>(d) == index_vector_dim) continue;
        while (next_batch < global.size() &&
               Contains(offset_dims, static_cast<int64_t>(next_batch))) {
          ++next_batch;
        }
        if (next_batch >= global.size()) return std::optional<ValueId>();
        const std::vector<AxisRef>& axes = sharding.dims[next_batch++];
        inner[1].dims[d] = axes;
        const auto pair = std::find(indices_batching.begin(), indices_batching.end(),
                                    static_cast<int64_t>(d));
        if (pair != indices_batching.end() && !axes.empty()) {
          const auto o = static_cast<size_t>(
              operand_batching[static_cast<size_t>(pair - indices_batching.begin())]);
          if (o >= operand.size()) return std::optional<ValueId>();
          inner[0].dims[o] = axes;
        }
      }
      for (size_t i = 0; i < 2; ++i) {
        if (!inner[i].LocalDims(op.operand(i)->type().dims()).ok() ||
            !WithoutGather(lowering, op.operand(i), inner[i], padded)) {
          return std::optional<ValueId>();
        }
      }
      KILN_ASSIGN_OR_RETURN(ir::Value * source, OperandTile(lowering, op, 0, inner[0], padded));
      KILN_ASSIGN_OR_RETURN(ir::Value * at, OperandTile(lowering, op, 1, inner[1], padded));
      ir::Operation attributes("kiln.attributes");
      CopyAttributes(op, attributes);
      attributes.SetAttr("slice_sizes", ir::Attribute::DenseI64Array(std::move(sizes)));
      return made(LowerRebuilt(lowering, op, op.name(), {source, at}, {local_type}, {},
                               &attributes));
    }
    case ir::OpCode::kConstant: {
      ir::Attribute value = op.GetAttr("value");
      if (!value.Is(ir::AttrKind::kDenseElements) || !value->splat) {
        return std::optional<ValueId>();
      }
      ir::Operation splat("kiln.attributes");
      splat.SetAttr("value", ir::Attribute::DenseElements(local_type, value->data, true));
      return made(LowerRebuilt(lowering, op, op.name(), {}, {local_type}, {}, &splat));
    }
    default: break;
  }
  if (!MadeElementForElement(op) || !IsRealTensor(type)) return std::optional<ValueId>();
  // Operands of the result's shape take the same tiles; scalars (select,
  // clamp) stay whole.
  for (const ir::Value* operand : op.operands()) {
    if (!operand->type().dims().empty() && !WithoutGather(lowering, operand, sharding, padded)) {
      return std::optional<ValueId>();
    }
  }
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    const ir::Type& operand = op.operand(i)->type();
    if (!IsRealTensor(operand)) return std::optional<ValueId>();
    if (operand.dims().empty() && !global.empty()) {
      KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.Input(op, i));
      operands.push_back(lowering.StandIn(whole, operand));
      continue;
    }
    if (operand.dims() != global) return std::optional<ValueId>();
    KILN_ASSIGN_OR_RETURN(ir::Value * tile, OperandTile(lowering, op, i, sharding, padded));
    operands.push_back(tile);
  }
  return made(LowerRebuilt(lowering, op, op.name(), operands, {local_type}, {}, &op));
}

}  // namespace

StatusOr<std::optional<ValueId>> Lowering::TileEarly(const ir::Value* value,
                                                     const TensorSharding& sharding) {
  return RemakeOnTiles(value, sharding, /*padded=*/false);
}

StatusOr<std::optional<ValueId>> Lowering::TilePaddedEarly(const ir::Value* value,
                                                           const TensorSharding& sharding) {
  return RemakeOnTiles(value, sharding, /*padded=*/true);
}

StatusOr<std::optional<ValueId>> Lowering::RemakeOnTiles(const ir::Value* value,
                                                         const TensorSharding& sharding,
                                                         bool padded) {
  if (spmd_ == nullptr || !spmd_->on_tiles || !sharding.unreduced.empty() ||
      early_depth_ >= kMaxEarlyDepth) {
    return std::optional<ValueId>();
  }
  if (region_results_ != nullptr && region_results_->probe && value->defining_op() == nullptr &&
      value->owner_block() == region_block_ && value->index() >= 0) {
    // A probed loop body cuts a carry that arrives whole (OnTilesWhile).
    std::vector<std::optional<TensorSharding>>& wanted = region_results_->wanted;
    const auto i = static_cast<size_t>(value->index());
    if (wanted.size() <= i) wanted.resize(i + 1);
    if (!wanted[i]) wanted[i] = sharding;
  }
  // The value as this lowering holds it: whole, or as tiles of another
  // tiling (of which only what is cheaper to make again than to gather
  // is made again: a broadcast of fewer elements, an iota, a constant).
  const Tiles* held = ungathered_.count(value) != 0 && captured_tiles_.count(value) == 0
                          ? &ungathered_.at(value)
                          : nullptr;
  std::optional<ValueId> id = BoundId(value);
  if (!id || (held != nullptr && !held->sharding.unreduced.empty())) {
    return std::optional<ValueId>();
  }
  // A parameter of this graph (an argument, or a value a region captures
  // from around it) is cut: making its producer again here would move
  // that work into the region, once per iteration.
  if (std::find(graph_.parameters.begin(), graph_.parameters.end(), *id) !=
      graph_.parameters.end()) {
    return std::optional<ValueId>();
  }
  KILN_ASSIGN_OR_RETURN(Shape global, ShapeOf(value));
  if (sharding.dims.size() != global.dims.size()) return std::optional<ValueId>();
  // (A value's tile may be another value's whole array: the memos below
  // are keyed by the id and the whole shape.)
  if (auto made = remade_.find(*id); made != remade_.end()) {
    for (const Remade& tiles : made->second) {
      if (tiles.global == global.dims && SameTiling(tiles.sharding, sharding, global.dims)) {
        return std::optional(tiles.local);
      }
    }
  }
  if (auto known = tiles_.find(*id);
      known != tiles_.end() && held == nullptr && graph_.shape(*id).dims == global.dims) {
    if (SameTiling(known->second.sharding, sharding, global.dims)) {
      return std::optional<ValueId>(known->second.local);
    }
  }
  const ir::Value* source = value;
  const ir::Operation* producer = ProducerOf(source, *id);
  if (producer == nullptr || producer->num_results() != 1) return std::optional<ValueId>();
  if (held != nullptr) {
    const ir::OpCode code = producer->code();
    const bool smaller = code == ir::OpCode::kBroadcastInDim &&
                         producer->operand(0)->type().NumElements() <
                             producer->result(0)->type().NumElements();
    if (!smaller && code != ir::OpCode::kIota && code != ir::OpCode::kConstant) {
      return std::optional<ValueId>();
    }
  }
  // Even tiles, or (`padded`) a sharding that does not divide the value.
  auto local = sharding.LocalDims(global.dims);
  if (local.ok() == padded) return std::optional<ValueId>();
  if (padded) {
    if (held != nullptr || !SimpleAxes(sharding)) return std::optional<ValueId>();
    local = sharding.PaddedDims(global.dims);
    if (!local.ok()) return std::optional<ValueId>();
  }
  if (held == nullptr && *local == global.dims) return std::optional<ValueId>(*id);
  ++early_depth_;
  StatusOr<std::optional<ValueId>> tile = MakeOnTile(*this, *producer, sharding, *local, padded);
  --early_depth_;
  KILN_RETURN_IF_ERROR(tile.status());
  if (tile.value()) remade_[*id].push_back(Remade{*tile.value(), sharding, global.dims});
  return tile;
}

}  // namespace kiln::compiler
