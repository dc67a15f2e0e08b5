// What the rules that compute ops on tiles share (lower_on_tiles.cc,
// lower_on_tiles_aligned.cc): sharding arithmetic, an op rebuilt on its
// tiles, an operand's tile, the result held as tiles, and the collectives
// that complete partial results or gather sharded dimensions. Internal to
// the compiler.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/lowering.h"

namespace kiln::compiler::on_tiles {

// A sharding over `mesh` of a rank-`rank` array with no dimension split.
TensorSharding Unsplit(const Mesh& mesh, size_t rank);
bool SameAxes(const std::vector<AxisRef>& a, const std::vector<AxisRef>& b);
bool SameMesh(const Mesh& a, const Mesh& b);
// Whole axes only, each used once over `sharding` and `extra` (sub-axes
// and repeats are left to the whole-array path).
bool SimpleAxes(const TensorSharding& sharding, std::span<const std::vector<AxisRef>> extra = {});
// A ranked tensor of a static shape and a plain element type.
bool IsRealTensor(const ir::Type& type);
ir::Type LocalType(const ir::Type& global, std::vector<int64_t> dims);

// `op` rebuilt on `operands` with results of `result_types`, lowered by its
// rule; its results. `attributes_of`'s attributes are kept; `body_op` makes
// a reduction body of that one binary op; `regions` copies `op`'s regions
// (a sort's comparator, a reduction's body).
StatusOr<std::vector<ValueId>> LowerRebuilt(Lowering& lowering, const ir::Operation& op,
                                            std::string_view name,
                                            const std::vector<ir::Value*>& operands,
                                            const std::vector<ir::Type>& result_types,
                                            std::string_view body_op = {},
                                            const ir::Operation* attributes_of = nullptr,
                                            bool regions = false);

// Gives `to` every attribute of `from`.
void CopyAttributes(const ir::Operation& from, ir::Operation& to);

// Copies `from`'s blocks into a new region of `into`: values defined in it
// are mapped (in `copies`) to their copies, values from outside are used as
// they are.
Status CloneRegion(const ir::Region& from, ir::Operation& into,
                   std::unordered_map<const ir::Value*, ir::Value*>& copies, int depth = 0);

// The running device's tile of operand `i` of `op` under `sharding`: its
// own tiles when it is held as tiles of the same tiling, else cut from the
// whole value (gathered first when it is held as other tiles).
StatusOr<ir::Value*> TileOf(Lowering& lowering, const ir::Operation& op, size_t i,
                            const TensorSharding& sharding);

// Holds `op`'s result `r` as `local`, tiles of `sharding` (whole when it
// splits nothing).
void BindResult(Lowering& lowering, const ir::Operation& op, size_t r, ValueId local,
                const TensorSharding& sharding);

// Sets on `attributes` those of a collective over the devices that differ
// only along `axes` of `mesh`: replica_groups of flattened ids
// (use_global_device_ids), each group in every replica, and a channel.
void SetGroupsAlong(const Spmd& spmd, const Mesh& mesh, const std::vector<AxisRef>& axes,
                    ir::Operation& attributes);

// Sums (by `body_op`) each device's `partial` over the devices that differ
// only along `axes` of `mesh`: an all_reduce with those groups.
StatusOr<ValueId> ReduceOverAxes(Lowering& lowering, const ir::Operation& op, ValueId partial,
                                 const ir::Type& type, const Mesh& mesh,
                                 const std::vector<AxisRef>& axes, std::string_view body_op);

// Sums each device's `partial` over the same devices as ReduceOverAxes,
// each receiving its block of `dimension` (split over `axes`, in their
// order): a reduce_scatter.
StatusOr<ValueId> ScatterOverAxes(Lowering& lowering, const ir::Operation& op, ValueId partial,
                                  const ir::Type& type, const Mesh& mesh,
                                  const std::vector<AxisRef>& axes, size_t dimension);

// The name of the one binary op `op`'s body (a reduction's, a scatter's)
// applies to its two arguments and returns; "" for any other body.
std::string BinaryBodyOp(const ir::Operation& op);
// BinaryBodyOp of a reduction whose init is operand `init`, when folding
// that init in once per device is harmless (max, min, and, or; add of an
// init of zero bits); "" otherwise.
std::string ReductionOp(const ir::Operation& op, size_t init);

// dot_general: batch and contracting dimensions take the axes of whichever
// operand is tiled there (the other is cut alike); free dimensions keep
// their operand's axes in the result; contracting axes leave partial sums,
// which an all_reduce over them completes.
struct DotPlan {
  TensorSharding lhs, rhs, result;
  std::vector<AxisRef> partial;  // the contracting axes
};

// The plan taking `lhs_tiles`' and `rhs_tiles`' axes (either may be null:
// that operand is cut to fit); `gather_contracting`: contracting
// dimensions whole on both sides instead (no partial sums). nullopt when
// the axes conflict or do not split the shapes evenly (`padded`: when
// they leave partial sums in uneven tiles).
StatusOr<std::optional<DotPlan>> PlanDot(Lowering& lowering, const ir::Operation& op,
                                         const Lowering::Tiles* lhs_tiles,
                                         const Lowering::Tiles* rhs_tiles, bool gather_contracting,
                                         bool padded = false);

// The operands of an element-for-element op of one result rebuilt on
// tiles: scalars (select, clamp) whole, the others `tile_of(i)`; nullopt,
// with nothing emitted, unless each is a scalar or of the result's shape.
StatusOr<std::optional<std::vector<ir::Value*>>> PointwiseOperands(
    Lowering& lowering, const ir::Operation& op,
    const std::function<StatusOr<ir::Value*>(size_t)>& tile_of);

// Whether `op` computes element k of its result from elements k of its
// operands: ops.def's pointwise ops (whose result may share an operand's
// memory), its elementwise ones and compare (whose result types differ).
bool ElementForElement(const ir::Operation& op);

// The result's sharding of a broadcast_in_dim or transpose of an operand
// held as tiles of `operand_sharding`: each split dimension's axes move
// with it (a broadcast's split dimension must keep its size); nullopt
// otherwise.
std::optional<TensorSharding> MovedSharding(const ir::Operation& op,
                                            const TensorSharding& operand_sharding);

// A reshape by factors, as Shardy splits dimensions into factors: the
// flat index of the array has digits, one per stretch between the strides
// where an input dimension, an output dimension or an axis begins or ends
// (when those strides divide one another). An axis is the digit it
// covers; it stays a split of the output dimension whose top digits it
// and the axes kept above it cover (Shardy keeps "y" of columns split
// over ("x", "y") on the minor dimension of a reshape that splits the
// columns into (2, 4) and merges the 2 into the rows). The rest of the
// axes are left (gathered before the reshape, each along its digit).
struct FactorPlan {
  TensorSharding result;          // over the output dimensions
  bool all_kept = false;          // no axis left: the tile reshapes as it is
  std::vector<int64_t> digits;    // the device's tile as digits (an axis's 1 wide)
  std::vector<int64_t> gathered;  // the same with the axes left whole
  TensorSharding left;            // over the digits: the axes left
};
// nullopt when the strides do not divide one another, an axis spans
// several digits, or `sharding` does not tile `in` evenly by whole axes.
std::optional<FactorPlan> PlanReshapeByFactors(const TensorSharding& sharding,
                                               std::span<const int64_t> in,
                                               std::span<const int64_t> out);

}  // namespace kiln::compiler::on_tiles

namespace kiln::compiler {

// The rules of lower_on_tiles_aligned.cc, each true when it lowered `op`
// on tiles and false to leave it to the whole-array path:
// ops whose result dimensions follow their operands' one for one (sort,
// reduce_window, slice, pad, reverse, concatenate, dynamic_slice,
// dynamic_update_slice, top_k, a reduce of any body), gather, scatter and
// convolution.
StatusOr<bool> OnTilesAligned(Lowering& lowering, const ir::Operation& op);
StatusOr<bool> OnTilesGather(Lowering& lowering, const ir::Operation& op);
StatusOr<bool> OnTilesScatter(Lowering& lowering, const ir::Operation& op);
StatusOr<bool> OnTilesConvolution(Lowering& lowering, const ir::Operation& op);
// lower_on_tiles_regions.cc: while, if and case whose bodies compute on
// tiles.
StatusOr<bool> OnTilesWhile(Lowering& lowering, const ir::Operation& op);
StatusOr<bool> OnTilesBranches(Lowering& lowering, const ir::Operation& op);
// lower_collectives.cc
StatusOr<bool> CollectiveOnTiles(Lowering& lowering, const ir::Operation& op);
// lower_on_tiles_padded.cc: ops on uneven tiles (Lowering::HeldAsPadded),
// when no operand is held as even tiles; and a constraint to a sharding
// that does not divide its value (`sharding`), held as padded tiles.
StatusOr<bool> OnPaddedTiles(Lowering& lowering, const ir::Operation& op);
StatusOr<bool> ConstrainPadded(Lowering& lowering, const ir::Operation& op,
                               const TensorSharding& sharding);
// The running device's padded tile of `value` under `sharding`: its own
// tiles when it is held padded alike (or, where the sharding divides it,
// as even tiles), made again on the tile where it can be
// (Lowering::TilePaddedEarly), else cut from the whole value;
// `*zero_padding`, when given, says whether the padding holds zeros.
StatusOr<ValueId> PaddedTile(Lowering& lowering, const ir::Value* value,
                             const TensorSharding& sharding, bool* zero_padding = nullptr);
// PaddedTile as an IR value for a rebuilt op.
StatusOr<ir::Value*> PaddedOperand(Lowering& lowering, const ir::Value* value,
                                   const TensorSharding& sharding);

}  // namespace kiln::compiler
