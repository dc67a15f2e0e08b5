// The executable plan Kiln compiles a program into: a graph of nodes in
// execution order over values with static shapes, each node bound to a kernel
// call, nested graphs for region ops, and a buffer plan placing intermediate
// values in one arena. docs/execution.md describes it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/element_type.h"
#include "base/status.h"
#include "kernels/conv.h"
#include "kernels/dot.h"
#include "kernels/reduce.h"
#include "kernels/tile_f32.h"

namespace kiln::ir {
class Operation;
}  // namespace kiln::ir

namespace kiln::compiler {

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

class Graph;
class RunContext;
class ExecutionEnv;

// What a node does at run time: reads ctx.in(i), writes ctx.out(i).
using RunFn = std::function<Status(RunContext& ctx)>;

// A value: an array with a static shape. Constants carry their data.
struct ValueInfo {
  Shape shape;
  size_t bytes = 0;                                      // dense storage size
  std::shared_ptr<const std::vector<uint8_t>> constant;  // non-null: known at compile time
};

// How a node computes its output over any range of its flat (row-major)
// element indices, so that fusion (compiler/fusion.cc) can run a chain of
// such nodes tile by tile in cache.
struct Pointwise {
  // kMap: out[k] = f(in_0[k], in_1[k], ...), every input with the output's
  // element count. kRead: out[k] = in_0[base + sum_j index_j(k) * strides[j]]
  // over the output's `dims` (broadcast, transpose, slice, reverse).
  // kGather: a read whose offset also depends on an index array (a gather
  // with one start index: jnp.take, take_along_axis): out[k] = in_0[base +
  // sum_j index_j(k) * strides[j] + clamp(in_1[sum_j index_j(k) *
  // index_strides[j]], 0, gather_limit) * gather_stride]. Both inputs are
  // read whole, so both must be in memory before a fused loop runs.
  enum class Kind : uint8_t { kMap, kRead, kGather };
  Kind kind = Kind::kMap;
  // kMap: computes `count` elements from pointers already offset to them.
  std::function<Status(std::span<const void* const> in, void* out, int64_t count)> map;
  // kMap of one f32 Unary / Binary op, for fused loops: which op (for
  // generated code, kernels/loop_jit.h) and its tile kernel (the same map
  // without dispatch, kernels/tile_f32.h).
  struct F32 {
    enum class Kind : uint8_t { kNone, kUnary, kBinary };
    Kind kind = Kind::kNone;
    uint8_t op = 0;  // a kernels::UnaryOp / BinaryOp
    kernels::TileKernel tile = nullptr;
  };
  F32 f32;
  // kRead: element strides of the source per output dimension (0 broadcasts).
  std::vector<int64_t> dims, strides;
  int64_t base = 0;
  size_t element_bytes = 0;
  // kGather: see above; index_type is s32, s64 or u32.
  std::vector<int64_t> index_strides;
  int64_t gather_stride = 0, gather_limit = 0;
  ElementType index_type = ElementType::kS32;
};

// A reduce of one array by one binary op over its trailing dimensions: the
// operand viewed as `rows` rows of `cols` contiguous elements, one result
// per row. Fusion folds the run computing the operand into the reduction
// (the operand then never reaches memory). Inputs: operand, init.
struct RowReduction {
  kernels::ReduceOp op;
  ElementType type;
  int64_t rows = 0, cols = 0;
};

// A reduce of one array by one binary op over consecutive dimensions, as a
// backend that compiles nodes reads it: the operand viewed as
// [outer][size][inner], one result per (outer, inner) in that order. A row
// reduction has inner == 1, a column reduction outer == 1, a full one
// both. Inputs: operand, init.
struct ReductionShape {
  kernels::ReduceOp op;
  ElementType type;
  int64_t outer = 0, size = 0, inner = 0;
};

// A collective the runtime may run over a backend's device memory, with
// the backend's copies and folds (runtime/device_plan.cc). kAllReduce:
// output k is input k of every member of the run's group folded by `op`,
// in group order. kAllGather: output k is input k of every member, in
// group order, one after another. kReduceScatter: output k is block r (the
// run's place in the group) of input k folded over the members. Blocks
// are consecutive bytes: every dimension before the gathered or scattered
// one has size 1.
struct DeviceCollective {
  enum class Kind : uint8_t { kAllReduce, kAllGather, kReduceScatter };
  Kind kind = Kind::kAllReduce;
  kernels::ReduceOp op = kernels::ReduceOp::kAdd;
  // The run's process group: flattened ids in group order, and the run's
  // place among them, from its replica and partition.
  struct Membership {
    std::vector<int64_t> group;
    size_t rank = 0;
  };
  std::function<StatusOr<Membership>(const ExecutionEnv& env)> membership;
};

struct Node {
  std::string op;        // "stablehlo.add", for messages and profiles
  std::string location;  // the user's source location, for run-time errors
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::vector<std::shared_ptr<const Graph>> regions;  // bodies of while/if/case/...
  // Per region: indexes into `inputs` of the outer values the region uses
  // (its graph takes them as parameters after the region's own arguments).
  std::vector<std::vector<size_t>> region_captures;
  RunFn run;
  // Not removable even when its outputs are unused, and never folded
  // (collectives, custom calls with side effects, outfeed).
  bool has_side_effects = false;
  // Its side effects do not keep a small program off the caller's thread
  // (Program::run_inline): a user's FFI handler, which XLA's CPU client runs
  // inline too. Host transfers and feeds, which wait on other threads, do.
  bool side_effects_run_inline = false;
  // The node's outputs may share memory with its inputs: it is a no-op view
  // (reshape, bitcast of the same size) and `run` copies nothing.
  bool output_aliases_input = false;
  // Per output (empty: none), the index of an input or -1. `output_is_input`:
  // the output is that input's memory, which the node never writes (a while
  // carry its body passes through unchanged). `output_over_input`: the
  // output may be written over that input's memory when the input dies at
  // this node and no other input shares it (a while carry updated in
  // place). PlanBuffers decides; `run` copies an input to its output only
  // when their pointers differ.
  std::vector<int32_t> output_is_input;
  std::vector<int32_t> output_over_input;
  // Set when the node can join a fused loop (see Pointwise).
  std::shared_ptr<const Pointwise> pointwise;
  // What a plan listing shows after the op name: a fused loop's members.
  std::string detail;
  // How the per-device program a partitioned executable reports
  // (compiler/plan_listing.h) writes the node when it is a collective: the
  // StableHLO ops it performs, detached (attributes, body and result types,
  // no operands), each taking the previous one's result and the first the
  // node's inputs. Empty: the node is written as a call of kernel `op`.
  std::vector<std::shared_ptr<const ir::Operation>> listing;
  // Set on a node that does several collectives in one meeting (combined
  // reduce_scatters or gathers): `listing` holds one chain per input, of
  // these lengths; chain k takes input k and gives output k.
  std::vector<uint32_t> listing_chains;
  // Set on reductions fusion may fold a producing run into (see RowReduction).
  std::shared_ptr<const RowReduction> row_reduction;
  // A fused loop ("kiln.fusion"): per input, whether every member reads it
  // element for element (so an output may be written over its memory).
  std::vector<bool> inputs_read_pointwise;

  // What a backend that compiles nodes into its own code reads
  // (runtime::DeviceBackend::Supports, docs/porting.md), besides
  // `pointwise` (its kind, and a read's strides) and `output_aliases_input`
  // (a view: its output is its input's bytes):
  // - an elementwise map (pointwise kMap): its StableHLO op, detached
  //   (attributes and result types, no operands), whose operands are the
  //   node's inputs in order; likewise a select whose predicate is one
  //   element (no pointwise: the host runs it outside fused loops);
  std::shared_ptr<const ir::Operation> source;
  // - a GEMM: out = lhs x rhs, all three of the output's element type;
  std::shared_ptr<const kernels::MatMulShape> matmul;
  // - a reduction over consecutive dimensions;
  std::shared_ptr<const ReductionShape> reduction;
  // - a strided copy the host runs as a copy kernel of its own, outside
  //   fused loops (a convolution's or GEMM's operand put in order): a
  //   Pointwise kRead, read as `pointwise` is;
  std::shared_ptr<const Pointwise> strided_copy;
  // - a convolution's column matrix (kernels::Im2Col of its one input, an
  //   NHWC image): [groups, rows, window positions x group features];
  std::shared_ptr<const kernels::ConvGeometry> im2col;
  // - a one-group convolution: out [rows, output features] = the column
  //   matrix of input 0 (as im2col) x input 1 [window positions x
  //   features, output features], all three of the output's element type;
  std::shared_ptr<const kernels::ConvGeometry> convolution;
  // - a depthwise convolution (kernels::DepthwiseConv: one input feature
  //   per group): out [batch, output spatial..., output features] from
  //   input 0, an NHWC image, and input 1, the kernel [window..., output
  //   features]; output feature f reads input feature f / (output features
  //   / features). All three of the output's element type;
  std::shared_ptr<const kernels::ConvGeometry> depthwise;
  // - a conversion of its one input to the output's element type, element
  //   for element, with stablehlo.convert's semantics.
  bool converts = false;
  // - a collective of the run's devices (all_reduce and reduce_scatter
  //   with a recognized body, all_gather and reduce_scatter of consecutive
  //   blocks): DeviceCollective.
  std::shared_ptr<const DeviceCollective> collective;
};

// The placement of one value at run time.
enum class Storage : uint8_t {
  kArena,      // at `offset` in the execution's arena
  kParameter,  // the caller's argument `index`
  kConstant,   // the value's constant data
  kResult,     // at `offset` in the caller's result buffer `index`
  kAlias,      // the memory of value `index` (a view)
};

struct Placement {
  Storage storage = Storage::kArena;
  int64_t index = 0;   // parameter / result / aliased value
  int64_t offset = 0;  // kArena, kResult
};

class Graph {
 public:
  std::vector<ValueInfo> values;
  std::vector<ValueId> parameters;
  std::vector<ValueId> results;
  std::vector<Node> nodes;  // in execution order

  // Filled by PlanBuffers (compiler/buffer_plan.cc).
  std::vector<Placement> placements;  // per value
  int64_t arena_bytes = 0;

  ValueId AddValue(Shape shape);
  ValueId AddConstant(Shape shape, std::vector<uint8_t> data);
  const Shape& shape(ValueId id) const { return values[static_cast<size_t>(id)].shape; }
};

// Assigns every value a Placement: parameters, constants and results where
// the caller has them; other values at offsets of one arena, reusing the
// memory of values no longer live (greedy first fit by liveness).
// `intermediates_in_results` (an entry graph, whose result buffers are the
// caller's fresh outputs): a value that dies at the fused loop computing a
// result, read there element for element and of its size, is placed in
// that result's buffer instead of the arena; and a value dying before the
// first write of a result's buffer may live in that buffer, but for the
// results marked in `aliased_results` (a donated argument's memory may be
// theirs).
void PlanBuffers(Graph& graph, bool intermediates_in_results = false,
                 const std::vector<bool>& aliased_results = {});

// Drops nodes whose outputs nothing uses (unless they have side effects).
void EliminateDeadNodes(Graph& graph);

// The op name of a fused loop.
inline constexpr std::string_view kFusionOp = "kiln.fusion";
// Consecutive fused loops and row reductions run block of rows by block of
// rows (compiler/row_groups.cc).
inline constexpr std::string_view kRowGroupOp = "kiln.row_group";

// Replaces each run of consecutive Pointwise nodes with one node that runs
// them tile by tile (compiler/fusion.cc). Values only the run uses never
// reach memory. Call before PlanBuffers.
void FuseElementwise(Graph& graph);

}  // namespace kiln::compiler
