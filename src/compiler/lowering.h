// Lowering of verified Kiln IR into a Graph. Each op family has a table of
// rules (lower_*.cc); a rule reads the op's attributes once and emits nodes
// whose run functions call kernels. func.call is inlined here, region bodies
// become nested graphs, and constant subexpressions are folded as they are
// emitted.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/small_vector.h"
#include "compiler/executor.h"
#include "compiler/graph.h"
#include "compiler/sharding.h"
#include "ir/module.h"
#include "kernels/reduce.h"

namespace kiln::compiler {

// A data-movement op (broadcast_in_dim, transpose, reverse, slice, a
// dynamic_slice at constant indices) seen as a read of another value:
// result[o] = source[base + sum over j of o[j] * step[j] along axis[j]].
// Lowering keeps the read behind each value such an op produced, so that a
// read of a read becomes one read of the first source (canonicalization:
// transpose(transpose(x)), slice(broadcast(x)), ... copy once, or not at all).
struct StridedRead {
  ValueId source = kNoValue;
  std::vector<int64_t> dims;  // the result's dimension sizes
  std::vector<int64_t> base;  // per source dimension: the index result[0, ..., 0] reads
  std::vector<int> axis;      // per result dimension: the source dimension it walks, or -1
  std::vector<int64_t> step;  // per result dimension: index step along that axis
};

// The read of `source` (of `source_dims`) by an op whose result dimension j
// is source dimension axis[j] (or none: -1) walked by step[j] from `base`.
StridedRead MakeRead(ValueId source, std::vector<int64_t> dims, std::vector<int64_t> base,
                     std::vector<int> axis, std::vector<int64_t> step);

// Outputs larger than this are not folded into constants: a broadcast of a
// scalar is cheaper to compute than to store. Splat constants larger than
// this are lowered as the broadcast of their element, never expanded.
constexpr size_t kMaxFoldedBytes = 16 * 1024;

// How an SPMD program is partitioned (lower_spmd.cc): its meshes and the
// shardings of the entry's parameters and results (nullopt: whole on every
// device). Each device receives and returns its tiles; in between the
// program computes on whole arrays, gathering tiles where it needs a whole
// array, and sdy.manual_computation bodies run on their local tiles with
// real collectives.
// The name of a host recv node that runs on one partition and shares its
// results with the others (a meeting, like a collective).
inline constexpr std::string_view kSharedHostRecv = "kiln.shared_host_recv";

struct Spmd {
  MeshTable meshes;
  std::vector<std::optional<TensorSharding>> parameters;
  std::vector<std::optional<TensorSharding>> results;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  // Ops whose operands are tiles compute on the tiles where they can
  // (lower_on_tiles.cc); false (KILN_SPMD=gather): every op on whole arrays.
  bool on_tiles = true;
  // A GSPMD program: shardings are mhlo.sharding (parameters, results and
  // the Sharding custom calls), each read over a mesh of its own, or over
  // `gspmd_mesh` where every sharding of the program fits one
  // (CommonMesh; none in programs with manual regions).
  bool gspmd = false;
  std::optional<Mesh> gspmd_mesh;
};

// GSPMD's `mhlo.sharding` text as the program reads it: over the
// program's common mesh where it has one (ParseHloSharding otherwise).
StatusOr<std::optional<TensorSharding>> ReadHloSharding(std::string_view text, const Spmd& spmd);

// A gather of tiles as EmitGather plans it (lower_spmd.cc).
struct GatherPlan;

class Lowering {
 public:
  // Lowers the function `entry` of `module` into `graph`.
  // An SPMD program's results without a sharding of their own that the
  // program computes on tiles are returned as those tiles, and `spmd`'s
  // result shardings say so.
  static Status LowerEntry(const ir::Module& module, const ir::Operation& entry, Graph& graph,
                           Spmd* spmd = nullptr);

  // --- For rules ---
  Graph& graph() { return graph_; }
  // The module being lowered (for called computations named by symbol).
  const ir::Module& module() const { return module_; }
  // The graph value of an op's operand (captured into this region's graph
  // when it is defined outside it).
  StatusOr<ValueId> Input(const ir::Operation& op, size_t i);
  // The graph value of any IR value in scope (captured like Input).
  StatusOr<ValueId> Lookup(const ir::Value* value);
  // The static shape of an IR value; UNIMPLEMENTED for dynamic shapes.
  StatusOr<Shape> ShapeOf(const ir::Value* value) const;

  // Emits a node for `op` with the op's operands as inputs and new values for
  // its results, and folds it when every input is a constant.
  Status Emit(const ir::Operation& op, RunFn run);
  // Emit for an op computing its one result element for element from
  // operands of the result's element count: `map` computes `count` elements
  // from pointers to them. The node can join fused loops (Pointwise).
  using PointwiseMap =
      std::function<Status(std::span<const void* const> in, void* out, int64_t count)>;
  // `f32`: the map as one f32 op, when it is one (Pointwise::F32).
  Status EmitPointwise(const ir::Operation& op, PointwiseMap map, Pointwise::F32 f32 = {});
  // The general form: explicit inputs and output shapes. Returns the outputs.
  // A node that is not `foldable` (its result depends on where it runs, like
  // replica_id) is never folded nor removed.
  StatusOr<std::vector<ValueId>> EmitNode(const ir::Operation& op, std::vector<ValueId> inputs,
                                          std::vector<Shape> outputs, RunFn run,
                                          std::vector<std::shared_ptr<const Graph>> regions = {},
                                          std::vector<std::vector<size_t>> captures = {},
                                          bool foldable = true);
  // Emits `read` as `op`'s result: composed with the read that produced its
  // source, if any; bound to the source without a node when it reads all of
  // it in order; else one strided copy (kernels::CopyStrided).
  Status EmitRead(const ir::Operation& op, StridedRead read);
  // Lowers `region`'s block in this graph, as if its ops stood in place of
  // `op` (an if or case whose branch is known at compile time); `results`
  // receives the values its terminator returns. `keep_tiles`: a value the
  // region holds as tiles is returned as its tile, not gathered.
  Status InlineRegion(const ir::Region& region, std::vector<ValueId>* results,
                      bool keep_tiles = false);
  // Inlines the function named by `op`'s symbol attribute `attribute` with
  // the op's operands as arguments (func.call's callee, a composite's
  // decomposition); `whole`: the operands whole, not as the tiles the
  // program holds them in.
  Status InlineFunction(const ir::Operation& op, std::string_view attribute, bool whole = false);
  // Maps an IR result to an existing graph value (ops that are no-ops).
  // (A function inlined twice binds its values again: a value bound whole
  // drops tiles an earlier inlining held, and the reverse.)
  void Bind(const ir::Value* value, ValueId id) {
    values_[value] = id;
    ungathered_.erase(value);
    partials_.erase(value);
    padded_.erase(value);
  }
  // Keeps an op a rule made while lowering (the static form of a dynamic
  // op) alive as long as this lowering, so its values stay valid keys.
  const ir::Operation& Adopt(std::unique_ptr<ir::Operation> op) {
    adopted_.push_back(std::move(op));
    return *adopted_.back();
  }
  // Adopts `op`, checks it against its own constraints (ir::VerifyDetachedOp:
  // it was built from values the module's verifier did not see together) and
  // lowers it with its rule. Returns the adopted op.
  // `verify` false: an op on tiles whose regions keep the whole arrays'
  // types (lower_on_tiles_regions.cc), which the verifier would refuse.
  StatusOr<const ir::Operation*> LowerAdopted(std::unique_ptr<ir::Operation> op,
                                              bool verify = true);
  // Lowers a region's single block into a nested graph: its block arguments
  // are the graph's first parameters, outer values it uses come after them
  // (`captures` receives their values in this graph), and its terminator's
  // operands are the results.
  StatusOr<std::shared_ptr<const Graph>> LowerRegion(const ir::Region& region,
                                                     std::vector<ValueId>* captures);
  // Emits a node for an op with regions: inputs are the op's operands plus
  // every region's captures. `foldable` as for EmitNode.
  Status EmitWithRegions(const ir::Operation& op, RunFn run, bool foldable = true);

  // Location text for messages.
  static std::string Where(const ir::Operation& op);

  // SPMD programs: the partitioning, null for a program run whole.
  const Spmd* spmd() const { return spmd_; }
  // `value`'s tile under `sharding` on the running device: an entry
  // parameter's (or a gathered value's) own tiles when the tiling is the
  // same, else cut from the whole value when the program runs.
  StatusOr<ValueId> LocalTile(const ir::Value* value, const TensorSharding& sharding);
  // `value`, held whole, computed once more on the running device's tile
  // of `sharding` instead of cut from its whole array: Kiln's form of
  // Shardy's backward propagation. A value a pointwise op, broadcast,
  // transpose, iota, splat constant, dot_general or reduce of this
  // lowering made (through inlined calls) is made again from its
  // operands' tiles (lower_on_tiles_early.cc), recursively;
  // the whole array then dies unless something else uses it. A value held
  // as tiles of another tiling is made again only from what is smaller
  // than itself (a broadcast, an iota, a constant) rather than gathered.
  // nullopt for any other value (the caller cuts it).
  StatusOr<std::optional<ValueId>> TileEarly(const ir::Value* value,
                                             const TensorSharding& sharding);
  // TileEarly for a `sharding` that does not divide the value: its
  // running device's padded tile (HeldAsPadded's form; the padding holds
  // whatever the ops made of it), made again from its operands' padded
  // tiles by a pointwise op, broadcast, transpose, iota, splat constant,
  // dot_general or reduce over the dimensions they keep.
  StatusOr<std::optional<ValueId>> TilePaddedEarly(const ir::Value* value,
                                                   const TensorSharding& sharding);
  // The whole array of `global` shape from every device's tile `local`
  // (a meeting of the devices); remembered as `local`'s gathered form.
  StatusOr<ValueId> GatherTiles(ValueId local, const Shape& global, const TensorSharding& sharding);
  // A value this lowering holds as tiles (an entry parameter, or the result
  // of an op computed on tiles), whether or not it was gathered since; null
  // for a value held whole only.
  struct Tiles {
    ValueId local;
    TensorSharding sharding;
  };
  // In the body of a while, if or case, a value the enclosing lowering
  // holds as tiles is held as the same tiles here (its tile captured).
  const Tiles* HeldAsTiles(const ir::Value* value);
  // The gathers of tiles this lowering emitted (EmitGather), by the whole
  // value each makes, for CombineCollectives.
  void NoteGather(ValueId whole, std::shared_ptr<const GatherPlan> plan) {
    gather_plans_[whole] = std::move(plan);
  }
  std::shared_ptr<const GatherPlan> GatherPlanOf(ValueId whole) const {
    auto found = gather_plans_.find(whole);
    return found == gather_plans_.end() ? nullptr : found->second;
  }
  // Whether this lowering holds `value`'s whole array (bound whole, or
  // gathered since).
  bool HeldWhole(const ir::Value* value) const { return values_.count(value) != 0; }
  // Holds `value` as the running device's tile `local` of `sharding`; its
  // whole array is gathered on its first whole use.
  void BindTiles(const ir::Value* value, ValueId local, TensorSharding sharding) {
    values_.erase(value);
    partials_.erase(value);
    padded_.erase(value);
    ungathered_.insert_or_assign(value, Tiles{local, std::move(sharding)});
  }
  // Uneven tiles (lower_on_tiles_padded.cc): a value split by a sharding
  // that does not divide it is held as each device's padded tile
  // (TensorSharding::PaddedDims; the elements past the array's end are of
  // no value). Only the rules that know padding see such tiles: to every
  // other rule the value is whole (Lookup gathers it, dropping the
  // padding), so HeldAsTiles never returns them.
  const Tiles* HeldAsPadded(const ir::Value* value) const {
    auto found = padded_.find(value);
    return found == padded_.end() ? nullptr : &found->second;
  }
  void BindPadded(const ir::Value* value, ValueId local, TensorSharding sharding) {
    values_.erase(value);
    partials_.erase(value);
    ungathered_.erase(value);
    padded_.insert_or_assign(value, Tiles{local, std::move(sharding)});
  }
  // A value held as partial sums (tiles with unreduced axes) is summed over
  // those axes (an all_reduce) and held as the summed tiles; nothing for
  // any other value. `into`: a use wants tiles of that sharding; when it
  // splits one dimension over exactly the unreduced axes of a value whole
  // otherwise, each device receives only its tile of the sum (a
  // reduce_scatter).
  Status SumPartials(const ir::Value* value, const TensorSharding* into = nullptr);
  // `value`'s partial sums (tiles with unreduced axes), also once summed;
  // null for a value never held as them.
  const Tiles* PartialTiles(const ir::Value* value);
  // `tiles` of a value of `global` shape as partial sums of `sharding`
  // when it makes whole exactly the dimensions split over its unreduced
  // axes (each device's tile placed in zeros); nullopt otherwise.
  StatusOr<std::optional<ValueId>> PlaceAsPartials(const Tiles& tiles, const Shape& global,
                                                   const TensorSharding& sharding);
  // An IR value of `type` that stands for graph value `id`: the operands of
  // ops made on tiles (lower_on_tiles.cc).
  ir::Value* StandIn(ValueId id, ir::Type type);
  // Binds the results of a region inlined in place of `op` with its block
  // arguments bound to `arguments` (sdy bodies), returning its terminator's
  // operands (sdy.return, func.return, stablehlo.return).
  // `manual`: the body of an sdy.manual_computation, whose values are the
  // devices' own tiles along its manual axes; `tiles`: per argument, the
  // tiling over the automatic axes it arrives in (nullopt: whole over
  // them), so that ops in the body compute on tiles of those axes; a
  // result the body holds as tiles is returned as its tile (the caller
  // reads the tiling with HeldAsTiles of the terminator's operand).
  Status InlineBody(const ir::Region& region, std::span<const ValueId> arguments,
                    std::vector<ValueId>* results, bool manual = false,
                    std::span<const std::optional<TensorSharding>> tiles = {});
  // True while lowering the body of an sdy.manual_computation.
  bool in_manual_body() const { return manual_depth_ > 0; }
  // Whether an error already names its op (shared with regions): a probe
  // that lowers a region only to look at it restores it after a failure.
  bool annotated() const { return *annotated_; }
  void set_annotated(bool annotated) { *annotated_ = annotated; }

  // A region lowered on tiles (lower_on_tiles_regions.cc): its block
  // arguments arrive as tiles of `arguments` (nullopt: whole), and its
  // terminator's operands leave as tiles of `results`. `probe`: the
  // results leave as they are and `observed` receives the tiling each is
  // held as (nullopt: whole), and `wanted` per block argument arriving
  // whole the first tiling a use in the region cut it to (Shardy would
  // propagate that use's sharding back into the argument).
  struct RegionTiles {
    std::vector<std::optional<TensorSharding>> arguments;
    std::vector<std::optional<TensorSharding>> results;
    bool probe = false;
    std::vector<std::optional<TensorSharding>> observed;
    std::vector<std::optional<TensorSharding>> wanted;
  };
  // Registers how `region` is lowered by LowerRegion; the entry lives as
  // long as this lowering.
  RegionTiles& TilesFor(const ir::Region* region) { return region_tiles_[region]; }

 private:
  Lowering(const ir::Module& module, Graph& graph, Lowering* parent, int depth)
      : module_(module), graph_(graph), parent_(parent), depth_(depth) {}

  Status LowerBlock(const ir::Block& block, std::vector<ValueId>* results);
  // Signed sub-byte integers between the host's form and the kernels'
  // (kernels::SubByteToComputeForm): parameters on the way in, the entry's
  // results on the way out.
  StatusOr<ValueId> SubByteInComputeForm(ValueId parameter);
  Status ConvertSubByteResults();
  Status LowerOp(const ir::Operation& op);
  Status LowerOpAs(const ir::Operation& op);  // LowerOp's rules
  Status InlineCall(const ir::Operation& call);
  // Runs a node whose inputs are all constants at compile time; false if it
  // is not worth folding.
  StatusOr<bool> TryFold(Node& node);

  const ir::Module& module_;
  Graph& graph_;
  Lowering* parent_;
  int depth_;
  std::unordered_map<const ir::Value*, ValueId> values_;
  std::vector<std::unique_ptr<ir::Operation>> adopted_;
  std::unordered_map<ValueId, StridedRead> reads_;  // values strided copies produced
  std::vector<ValueId> captured_outer_;  // per capture parameter: the value in the parent
  std::vector<const ir::Block*> call_stack_;
  std::vector<ValueId>* return_values_ = nullptr;  // func.return target while inlining
  bool root_annotated_ = false;
  bool* annotated_ = &root_annotated_;  // an error already names its op (shared with regions)
  const Spmd* spmd_ = nullptr;
  int manual_depth_ = 0;  // sdy.manual_computation bodies being inlined
  // Values held as tiles: entry parameters and results of ops computed on
  // tiles (gathered on first whole use), and values whose tiles are known
  // (gathered ones).
  std::unordered_map<const ir::Value*, Tiles> ungathered_;
  std::unordered_map<ValueId, Tiles> tiles_;
  std::unordered_map<const ir::Value*, Tiles> partials_;  // partial sums since summed
  std::unordered_map<const ir::Value*, Tiles> padded_;    // uneven tiles (HeldAsPadded)
  std::unordered_map<ValueId, std::shared_ptr<const GatherPlan>> gather_plans_;
  // Regions lowered on tiles (TilesFor), and for a region's lowering the
  // entry its terminator follows.
  std::unordered_map<const ir::Region*, RegionTiles> region_tiles_;
  RegionTiles* region_results_ = nullptr;
  const ir::Block* region_block_ = nullptr;  // the block LowerRegion is lowering
  // The body of a while, if or case: tiles of the parent's values are
  // captured as tiles (HeldAsTiles).
  bool tile_captures_ = false;
  const ir::Operation* lowering_op_ = nullptr;  // the op LowerOp is lowering
  // TileEarly: the op that made `value`, bound to `id` here, followed
  // through inlined calls (a result to its function's returned value, an
  // argument to the call's operand) while the bindings still match;
  // `value` becomes the producer's result. Null for a parameter, a
  // capture or a value rebound since.
  const ir::Operation* ProducerOf(const ir::Value*& value, ValueId id) const;
  // What `value` is bound to here: its whole value, else its tile (not a
  // parent's captured tiles); nullopt when neither.
  std::optional<ValueId> BoundId(const ir::Value* value) const;
  // TileEarly's values made again, by the value they stand for (the
  // whole value, or a tile of another tiling) and its whole shape.
  struct Remade {
    ValueId local;
    TensorSharding sharding;
    std::vector<int64_t> global;
  };
  std::unordered_map<ValueId, std::vector<Remade>> remade_;
  // Per argument of an inlined function's body, the call that bound it last.
  std::unordered_map<const ir::Value*, const ir::Operation*> inlined_by_;
  StatusOr<std::optional<ValueId>> RemakeOnTiles(const ir::Value* value,
                                                 const TensorSharding& sharding, bool padded);
  int early_depth_ = 0;          // producers TileEarly is making again, nested
  bool returns_tiles_ = false;   // lowering an inlined function's body (InlineFunction)
  bool returns_padded_ = false;  // the same, only InlineFunction (which binds uneven tiles)
  std::unordered_set<const ir::Value*> captured_tiles_;  // held as the parent's tiles
};

using LowerFn = Status (*)(Lowering& lowering, const ir::Operation& op);
struct LoweringRule {
  ir::OpCode code;
  LowerFn lower;
};

// The rule that lowers ops of `code` (the last entry for it in the family
// tables), or null: the op's row in ops.def says kStructural or
// kUnimplemented.
const LoweringRule* FindLoweringRule(ir::OpCode code);

// The rule tables of each op family.
std::span<const LoweringRule> ElementwiseLowerings();
std::span<const LoweringRule> ShapeLowerings();
std::span<const LoweringRule> MiscLowerings();
std::span<const LoweringRule> CheckLowerings();
// custom_call @check.* (lower_check.cc), reached from custom_call's rule.
Status LowerCheckCustomCall(Lowering& lowering, const ir::Operation& op, std::string_view target);
std::span<const LoweringRule> ReduceLowerings();
std::span<const LoweringRule> RegionLowerings();
std::span<const LoweringRule> LinalgLowerings();
std::span<const LoweringRule> RaggedDotLowerings();
std::span<const LoweringRule> IndexingLowerings();
// dynamic_iota / dynamic_broadcast_in_dim / dynamic_reshape with static
// result types; dynamic_pad / real_dynamic_slice / dynamic_gather /
// dynamic_conv with constant shape operands (lower_dynamic.cc).
std::span<const LoweringRule> DynamicLowerings();
std::span<const LoweringRule> RandomLowerings();  // lower_random.cc
std::span<const LoweringRule> FftLowerings();     // lower_fft.cc
// cholesky, triangular_solve, batch_norm_*, chlo.top_k (lower_solvers.cc).
std::span<const LoweringRule> SolverLowerings();
// chlo.broadcast_*, chlo.broadcast_select, chlo.constant_like as the
// StableHLO ops they compose (lower_chlo.cc).
std::span<const LoweringRule> ChloLowerings();
// sdy ops: manual_computation, sharding_constraint, reshard,
// propagation_barrier, sharding_group, named_computation (lower_spmd.cc).
std::span<const LoweringRule> SpmdLowerings();
// Lowers `op` on the tiles of its operands when some are held as tiles and
// the op has a rule for it (lower_on_tiles.cc); false: lower it whole.
StatusOr<bool> LowerOnTiles(Lowering& lowering, const ir::Operation& op);
// GSPMD's sharding custom calls in an SPMD program (lower_spmd.cc):
// Sharding (a sharding constraint), SPMDFullToShardShape (the device's
// tile) and SPMDShardToFullShape (the tiles as a whole value); false for
// any other op.
StatusOr<bool> LowerGspmdCustomCall(Lowering& lowering, const ir::Operation& op);
// The tile node of `value` (of whole shape `global`): cuts the running
// device's tile; and whether two shardings give every device of `devices`
// the same tile (lower_spmd.cc).
// `padded`: the sharding may not divide the value; the tile is the
// sharding's padded tile (TensorSharding::PaddedDims), zeros past the
// array's end.
StatusOr<ValueId> EmitTile(Lowering& lowering, ValueId value, const Shape& global,
                           const TensorSharding& sharding, bool padded = false);
// `tile`, the running device's padded tile of a value of `global` shape,
// with every element past the array's end set to the scalar `fill` (the
// identity of a reduction about to run over the tiles).
StatusOr<ValueId> EmitMaskPadding(Lowering& lowering, ValueId tile, ValueId fill,
                                  const Shape& global, const TensorSharding& sharding);
// `tile` on the devices first along `sharding`'s unreduced axes, zeros on
// the others: a whole value held as partial sums.
StatusOr<ValueId> EmitPartialShare(Lowering& lowering, ValueId tile,
                                   const TensorSharding& sharding);
// A device's tile under `target` cut from its tile `held` of a coarser
// tiling (each dimension's axes a prefix of the target's): no
// communication. nullopt when `target` is not finer so.
StatusOr<std::optional<ValueId>> EmitFinerTile(Lowering& lowering, const Lowering::Tiles& held,
                                               const TensorSharding& target);
// A device's tile under `target` from its tile `held` of a tiling that
// shares leading axes with it in some dimension but is not coarser: the
// held tiles gathered only along the axes after those (the devices that
// differ along them alone meet), then cut finer. nullopt where the
// tilings share no axis (a whole gather) or `target` is finer (no gather).
StatusOr<std::optional<ValueId>> EmitReshard(Lowering& lowering, const Lowering::Tiles& held,
                                             const Shape& global, const TensorSharding& target);
// `tile`, a device's tile of a value split along some dimensions over the
// axes `placed` gives them, at its place in zeros of `shape` (those
// dimensions whole): partial sums over those axes of the value with those
// dimensions whole.
StatusOr<ValueId> EmitPlaceTile(Lowering& lowering, ValueId tile, const Shape& shape,
                                const TensorSharding& placed);
// The whole array of `global` shape from the devices' tiles `local` (the
// sharding's padded tiles when it does not divide the array).
StatusOr<ValueId> EmitGather(Lowering& lowering, ValueId local, const Shape& global,
                             const TensorSharding& sharding);
bool SameTiling(const TensorSharding& a, const TensorSharding& b, std::span<const int64_t> dims);
// Collectives of a partitioned program's graph that meet the same devices
// alike, none depending on another's result, become one node in the last
// one's place, the other nodes reordered around it (as XLA's combiners
// do): the devices meet once for all of them (lower_collectives.cc).
// all_reduces with the same groups, body and element type become one
// variadic all_reduce; reduce_scatters likewise one reduce_scatter of
// several operands (each along its own dimension); gathers of tiles
// (EmitGather) over the same groups one gather. Dead nodes are dropped
// first, so that nothing dead joins a live meeting.
Status CombineCollectives(Lowering& lowering);
// The gathers' part of it (lower_spmd.cc): the key under which gathers
// meet alike ("" for a node that is no such gather), and one node that
// does the gathers of `members` (of one key) in one meeting.
std::string GatherCombineKey(const Lowering& lowering, const Node& node);
StatusOr<Node> CombinedGather(Lowering& lowering, std::span<const Node* const> members);
// The collectives: all_reduce, all_gather, reduce_scatter, all_to_all,
// collective_permute, collective_broadcast (lower_collectives.cc).
std::span<const LoweringRule> CollectiveLowerings();
std::span<const LoweringRule> RunParallelLowerings();
// For reductions with a body (reduce, reduce_window, the reducing
// collectives; lower_reduce.cc): the element types of the first `count`
// operands, after checking that the body takes and returns 0-d tensors of
// exactly those types; and the typed kernel ops when the body is one
// recognized op per result that every type accepts.
StatusOr<std::vector<ElementType>> ReductionTypes(Lowering& lowering, const ir::Operation& op,
                                                  const ir::Region& body, size_t count);
std::optional<std::vector<kernels::ReduceOp>> FastOps(const ir::Region& body,
                                                      const std::vector<ElementType>& types);
// Ops on quantized tensors (lower_quantized.cc): uniform_quantize,
// uniform_dequantize, and any other op with a !quant.uniform operand or
// result that is not a pure data movement, run as dequantize -> the op in
// the expressed type -> quantize.
bool NeedsQuantizedLowering(const ir::Operation& op);
Status LowerQuantized(Lowering& lowering, const ir::Operation& op);
// The quantization parameters of a tensor type's elements, or null.
const ir::QuantizedParams* QuantizationOf(const ir::Type& type);
// pad's copy of its operand into the result, for kernels::CopyBox: per
// dimension the operand elements that land inside the result (negative edge
// padding crops) and the strides on both sides (lower_indexing.cc).
struct PadCopy {
  SmallVector<int64_t> counts, src_strides, dst_strides;
  int64_t src_offset = 0, dst_offset = 0;
  bool empty = false;  // nothing of the operand lands in the result
};
PadCopy PlanPad(std::span<const int64_t> operand, std::span<const int64_t> out,
                std::span<const int64_t> low, std::span<const int64_t> interior);
// out = the padding value everywhere, then `copy` of the operand.
void RunPad(size_t element_bytes, const PadCopy& copy, int64_t total, const void* operand,
            const void* padding_value, void* out);
// convolution, or a dynamic_conv (same attributes) whose `padding` operand
// ([spatial, 2] integers) is only known at run time: the run checks that it
// gives the result type's output size (lower_linalg.cc).
Status LowerConvolutionWithPadding(Lowering& lowering, const ir::Operation& op, ValueId padding);
// transpose(dot_general(a, b), [1, 0]) of a product without batch
// dimensions that nothing else reads, as dot_general(b, a): the GEMM writes
// the transposed product (it reads its operands transposed for free)
// instead of a strided copy after it; the dot_general's own node is then
// dead. JAX's weight gradients take this form. False when `transpose` is
// not one (lower_linalg.cc).
StatusOr<bool> LowerTransposedProduct(Lowering& lowering, const ir::Operation& transpose);
// custom_call targets "mhlo.erf", "mhlo.acos", ...: the elementwise ops
// XLA's HLO-to-StableHLO export writes as custom calls because StableHLO has
// no op for them (PyTorch/XLA with XLA_STABLEHLO_COMPILE=1). False when
// `target` is not one of them.
StatusOr<bool> LowerMhloElementwiseCall(Lowering& lowering, const ir::Operation& op,
                                        std::string_view target);
// custom_call targets JAX emits for a generic platform (Qr,
// ProductOfElementaryHouseholderReflectors, ApproxTopK; lower_solvers.cc):
// true when `target` is one of them and it was lowered.
StatusOr<bool> LowerKnownCustomCall(Lowering& lowering, const ir::Operation& op,
                                    std::string_view target);
// custom_call targets users registered for Kiln through jax.ffi (typed FFI
// handlers and the custom-call API before it; lower_ffi.cc): false when no
// handler is registered under `target` for the call's API.
StatusOr<bool> LowerRegisteredCustomCall(Lowering& lowering, const ir::Operation& op,
                                         std::string_view target);

// The composite "chlo.top_k" as top-k (lower_solvers.cc): false when its
// types are not the op's, for the decomposition to be inlined.
StatusOr<bool> LowerTopKComposite(Lowering& lowering, const ir::Operation& op);

// The data of a dense elements attribute laid out as a Kiln buffer of
// `shape`: splats expanded, and signed sub-byte integers (which attributes
// hold masked to their width, as MLIR does) sign-extended to their byte, as
// numpy and ml_dtypes hold them.
StatusOr<std::vector<uint8_t>> DenseData(const ir::Attribute& value, const Shape& shape);

// Attribute access for rules. The module is verified, so shapes are right
// and every attribute its ops.def row declares required is present with its
// kind: the fallback of IntsAttr / IntAttr / EnumAttr applies only to
// optional attributes. FieldInts / FieldInt give [] or 0 for a struct field
// that is absent, which upstream's printer does for fields at that default
// (omit_default in op_syntax.cc).
// Shared by the rule files: bytes of one stored element, row-major strides
// of `dims`, whether `dims` lists `dim`, and the integer fields of a struct
// attribute (dimension numbers).
size_t ElementBytes(ElementType type);
std::vector<int64_t> Strides(std::span<const int64_t> dims);
bool Contains(std::span<const int64_t> dims, int64_t dim);
std::vector<int64_t> FieldInts(const ir::Attribute& record, std::string_view field);
int64_t FieldInt(const ir::Attribute& record, std::string_view field);
std::vector<int64_t> IntsAttr(const ir::Operation& op, std::string_view name);
int64_t IntAttr(const ir::Operation& op, std::string_view name, int64_t fallback);
std::string_view EnumAttr(const ir::Operation& op, std::string_view name,
                          std::string_view fallback = "");

}  // namespace kiln::compiler
