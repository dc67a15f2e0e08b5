// Lowering of the indexing ops onto kernels/gather.h: gather and scatter
// (their dimension numbers decoded once into an IndexedWindows geometry),
// dynamic_slice, dynamic_update_slice and pad. A scatter whose body is one
// add/multiply/maximum/minimum, or just returns the update, runs as a typed
// kernel; any other body runs its region per updated element.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <utility>

#include "base/small_vector.h"
#include "compiler/indexing.h"
#include "compiler/lowering.h"
#include "compiler/region_patterns.h"
#include "kernels/copy.h"
#include "kernels/gather.h"

namespace kiln::compiler {
namespace {

using kernels::IndexedWindows;

// The dimension numbers gather and scatter share, under gather's names
// (scatter: update_window_dims, inserted_window_dims, input_batching_dims,
// scatter_indices_batching_dims, scatter_dims_to_operand_dims).
struct IndexingDims {
  std::vector<int64_t> window_dims;     // small-array dims that are window dims
  std::vector<int64_t> collapsed_dims;  // big-array dims without a window dim
  std::vector<int64_t> big_batching_dims;
  std::vector<int64_t> index_batching_dims;
  std::vector<int64_t> index_map;
  int64_t index_vector_dim = 0;
};

// The geometry of windows of `big` placed at the batch points of `small`;
// `window_sizes` per big dimension.
IndexedWindows MakeGeometry(const IndexingDims& dims, const Shape& big, const Shape& indices,
                            const Shape& small, std::vector<int64_t> window_sizes) {
  IndexedWindows g;
  g.big_dims = big.dims;
  g.big_strides = Strides(big.dims);
  g.window_sizes = std::move(window_sizes);
  g.index_map = dims.index_map;
  const std::vector<int64_t> index_strides = Strides(indices.dims);
  const auto index_rank = static_cast<int64_t>(indices.dims.size());
  const int64_t ivd = dims.index_vector_dim;
  g.index_vector_stride = ivd < index_rank ? index_strides[static_cast<size_t>(ivd)] : 0;
  const std::vector<int64_t> small_strides = Strides(small.dims);
  int64_t next_index_dim = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(small.dims.size()); ++d) {
    if (Contains(dims.window_dims, d)) continue;
    if (next_index_dim == ivd) ++next_index_dim;
    const int64_t index_dim = next_index_dim++;
    IndexedWindows::Batch batch{small.dims[static_cast<size_t>(d)],
                                small_strides[static_cast<size_t>(d)],
                                index_strides[static_cast<size_t>(index_dim)], -1};
    for (size_t p = 0; p < dims.index_batching_dims.size(); ++p) {
      if (dims.index_batching_dims[p] == index_dim) batch.big_dim = dims.big_batching_dims[p];
    }
    g.batch.push_back(batch);
  }
  size_t next_window = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(big.dims.size()); ++d) {
    if (Contains(dims.collapsed_dims, d) || Contains(dims.big_batching_dims, d)) continue;
    const auto small_dim = static_cast<size_t>(dims.window_dims[next_window++]);
    g.window.push_back({small.dims[small_dim], small_strides[small_dim],
                        g.big_strides[static_cast<size_t>(d)]});
  }
  return g;
}

// A gather with one start index (jnp.take, take_along_axis) as a read fused
// loops can compute element by element (Pointwise::kGather), so that the
// gathered array need not reach memory before the select that masks it;
// null for any other gather. Every output dimension is either a batch
// dimension (its index array stride; a source stride where it is a
// batching dimension) or a window dimension (a source stride).
std::shared_ptr<Pointwise> GatherRead(const IndexedWindows& g, const Shape& out, size_t bytes,
                                      ElementType index_type) {
  if (g.index_map.size() != 1 || out.dims.empty() || out.NumElements() == 0) return nullptr;
  if (index_type != ElementType::kS32 && index_type != ElementType::kS64 &&
      index_type != ElementType::kU32) {
    return nullptr;
  }
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16) return nullptr;
  const auto indexed = static_cast<size_t>(g.index_map[0]);
  if (indexed >= g.big_dims.size()) return nullptr;
  auto read = std::make_shared<Pointwise>();
  read->kind = Pointwise::Kind::kGather;
  read->dims = out.dims;
  read->strides.assign(out.dims.size(), 0);
  read->index_strides.assign(out.dims.size(), 0);
  read->element_bytes = bytes;
  read->index_type = index_type;
  read->gather_stride = g.big_strides[indexed];
  read->gather_limit = g.big_dims[indexed] - g.window_sizes[indexed];
  if (read->gather_limit < 0) return nullptr;
  // Each output dimension is found by its stride in the dense output.
  const std::vector<int64_t> out_strides = Strides(out.dims);
  std::vector<bool> seen(out.dims.size(), false);
  const auto dimension_of = [&](int64_t small_stride, int64_t size) -> int64_t {
    for (size_t d = 0; d < out.dims.size(); ++d) {
      if (!seen[d] && out_strides[d] == small_stride && out.dims[d] == size) {
        return static_cast<int64_t>(d);
      }
    }
    return -1;
  };
  for (const IndexedWindows::Batch& batch : g.batch) {
    const int64_t d = dimension_of(batch.small_stride, batch.size);
    if (d < 0 || seen[static_cast<size_t>(d)]) return nullptr;
    seen[static_cast<size_t>(d)] = true;
    read->index_strides[static_cast<size_t>(d)] = batch.index_stride;
    if (batch.big_dim >= 0) {
      read->strides[static_cast<size_t>(d)] = g.big_strides[static_cast<size_t>(batch.big_dim)];
    }
  }
  for (const IndexedWindows::Window& window : g.window) {
    const int64_t d = dimension_of(window.small_stride, window.size);
    if (d < 0 || seen[static_cast<size_t>(d)]) return nullptr;
    seen[static_cast<size_t>(d)] = true;
    read->strides[static_cast<size_t>(d)] = window.big_stride;
  }
  // Dimensions of size 1 may share strides with their neighbours; those
  // left unmatched contribute nothing.
  for (size_t d = 0; d < out.dims.size(); ++d) {
    if (!seen[d] && out.dims[d] != 1) return nullptr;
  }
  // Dimensions of size 1 add nothing to any offset: without them a tile's
  // innermost runs are as long as they can be (a column gather's output
  // [256, 256, 1] runs 256 elements at a time, not one).
  Pointwise& r = *read;
  size_t kept = 0;
  for (size_t d = 0; d < r.dims.size(); ++d) {
    if (r.dims[d] == 1) continue;
    r.dims[kept] = r.dims[d];
    r.strides[kept] = r.strides[d];
    r.index_strides[kept] = r.index_strides[d];
    ++kept;
  }
  if (kept == 0) {  // one element
    r.dims = {1};
    r.strides = {0};
    r.index_strides = {0};
  } else {
    r.dims.resize(kept);
    r.strides.resize(kept);
    r.index_strides.resize(kept);
  }
  return read;
}

Status LowerGather(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute numbers = op.GetAttr("dimension_numbers");
  if (!numbers.Is(ir::AttrKind::kStruct)) {
    return InvalidArgument("gather without #stablehlo.gather dimension numbers");
  }
  IndexingDims dims;
  dims.window_dims = FieldInts(numbers, "offset_dims");
  dims.collapsed_dims = FieldInts(numbers, "collapsed_slice_dims");
  dims.big_batching_dims = FieldInts(numbers, "operand_batching_dims");
  dims.index_batching_dims = FieldInts(numbers, "start_indices_batching_dims");
  dims.index_map = FieldInts(numbers, "start_index_map");
  dims.index_vector_dim = FieldInt(numbers, "index_vector_dim");
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape indices, lowering.ShapeOf(op.operand(1)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  std::vector<int64_t> sizes = IntsAttr(op, "slice_sizes");
  if (sizes.size() != operand.dims.size()) return InvalidArgument("slice_sizes has the wrong size");
  IndexedWindows geometry = MakeGeometry(dims, operand, indices, out, std::move(sizes));
  const size_t bytes = ElementBytes(operand.element_type);
  std::shared_ptr<Pointwise> read = GatherRead(geometry, out, bytes, indices.element_type);
  const size_t before = lowering.graph().nodes.size();
  KILN_RETURN_IF_ERROR(lowering.Emit(op, [bytes, geometry = std::move(geometry),
                                          index_type = indices.element_type](RunContext& ctx) {
    return kernels::Gather(bytes, geometry, ctx.in(0), index_type, ctx.in(1), ctx.out(0));
  }));
  // Not folded: fused loops may compute it tile by tile.
  if (read != nullptr && lowering.graph().nodes.size() > before) {
    lowering.graph().nodes.back().pointwise = std::move(read);
  }
  return Status::Ok();
}

// When `value` is computed by a broadcast of one element of a constant:
// that constant and the element's index in it.
std::optional<std::pair<ValueId, int64_t>> SplatSource(Lowering& lowering, ValueId value) {
  const Graph& graph = lowering.graph();
  for (size_t n = graph.nodes.size(); n-- > 0;) {
    const Node& node = graph.nodes[n];
    if (node.outputs.size() != 1 || node.outputs[0] != value) continue;
    const Pointwise* read = node.pointwise.get();
    if (read == nullptr || read->kind != Pointwise::Kind::kRead || node.inputs.size() != 1 ||
        !graph.values[static_cast<size_t>(node.inputs[0])].constant ||
        std::any_of(read->strides.begin(), read->strides.end(),
                    [](int64_t stride) { return stride != 0; })) {
      return std::nullopt;
    }
    return std::make_pair(node.inputs[0], read->base);
  }
  return std::nullopt;
}

// A scatter's result i may take over the memory of its operand i when the
// operand dies at the scatter (PlanBuffers decides; the run copies the
// operand only when the two differ): `.at[i].set(v)` on a value nothing else
// reads, and a while loop's carry (InPlaceCarry in lower_regions.cc), cost
// their updated windows instead of a copy of the whole array. `splat[i] >= 0`:
// the operand was replaced by one element of a constant, never overwritten.
// `before`: the graph's node count before the scatter was emitted (a
// scatter of constants is folded into a constant and adds no node).
void OverwriteOperands(Lowering& lowering, size_t before, const std::vector<ValueId>& results,
                       const std::vector<int64_t>& splat) {
  std::vector<Node>& nodes = lowering.graph().nodes;
  if (nodes.size() <= before || nodes.back().outputs != results) return;
  Node& node = nodes.back();
  node.output_over_input.assign(results.size(), -1);
  for (size_t i = 0; i < results.size(); ++i) {
    if (splat[i] < 0) node.output_over_input[i] = static_cast<int32_t>(i);
  }
}

// A scatter whose body is one typed op per operand (`ops`; nullopt: the
// update overwrites): kernels::Scatter per operand. An operand that is one
// constant broadcast (jnp.zeros: a gradient's scatter-add) is filled from
// its element instead of being written by the broadcast and then copied:
// the node takes the constant, at `splat[i]` elements into it, and the
// broadcast dies.
Status EmitTypedScatter(Lowering& lowering, const ir::Operation& op, ScatterShape scatter,
                        std::vector<std::optional<kernels::ReduceOp>> ops) {
  const size_t count = scatter.count;
  std::vector<ValueId> inputs;
  std::vector<Shape> outputs;
  std::vector<int64_t> splat(count, -1);
  for (size_t i = 0; i < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId value, lowering.Input(op, i));
    if (i < count) {
      if (std::optional<std::pair<ValueId, int64_t>> source = SplatSource(lowering, value)) {
        value = source->first;
        splat[i] = source->second;
      }
    }
    inputs.push_back(value);
  }
  for (size_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(i)));
    outputs.push_back(std::move(out));
  }
  const size_t rank = scatter.dims.size();
  RunFn run = [count, types = std::move(scatter.types), bytes = std::move(scatter.bytes),
               elements = scatter.elements, index_type = scatter.index_type, ops = std::move(ops),
               splat, dims = std::move(scatter.dims), zeros = std::vector<int64_t>(rank, 0),
               geometry = std::move(scatter.geometry)](RunContext& ctx) {
    for (size_t i = 0; i < count; ++i) {
      // An empty operand may have no memory at all (null): copy nothing.
      if (elements > 0 && splat[i] >= 0) {
        kernels::CopyStrided(bytes[i], dims,
                             static_cast<const uint8_t*>(ctx.in(i)) +
                                 splat[i] * static_cast<int64_t>(bytes[i]),
                             zeros, ctx.out(i));
      } else if (elements > 0 && ctx.out(i) != ctx.in(i)) {
        // In place (the output over a dying operand, or a loop's carry)
        // the operand is already there: the update costs only its windows.
        kernels::CopyBytes(ctx.out(i), ctx.in(i), bytes[i] * static_cast<size_t>(elements));
      }
      KILN_RETURN_IF_ERROR(kernels::Scatter(types[i], ops[i], geometry, index_type, ctx.in(count),
                                            ctx.in(count + 1 + i), ctx.out(i)));
    }
    return Status::Ok();
  };
  const size_t before = lowering.graph().nodes.size();
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        lowering.EmitNode(op, std::move(inputs), std::move(outputs),
                                          std::move(run)));
  OverwriteOperands(lowering, before, results, splat);
  for (size_t i = 0; i < count; ++i) lowering.Bind(op.result(i), results[i]);
  return Status::Ok();
}

// A scatter with any other body: the region runs for every updated
// element, from this node's own thread.
Status EmitRegionScatter(Lowering& lowering, const ir::Operation& op, ScatterShape scatter) {
  const size_t count = scatter.count;
  const size_t before = lowering.graph().nodes.size();
  KILN_RETURN_IF_ERROR(
      lowering.EmitWithRegions(op, [count, bytes = std::move(scatter.bytes),
                                    elements = scatter.elements, index_type = scatter.index_type,
                                    geometry = std::move(scatter.geometry)](RunContext& ctx) {
        for (size_t i = 0; i < count; ++i) {
          if (elements > 0 && ctx.out(i) != ctx.in(i)) {
            kernels::CopyBytes(ctx.out(i), ctx.in(i), bytes[i] * static_cast<size_t>(elements));
          }
        }
        std::vector<const void*> args(2 * count);
        std::vector<std::array<uint8_t, 16>> scratch(count);
        std::vector<void*> results(count);
        for (size_t i = 0; i < count; ++i) results[i] = scratch[i].data();
        return kernels::ScatterVisit(
            geometry, index_type, ctx.in(count), [&](int64_t big, int64_t small) -> Status {
              for (size_t i = 0; i < count; ++i) {
                const auto element = static_cast<int64_t>(bytes[i]);
                args[i] = static_cast<const uint8_t*>(ctx.out(i)) + big * element;
                args[count + i] = static_cast<const uint8_t*>(ctx.in(count + 1 + i)) +
                                  small * element;
              }
              KILN_RETURN_IF_ERROR(ctx.RunRegion(0, args, results));
              for (size_t i = 0; i < count; ++i) {
                const auto element = static_cast<int64_t>(bytes[i]);
                std::memcpy(static_cast<uint8_t*>(ctx.out(i)) + big * element, scratch[i].data(),
                            bytes[i]);
              }
              return Status::Ok();
            });
      }));
  if (lowering.graph().nodes.size() > before) {
    const std::vector<ValueId> results = lowering.graph().nodes.back().outputs;
    OverwriteOperands(lowering, before, results, std::vector<int64_t>(count, -1));
  }
  return Status::Ok();
}

// scatter: a typed kernel when the body is one that kernels::Scatter takes
// for every operand's type, else the region per updated element.
Status LowerScatter(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ScatterShape scatter, ReadScatter(lowering, op));
  auto ops = MatchScatterBody(op.region(0), scatter.count);
  bool fast = ops.has_value();
  for (size_t i = 0; fast && i < scatter.count; ++i) {
    fast = kernels::ScatterAccepts(scatter.types[i], (*ops)[i]);
  }
  if (fast) return EmitTypedScatter(lowering, op, std::move(scatter), std::move(*ops));
  return EmitRegionScatter(lowering, op, std::move(scatter));
}

// The element offset of a dynamic start: each start index (scalar inputs
// first_index...) clamped so the window of `sizes` fits `dims`.
int64_t ClampedOffset(const RunContext& ctx, size_t first_index, ElementType index_type,
                      std::span<const int64_t> dims, std::span<const int64_t> sizes,
                      std::span<const int64_t> strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t start = kernels::LoadIndex(index_type, ctx.in(first_index + d), 0);
    offset += std::clamp<int64_t>(start, 0, std::max<int64_t>(dims[d] - sizes[d], 0)) * strides[d];
  }
  return offset;
}

// The start indices of a dynamic slice or update (scalar operands from
// `first`), when all are constants.
std::optional<std::vector<int64_t>> ConstantStarts(Lowering& lowering, const ir::Operation& op,
                                                   size_t first) {
  std::vector<int64_t> starts;
  for (size_t i = first; i < op.operands().size(); ++i) {
    StatusOr<ValueId> id = lowering.Input(op, i);
    if (!id.ok()) return std::nullopt;
    const ValueInfo& info = lowering.graph().values[static_cast<size_t>(*id)];
    if (!info.constant) return std::nullopt;
    starts.push_back(kernels::LoadIndex(info.shape.element_type, info.constant->data(), 0));
  }
  return starts;
}

Status LowerDynamicSlice(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  ElementType index_type = ElementType::kS32;
  if (op.operands().size() > 1) {
    KILN_ASSIGN_OR_RETURN(Shape index, lowering.ShapeOf(op.operand(1)));
    index_type = index.element_type;
  }
  // Start indices known at compile time: a static slice (clamped now), which
  // composes with the reads around it.
  if (std::optional<std::vector<int64_t>> starts = ConstantStarts(lowering, op, 1)) {
    KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, 0));
    std::vector<int> axis;
    for (size_t d = 0; d < out.dims.size(); ++d) {
      axis.push_back(static_cast<int>(d));
      (*starts)[d] = std::clamp<int64_t>((*starts)[d], 0,
                                         std::max<int64_t>(operand.dims[d] - out.dims[d], 0));
    }
    return lowering.EmitRead(op, MakeRead(input, out.dims, std::move(*starts), std::move(axis),
                                          std::vector<int64_t>(out.dims.size(), 1)));
  }
  const size_t bytes = ElementBytes(operand.element_type);
  return lowering.Emit(op, [bytes, index_type, dims = operand.dims, sizes = out.dims,
                            strides = Strides(operand.dims)](RunContext& ctx) {
    const int64_t offset = ClampedOffset(ctx, 1, index_type, dims, sizes, strides);
    kernels::CopyStrided(bytes, sizes,
                         static_cast<const uint8_t*>(ctx.in(0)) +
                             offset * static_cast<int64_t>(bytes),
                         strides, ctx.out(0));
    return Status::Ok();
  });
}

Status LowerDynamicUpdateSlice(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape update, lowering.ShapeOf(op.operand(1)));
  ElementType index_type = ElementType::kS32;
  if (op.operands().size() > 2) {
    KILN_ASSIGN_OR_RETURN(Shape index, lowering.ShapeOf(op.operand(2)));
    index_type = index.element_type;
  }
  // An update as large as the operand replaces all of it (its start indices
  // clamp to zero).
  if (update.dims == operand.dims) {
    KILN_ASSIGN_OR_RETURN(ValueId replacement, lowering.Input(op, 1));
    lowering.Bind(op.result(0), replacement);
    return Status::Ok();
  }
  const size_t bytes = ElementBytes(operand.element_type);
  const size_t total = operand.ByteSize();
  const size_t before = lowering.graph().nodes.size();
  KILN_RETURN_IF_ERROR(lowering.Emit(op, [bytes, total, index_type, dims = operand.dims,
                                          sizes = update.dims, strides = Strides(operand.dims),
                                          update_strides = Strides(update.dims)](RunContext& ctx) {
    // In place when the plan gave the operand's memory to the result (it
    // dies here, or a loop's in-place carry).
    if (total > 0 && ctx.out(0) != ctx.in(0)) kernels::CopyBytes(ctx.out(0), ctx.in(0), total);
    const int64_t offset = ClampedOffset(ctx, 2, index_type, dims, sizes, strides);
    kernels::CopyBox(bytes, sizes, ctx.in(1), update_strides,
                     static_cast<uint8_t*>(ctx.out(0)) + offset * static_cast<int64_t>(bytes),
                     strides);
    return Status::Ok();
  }));
  // Its result may take over the operand's memory where the operand dies
  // here (PlanBuffers decides), as a scatter's does: an update of a value
  // nothing else reads, or of a donated argument, costs its window.
  KILN_ASSIGN_OR_RETURN(ValueId result, lowering.Lookup(op.result(0)));
  std::vector<Node>& nodes = lowering.graph().nodes;
  if (nodes.size() > before && nodes.back().outputs == std::vector<ValueId>{result}) {
    nodes.back().output_over_input = {0};
  }
  return Status::Ok();
}

}  // namespace

// Per input: the op a scatter body applies (nullopt: it returns the update),
// when it is one of those forms.
std::optional<std::vector<std::optional<kernels::ReduceOp>>> MatchScatterBody(
    const ir::Region& body, size_t count) {
  if (body.num_blocks() != 1) return std::nullopt;
  const ir::Block& block = body.block(0);
  const ir::Operation* terminator = block.back();
  if (terminator == nullptr || terminator->operands().size() != count ||
      block.num_arguments() != 2 * count) {
    return std::nullopt;
  }
  std::vector<std::optional<kernels::ReduceOp>> ops(count);
  bool overwrite = block.operations().size() == 1;
  for (size_t i = 0; i < count && overwrite; ++i) {
    overwrite = terminator->operand(i) == block.argument(count + i);
  }
  if (overwrite) return ops;
  std::optional<std::vector<kernels::ReduceOp>> reduce = MatchReductionBody(body);
  if (!reduce || reduce->size() != count) return std::nullopt;
  for (size_t i = 0; i < count; ++i) ops[i] = (*reduce)[i];
  return ops;
}

// Scatter `op`'s dimension numbers and shapes, decoded once.
StatusOr<ScatterShape> ReadScatter(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute numbers = op.GetAttr("scatter_dimension_numbers");
  if (!numbers.Is(ir::AttrKind::kStruct)) {
    return InvalidArgument("scatter without #stablehlo.scatter dimension numbers");
  }
  IndexingDims dims;
  dims.window_dims = FieldInts(numbers, "update_window_dims");
  dims.collapsed_dims = FieldInts(numbers, "inserted_window_dims");
  dims.big_batching_dims = FieldInts(numbers, "input_batching_dims");
  dims.index_batching_dims = FieldInts(numbers, "scatter_indices_batching_dims");
  dims.index_map = FieldInts(numbers, "scatter_dims_to_operand_dims");
  dims.index_vector_dim = FieldInt(numbers, "index_vector_dim");
  ScatterShape scatter;
  scatter.count = op.num_results();
  const size_t count = scatter.count;
  KILN_ASSIGN_OR_RETURN(Shape input, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape indices, lowering.ShapeOf(op.operand(count)));
  KILN_ASSIGN_OR_RETURN(Shape updates, lowering.ShapeOf(op.operand(count + 1)));
  for (size_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(Shape in, lowering.ShapeOf(op.operand(i)));
    KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(i)));
    if (in.element_type != out.element_type) {
      return Unimplemented("scatter whose update computation changes the element type");
    }
    scatter.types.push_back(in.element_type);
    scatter.bytes.push_back(ElementBytes(in.element_type));
  }
  std::vector<int64_t> window_sizes(input.dims.size(), 1);
  size_t next_window = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(input.dims.size()); ++d) {
    if (Contains(dims.collapsed_dims, d) || Contains(dims.big_batching_dims, d)) continue;
    window_sizes[static_cast<size_t>(d)] =
        updates.dims[static_cast<size_t>(dims.window_dims[next_window++])];
  }
  scatter.geometry = MakeGeometry(dims, input, indices, updates, std::move(window_sizes));
  scatter.elements = input.NumElements();
  scatter.dims = input.dims;
  scatter.index_type = indices.element_type;
  return scatter;
}

PadCopy PlanPad(std::span<const int64_t> operand, std::span<const int64_t> out,
                std::span<const int64_t> low, std::span<const int64_t> interior) {
  const size_t rank = operand.size();
  const SmallVector<int64_t> in_strides(Strides(operand));
  const SmallVector<int64_t> out_strides(Strides(out));
  PadCopy copy;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t step = interior[d] + 1;
    // Operand elements i with 0 <= low + i * step < out: first..last.
    const int64_t first = low[d] >= 0 ? 0 : (-low[d] + step - 1) / step;
    const int64_t room = out[d] - 1 - low[d];
    const int64_t last = room < 0 ? -1 : std::min(operand[d] - 1, room / step);
    copy.counts.push_back(std::max<int64_t>(0, last - first + 1));
    copy.empty = copy.empty || copy.counts.back() == 0;
    copy.src_offset += first * in_strides[d];
    copy.dst_offset += (low[d] + first * step) * out_strides[d];
    copy.src_strides.push_back(in_strides[d]);
    copy.dst_strides.push_back(out_strides[d] * step);
  }
  return copy;
}

void RunPad(size_t element_bytes, const PadCopy& copy, int64_t total, const void* operand,
            const void* padding_value, void* out) {
  kernels::Fill(element_bytes, padding_value, out, total);
  if (copy.empty) return;
  const auto element = static_cast<int64_t>(element_bytes);
  kernels::CopyBox(element_bytes, copy.counts,
                   static_cast<const uint8_t*>(operand) + copy.src_offset * element,
                   copy.src_strides, static_cast<uint8_t*>(out) + copy.dst_offset * element,
                   copy.dst_strides);
}

namespace {

// pad: the padding value everywhere, then the operand's elements that land
// inside the result (negative edge padding crops) at stride interior + 1.
Status LowerPad(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  const std::vector<int64_t> low = IntsAttr(op, "edge_padding_low");
  std::vector<int64_t> interior = IntsAttr(op, "interior_padding");
  const size_t rank = operand.dims.size();
  if (low.size() != rank) return InvalidArgument("edge_padding_low has the wrong size");
  if (interior.size() != rank) interior.assign(rank, 0);
  const PadCopy copy = PlanPad(operand.dims, out.dims, low, interior);
  const size_t bytes = ElementBytes(operand.element_type);
  const int64_t total = out.NumElements();
  return lowering.Emit(op, [copy, bytes, total](RunContext& ctx) {
    RunPad(bytes, copy, total, ctx.in(0), ctx.in(1), ctx.out(0));
    return Status::Ok();
  });
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kGather, LowerGather},
    {ir::OpCode::kScatter, LowerScatter},
    {ir::OpCode::kDynamicSlice, LowerDynamicSlice},
    {ir::OpCode::kDynamicUpdateSlice, LowerDynamicUpdateSlice},
    {ir::OpCode::kPad, LowerPad},
};

}  // namespace

std::span<const LoweringRule> IndexingLowerings() { return kRules; }

}  // namespace kiln::compiler
