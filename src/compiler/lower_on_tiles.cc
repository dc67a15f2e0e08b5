// Ops computed on tiles (issue 28; docs/sharding.md). In an SPMD program
// an entry parameter arrives as the running device's tile of a sharded
// array; the lowering keeps it as tiles (Lowering::HeldAsTiles) until an op
// needs it whole. An op with a rule runs on the tiles instead: the same op
// rebuilt with the tiles' types (so the ordinary rule lowers it), its
// result held as tiles of the sharding that follows from the operands'.
// Where a contraction or reduction runs over a split dimension, each
// device's result is a partial sum (tiles with unreduced axes), summed
// where a use needs it (Lowering::SumPartials). Whole operands are cut to
// the running device's tile (no communication). An op without a rule, or
// whose operands disagree, takes its operands whole (gathered once), so
// every program still runs.
//
// Rules here: partial sums through linear ops, pointwise ops,
// broadcast_in_dim, transpose, reshapes, dot_general, reduce with a one-op
// body, sharding_constraint / reshard and propagation_barrier; the other
// op families in lower_on_tiles_aligned.cc and lower_on_tiles_regions.cc.
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "compiler/lowering.h"
#include "compiler/on_tiles.h"
#include "ir/op_description.h"

namespace kiln::compiler {
namespace on_tiles {

// The helpers on_tiles.h declares (and documents).

TensorSharding Unsplit(const Mesh& mesh, size_t rank) {
  TensorSharding sharding;
  sharding.mesh = mesh;
  sharding.dims.resize(rank);
  return sharding;
}

bool SameAxes(const std::vector<AxisRef>& a, const std::vector<AxisRef>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].pre_size != b[i].pre_size || a[i].size != b[i].size) {
      return false;
    }
  }
  return true;
}

bool SameMesh(const Mesh& a, const Mesh& b) {
  return a.axes == b.axes && a.sizes == b.sizes && a.device_ids == b.device_ids;
}

bool SimpleAxes(const TensorSharding& sharding, std::span<const std::vector<AxisRef>> extra) {
  std::set<std::string> seen;
  auto check = [&](const std::vector<AxisRef>& axes) {
    for (const AxisRef& ref : axes) {
      if (ref.pre_size != 1 || ref.size != 0 || !seen.insert(ref.name).second) return false;
    }
    return true;
  };
  for (const auto& axes : sharding.dims) {
    if (!check(axes)) return false;
  }
  for (const auto& axes : extra) {
    if (!check(axes)) return false;
  }
  return true;
}

bool IsRealTensor(const ir::Type& type) {
  return type.Is(ir::TypeKind::kTensor) && type.HasStaticShape() &&
         type.element().Is(ir::TypeKind::kElement);
}

ir::Type LocalType(const ir::Type& global, std::vector<int64_t> dims) {
  return ir::Type::Tensor(global.element(), std::move(dims));
}

void CopyAttributes(const ir::Operation& from, ir::Operation& to) {
  for (const ir::NamedAttribute& attribute : from.attributes()) {
    to.SetAttr(attribute.name, attribute.value);
  }
}

Status CloneRegion(const ir::Region& from, ir::Operation& into,
                   std::unordered_map<const ir::Value*, ir::Value*>& copies, int depth) {
  if (depth > 16) return Unimplemented("regions nested deeper than 16 in an op on tiles");
  ir::Region& region = into.AddRegion();
  for (size_t b = 0; b < from.num_blocks(); ++b) {
    const ir::Block& source = from.block(b);
    ir::Block& block = region.AddBlock();
    for (size_t i = 0; i < source.num_arguments(); ++i) {
      copies[source.argument(i)] = block.AddArgument(source.argument(i)->type());
    }
    for (const auto& op : source.operations()) {
      auto made = std::make_unique<ir::Operation>(op->name(), op->location());
      for (ir::Value* operand : op->operands()) {
        auto found = copies.find(operand);
        made->AddOperand(found != copies.end() ? found->second : operand);
      }
      for (size_t r = 0; r < op->num_results(); ++r) {
        copies[op->result(r)] = made->AddResult(op->result(r)->type());
      }
      CopyAttributes(*op, *made);
      for (size_t r = 0; r < op->num_regions(); ++r) {
        KILN_RETURN_IF_ERROR(CloneRegion(op->region(r), *made, copies, depth + 1));
      }
      block.Append(std::move(made));
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<ValueId>> LowerRebuilt(Lowering& lowering, const ir::Operation& op,
                                            std::string_view name,
                                            const std::vector<ir::Value*>& operands,
                                            const std::vector<ir::Type>& result_types,
                                            std::string_view body_op,
                                            const ir::Operation* attributes_of, bool regions) {
  auto made = std::make_unique<ir::Operation>(std::string(name), op.location());
  for (ir::Value* operand : operands) made->AddOperand(operand);
  for (const ir::Type& type : result_types) made->AddResult(type);
  if (attributes_of != nullptr) {
    CopyAttributes(*attributes_of, *made);
  }
  if (regions) {
    std::unordered_map<const ir::Value*, ir::Value*> copies;
    for (size_t r = 0; r < op.num_regions(); ++r) {
      KILN_RETURN_IF_ERROR(CloneRegion(op.region(r), *made, copies, 0));
    }
  }
  if (!body_op.empty()) {
    // A reduction body of one binary op on 0-d tensors of the element type.
    const ir::Type scalar = ir::Type::Tensor(result_types[0].element(), {});
    ir::Block& block = made->AddRegion().AddBlock();
    ir::Value* a = block.AddArgument(scalar);
    ir::Value* b = block.AddArgument(scalar);
    auto fold = std::make_unique<ir::Operation>(std::string(body_op), op.location());
    fold->AddOperand(a);
    fold->AddOperand(b);
    ir::Value* folded = fold->AddResult(scalar);
    block.Append(std::move(fold));
    auto done = std::make_unique<ir::Operation>("stablehlo.return", op.location());
    done->AddOperand(folded);
    block.Append(std::move(done));
  }
  KILN_ASSIGN_OR_RETURN(const ir::Operation* lowered, lowering.LowerAdopted(std::move(made)));
  std::vector<ValueId> results;
  for (size_t r = 0; r < lowered->num_results(); ++r) {
    KILN_ASSIGN_OR_RETURN(ValueId id, lowering.Lookup(lowered->result(r)));
    results.push_back(id);
  }
  return results;
}

StatusOr<ir::Value*> TileOf(Lowering& lowering, const ir::Operation& op, size_t i,
                            const TensorSharding& sharding) {
  const ir::Value* operand = op.operand(i);
  KILN_ASSIGN_OR_RETURN(Shape global, lowering.ShapeOf(operand));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, sharding.LocalDims(global.dims));
  if (const Lowering::Tiles* tiles = lowering.HeldAsTiles(operand)) {
    if (SameTiling(tiles->sharding, sharding, global.dims)) {
      return lowering.StandIn(tiles->local, LocalType(operand->type(), local));
    }
    const Lowering::Tiles held = *tiles;
    KILN_ASSIGN_OR_RETURN(std::optional<ValueId> finer, EmitFinerTile(lowering, held, sharding));
    if (finer) return lowering.StandIn(*finer, LocalType(operand->type(), local));
    // Held as other tiles: gathered along the axes they do not share
    // (below), or whole (once) and cut again.
  }
  // Made again on tiles where it can be (a broadcast of a scalar or a
  // bias, a mask from iotas), rather than cut from the whole value.
  KILN_ASSIGN_OR_RETURN(std::optional<ValueId> early, lowering.TileEarly(operand, sharding));
  if (early) return lowering.StandIn(*early, LocalType(operand->type(), local));
  if (const Lowering::Tiles* tiles = lowering.HeldAsTiles(operand);
      tiles != nullptr && !lowering.HeldWhole(operand)) {
    const Lowering::Tiles held = *tiles;
    KILN_ASSIGN_OR_RETURN(std::optional<ValueId> resharded,
                          EmitReshard(lowering, held, global, sharding));
    if (resharded) return lowering.StandIn(*resharded, LocalType(operand->type(), local));
  }
  KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.Lookup(operand));
  KILN_ASSIGN_OR_RETURN(ValueId tile, EmitTile(lowering, whole, global, sharding));
  return lowering.StandIn(tile, LocalType(operand->type(), local));
}

void BindResult(Lowering& lowering, const ir::Operation& op, size_t r, ValueId local,
                const TensorSharding& sharding) {
  if (sharding.IsReplicated()) {
    lowering.Bind(op.result(r), local);
  } else {
    lowering.BindTiles(op.result(r), local, sharding);
  }
}

void SetGroupsAlong(const Spmd& spmd, const Mesh& mesh, const std::vector<AxisRef>& axes,
                    ir::Operation& attributes) {
  const std::vector<std::vector<int64_t>> groups = GroupsAlong(mesh, axes);
  std::vector<int64_t> ids;
  for (int64_t replica = 0; replica < spmd.num_replicas; ++replica) {
    for (const std::vector<int64_t>& group : groups) {
      for (int64_t id : group) ids.push_back(replica * spmd.num_partitions + id);
    }
  }
  const size_t width = groups.front().size();
  std::vector<uint8_t> bytes(ids.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), ids.data(), bytes.size());
  const auto rows = static_cast<int64_t>(ids.size() / width);
  attributes.SetAttr("replica_groups", ir::Attribute::DenseElements(
                                           ir::Type::Tensor(ir::Type::Element(ElementType::kS64),
                                                            {rows, static_cast<int64_t>(width)}),
                                           std::move(bytes), /*splat=*/false));
  const ir::Type i64 = ir::Type::Element(ElementType::kS64);
  attributes.SetAttr("channel_handle",
                     ir::Attribute::Struct("stablehlo.channel_handle",
                                           {{"handle", ir::Attribute::Integer(1, i64)},
                                            {"type", ir::Attribute::Integer(1, i64)}}));
  attributes.SetAttr("use_global_device_ids", ir::Attribute::Unit());
}

StatusOr<ValueId> ReduceOverAxes(Lowering& lowering, const ir::Operation& op, ValueId partial,
                                 const ir::Type& type, const Mesh& mesh,
                                 const std::vector<AxisRef>& axes, std::string_view body_op) {
  ir::Operation attributes("kiln.attributes");
  SetGroupsAlong(*lowering.spmd(), mesh, axes, attributes);
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> reduced,
                        LowerRebuilt(lowering, op, "stablehlo.all_reduce",
                                     {lowering.StandIn(partial, type)}, {type}, body_op,
                                     &attributes));
  return reduced[0];
}

StatusOr<ValueId> ScatterOverAxes(Lowering& lowering, const ir::Operation& op, ValueId partial,
                                  const ir::Type& type, const Mesh& mesh,
                                  const std::vector<AxisRef>& axes, size_t dimension) {
  ir::Operation attributes("kiln.attributes");
  SetGroupsAlong(*lowering.spmd(), mesh, axes, attributes);
  attributes.SetAttr("scatter_dimension",
                     ir::Attribute::Integer(static_cast<int64_t>(dimension),
                                            ir::Type::Element(ElementType::kS64)));
  std::vector<int64_t> dims = type.dims();
  int64_t count = 1;
  for (const AxisRef& ref : axes) {
    count *= ref.size > 0 ? ref.size : mesh.sizes[static_cast<size_t>(mesh.AxisIndex(ref.name))];
  }
  dims[dimension] /= count;
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> scattered,
                        LowerRebuilt(lowering, op, "stablehlo.reduce_scatter",
                                     {lowering.StandIn(partial, type)},
                                     {LocalType(type, std::move(dims))}, "stablehlo.add",
                                     &attributes));
  return scattered[0];
}

std::string BinaryBodyOp(const ir::Operation& op) {
  if (op.num_regions() != 1 || op.region(0).num_blocks() != 1) return "";
  const ir::Block& block = op.region(0).block(0);
  if (block.num_arguments() != 2 || block.operations().size() != 2) return "";
  const ir::Operation& fold = *block.operations()[0];
  const ir::Operation& done = *block.operations()[1];
  if (fold.operands().size() != 2 || fold.num_results() != 1 || done.operands().size() != 1 ||
      done.operand(0) != fold.result(0)) {
    return "";
  }
  const bool arguments = (fold.operand(0) == block.argument(0) &&
                          fold.operand(1) == block.argument(1)) ||
                         (fold.operand(0) == block.argument(1) &&
                          fold.operand(1) == block.argument(0));
  return arguments ? fold.name() : "";
}

std::string ReductionOp(const ir::Operation& op, size_t init) {
  const std::string name = BinaryBodyOp(op);
  // max / min / and / or: folding the init in once per device changes
  // nothing. add: only with an init of zero bits (0 or 0.0).
  if (name == "stablehlo.maximum" || name == "stablehlo.minimum" || name == "stablehlo.and" ||
      name == "stablehlo.or") {
    return name;
  }
  if (name != "stablehlo.add") return "";
  const ir::Operation* constant = op.operand(init)->defining_op();
  if (constant == nullptr || constant->code() != ir::OpCode::kConstant) return "";
  ir::Attribute value = constant->GetAttr("value");
  if (!value.Is(ir::AttrKind::kDenseElements)) return "";
  for (uint8_t byte : value->data) {
    if (byte != 0) return "";
  }
  return name;
}

std::optional<FactorPlan> PlanReshapeByFactors(const TensorSharding& sharding,
                                               std::span<const int64_t> in,
                                               std::span<const int64_t> out) {
  if (!sharding.unreduced.empty() || sharding.dims.size() != in.size() || !SimpleAxes(sharding) ||
      !sharding.LocalDims(in).ok()) {
    return std::nullopt;
  }
  struct Axis {
    AxisRef ref;
    int64_t stride;  // of its digit in the flat index
    int64_t size;
  };
  std::vector<Axis> axes;
  std::vector<int64_t> bounds;  // strides where something begins or ends
  int64_t stride = 1;
  for (size_t d = in.size(); d-- > 0;) {
    bounds.push_back(stride);
    int64_t within = in[d];
    for (const AxisRef& ref : sharding.dims[d]) {
      const int64_t size = sharding.SizeOf(ref);
      within /= size;
      axes.push_back({ref, stride * within, size});
      bounds.push_back(stride * within);
    }
    stride *= in[d];
  }
  bounds.push_back(stride);
  std::vector<int64_t> out_strides(out.size());
  int64_t out_total = 1;
  for (size_t m = out.size(); m-- > 0;) {
    out_strides[m] = out_total;
    bounds.push_back(out_total);
    out_total *= out[m];
  }
  if (out_total != stride || stride == 0) return std::nullopt;
  std::sort(bounds.begin(), bounds.end(), std::greater<>());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  for (size_t t = 0; t + 1 < bounds.size(); ++t) {
    if (bounds[t + 1] <= 0 || bounds[t] % bounds[t + 1] != 0) return std::nullopt;
  }
  // Digit t spans strides [bounds[t + 1], bounds[t]); an axis must be one.
  std::vector<size_t> digit_of(axes.size());
  for (size_t a = 0; a < axes.size(); ++a) {
    auto top = std::find(bounds.begin(), bounds.end(), axes[a].stride * axes[a].size);
    if (top == bounds.end() || top + 1 == bounds.end() || *(top + 1) != axes[a].stride) {
      return std::nullopt;
    }
    digit_of[a] = static_cast<size_t>(top - bounds.begin());
  }
  // Per output dimension, the axes covering its top digits, major first.
  FactorPlan plan;
  plan.result = Unsplit(sharding.mesh, out.size());
  std::vector<bool> kept(axes.size(), false);
  for (size_t m = 0; m < out.size(); ++m) {
    int64_t top = out_strides[m] * out[m];
    for (bool found = out[m] > 1; found;) {
      found = false;
      for (size_t a = 0; a < axes.size(); ++a) {
        if (kept[a] || axes[a].stride * axes[a].size != top || axes[a].stride < out_strides[m]) {
          continue;
        }
        kept[a] = found = true;
        plan.result.dims[m].push_back(axes[a].ref);
        top = axes[a].stride;
        break;
      }
    }
  }
  plan.all_kept = std::find(kept.begin(), kept.end(), false) == kept.end();
  plan.left = Unsplit(sharding.mesh, bounds.size() - 1);
  for (size_t t = 0; t + 1 < bounds.size(); ++t) plan.digits.push_back(bounds[t] / bounds[t + 1]);
  plan.gathered = plan.digits;
  for (size_t a = 0; a < axes.size(); ++a) {
    plan.digits[digit_of[a]] = 1;
    if (kept[a]) {
      plan.gathered[digit_of[a]] = 1;
    } else {
      plan.left.dims[digit_of[a]] = {axes[a].ref};
    }
  }
  return plan;
}

}  // namespace on_tiles

namespace {

using namespace on_tiles;  // NOLINT(google-build-using-namespace)

// ---- the rules ----

StatusOr<bool> OnTilesPointwise(Lowering& lowering, const ir::Operation& op) {
  if (op.num_results() != 1 || !IsRealTensor(op.result(0)->type())) return false;
  KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(0)));
  std::optional<TensorSharding> sharding;  // the first tiled operand's
  for (const ir::Value* operand : op.operands()) {
    if (const Lowering::Tiles* tiles = lowering.HeldAsTiles(operand)) {
      sharding = tiles->sharding;
      break;
    }
  }
  if (!sharding || sharding->dims.size() != result.dims.size()) return false;
  if (!sharding->LocalDims(result.dims).ok()) return false;
  const TensorSharding& tiling = *sharding;
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<ir::Value*>> operands,
                        PointwiseOperands(lowering, op, [&](size_t i) {
                          return TileOf(lowering, op, i, tiling);
                        }));
  if (!operands) return false;
  const TensorSharding kept = *sharding;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, kept.LocalDims(result.dims));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), *operands,
                                     {LocalType(op.result(0)->type(), local)}, {}, &op));
  BindResult(lowering, op, 0, results[0], kept);
  return true;
}

// `op`, of one operand held as tiles of `operand_sharding`, computed on
// them with its result tiled by `sharding`; false when the result does
// not split evenly.
StatusOr<bool> OnTilesOfOne(Lowering& lowering, const ir::Operation& op,
                            const TensorSharding& operand_sharding,
                            const TensorSharding& sharding) {
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  auto local = sharding.LocalDims(out.dims);
  if (!local.ok()) return false;
  KILN_ASSIGN_OR_RETURN(ir::Value * tile, TileOf(lowering, op, 0, operand_sharding));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), {tile},
                                     {LocalType(op.result(0)->type(), *local)}, {}, &op));
  BindResult(lowering, op, 0, results[0], sharding);
  return true;
}

StatusOr<bool> BroadcastInDim(Lowering& lowering, const ir::Operation& op) {
  const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(0));
  if (tiles == nullptr) return false;
  const TensorSharding operand_sharding = tiles->sharding;
  std::optional<TensorSharding> sharding = MovedSharding(op, operand_sharding);
  if (!sharding) return false;
  return OnTilesOfOne(lowering, op, operand_sharding, *sharding);
}

StatusOr<bool> Transpose(Lowering& lowering, const ir::Operation& op) {
  const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(0));
  if (tiles == nullptr) return false;
  const TensorSharding operand_sharding = tiles->sharding;
  std::optional<TensorSharding> sharding = MovedSharding(op, operand_sharding);
  if (!sharding) return false;
  return OnTilesOfOne(lowering, op, operand_sharding, *sharding);
}

// reshape: the dimensions fall into groups of equal products (a dimension
// split into several, several merged into one, unit dimensions added or
// dropped). A group's first (non-unit) input dimension may be split: its
// tiles are contiguous runs of the group's elements, which are the tiles of
// the group's first output dimension along the same axes when their count
// divides it. Other split dimensions of a group are gathered whole first.
// reshape by factors (PlanReshapeByFactors): the axes left are gathered
// alone (the devices that differ along them meet); the device's tile is
// then reshaped to its output tile. False where no axis is kept (the rule
// below).
StatusOr<bool> ReshapeByFactors(Lowering& lowering, const ir::Operation& op,
                                const TensorSharding& operand_sharding, const Shape& in,
                                const Shape& out) {
  std::optional<FactorPlan> plan = PlanReshapeByFactors(operand_sharding, in.dims, out.dims);
  if (!plan || plan->result.IsReplicated()) return false;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> out_local, plan->result.LocalDims(out.dims));
  KILN_ASSIGN_OR_RETURN(ir::Value * tile, TileOf(lowering, op, 0, operand_sharding));
  ValueId value = kNoValue;
  if (plan->all_kept) {
    KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                          LowerRebuilt(lowering, op, op.name(), {tile},
                                       {LocalType(op.result(0)->type(), out_local)}, {}, &op));
    value = results[0];
  } else {
    // The tile as digits, the axes left gathered along theirs, then
    // reshaped to the output tile.
    KILN_ASSIGN_OR_RETURN(std::vector<ValueId> split,
                          LowerRebuilt(lowering, op, op.name(), {tile},
                                       {LocalType(op.result(0)->type(), plan->digits)}, {}, &op));
    KILN_ASSIGN_OR_RETURN(ValueId gathered,
                          lowering.GatherTiles(split[0], Shape{out.element_type, plan->gathered},
                                               plan->left));
    KILN_ASSIGN_OR_RETURN(
        std::vector<ValueId> results,
        LowerRebuilt(lowering, op, op.name(),
                     {lowering.StandIn(gathered, LocalType(op.result(0)->type(), plan->gathered))},
                     {LocalType(op.result(0)->type(), out_local)}, {}, &op));
    value = results[0];
  }
  BindResult(lowering, op, 0, value, plan->result);
  return true;
}

StatusOr<bool> Reshape(Lowering& lowering, const ir::Operation& op) {
  const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(0));
  if (tiles == nullptr || !IsRealTensor(op.result(0)->type())) return false;
  const TensorSharding operand_sharding = tiles->sharding;
  KILN_ASSIGN_OR_RETURN(Shape in, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  if (in.NumElements() == 0 || operand_sharding.dims.size() != in.dims.size()) return false;
  KILN_ASSIGN_OR_RETURN(bool factored, ReshapeByFactors(lowering, op, operand_sharding, in, out));
  if (factored) return true;
  TensorSharding sharding = Unsplit(operand_sharding.mesh, out.dims.size());
  TensorSharding used = operand_sharding;  // the operand's tiles the reshape takes
  size_t i = 0;
  size_t o = 0;
  while (i < in.dims.size() || o < out.dims.size()) {
    // The next group: input dimensions [i, i_end), output [o, o_end).
    size_t i_end = i;
    size_t o_end = o;
    int64_t in_product = 1;
    int64_t out_product = 1;
    do {
      if (in_product <= out_product && i_end < in.dims.size()) {
        in_product *= in.dims[i_end++];
      } else if (o_end < out.dims.size()) {
        out_product *= out.dims[o_end++];
      } else if (i_end < in.dims.size()) {
        in_product *= in.dims[i_end++];
      } else {
        return false;
      }
    } while (in_product != out_product || (i_end == i && o_end == o));
    // Trailing unit dimensions join the group.
    while (i_end < in.dims.size() && in.dims[i_end] == 1 &&
           (o_end == out.dims.size() || out.dims[o_end] != 1)) {
      ++i_end;
    }
    while (o_end < out.dims.size() && out.dims[o_end] == 1 &&
           (i_end == in.dims.size() || in.dims[i_end] != 1)) {
      ++o_end;
    }
    size_t first_in = i;
    while (first_in < i_end && in.dims[first_in] == 1) ++first_in;
    size_t first_out = o;
    while (first_out < o_end && out.dims[first_out] == 1) ++first_out;
    for (size_t d = i; d < i_end; ++d) {
      if (operand_sharding.dims[d].empty()) continue;
      // Other dimensions of the group are gathered whole, as are the minor
      // axes of the first that do not split its output dimension evenly.
      if (d != first_in || first_out == o_end) {
        used.dims[d].clear();
        continue;
      }
      std::vector<AxisRef> kept;
      int64_t count = 1;
      for (const AxisRef& ref : operand_sharding.dims[d]) {
        count *= operand_sharding.SizeOf(ref);
        if (out.dims[first_out] % count != 0) break;
        kept.push_back(ref);
      }
      used.dims[d] = kept;
      sharding.dims[first_out] = kept;
    }
    i = i_end;
    o = o_end;
  }
  if (sharding.IsReplicated()) return false;
  return OnTilesOfOne(lowering, op, used, sharding);
}

}  // namespace

namespace on_tiles {

StatusOr<std::optional<std::vector<ir::Value*>>> PointwiseOperands(
    Lowering& lowering, const ir::Operation& op,
    const std::function<StatusOr<ir::Value*>(size_t)>& tile_of) {
  const std::vector<int64_t>& result = op.result(0)->type().dims();
  auto scalar = [&](const ir::Type& type) { return type.dims().empty() && !result.empty(); };
  for (const ir::Value* operand : op.operands()) {
    const ir::Type& type = operand->type();
    if (!IsRealTensor(type) || (!scalar(type) && type.dims() != result)) {
      return std::optional<std::vector<ir::Value*>>();
    }
  }
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    const ir::Type& type = op.operand(i)->type();
    if (scalar(type)) {
      KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.Input(op, i));
      operands.push_back(lowering.StandIn(whole, type));
    } else {
      KILN_ASSIGN_OR_RETURN(ir::Value * tile, tile_of(i));
      operands.push_back(tile);
    }
  }
  return std::optional<std::vector<ir::Value*>>(std::move(operands));
}

bool ElementForElement(const ir::Operation& op) {
  if (op.code() == ir::OpCode::kUnknown || op.num_regions() != 0) return false;
  const ir::OpDescription& description = ir::DescribeOp(op.code());
  return description.Has(ir::kPointwise) || description.elementwise ||
         op.code() == ir::OpCode::kCompare;
}

std::optional<TensorSharding> MovedSharding(const ir::Operation& op,
                                            const TensorSharding& operand_sharding) {
  if (op.operands().empty() || op.num_results() != 1 || !IsRealTensor(op.result(0)->type()) ||
      !IsRealTensor(op.operand(0)->type())) {
    return std::nullopt;
  }
  const std::vector<int64_t>& in = op.operand(0)->type().dims();
  const std::vector<int64_t>& out = op.result(0)->type().dims();
  if (operand_sharding.dims.size() != in.size()) return std::nullopt;
  TensorSharding sharding = Unsplit(operand_sharding.mesh, out.size());
  if (op.code() == ir::OpCode::kBroadcastInDim) {
    std::optional<std::vector<int64_t>> dims = ir::IntegersOf(op.GetAttr("broadcast_dimensions"));
    if (!dims || dims->size() != in.size()) return std::nullopt;
    for (size_t i = 0; i < dims->size(); ++i) {
      if (operand_sharding.dims[i].empty()) continue;
      const auto to = static_cast<size_t>((*dims)[i]);
      if (to >= out.size() || out[to] != in[i]) return std::nullopt;
      sharding.dims[to] = operand_sharding.dims[i];
    }
    return sharding;
  }
  if (op.code() == ir::OpCode::kTranspose) {
    std::optional<std::vector<int64_t>> permutation = ir::IntegersOf(op.GetAttr("permutation"));
    if (!permutation || permutation->size() != out.size() || in.size() != out.size()) {
      return std::nullopt;
    }
    for (size_t i = 0; i < permutation->size(); ++i) {
      const auto from = static_cast<size_t>((*permutation)[i]);
      if (from >= in.size()) return std::nullopt;
      sharding.dims[i] = operand_sharding.dims[from];
    }
    return sharding;
  }
  return std::nullopt;
}

StatusOr<std::optional<DotPlan>> PlanDot(Lowering& lowering, const ir::Operation& op,
                                         const Lowering::Tiles* lhs_tiles,
                                         const Lowering::Tiles* rhs_tiles, bool gather_contracting,
                                         bool padded) {
  ir::Attribute numbers = op.GetAttr("dot_dimension_numbers");
  if (!numbers.Is(ir::AttrKind::kStruct) || !IsRealTensor(op.result(0)->type())) {
    return std::optional<DotPlan>();
  }
  if (op.GetAttr("algorithm")) return std::optional<DotPlan>();
  const std::vector<int64_t> lhs_batch = FieldInts(numbers, "lhs_batching_dimensions");
  const std::vector<int64_t> rhs_batch = FieldInts(numbers, "rhs_batching_dimensions");
  const std::vector<int64_t> lhs_contract = FieldInts(numbers, "lhs_contracting_dimensions");
  const std::vector<int64_t> rhs_contract = FieldInts(numbers, "rhs_contracting_dimensions");
  if (lhs_batch.size() != rhs_batch.size() || lhs_contract.size() != rhs_contract.size()) {
    return std::optional<DotPlan>();
  }
  if (lhs_tiles == nullptr && rhs_tiles == nullptr) return std::optional<DotPlan>();
  if (lhs_tiles != nullptr && rhs_tiles != nullptr &&
      !SameMesh(lhs_tiles->sharding.mesh, rhs_tiles->sharding.mesh)) {
    return std::optional<DotPlan>();
  }
  const Mesh mesh = (lhs_tiles != nullptr ? lhs_tiles : rhs_tiles)->sharding.mesh;
  KILN_ASSIGN_OR_RETURN(Shape lhs_shape, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape rhs_shape, lowering.ShapeOf(op.operand(1)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  const size_t lhs_rank = lhs_shape.dims.size();
  const size_t rhs_rank = rhs_shape.dims.size();
  auto axes_of = [](const Lowering::Tiles* tiles, int64_t d) -> std::vector<AxisRef> {
    if (tiles == nullptr) return {};
    return tiles->sharding.dims[static_cast<size_t>(d)];
  };
  DotPlan plan{
      Unsplit(mesh, lhs_rank), Unsplit(mesh, rhs_rank), Unsplit(mesh, out.dims.size()), {}};
  // Batch and contracting pairs take one set of axes.
  auto pair = [&](int64_t l, int64_t r) {
    std::vector<AxisRef> a = axes_of(lhs_tiles, l);
    std::vector<AxisRef> b = axes_of(rhs_tiles, r);
    if (lhs_tiles != nullptr && rhs_tiles != nullptr && !SameAxes(a, b)) return false;
    const std::vector<AxisRef>& axes = lhs_tiles != nullptr && !a.empty() ? a : b;
    plan.lhs.dims[static_cast<size_t>(l)] = axes;
    plan.rhs.dims[static_cast<size_t>(r)] = axes;
    return true;
  };
  for (size_t i = 0; i < lhs_batch.size(); ++i) {
    if (!pair(lhs_batch[i], rhs_batch[i])) return std::optional<DotPlan>();
  }
  if (!gather_contracting) {
    for (size_t i = 0; i < lhs_contract.size(); ++i) {
      if (!pair(lhs_contract[i], rhs_contract[i])) return std::optional<DotPlan>();
      for (const AxisRef& ref : plan.lhs.dims[static_cast<size_t>(lhs_contract[i])]) {
        plan.partial.push_back(ref);
      }
    }
  }
  size_t next = 0;
  for (int64_t d : lhs_batch) plan.result.dims[next++] = plan.lhs.dims[static_cast<size_t>(d)];
  auto is_free = [](const std::vector<int64_t>& batch, const std::vector<int64_t>& contract,
                    int64_t d) {
    return std::find(batch.begin(), batch.end(), d) == batch.end() &&
           std::find(contract.begin(), contract.end(), d) == contract.end();
  };
  for (size_t d = 0; d < lhs_rank; ++d) {
    if (!is_free(lhs_batch, lhs_contract, static_cast<int64_t>(d))) continue;
    plan.lhs.dims[d] = axes_of(lhs_tiles, static_cast<int64_t>(d));
    plan.result.dims[next++] = plan.lhs.dims[d];
  }
  for (size_t d = 0; d < rhs_rank; ++d) {
    if (!is_free(rhs_batch, rhs_contract, static_cast<int64_t>(d))) continue;
    plan.rhs.dims[d] = axes_of(rhs_tiles, static_cast<int64_t>(d));
    plan.result.dims[next++] = plan.rhs.dims[d];
  }
  if (next != out.dims.size()) return std::optional<DotPlan>();
  const std::vector<AxisRef> partial_axes[] = {plan.partial};
  if (!SimpleAxes(plan.result, partial_axes)) return std::optional<DotPlan>();
  if (padded) {
    // Uneven tiles: partial sums only into even ones (a padded value is
    // never held partial).
    if (!plan.partial.empty() && !plan.result.LocalDims(out.dims).ok()) {
      return std::optional<DotPlan>();
    }
  } else if (!plan.lhs.LocalDims(lhs_shape.dims).ok() || !plan.rhs.LocalDims(rhs_shape.dims).ok() ||
             !plan.result.LocalDims(out.dims).ok()) {
    return std::optional<DotPlan>();
  }
  if (!plan.partial.empty() && (lowering.spmd()->num_partitions != mesh.num_devices() ||
                                out.element_type == ElementType::kPred)) {
    return std::optional<DotPlan>();
  }
  if (plan.partial.empty() && plan.result.IsReplicated()) return std::optional<DotPlan>();
  return std::optional<DotPlan>(std::move(plan));
}

}  // namespace on_tiles

namespace {

// How many tiles `sharding` splits a tensor into.
int64_t TileCount(const TensorSharding& sharding) {
  int64_t count = 1;
  for (size_t d = 0; d < sharding.dims.size(); ++d) count *= sharding.Tiles(d);
  return count;
}

// Both operands' tilings when they agree. When they conflict, the plan
// whose result is split into the most tiles among: both operands' free
// dimensions with the contracting ones gathered, the left's tiling alone
// (the right operand gathered and cut to fit), the right's alone; ties go
// in that order. (XLA likewise keeps one side's axes and gathers the
// others'; on the differential suite's programs this picks its shardings.)
StatusOr<bool> DotGeneral(Lowering& lowering, const ir::Operation& op) {
  const Lowering::Tiles* lhs = lowering.HeldAsTiles(op.operand(0));
  const Lowering::Tiles* rhs = lowering.HeldAsTiles(op.operand(1));
  KILN_ASSIGN_OR_RETURN(std::optional<DotPlan> plan, PlanDot(lowering, op, lhs, rhs, false));
  if (!plan && lhs != nullptr && rhs != nullptr) {
    const std::pair<const Lowering::Tiles*, const Lowering::Tiles*> options[] = {
        {lhs, rhs}, {lhs, nullptr}, {nullptr, rhs}};
    for (size_t i = 0; i < 3; ++i) {
      KILN_ASSIGN_OR_RETURN(std::optional<DotPlan> candidate,
                            PlanDot(lowering, op, options[i].first, options[i].second, i == 0));
      if (candidate && (!plan || TileCount(candidate->result) > TileCount(plan->result))) {
        plan = std::move(candidate);
      }
    }
  }
  if (!plan) return false;
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, plan->result.LocalDims(out.dims));
  KILN_ASSIGN_OR_RETURN(ir::Value * lhs_tile, TileOf(lowering, op, 0, plan->lhs));
  KILN_ASSIGN_OR_RETURN(ir::Value * rhs_tile, TileOf(lowering, op, 1, plan->rhs));
  const ir::Type type = LocalType(op.result(0)->type(), local);
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), {lhs_tile, rhs_tile}, {type}, {},
                                     &op));
  // Contracting axes leave partial sums, summed where a use needs them
  // (Lowering::SumPartials): a sharding constraint may keep them unreduced.
  plan->result.unreduced = plan->partial;
  BindResult(lowering, op, 0, results[0], plan->result);
  return true;
}

// reduce of one operand: kept dimensions keep their axes; reduced sharded
// dimensions leave partial results, which an all_reduce completes.
StatusOr<bool> Reduce(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 2 || op.num_results() != 1) return false;
  const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(0));
  if (tiles == nullptr || !IsRealTensor(op.result(0)->type()) ||
      !IsRealTensor(op.operand(1)->type()) || lowering.HeldAsTiles(op.operand(1)) != nullptr) {
    return false;
  }
  const TensorSharding operand_sharding = tiles->sharding;
  const std::string body = ReductionOp(op, 1);
  if (body.empty()) return false;
  std::optional<std::vector<int64_t>> reduced = ir::IntegersOf(op.GetAttr("dimensions"));
  if (!reduced) return false;
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  TensorSharding sharding = Unsplit(operand_sharding.mesh, 0);
  std::vector<AxisRef> partial;
  for (size_t d = 0; d < operand_sharding.dims.size(); ++d) {
    const bool gone = std::find(reduced->begin(), reduced->end(), static_cast<int64_t>(d)) !=
                      reduced->end();
    if (!gone) {
      sharding.dims.push_back(operand_sharding.dims[d]);
    } else {
      for (const AxisRef& ref : operand_sharding.dims[d]) partial.push_back(ref);
    }
  }
  if (sharding.dims.size() != out.dims.size()) return false;
  const std::vector<AxisRef> partial_axes[] = {partial};
  if (!SimpleAxes(sharding, partial_axes)) return false;
  if (!partial.empty() && lowering.spmd()->num_partitions != operand_sharding.mesh.num_devices()) {
    return false;
  }
  auto local = sharding.LocalDims(out.dims);
  if (!local.ok()) return false;
  KILN_ASSIGN_OR_RETURN(ir::Value * tile, TileOf(lowering, op, 0, operand_sharding));
  KILN_ASSIGN_OR_RETURN(ValueId init, lowering.Input(op, 1));
  ir::Value* init_value = lowering.StandIn(init, op.operand(1)->type());
  const ir::Type type = LocalType(op.result(0)->type(), *local);
  ir::Operation attributes("kiln.attributes");
  attributes.SetAttr("dimensions", op.GetAttr("dimensions"));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), {tile, init_value}, {type}, body,
                                     &attributes));
  ValueId value = results[0];
  if (!partial.empty() && body == "stablehlo.add") {
    // Partial sums, summed where a use needs them (as a contraction's).
    sharding.unreduced = partial;
  } else if (!partial.empty()) {
    KILN_ASSIGN_OR_RETURN(value, ReduceOverAxes(lowering, op, value, type, operand_sharding.mesh,
                                                partial, body));
  }
  BindResult(lowering, op, 0, value, sharding);
  return true;
}

// Whether `op` only moves, slices, selects or places the elements of its
// `partial` operands, whole-shaped partial sums alike (`sharding`), into
// its result, so that the op on each device's summands gives summands of
// its result: dynamic_update_slice of a partial update into a partial
// operand (a loop's gradient accumulator), dynamic_slice, slice, reverse,
// broadcast_in_dim, pad with zeros, concatenate of partials, select
// between partials.
StatusOr<bool> MovesPartialsWhole(Lowering& lowering, const ir::Operation& op,
                                  const std::vector<size_t>& partial,
                                  const TensorSharding& sharding) {
  for (size_t i : partial) {
    if (!IsRealTensor(op.operand(i)->type())) return false;
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(i)));
    if (!SameTiling(lowering.HeldAsTiles(op.operand(i))->sharding, sharding, shape.dims)) {
      return false;
    }
  }
  const std::vector<size_t> first = {0};
  switch (op.code()) {
    case ir::OpCode::kDynamicUpdateSlice: return partial == std::vector<size_t>{0, 1};
    case ir::OpCode::kDynamicSlice:
    case ir::OpCode::kSlice:
    case ir::OpCode::kReverse:
    case ir::OpCode::kBroadcastInDim: return partial == first;
    case ir::OpCode::kSelect: return partial == std::vector<size_t>{1, 2};
    case ir::OpCode::kConcatenate: return partial.size() == op.operands().size();
    case ir::OpCode::kPad: {
      if (partial != first || op.operands().size() != 2) return false;
      KILN_ASSIGN_OR_RETURN(ValueId padding, lowering.Input(op, 1));
      const ValueInfo& info = lowering.graph().values[static_cast<size_t>(padding)];
      return info.constant != nullptr && std::all_of(info.constant->begin(), info.constant->end(),
                                                     [](uint8_t byte) { return byte == 0; });
    }
    default: return false;
  }
}

// Partial sums (tiles with unreduced axes) stay partial through ops linear
// in them: add and subtract of partials alike, negate, a float convert, a
// multiply by (or a divide of a partial by) values that are not partial,
// and the ops of MovesPartialsWhole.
// Every other op sums its partial operands first; true when `op` was
// lowered on the partials.
StatusOr<bool> OnPartials(Lowering& lowering, const ir::Operation& op) {
  std::vector<size_t> partial;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(i));
    if (tiles != nullptr && !tiles->sharding.unreduced.empty()) partial.push_back(i);
  }
  if (partial.empty()) return false;
  if (op.code() == ir::OpCode::kSdyShardingConstraint || op.code() == ir::OpCode::kSdyReshard ||
      op.code() == ir::OpCode::kSdyPropagationBarrier || op.code() == ir::OpCode::kWhile) {
    return false;  // Constrain, PassThrough and OnTilesWhile keep or sum them
  }
  const TensorSharding sharding = lowering.HeldAsTiles(op.operand(partial[0]))->sharding;
  bool linear = false;
  // Ops that move or sum the elements of one partial value whole in every
  // dimension (a gradient's transpose, reshape, sum over a batch).
  bool whole = true;
  for (const auto& axes : sharding.dims) whole = whole && axes.empty();
  const bool lone = whole && partial.size() == 1 && partial[0] == 0 && op.num_results() == 1 &&
                    IsRealTensor(op.result(0)->type());
  bool reshaped = false;
  bool moves = false;
  if (whole && op.num_results() == 1 && IsRealTensor(op.result(0)->type())) {
    KILN_ASSIGN_OR_RETURN(moves, MovesPartialsWhole(lowering, op, partial, sharding));
  }
  if (moves ||
      (lone && (op.code() == ir::OpCode::kTranspose || op.code() == ir::OpCode::kReshape))) {
    linear = reshaped = true;
  } else if (lone && op.code() == ir::OpCode::kReduce && op.operands().size() == 2 &&
             lowering.HeldAsTiles(op.operand(1)) == nullptr &&
             ReductionOp(op, 1) == "stablehlo.add") {
    linear = reshaped = true;
  } else if (op.num_results() == 1 && IsRealTensor(op.result(0)->type()) &&
             op.result(0)->type().dims() == op.operand(partial[0])->type().dims()) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(0)));
    bool same = true;
    for (size_t i : partial) {
      same = same &&
             SameTiling(lowering.HeldAsTiles(op.operand(i))->sharding, sharding, shape.dims);
    }
    KILN_ASSIGN_OR_RETURN(Shape from, lowering.ShapeOf(op.operand(0)));
    auto real = [](ElementType type) {
      return type == ElementType::kF16 || type == ElementType::kBF16 || type == ElementType::kF32 ||
             type == ElementType::kF64;
    };
    const bool floats = real(shape.element_type) && real(from.element_type);
    auto alike = [&] {
      TensorSharding dims = sharding;
      dims.unreduced.clear();
      for (size_t i = 0; i < op.operands().size(); ++i) {
        const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(i));
        if (i != partial[0] && tiles != nullptr && !SameTiling(tiles->sharding, dims, shape.dims)) {
          return false;
        }
      }
      return true;
    };
    switch (op.code()) {
      case ir::OpCode::kAdd:
      case ir::OpCode::kSubtract: linear = same && partial.size() == op.operands().size(); break;
      case ir::OpCode::kNegate: linear = true; break;
      case ir::OpCode::kConvert: linear = floats; break;
      // Scaled by values whole or tiled alike (else the sum is smaller to
      // move than the scaled partials).
      case ir::OpCode::kMultiply: linear = partial.size() == 1 && alike(); break;
      case ir::OpCode::kDivide: linear = partial.size() == 1 && partial[0] == 0 && alike(); break;
      default: break;
    }
  }
  if (!linear) {
    // A pointwise use of a partial value beside tiles (a weight update of
    // a sharded weight from its gradient) needs only its tiles of the sum.
    std::optional<TensorSharding> into;
    const ir::OpDescription& description = ir::DescribeOp(op.code());
    if (op.num_results() == 1 && (description.Has(ir::kPointwise) || description.elementwise)) {
      for (size_t i = 0; i < op.operands().size() && !into; ++i) {
        const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(i));
        if (tiles != nullptr && tiles->sharding.unreduced.empty()) into = tiles->sharding;
      }
    }
    for (size_t i : partial) {
      KILN_RETURN_IF_ERROR(lowering.SumPartials(op.operand(i), into ? &*into : nullptr));
    }
    return false;
  }
  if (reshaped) {
    // Whole-shaped partials: the op on them, its result partial alike.
    std::vector<ir::Value*> operands;
    for (size_t i = 0; i < op.operands().size(); ++i) {
      ValueId id;
      if (std::find(partial.begin(), partial.end(), i) != partial.end()) {
        KILN_ASSIGN_OR_RETURN(id, lowering.LocalTile(op.operand(i), sharding));
      } else {
        KILN_ASSIGN_OR_RETURN(id, lowering.Input(op, i));
      }
      operands.push_back(lowering.StandIn(id, op.operand(i)->type()));
    }
    KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                          LowerRebuilt(lowering, op, op.name(), operands, {op.result(0)->type()},
                                       {}, &op, /*regions=*/true));
    TensorSharding result = Unsplit(sharding.mesh, op.result(0)->type().dims().size());
    result.unreduced = sharding.unreduced;
    lowering.BindTiles(op.result(0), results[0], result);
    return true;
  }
  TensorSharding tiles = sharding;  // the other operands are cut to these tiles
  tiles.unreduced.clear();
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    if (std::find(partial.begin(), partial.end(), i) != partial.end()) {
      const Lowering::Tiles* held = lowering.HeldAsTiles(op.operand(i));
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local,
                            sharding.LocalDims(op.operand(i)->type().dims()));
      operands.push_back(lowering.StandIn(held->local, LocalType(op.operand(i)->type(), local)));
    } else {
      KILN_ASSIGN_OR_RETURN(ir::Value * tile, TileOf(lowering, op, i, tiles));
      operands.push_back(tile);
    }
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local,
                        sharding.LocalDims(op.result(0)->type().dims()));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), operands,
                                     {LocalType(op.result(0)->type(), local)}, {}, &op));
  lowering.BindTiles(op.result(0), results[0], sharding);
  return true;
}

// propagation_barrier: the value is the same whatever its tiling, so tiles
// pass through.
StatusOr<bool> PassThrough(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 1 || op.num_results() != 1) return false;
  const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(0));
  if (tiles == nullptr) return false;
  const Lowering::Tiles kept = *tiles;
  lowering.BindTiles(op.result(0), kept.local, kept.sharding);
  return true;
}

// An open dimension a constraint leaves without axes (`{?}`) keeps those
// the value's tiles have (Shardy propagates them through it); a
// constraint on the empty mesh then names the tiles' mesh.
void KeepOpenDims(const Lowering::Tiles* tiles, TensorSharding& named) {
  if (tiles == nullptr || tiles->sharding.dims.size() != named.dims.size() ||
      named.open.size() != named.dims.size() ||
      (named.mesh.num_devices() > 1 && !SameMesh(named.mesh, tiles->sharding.mesh))) {
    return;
  }
  // (Partial sums are summed into these tiles when the constraint has
  // none.)
  TensorSharding merged = named;
  merged.mesh = tiles->sharding.mesh;
  bool changed = false;
  for (size_t d = 0; d < named.dims.size(); ++d) {
    if (named.open[d] && named.dims[d].empty() && !tiles->sharding.dims[d].empty()) {
      merged.dims[d] = tiles->sharding.dims[d];
      changed = true;
    }
  }
  if (changed && SimpleAxes(merged)) named = std::move(merged);
}

// sharding_constraint and reshard: the value takes the sharding they name,
// as XLA reshards it there. A whole value is cut to the running device's
// tile (no communication); tiles of another tiling are gathered and cut; a
// replicated sharding makes the value whole. A sharding that does not
// divide the value gives padded tiles (lower_on_tiles_padded.cc); what
// cannot be tiled (sub-axes) passes through as it is.
StatusOr<bool> Constrain(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 1 || op.num_results() != 1 || !IsRealTensor(op.operand(0)->type())) {
    return false;
  }
  ir::Attribute text = op.GetAttr("sharding");
  if (!text.Is(ir::AttrKind::kOpaque)) return PassThrough(lowering, op);
  StatusOr<TensorSharding> named = ParseSharding(text->text, lowering.spmd()->meshes);
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  if (named.ok()) KeepOpenDims(lowering.HeldAsTiles(op.operand(0)), *named);
  if (!named.ok() || named->dims.size() != shape.dims.size() || !SimpleAxes(*named) ||
      (!named->IsReplicated() && lowering.spmd()->num_partitions != named->mesh.num_devices())) {
    return PassThrough(lowering, op);
  }
  if (!named->LocalDims(shape.dims).ok()) {
    // Uneven: padded tiles (lower_on_tiles_padded.cc).
    KILN_ASSIGN_OR_RETURN(bool padded, ConstrainPadded(lowering, op, *named));
    if (padded) return true;
    return PassThrough(lowering, op);
  }
  if (named->IsReplicated()) {
    KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.Input(op, 0));
    lowering.Bind(op.result(0), whole);
    return true;
  }
  const TensorSharding sharding = *named;
  if (const Lowering::Tiles* tiles = lowering.PartialTiles(op.operand(0));
      tiles != nullptr && !SameTiling(tiles->sharding, sharding, shape.dims)) {
    KILN_RETURN_IF_ERROR(lowering.SumPartials(op.operand(0)));
  }
  if (!sharding.unreduced.empty()) {
    // Partial sums: kept where the value is them, else made of it.
    KILN_ASSIGN_OR_RETURN(ValueId local, lowering.LocalTile(op.operand(0), sharding));
    lowering.BindTiles(op.result(0), local, sharding);
    return true;
  }
  KILN_ASSIGN_OR_RETURN(ir::Value * tile, TileOf(lowering, op, 0, sharding));
  KILN_ASSIGN_OR_RETURN(ValueId local, lowering.Lookup(tile));
  lowering.BindTiles(op.result(0), local, sharding);
  return true;
}

// reverse in a GSPMD program: GSPMD reverses a split dimension by
// renumbering the devices that hold its tiles (the device that held tile
// t of the operand holds tile T-1-t of the result, its own tile
// reversed), where Shardy gathers it. The result's sharding is the
// operand's over a mesh whose devices run backwards along the axes of the
// reversed dimensions. False where an axis of a reversed dimension also
// splits another (never in GSPMD's meshes, one axis per dimension).
StatusOr<bool> ReverseByRenumbering(Lowering& lowering, const ir::Operation& op) {
  const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(0));
  if (tiles == nullptr || !tiles->sharding.unreduced.empty() ||
      !IsRealTensor(op.result(0)->type())) {
    return false;
  }
  const TensorSharding operand_sharding = tiles->sharding;
  const Mesh& mesh = operand_sharding.mesh;
  std::vector<bool> reversed_axis(mesh.axes.size(), false);
  for (int64_t d : IntsAttr(op, "dimensions")) {
    if (d < 0 || static_cast<size_t>(d) >= operand_sharding.dims.size()) return false;
    for (const AxisRef& ref : operand_sharding.dims[static_cast<size_t>(d)]) {
      if (ref.pre_size != 1 || ref.size != 0) return false;
      reversed_axis[static_cast<size_t>(mesh.AxisIndex(ref.name))] = true;
    }
  }
  if (std::find(reversed_axis.begin(), reversed_axis.end(), true) == reversed_axis.end()) {
    return false;  // no split dimension reversed: the ordinary rules
  }
  const std::vector<int64_t> reversed = IntsAttr(op, "dimensions");
  for (size_t d = 0; d < operand_sharding.dims.size(); ++d) {
    if (std::find(reversed.begin(), reversed.end(), static_cast<int64_t>(d)) != reversed.end()) {
      continue;
    }
    for (const AxisRef& ref : operand_sharding.dims[d]) {
      if (reversed_axis[static_cast<size_t>(mesh.AxisIndex(ref.name))]) return false;
    }
  }
  // The device at coordinates c now stands where c reversed along those
  // axes stood.
  TensorSharding sharding = operand_sharding;
  const int64_t count = mesh.num_devices();
  sharding.mesh.device_ids.assign(static_cast<size_t>(count), 0);
  for (int64_t position = 0; position < count; ++position) {
    std::vector<int64_t> coordinates(mesh.axes.size());
    int64_t rest = position;
    for (size_t a = mesh.axes.size(); a-- > 0;) {
      coordinates[a] = rest % mesh.sizes[a];
      rest /= mesh.sizes[a];
    }
    for (size_t a = 0; a < coordinates.size(); ++a) {
      if (reversed_axis[a]) coordinates[a] = mesh.sizes[a] - 1 - coordinates[a];
    }
    sharding.mesh.device_ids[static_cast<size_t>(position)] = mesh.DeviceAt(coordinates);
  }
  return OnTilesOfOne(lowering, op, operand_sharding, sharding);
}

// transpose of a dot_general computed on tiles (a whole, summed result):
// the ordinary rule would compute the product again, transposed, from the
// dot's whole operands (gathering them); this transposes the result.
StatusOr<bool> TransposeOfTiledDot(Lowering& lowering, const ir::Operation& op) {
  const ir::Operation* dot = op.operand(0)->defining_op();
  if (dot == nullptr || dot->code() != ir::OpCode::kDotGeneral) return false;
  if (lowering.HeldAsTiles(dot->operand(0)) == nullptr &&
      lowering.HeldAsTiles(dot->operand(1)) == nullptr) {
    return false;
  }
  KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(),
                                     {lowering.StandIn(whole, op.operand(0)->type())},
                                     {op.result(0)->type()}, {}, &op));
  lowering.Bind(op.result(0), results[0]);
  return true;
}

}  // namespace

StatusOr<bool> LowerOnTiles(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(bool on_partials, OnPartials(lowering, op));
  if (on_partials) return true;
  bool tiled = false;
  for (const ir::Value* operand : op.operands()) {
    if (lowering.HeldAsTiles(operand) != nullptr) tiled = true;
  }
  if (op.code() == ir::OpCode::kSdyShardingConstraint || op.code() == ir::OpCode::kSdyReshard) {
    return Constrain(lowering, op);
  }
  if (op.code() == ir::OpCode::kWhile) return OnTilesWhile(lowering, op);
  if (op.code() == ir::OpCode::kIf || op.code() == ir::OpCode::kCase) {
    return OnTilesBranches(lowering, op);
  }
  if (!tiled && lowering.spmd()->on_tiles) {
    // Uneven tiles, where no operand is held as even ones.
    KILN_ASSIGN_OR_RETURN(bool padded, OnPaddedTiles(lowering, op));
    if (padded) return true;
  }
  if (!tiled && op.code() == ir::OpCode::kTranspose) return TransposeOfTiledDot(lowering, op);
  if (!tiled) return false;
  switch (op.code()) {
    case ir::OpCode::kBroadcastInDim: return BroadcastInDim(lowering, op);
    case ir::OpCode::kTranspose: return Transpose(lowering, op);
    case ir::OpCode::kReshape: return Reshape(lowering, op);
    case ir::OpCode::kDotGeneral: return DotGeneral(lowering, op);
    case ir::OpCode::kReduce: {
      KILN_ASSIGN_OR_RETURN(bool done, Reduce(lowering, op));
      if (done) return true;
      return OnTilesAligned(lowering, op);
    }
    case ir::OpCode::kGather: return OnTilesGather(lowering, op);
    case ir::OpCode::kScatter: return OnTilesScatter(lowering, op);
    case ir::OpCode::kConvolution: return OnTilesConvolution(lowering, op);
    case ir::OpCode::kReverse: {
      if (lowering.spmd()->gspmd) {
        KILN_ASSIGN_OR_RETURN(bool renumbered, ReverseByRenumbering(lowering, op));
        if (renumbered) return true;
      }
      return OnTilesAligned(lowering, op);
    }
    case ir::OpCode::kSort:
    case ir::OpCode::kReduceWindow:
    case ir::OpCode::kSlice:
    case ir::OpCode::kPad:
    case ir::OpCode::kConcatenate:
    case ir::OpCode::kDynamicSlice:
    case ir::OpCode::kDynamicUpdateSlice: return OnTilesAligned(lowering, op);
    case ir::OpCode::kChloTopK:
      // GSPMD returns top_k's results whole, whatever splits its operand
      // (Shardy keeps the batch dimensions' axes).
      if (lowering.spmd()->gspmd) return false;
      return OnTilesAligned(lowering, op);
    case ir::OpCode::kSdyPropagationBarrier: return PassThrough(lowering, op);
    case ir::OpCode::kAllReduce:
    case ir::OpCode::kAllGather:
    case ir::OpCode::kReduceScatter:
    case ir::OpCode::kAllToAll: return CollectiveOnTiles(lowering, op);
    default: break;
  }
  if (!ElementForElement(op)) return false;
  return OnTilesPointwise(lowering, op);
}

}  // namespace kiln::compiler
