// Loops and branches on tiles (issue 28). A while whose carries are tiles
// runs on the tiles: its body and condition are lowered with their block
// arguments bound as tiles (Lowering::RegionTiles), so the ops in them
// compute on tiles by the same rules as outside, and the body returns each
// carry as tiles of the same tiling (cut, or gathered and cut, where an op
// in it made the value whole or other tiles). The body is lowered once
// first as a probe: a carry that enters whole but leaves as tiles (a
// scan's accumulator summing tiled rows) is made tiles from the start, as
// Shardy propagates the body's sharding back to the loop's operands.
// if and case branches likewise compute on the tiles of the values they
// capture; each result is held as the tiles its branches return (the
// first branch's tiling where they differ). Every device runs the same
// iterations and takes the same branch (the predicate is a whole value, the
// same everywhere), so collectives inside the bodies meet.
#include <optional>

#include "compiler/lowering.h"
#include "compiler/on_tiles.h"

namespace kiln::compiler {
namespace {

using namespace on_tiles;  // NOLINT(google-build-using-namespace)

using Tilings = std::vector<std::optional<TensorSharding>>;

// Marks a while, if or case made on tiles.
constexpr std::string_view kMadeOnTiles = "kiln.on_tiles";

// The tilings `region`'s terminator leaves its operands in when its block
// arguments are `arguments`; nullopt when the region does not lower so.
// `wanted`: per block argument arriving whole, the tiling a use in the
// region first cut it to.
std::optional<Tilings> Probe(Lowering& lowering, const ir::Region& region, const Tilings& arguments,
                             Tilings* wanted = nullptr) {
  Lowering::RegionTiles& entry = lowering.TilesFor(&region);
  entry = Lowering::RegionTiles{arguments, {}, /*probe=*/true, {}, {}};
  std::vector<ValueId> captures;
  const bool annotated = lowering.annotated();
  const bool lowered = lowering.LowerRegion(region, &captures).ok();
  lowering.set_annotated(annotated);  // a failed probe names no op
  Tilings observed = std::move(lowering.TilesFor(&region).observed);
  if (wanted != nullptr) *wanted = std::move(lowering.TilesFor(&region).wanted);
  // The original region may still be lowered whole (the op falls back).
  lowering.TilesFor(&region) = Lowering::RegionTiles{};
  if (!lowered) return std::nullopt;
  return observed;
}

// A tiling the result of `type` may take: whole axes of a shape it splits
// evenly. `partial`: partial sums too (a loop carry that enters as them
// stays them: each device accumulates its own, as XLA's loops do);
// otherwise they are summed before they leave a body.
bool Usable(const ir::Type& type, const std::optional<TensorSharding>& sharding,
            bool partial = false) {
  if (!sharding || !IsRealTensor(type) || sharding->dims.size() != type.dims().size() ||
      !sharding->LocalDims(type.dims()).ok() || sharding->IsReplicated()) {
    return false;
  }
  if (sharding->unreduced.empty()) return SimpleAxes(*sharding);
  const std::vector<AxisRef> partial_axes[] = {sharding->unreduced};
  return partial && SimpleAxes(*sharding, partial_axes);
}

// `op` made again on `operands` with results of the local types of
// `results`' tilings, its regions copied and lowered as `regions` say;
// binds its results as tiles.
Status LowerOnTiles(Lowering& lowering, const ir::Operation& op,
                    const std::vector<ir::Value*>& operands, const Tilings& results,
                    const std::vector<Lowering::RegionTiles>& regions) {
  auto made = std::make_unique<ir::Operation>(op.name(), op.location());
  for (ir::Value* operand : operands) made->AddOperand(operand);
  for (size_t r = 0; r < op.num_results(); ++r) {
    const ir::Type& type = op.result(r)->type();
    if (!results[r]) {
      made->AddResult(type);
      continue;
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, results[r]->LocalDims(type.dims()));
    made->AddResult(LocalType(type, std::move(local)));
  }
  CopyAttributes(op, *made);
  // Lowered by the ordinary rule, not again by these.
  made->SetAttr(std::string(kMadeOnTiles), ir::Attribute::Unit());
  std::unordered_map<const ir::Value*, ir::Value*> copies;
  for (size_t r = 0; r < op.num_regions(); ++r) {
    KILN_RETURN_IF_ERROR(CloneRegion(op.region(r), *made, copies));
    lowering.TilesFor(&made->region(r)) = regions[r];
  }
  // Its regions keep the whole arrays' types where its operands are tiles.
  KILN_ASSIGN_OR_RETURN(const ir::Operation* lowered,
                        lowering.LowerAdopted(std::move(made), /*verify=*/false));
  for (size_t r = 0; r < op.num_results(); ++r) {
    KILN_ASSIGN_OR_RETURN(ValueId id, lowering.Lookup(lowered->result(r)));
    if (results[r]) {
      lowering.BindTiles(op.result(r), id, *results[r]);
    } else {
      lowering.Bind(op.result(r), id);
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<bool> OnTilesWhile(Lowering& lowering, const ir::Operation& op) {
  const size_t count = op.operands().size();
  if (op.num_regions() != 2 || op.num_results() != count || op.GetAttr(kMadeOnTiles)) {
    return false;
  }
  Tilings carries(count);
  bool any = false;
  for (size_t i = 0; i < count; ++i) {
    const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(i));
    if (tiles != nullptr && Usable(op.operand(i)->type(), tiles->sharding, /*partial=*/true)) {
      carries[i] = tiles->sharding;
      any = true;
    }
  }
  // Carries the body leaves as tiles are tiles from the start; so are
  // carries the body leaves whole but cuts to tiles where it uses them (a
  // vector multiplied by a matrix split on its columns), as Shardy
  // propagates that use's sharding back into the carry: each iteration
  // then sums its product into the carry's tiles.
  for (int round = 0; round < 3; ++round) {
    Tilings wanted;
    std::optional<Tilings> observed = Probe(lowering, op.region(1), carries, &wanted);
    if (!observed || observed->size() != count) return false;
    bool changed = false;
    for (size_t i = 0; i < count; ++i) {
      // A carry left as partial sums is summed into its tiles at the end
      // of each iteration.
      std::optional<TensorSharding> seen = (*observed)[i];
      if (seen) seen->unreduced.clear();
      if (!carries[i] && Usable(op.operand(i)->type(), seen)) {
        carries[i] = std::move(seen);
        changed = any = true;
      }
    }
    if (!changed) {
      for (size_t i = 0; i < count && i < wanted.size(); ++i) {
        if (!carries[i] && lowering.HeldAsTiles(op.operand(i)) == nullptr &&
            Usable(op.operand(i)->type(), wanted[i])) {
          carries[i] = wanted[i];
          changed = any = true;
        }
      }
    }
    if (!changed) break;
  }
  if (!any) return false;
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < count; ++i) {
    if (carries[i]) {
      KILN_ASSIGN_OR_RETURN(ir::Value * tile, TileOf(lowering, op, i, *carries[i]));
      operands.push_back(tile);
    } else {
      KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.Input(op, i));
      operands.push_back(lowering.StandIn(whole, op.operand(i)->type()));
    }
  }
  // The condition's predicate is whole; the body returns every carry as
  // it came.
  const std::vector<Lowering::RegionTiles> regions = {{carries, {std::nullopt}, false, {}},
                                                      {carries, carries, false, {}}};
  KILN_RETURN_IF_ERROR(LowerOnTiles(lowering, op, operands, carries, regions));
  return true;
}

StatusOr<bool> OnTilesBranches(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 1 || op.num_regions() == 0 || op.GetAttr(kMadeOnTiles)) {
    return false;
  }
  // A constant selector inlines its branch (lower_regions.cc), whose ops
  // then compute on tiles where they stand.
  const ir::Operation* selector = op.operand(0)->defining_op();
  if (selector != nullptr && selector->code() == ir::OpCode::kConstant) return false;
  Tilings results(op.num_results());
  bool any = false;
  for (size_t r = 0; r < op.num_regions(); ++r) {
    std::optional<Tilings> observed = Probe(lowering, op.region(r), {});
    if (!observed || observed->size() != results.size()) return false;
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i] && Usable(op.result(i)->type(), (*observed)[i])) {
        results[i] = (*observed)[i];
        any = true;
      }
    }
  }
  if (!any) return false;
  KILN_ASSIGN_OR_RETURN(ValueId index, lowering.Input(op, 0));
  const std::vector<Lowering::RegionTiles> regions(op.num_regions(),
                                                   Lowering::RegionTiles{{}, results, false, {}});
  KILN_RETURN_IF_ERROR(LowerOnTiles(lowering, op, {lowering.StandIn(index, op.operand(0)->type())},
                                    results, regions));
  return true;
}

}  // namespace kiln::compiler
