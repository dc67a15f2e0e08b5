// Ops on tiles whose results' dimensions follow their operands' (issue 28):
// each dimension either passes through (a device's tile of the operand
// gives its tile of the result: the batch dimensions of a sort, the
// unsliced dimensions of a slice) or needs the operand whole along it (the
// sort dimension, a sliced or padded one). Dimensions of the first kind
// keep their tiles; along those of the second each device gathers the
// operand whole (tiles of the other dimensions stay) and computes the
// result whole there, then keeps its own tile of it where XLA's
// propagation (Shardy) keeps the operand's axes on the result: where the
// dimension's factor is not blocked and the result dimension splits
// evenly. Gather, scatter and convolution map their dimensions in their
// own ways, below.
#include <algorithm>
#include <optional>

#include "compiler/lowering.h"
#include "compiler/on_tiles.h"

namespace kiln::compiler {
namespace {

using namespace on_tiles;  // NOLINT(google-build-using-namespace)

// How one op maps the dimensions of its data operands (aligned with one
// another, of rank `whole.size()`) to its results' dimensions.
struct Alignment {
  std::vector<size_t> data;         // operands aligned with operand data[0]
  std::vector<bool> whole;          // per dimension: computed whole along it
  std::vector<bool> keep;           // per whole dimension: the result keeps its axes
  std::vector<int64_t> result_dim;  // per dimension: the results' dimension, -1: none
};

Alignment Identity(size_t rank, std::vector<size_t> data) {
  Alignment alignment;
  alignment.data = std::move(data);
  alignment.whole.assign(rank, false);
  alignment.keep.assign(rank, false);
  for (size_t d = 0; d < rank; ++d) alignment.result_dim.push_back(static_cast<int64_t>(d));
  return alignment;
}

std::vector<size_t> Range(size_t begin, size_t end) {
  std::vector<size_t> indexes;
  for (size_t i = begin; i < end; ++i) indexes.push_back(i);
  return indexes;
}

// The alignment of `op`'s dimensions, nullopt for an op it does not cover.
std::optional<Alignment> AlignmentOf(const ir::Operation& op, std::span<const int64_t> in,
                                     std::span<const int64_t> out) {
  const size_t rank = in.size();
  switch (op.code()) {
    case ir::OpCode::kSort: {
      Alignment a = Identity(rank, Range(0, op.operands().size()));
      const auto dim = static_cast<size_t>(IntAttr(op, "dimension", -1));
      if (dim >= rank) return std::nullopt;
      a.whole[dim] = true;
      // Shardy blocks the sort dimension only when it is the only one.
      bool alone = true;
      for (size_t d = 0; d < rank; ++d) alone = alone && (d == dim || in[d] == 1);
      a.keep[dim] = !alone;
      return a;
    }
    case ir::OpCode::kReduceWindow: {
      const size_t count = op.num_results();
      Alignment a = Identity(rank, Range(0, count));
      const std::vector<int64_t> window = IntsAttr(op, "window_dimensions");
      const std::vector<int64_t> strides = IntsAttr(op, "window_strides");
      const std::vector<int64_t> base = IntsAttr(op, "base_dilations");
      const std::vector<int64_t> dilations = IntsAttr(op, "window_dilations");
      const std::vector<int64_t> padding = IntsAttr(op, "padding");
      if (window.size() != rank) return std::nullopt;
      for (size_t d = 0; d < rank; ++d) {
        const bool passes = window[d] == 1 && (strides.empty() || strides[d] == 1) &&
                            (base.empty() || base[d] == 1) &&
                            (padding.empty() || (padding[2 * d] == 0 && padding[2 * d + 1] == 0));
        (void)dilations;  // a window of one element dilates to itself
        a.whole[d] = !passes;
        a.keep[d] = !passes;
      }
      return a;
    }
    case ir::OpCode::kSlice: {
      Alignment a = Identity(rank, {0});
      const std::vector<int64_t> start = IntsAttr(op, "start_indices");
      const std::vector<int64_t> limit = IntsAttr(op, "limit_indices");
      const std::vector<int64_t> strides = IntsAttr(op, "strides");
      if (start.size() != rank || limit.size() != rank) return std::nullopt;
      for (size_t d = 0; d < rank; ++d) {
        const bool passes = start[d] == 0 && limit[d] == in[d] &&
                            (strides.size() != rank || strides[d] == 1);
        a.whole[d] = a.keep[d] = !passes;
      }
      return a;
    }
    case ir::OpCode::kPad: {
      Alignment a = Identity(rank, {0});
      const std::vector<int64_t> low = IntsAttr(op, "edge_padding_low");
      const std::vector<int64_t> high = IntsAttr(op, "edge_padding_high");
      const std::vector<int64_t> interior = IntsAttr(op, "interior_padding");
      if (low.size() != rank || high.size() != rank || interior.size() != rank) {
        return std::nullopt;
      }
      for (size_t d = 0; d < rank; ++d) {
        const bool passes = low[d] == 0 && high[d] == 0 && interior[d] == 0;
        a.whole[d] = a.keep[d] = !passes;
      }
      return a;
    }
    case ir::OpCode::kReverse: {
      Alignment a = Identity(rank, {0});
      for (int64_t d : IntsAttr(op, "dimensions")) {
        if (d < 0 || static_cast<size_t>(d) >= rank) return std::nullopt;
        a.whole[static_cast<size_t>(d)] = a.keep[static_cast<size_t>(d)] = true;
      }
      return a;
    }
    case ir::OpCode::kConcatenate: {
      Alignment a = Identity(rank, Range(0, op.operands().size()));
      const auto dim = static_cast<size_t>(IntAttr(op, "dimension", -1));
      if (dim >= rank) return std::nullopt;
      a.whole[dim] = a.keep[dim] = true;
      return a;
    }
    case ir::OpCode::kDynamicSlice: {
      // The sliced dimensions are blocked: their result is whole.
      Alignment a = Identity(rank, {0});
      const std::vector<int64_t> sizes = IntsAttr(op, "slice_sizes");
      if (sizes.size() != rank) return std::nullopt;
      for (size_t d = 0; d < rank; ++d) a.whole[d] = sizes[d] != in[d];
      return a;
    }
    case ir::OpCode::kDynamicUpdateSlice: {
      // The result keeps the operand's sharding; the update is whole along
      // the dimensions it does not fill.
      Alignment a = Identity(rank, {0, 1});
      const std::vector<int64_t>& update = op.operand(1)->type().dims();
      if (update.size() != rank) return std::nullopt;
      for (size_t d = 0; d < rank; ++d) a.whole[d] = a.keep[d] = update[d] != in[d];
      return a;
    }
    case ir::OpCode::kChloTopK: {
      // The last dimension is blocked.
      if (rank == 0) return std::nullopt;
      Alignment a = Identity(rank, {0});
      a.whole[rank - 1] = true;
      return a;
    }
    case ir::OpCode::kReduce: {
      // Any body: reduced dimensions are gathered (a reduce with a body of
      // one op sums partial results instead: lower_on_tiles.cc).
      const size_t count = op.num_results();
      Alignment a = Identity(rank, Range(0, count));
      std::optional<std::vector<int64_t>> reduced = ir::IntegersOf(op.GetAttr("dimensions"));
      if (!reduced) return std::nullopt;
      int64_t next = 0;
      for (size_t d = 0; d < rank; ++d) {
        a.whole[d] = Contains(*reduced, static_cast<int64_t>(d));
        a.result_dim[d] = a.whole[d] ? -1 : next++;
      }
      if (static_cast<size_t>(next) != out.size()) return std::nullopt;
      return a;
    }
    default: return std::nullopt;
  }
}

// Each result of `op` computed from local values of its own sharding
// `computed` (over `mesh`), then cut along `cut_dims` (result dimension ->
// axes) to the running device's tile, and held as tiles of the sharding
// both make.
Status HoldResults(Lowering& lowering, const ir::Operation& op, const std::vector<ValueId>& results,
                   const TensorSharding& computed,
                   const std::vector<std::vector<AxisRef>>& cut_dims) {
  TensorSharding cut = Unsplit(computed.mesh, computed.dims.size());
  TensorSharding held = computed;
  bool cutting = false;
  for (size_t d = 0; d < cut_dims.size(); ++d) {
    if (cut_dims[d].empty()) continue;
    cut.dims[d] = cut_dims[d];
    held.dims[d] = cut_dims[d];
    cutting = true;
  }
  for (size_t r = 0; r < results.size(); ++r) {
    ValueId value = results[r];
    if (cutting) {
      const Shape local = lowering.graph().shape(value);
      KILN_ASSIGN_OR_RETURN(value, EmitTile(lowering, value, local, cut));
    }
    BindResult(lowering, op, r, value, held);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<bool> OnTilesAligned(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().empty() || op.num_results() == 0) return false;
  for (size_t r = 0; r < op.num_results(); ++r) {
    if (!IsRealTensor(op.result(r)->type())) return false;
  }
  if (!IsRealTensor(op.operand(0)->type())) return false;
  KILN_ASSIGN_OR_RETURN(Shape in, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  std::optional<Alignment> alignment = AlignmentOf(op, in.dims, out.dims);
  if (!alignment) return false;
  const Alignment& a = *alignment;
  const size_t rank = in.dims.size();
  // The sharding of the first data operand held as tiles.
  std::optional<TensorSharding> sharding;
  for (size_t i : a.data) {
    if (const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(i))) {
      sharding = tiles->sharding;
      break;
    }
  }
  if (!sharding || sharding->dims.size() != rank || !SimpleAxes(*sharding)) return false;
  TensorSharding local = *sharding;  // the operands' tiles the op computes on
  for (size_t d = 0; d < rank; ++d) {
    if (a.whole[d]) local.dims[d].clear();
  }
  // The result dimensions: computed on tiles, and cut after.
  TensorSharding computed = Unsplit(sharding->mesh, out.dims.size());
  std::vector<std::vector<AxisRef>> cut(out.dims.size());
  bool any = false;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t rd = a.result_dim[d];
    if (rd < 0 || sharding->dims[d].empty()) continue;
    const auto r = static_cast<size_t>(rd);
    if (!a.whole[d]) {
      computed.dims[r] = sharding->dims[d];
      any = true;
    } else if (a.keep[d]) {
      // The longest major part of the axes that splits the result evenly.
      int64_t tiles = 1;
      for (const AxisRef& ref : sharding->dims[d]) {
        tiles *= sharding->SizeOf(ref);
        if (out.dims[r] % tiles != 0) break;
        cut[r].push_back(ref);
      }
      any = any || !cut[r].empty();
    }
  }
  if (!any) return false;
  // Data operands agree with operand 0 along the dimensions that pass.
  for (size_t i : a.data) {
    const ir::Type& type = op.operand(i)->type();
    if (!IsRealTensor(type) || type.dims().size() != rank) return false;
    for (size_t d = 0; d < rank; ++d) {
      if (!a.whole[d] && type.dims()[d] != in.dims[d]) return false;
    }
    if (!local.LocalDims(type.dims()).ok()) return false;
  }
  auto local_out = computed.LocalDims(out.dims);
  if (!local_out.ok()) return false;
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    if (std::find(a.data.begin(), a.data.end(), i) != a.data.end()) {
      KILN_ASSIGN_OR_RETURN(ir::Value * tile, TileOf(lowering, op, i, local));
      operands.push_back(tile);
    } else {
      KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.Input(op, i));
      operands.push_back(lowering.StandIn(whole, op.operand(i)->type()));
    }
  }
  std::vector<ir::Type> types;
  for (size_t r = 0; r < op.num_results(); ++r) {
    const ir::Type& type = op.result(r)->type();
    if (type.dims() != out.dims) return false;
    types.push_back(LocalType(type, *local_out));
  }
  // Attributes that name sizes along a dimension that passes take the
  // tile's (a slice's limits, a dynamic_slice's sizes).
  ir::Operation attributes("kiln.attributes");
  CopyAttributes(op, attributes);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local_in, local.LocalDims(in.dims));
  const char* sized = op.code() == ir::OpCode::kSlice          ? "limit_indices"
                      : op.code() == ir::OpCode::kDynamicSlice ? "slice_sizes"
                                                               : nullptr;
  if (sized != nullptr) {
    std::vector<int64_t> values = IntsAttr(op, sized);
    for (size_t d = 0; d < rank && d < values.size(); ++d) {
      if (!a.whole[d]) values[d] = local_in[d];
    }
    attributes.SetAttr(sized, ir::Attribute::DenseI64Array(std::move(values)));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), operands, types, {}, &attributes,
                                     /*regions=*/true));
  KILN_RETURN_IF_ERROR(HoldResults(lowering, op, results, computed, cut));
  return true;
}

// gather: an operand dimension the slices take whole (not indexed, not
// collapsed) passes its axes to its offset dimension of the result; the
// indices' batch dimensions pass theirs to the result's batch dimensions.
// Indexed operand dimensions are gathered whole; batching dimensions pair
// operand and indices like a dot's batch dimensions.
StatusOr<bool> OnTilesGather(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute numbers = op.GetAttr("dimension_numbers");
  if (!numbers.Is(ir::AttrKind::kStruct) || !IsRealTensor(op.result(0)->type()) ||
      !IsRealTensor(op.operand(1)->type())) {
    return false;
  }
  const std::vector<int64_t> offset_dims = FieldInts(numbers, "offset_dims");
  const std::vector<int64_t> collapsed = FieldInts(numbers, "collapsed_slice_dims");
  const std::vector<int64_t> operand_batching = FieldInts(numbers, "operand_batching_dims");
  const std::vector<int64_t> indices_batching = FieldInts(numbers, "start_indices_batching_dims");
  const std::vector<int64_t> index_map = FieldInts(numbers, "start_index_map");
  const int64_t index_vector_dim = FieldInt(numbers, "index_vector_dim");
  const std::vector<int64_t> sizes = IntsAttr(op, "slice_sizes");
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape indices, lowering.ShapeOf(op.operand(1)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  if (sizes.size() != operand.dims.size() || operand_batching.size() != indices_batching.size()) {
    return false;
  }
  const Lowering::Tiles* operand_tiles = lowering.HeldAsTiles(op.operand(0));
  const Lowering::Tiles* indices_tiles = lowering.HeldAsTiles(op.operand(1));
  if (operand_tiles == nullptr && indices_tiles == nullptr) return false;
  const Mesh mesh = (operand_tiles != nullptr ? operand_tiles : indices_tiles)->sharding.mesh;
  if (operand_tiles != nullptr && indices_tiles != nullptr &&
      !SameMesh(operand_tiles->sharding.mesh, indices_tiles->sharding.mesh)) {
    return false;
  }
  auto axes_of = [](const Lowering::Tiles* tiles, size_t d) -> std::vector<AxisRef> {
    return tiles == nullptr ? std::vector<AxisRef>{} : tiles->sharding.dims[d];
  };
  TensorSharding operand_sharding = Unsplit(mesh, operand.dims.size());
  TensorSharding indices_sharding = Unsplit(mesh, indices.dims.size());
  TensorSharding result = Unsplit(mesh, out.dims.size());
  // Result dimensions: offset dimensions in order of the operand dimensions
  // neither collapsed nor batching; batch dimensions in order of the
  // indices' dimensions but the index vector.
  size_t next_offset = 0;
  for (size_t d = 0; d < operand.dims.size(); ++d) {
    const auto dim = static_cast<int64_t>(d);
    if (Contains(collapsed, dim) || Contains(operand_batching, dim)) continue;
    if (next_offset >= offset_dims.size()) return false;
    const auto r = static_cast<size_t>(offset_dims[next_offset++]);
    if (r >= out.dims.size()) return false;
    if (!Contains(index_map, dim) && sizes[d] == operand.dims[d]) {
      operand_sharding.dims[d] = axes_of(operand_tiles, d);
      result.dims[r] = operand_sharding.dims[d];
    }
  }
  std::vector<size_t> batch_result_dims;
  for (size_t r = 0; r < out.dims.size(); ++r) {
    if (!Contains(offset_dims, static_cast<int64_t>(r))) batch_result_dims.push_back(r);
  }
  size_t next_batch = 0;
  for (size_t d = 0; d < indices.dims.size(); ++d) {
    if (static_cast<int64_t>(d) == index_vector_dim) continue;
    if (next_batch >= batch_result_dims.size()) return false;
    const size_t r = batch_result_dims[next_batch++];
    std::vector<AxisRef> axes = axes_of(indices_tiles, d);
    const auto pair = std::find(indices_batching.begin(), indices_batching.end(),
                                static_cast<int64_t>(d));
    if (pair != indices_batching.end()) {
      // A batching pair takes the indices' axes, else the operand's.
      const auto o = static_cast<size_t>(
          operand_batching[static_cast<size_t>(pair - indices_batching.begin())]);
      if (axes.empty()) axes = axes_of(operand_tiles, o);
      operand_sharding.dims[o] = axes;
    }
    indices_sharding.dims[d] = axes;
    result.dims[r] = axes;
  }
  if (result.IsReplicated() || !SimpleAxes(result)) return false;
  if (!operand_sharding.LocalDims(operand.dims).ok() ||
      !indices_sharding.LocalDims(indices.dims).ok()) {
    return false;
  }
  auto local = result.LocalDims(out.dims);
  if (!local.ok()) return false;
  KILN_ASSIGN_OR_RETURN(ir::Value * operand_tile, TileOf(lowering, op, 0, operand_sharding));
  KILN_ASSIGN_OR_RETURN(ir::Value * indices_tile, TileOf(lowering, op, 1, indices_sharding));
  // slice_sizes follow the operand's tiles along the dimensions that pass.
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> operand_local,
                        operand_sharding.LocalDims(operand.dims));
  std::vector<int64_t> local_sizes = sizes;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!Contains(operand_batching, static_cast<int64_t>(d))) {
      local_sizes[d] = std::min(sizes[d], operand_local[d]);
    }
  }
  ir::Operation attributes("kiln.attributes");
  CopyAttributes(op, attributes);
  attributes.SetAttr("slice_sizes", ir::Attribute::DenseI64Array(local_sizes));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), {operand_tile, indices_tile},
                                     {LocalType(op.result(0)->type(), *local)}, {}, &attributes));
  BindResult(lowering, op, 0, results[0], result);
  return true;
}

// scatter-add into a whole operand of updates split along their scatter
// dimensions (the indices split alike): each device adds its own updates,
// into the operand on the first device of each group of the updates' axes
// and into zeros on the others, leaving partial sums over those axes,
// summed where a use needs them as a contraction's are (segment_sum and
// bincount of sharded data; XLA leaves the same partial sums).
StatusOr<bool> ScatterAddOfSplitUpdates(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute numbers = op.GetAttr("scatter_dimension_numbers");
  if (!numbers.Is(ir::AttrKind::kStruct) || op.operands().size() != 3 || op.num_results() != 1 ||
      BinaryBodyOp(op) != "stablehlo.add" || lowering.HeldAsTiles(op.operand(0)) != nullptr ||
      !IsRealTensor(op.result(0)->type())) {
    return false;
  }
  const Lowering::Tiles* index_tiles = lowering.HeldAsTiles(op.operand(1));
  const Lowering::Tiles* update_tiles = lowering.HeldAsTiles(op.operand(2));
  if ((index_tiles == nullptr && update_tiles == nullptr) ||
      !FieldInts(numbers, "input_batching_dims").empty() ||
      !FieldInts(numbers, "scatter_indices_batching_dims").empty()) {
    return false;
  }
  const Mesh mesh = (index_tiles != nullptr ? index_tiles : update_tiles)->sharding.mesh;
  if ((index_tiles != nullptr &&
       (!SameMesh(index_tiles->sharding.mesh, mesh) || !index_tiles->sharding.unreduced.empty())) ||
      (update_tiles != nullptr && (!SameMesh(update_tiles->sharding.mesh, mesh) ||
                                   !update_tiles->sharding.unreduced.empty()))) {
    return false;
  }
  const std::vector<int64_t> window_dims = FieldInts(numbers, "update_window_dims");
  const int64_t index_vector_dim = FieldInt(numbers, "index_vector_dim");
  KILN_ASSIGN_OR_RETURN(Shape indices, lowering.ShapeOf(op.operand(1)));
  KILN_ASSIGN_OR_RETURN(Shape updates, lowering.ShapeOf(op.operand(2)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  // The updates' scatter dimensions pair in order with the indices'
  // dimensions but the index vector.
  TensorSharding index_sharding = Unsplit(mesh, indices.dims.size());
  TensorSharding update_sharding = Unsplit(mesh, updates.dims.size());
  TensorSharding result = Unsplit(mesh, out.dims.size());
  size_t u = 0;
  for (size_t d = 0; d < indices.dims.size(); ++d) {
    if (static_cast<int64_t>(d) == index_vector_dim) continue;
    while (u < updates.dims.size() && Contains(window_dims, static_cast<int64_t>(u))) ++u;
    if (u >= updates.dims.size()) return false;
    std::vector<AxisRef> axes = index_tiles != nullptr ? index_tiles->sharding.dims[d]
                                                       : std::vector<AxisRef>{};
    if (update_tiles != nullptr && !update_tiles->sharding.dims[u].empty()) {
      if (!axes.empty() && !SameAxes(axes, update_tiles->sharding.dims[u])) return false;
      axes = update_tiles->sharding.dims[u];
    }
    index_sharding.dims[d] = axes;
    update_sharding.dims[u] = axes;
    for (const AxisRef& ref : axes) result.unreduced.push_back(ref);
    ++u;
  }
  const std::vector<AxisRef> partial_axes[] = {result.unreduced};
  if (result.unreduced.empty() || !SimpleAxes(Unsplit(mesh, 0), partial_axes) ||
      lowering.spmd()->num_partitions != mesh.num_devices() ||
      !index_sharding.LocalDims(indices.dims).ok() ||
      !update_sharding.LocalDims(updates.dims).ok()) {
    return false;
  }
  KILN_ASSIGN_OR_RETURN(ValueId operand, lowering.Input(op, 0));
  const ValueInfo& info = lowering.graph().values[static_cast<size_t>(operand)];
  const bool zeros = info.constant != nullptr &&
                     std::all_of(info.constant->begin(), info.constant->end(),
                                 [](uint8_t byte) { return byte == 0; });
  if (!zeros) {
    KILN_ASSIGN_OR_RETURN(operand, EmitPartialShare(lowering, operand, result));
  }
  KILN_ASSIGN_OR_RETURN(ir::Value * index_tile, TileOf(lowering, op, 1, index_sharding));
  KILN_ASSIGN_OR_RETURN(ir::Value * update_tile, TileOf(lowering, op, 2, update_sharding));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(),
                                     {lowering.StandIn(operand, op.operand(0)->type()), index_tile,
                                      update_tile},
                                     {op.result(0)->type()}, {}, &op, /*regions=*/true));
  BindResult(lowering, op, 0, results[0], result);
  return true;
}

// scatter: an operand dimension the updates' windows cover whole (neither
// indexed nor inserted nor batching) keeps its axes, the updates cut alike
// along their window dimension; every other dimension is gathered whole
// and the result cut after to the operand's sharding (as Shardy keeps it).
// Indices are whole.
StatusOr<bool> OnTilesScatter(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute numbers = op.GetAttr("scatter_dimension_numbers");
  const size_t count = op.num_results();
  if (!numbers.Is(ir::AttrKind::kStruct) || op.operands().size() != 2 * count + 1) return false;
  const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(0));
  if (tiles == nullptr) return ScatterAddOfSplitUpdates(lowering, op);
  if (!SimpleAxes(tiles->sharding)) return false;
  const TensorSharding sharding = tiles->sharding;
  const std::vector<int64_t> window_dims = FieldInts(numbers, "update_window_dims");
  const std::vector<int64_t> inserted = FieldInts(numbers, "inserted_window_dims");
  const std::vector<int64_t> batching = FieldInts(numbers, "input_batching_dims");
  const std::vector<int64_t> index_map = FieldInts(numbers, "scatter_dims_to_operand_dims");
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape updates, lowering.ShapeOf(op.operand(count + 1)));
  if (sharding.dims.size() != operand.dims.size()) return false;
  TensorSharding local = Unsplit(sharding.mesh, operand.dims.size());
  TensorSharding update_sharding = Unsplit(sharding.mesh, updates.dims.size());
  std::vector<std::vector<AxisRef>> cut(operand.dims.size());
  size_t next_window = 0;
  for (size_t d = 0; d < operand.dims.size(); ++d) {
    const auto dim = static_cast<int64_t>(d);
    if (Contains(inserted, dim) || Contains(batching, dim)) {
      cut[d] = sharding.dims[d];
      continue;
    }
    if (next_window >= window_dims.size()) return false;
    const auto u = static_cast<size_t>(window_dims[next_window++]);
    if (u >= updates.dims.size()) return false;
    if (!Contains(index_map, dim) && updates.dims[u] == operand.dims[d]) {
      local.dims[d] = sharding.dims[d];
      update_sharding.dims[u] = sharding.dims[d];
    } else {
      cut[d] = sharding.dims[d];
    }
  }
  if (local.IsReplicated() &&
      std::all_of(cut.begin(), cut.end(), [](const auto& axes) { return axes.empty(); })) {
    return false;
  }
  auto local_dims = local.LocalDims(operand.dims);
  if (!local_dims.ok() || !update_sharding.LocalDims(updates.dims).ok()) return false;
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    if (i < count) {
      if (op.operand(i)->type().dims() != operand.dims) return false;
      KILN_ASSIGN_OR_RETURN(ir::Value * tile, TileOf(lowering, op, i, local));
      operands.push_back(tile);
    } else if (i == count) {
      KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.Input(op, i));
      operands.push_back(lowering.StandIn(whole, op.operand(i)->type()));
    } else {
      KILN_ASSIGN_OR_RETURN(ir::Value * tile, TileOf(lowering, op, i, update_sharding));
      operands.push_back(tile);
    }
  }
  std::vector<ir::Type> types;
  for (size_t r = 0; r < count; ++r) types.push_back(LocalType(op.result(r)->type(), *local_dims));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), operands, types, {}, &op,
                                     /*regions=*/true));
  // A cut dimension must split the result evenly (the operand's does).
  KILN_RETURN_IF_ERROR(HoldResults(lowering, op, results, local, cut));
  return true;
}

// convolution (one feature group, one batch group): the input's batch
// dimension passes its axes to the output's, the kernel's output features
// theirs to the output's features; input features, contracted with the
// kernel's, leave partial sums where they are split (an all_reduce over
// their axes completes them, as for dot_general). Spatial dimensions are
// whole.
StatusOr<bool> OnTilesConvolution(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute numbers = op.GetAttr("dimension_numbers");
  if (!numbers.Is(ir::AttrKind::kStruct) || !IsRealTensor(op.result(0)->type())) return false;
  if (IntAttr(op, "feature_group_count", 1) != 1 || IntAttr(op, "batch_group_count", 1) != 1) {
    return false;
  }
  const Lowering::Tiles* lhs_tiles = lowering.HeldAsTiles(op.operand(0));
  const Lowering::Tiles* rhs_tiles = lowering.HeldAsTiles(op.operand(1));
  if (lhs_tiles == nullptr && rhs_tiles == nullptr) return false;
  const Mesh mesh = (lhs_tiles != nullptr ? lhs_tiles : rhs_tiles)->sharding.mesh;
  if (lhs_tiles != nullptr && rhs_tiles != nullptr &&
      !SameMesh(lhs_tiles->sharding.mesh, rhs_tiles->sharding.mesh)) {
    return false;
  }
  const auto input_batch = static_cast<size_t>(FieldInt(numbers, "input_batch_dimension"));
  const auto input_feature = static_cast<size_t>(FieldInt(numbers, "input_feature_dimension"));
  const auto kernel_in = static_cast<size_t>(FieldInt(numbers, "kernel_input_feature_dimension"));
  const auto kernel_out = static_cast<size_t>(FieldInt(numbers, "kernel_output_feature_dimension"));
  const auto output_batch = static_cast<size_t>(FieldInt(numbers, "output_batch_dimension"));
  const auto output_feature = static_cast<size_t>(FieldInt(numbers, "output_feature_dimension"));
  KILN_ASSIGN_OR_RETURN(Shape lhs_shape, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape rhs_shape, lowering.ShapeOf(op.operand(1)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  const size_t rank = out.dims.size();
  if (lhs_shape.dims.size() != rank || rhs_shape.dims.size() != rank ||
      std::max({input_batch, input_feature, kernel_in, kernel_out, output_batch, output_feature}) >=
          rank) {
    return false;
  }
  auto axes_of = [](const Lowering::Tiles* tiles, size_t d) -> std::vector<AxisRef> {
    return tiles == nullptr ? std::vector<AxisRef>{} : tiles->sharding.dims[d];
  };
  TensorSharding lhs = Unsplit(mesh, rank);
  TensorSharding rhs = Unsplit(mesh, rank);
  TensorSharding result = Unsplit(mesh, rank);
  lhs.dims[input_batch] = result.dims[output_batch] = axes_of(lhs_tiles, input_batch);
  rhs.dims[kernel_out] = result.dims[output_feature] = axes_of(rhs_tiles, kernel_out);
  std::vector<AxisRef> features = axes_of(lhs_tiles, input_feature);
  if (features.empty()) features = axes_of(rhs_tiles, kernel_in);
  lhs.dims[input_feature] = rhs.dims[kernel_in] = features;
  const std::vector<AxisRef> partial_axes[] = {features};
  if (!SimpleAxes(result, partial_axes)) return false;
  if (result.IsReplicated() && features.empty()) return false;
  if (!features.empty() && lowering.spmd()->num_partitions != mesh.num_devices()) return false;
  if (!lhs.LocalDims(lhs_shape.dims).ok() || !rhs.LocalDims(rhs_shape.dims).ok()) return false;
  auto local = result.LocalDims(out.dims);
  if (!local.ok()) return false;
  KILN_ASSIGN_OR_RETURN(ir::Value * lhs_tile, TileOf(lowering, op, 0, lhs));
  KILN_ASSIGN_OR_RETURN(ir::Value * rhs_tile, TileOf(lowering, op, 1, rhs));
  const ir::Type type = LocalType(op.result(0)->type(), *local);
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        LowerRebuilt(lowering, op, op.name(), {lhs_tile, rhs_tile}, {type}, {},
                                     &op));
  ValueId value = results[0];
  if (!features.empty()) {
    KILN_ASSIGN_OR_RETURN(value, ReduceOverAxes(lowering, op, value, type, mesh, features,
                                                "stablehlo.add"));
  }
  BindResult(lowering, op, 0, value, result);
  return true;
}

}  // namespace kiln::compiler
