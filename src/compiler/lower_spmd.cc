// SPMD programs (Shardy): each device receives and returns its tiles of the
// sharded parameters and results. Between them Kiln computes on whole
// arrays on every device, gathering tiles where a whole array is needed
// (a meeting of the devices, like all_gather) and cutting its own tile
// where a tile is needed (no meeting): a correct first partitioner, whose
// cost is the gathered copies. sdy.manual_computation bodies (shard_map,
// pmap) run on the devices' local tiles with real collectives, and a
// parameter whose tiles already are the body's operand tiles goes in
// without a gather (likewise a body result returned with the same tiling).
// sharding_constraint / reshard / propagation_barrier only steer XLA's
// propagation: whole arrays need no resharding, so they are the identity.
#include <algorithm>
#include <cstring>

#include "base/small_vector.h"
#include "compiler/lowering.h"
#include "compiler/on_tiles.h"
#include "compiler/plan_listing.h"
#include "kernels/copy.h"
#include "kernels/gather.h"

namespace kiln::compiler {

StatusOr<std::optional<TensorSharding>> ReadHloSharding(std::string_view text, const Spmd& spmd) {
  KILN_ASSIGN_OR_RETURN(std::optional<TensorSharding> sharding,
                        ParseHloSharding(text, spmd.num_partitions));
  if (!sharding || !spmd.gspmd_mesh) return sharding;
  std::optional<TensorSharding> common = OnMesh(*sharding, *spmd.gspmd_mesh);
  return common ? common : sharding;
}
namespace {

// The element offset of the tile of the device at `coordinates` in the
// whole array, and its dims.
int64_t TileOffset(const TensorSharding& sharding, std::span<const int64_t> coordinates,
                   std::span<const int64_t> local, std::span<const int64_t> global_strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < local.size(); ++d) {
    offset += sharding.TileOf(d, coordinates) * local[d] * global_strides[d];
  }
  return offset;
}

// The part of the tile of the device at `coordinates` that lies inside
// a whole array of `whole` dims (all of it unless the tiles are padded):
// per dimension, how many of the tile's elements are the array's.
SmallVector<int64_t> TileExtent(const TensorSharding& sharding,
                                std::span<const int64_t> coordinates,
                                std::span<const int64_t> whole, std::span<const int64_t> tile) {
  SmallVector<int64_t> extent(tile.size());
  for (size_t d = 0; d < tile.size(); ++d) {
    const int64_t start = sharding.TileOf(d, coordinates) * tile[d];
    extent[d] = std::clamp<int64_t>(whole[d] - start, 0, tile[d]);
  }
  return extent;
}

// Copies the tile of the device at `coordinates` under `sharding` between
// a whole array of `whole` dims and a dense tile of `tile` dims: out of the
// whole array into `to` (`into_whole` false) or from `from` into it. Of a
// padded tile only the part inside the array moves.
void CopyTile(const TensorSharding& sharding, std::span<const int64_t> coordinates,
              ElementType type, std::span<const int64_t> whole, std::span<const int64_t> tile,
              const void* from, void* to, bool into_whole) {
  const size_t bytes = ElementBytes(type);
  SmallVector<int64_t> whole_strides(whole.size()), tile_strides(tile.size());
  kernels::DenseStrides(whole, whole_strides);
  kernels::DenseStrides(tile, tile_strides);
  const SmallVector<int64_t> extent = TileExtent(sharding, coordinates, whole, tile);
  if (std::find(extent.begin(), extent.end(), 0) != extent.end()) return;  // all padding
  const int64_t offset = TileOffset(sharding, coordinates, tile, whole_strides) *
                         static_cast<int64_t>(bytes);
  if (into_whole) {
    kernels::CopyBox(bytes, extent, from, tile_strides, static_cast<uint8_t*>(to) + offset,
                     whole_strides);
  } else {
    kernels::CopyBox(bytes, extent, static_cast<const uint8_t*>(from) + offset, whole_strides, to,
                     tile_strides);
  }
}

StatusOr<std::vector<int64_t>> CoordinatesOf(const TensorSharding& sharding, int64_t device) {
  std::optional<std::vector<int64_t>> coordinates = sharding.mesh.CoordinatesOf(device);
  if (!coordinates) {
    return InvalidArgument("partition ", device, " is not a device of the mesh (",
                           sharding.mesh.num_devices(), " devices)");
  }
  return std::move(*coordinates);
}

// A sharding with only the axes of `keep`.
TensorSharding Restricted(const TensorSharding& sharding, const std::vector<std::string>& keep) {
  TensorSharding restricted = sharding;
  auto other = [&](const AxisRef& ref) {
    return std::find(keep.begin(), keep.end(), ref.name) == keep.end();
  };
  for (auto& axes : restricted.dims) std::erase_if(axes, other);
  std::erase_if(restricted.unreduced, other);
  return restricted;
}

Status LowerIdentity(Lowering& lowering, const ir::Operation& op) {
  for (size_t i = 0; i < op.num_results(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId id, lowering.Input(op, i));
    lowering.Bind(op.result(i), id);
  }
  return Status::Ok();
}

Status LowerNothing(Lowering&, const ir::Operation&) { return Status::Ok(); }

std::string_view OpaqueText(const ir::Attribute& attribute) {
  return attribute.Is(ir::AttrKind::kOpaque) ? std::string_view(attribute->text)
                                             : std::string_view();
}

// A manual computation's result `r` whose out_sharding leaves its
// dimensions open and splits none over the manual axes, returned by its
// body from a constraint over other (automatic) axes: that constraint's
// tiling, as Shardy propagates it out through the open dimensions (the
// body computes whole over those axes; the result is cut). nullopt
// otherwise.
StatusOr<std::optional<TensorSharding>> ConstrainedInBody(Lowering& lowering,
                                                          const ir::Operation& op, size_t r,
                                                          const TensorSharding& out,
                                                          const std::vector<std::string>& manual,
                                                          const Shape& global) {
  const std::optional<TensorSharding> none;
  if (lowering.in_manual_body() || !lowering.spmd()->on_tiles || op.num_regions() != 1 ||
      op.region(0).num_blocks() != 1 || out.open.size() != out.dims.size() ||
      !Restricted(out, manual).IsReplicated()) {
    return none;
  }
  const ir::Operation* done = op.region(0).block(0).back();
  if (done == nullptr || r >= done->operands().size()) return none;
  const ir::Operation* constraint = done->operand(r)->defining_op();
  if (constraint == nullptr || constraint->code() != ir::OpCode::kSdyShardingConstraint) {
    return none;
  }
  StatusOr<TensorSharding> named = ParseSharding(OpaqueText(constraint->GetAttr("sharding")),
                                                 lowering.spmd()->meshes);
  if (!named.ok() || named->dims.size() != global.dims.size() || !named->unreduced.empty() ||
      !on_tiles::SameMesh(named->mesh, out.mesh) || named->IsReplicated() ||
      lowering.spmd()->num_partitions != named->mesh.num_devices() ||
      !on_tiles::SimpleAxes(*named) || !named->LocalDims(global.dims).ok()) {
    return none;
  }
  for (size_t d = 0; d < named->dims.size(); ++d) {
    if (!named->dims[d].empty() && !out.open[d]) return none;
    for (const AxisRef& ref : named->dims[d]) {
      if (std::find(manual.begin(), manual.end(), ref.name) != manual.end()) return none;
    }
  }
  TensorSharding tiles = *named;
  tiles.open.clear();
  return std::optional<TensorSharding>(std::move(tiles));
}

// Operand tiles `held` of a manual computation's operand that the body
// may take as tiles over automatic axes: in each dimension the manual
// axes `in` names come first (or none), and the automatic ones after them
// are those `in` names or, where the dimension is open, any. The tiling
// of those automatic axes over the body's argument; nullopt when it has
// none or does not fit.
std::optional<TensorSharding> AutomaticPart(Lowering& lowering, const Lowering::Tiles* held,
                                            const TensorSharding& in,
                                            const std::vector<std::string>& manual,
                                            const Shape& global) {
  if (held == nullptr || lowering.in_manual_body() || !held->sharding.unreduced.empty() ||
      !in.unreduced.empty() || held->sharding.dims.size() != global.dims.size() ||
      in.dims.size() != global.dims.size() || !on_tiles::SameMesh(held->sharding.mesh, in.mesh) ||
      !on_tiles::SimpleAxes(held->sharding)) {
    return std::nullopt;
  }
  const TensorSharding manual_part = Restricted(in, manual);
  TensorSharding inner = on_tiles::Unsplit(in.mesh, global.dims.size());
  bool any = false;
  for (size_t d = 0; d < global.dims.size(); ++d) {
    const std::vector<AxisRef>& have = held->sharding.dims[d];
    const std::vector<AxisRef>& first = manual_part.dims[d];
    if (have.size() < first.size() ||
        !on_tiles::SameAxes({have.begin(), have.begin() + static_cast<ptrdiff_t>(first.size())},
                            first)) {
      return std::nullopt;
    }
    std::vector<AxisRef> rest(have.begin() + static_cast<ptrdiff_t>(first.size()), have.end());
    for (const AxisRef& ref : rest) {
      if (std::find(manual.begin(), manual.end(), ref.name) != manual.end()) return std::nullopt;
    }
    std::vector<AxisRef> named = in.dims[d];
    std::erase_if(named, [&](const AxisRef& ref) {
      return std::find(manual.begin(), manual.end(), ref.name) != manual.end();
    });
    const bool open = d < in.open.size() && in.open[d];
    if (!on_tiles::SameAxes(rest, named) && !(open && named.empty())) return std::nullopt;
    any = any || !rest.empty();
    inner.dims[d] = std::move(rest);
  }
  if (!any) return std::nullopt;
  // The tiles over the manual axes split evenly into the automatic ones.
  StatusOr<std::vector<int64_t>> local = manual_part.LocalDims(global.dims);
  if (!local.ok() || !inner.LocalDims(*local).ok()) return std::nullopt;
  return inner;
}

// A manual computation's result the body returns as `tiles` over
// automatic axes: the result's tiling (the manual axes `out` names, major,
// then the tiles' automatic ones) when `out` leaves those dimensions open
// or names the same axes; nullopt otherwise.
std::optional<TensorSharding> CarriedOut(Lowering& lowering, const Lowering::Tiles& tiles,
                                         const TensorSharding& out,
                                         const std::vector<std::string>& manual,
                                         const Shape& global) {
  const TensorSharding& inner = tiles.sharding;
  if (lowering.in_manual_body() || !inner.unreduced.empty() || !out.unreduced.empty() ||
      inner.dims.size() != global.dims.size() || out.dims.size() != global.dims.size() ||
      !on_tiles::SameMesh(inner.mesh, out.mesh)) {
    return std::nullopt;
  }
  TensorSharding result = Restricted(out, manual);
  result.open.clear();
  for (size_t d = 0; d < global.dims.size(); ++d) {
    std::vector<AxisRef> named = out.dims[d];
    std::erase_if(named, [&](const AxisRef& ref) {
      return std::find(manual.begin(), manual.end(), ref.name) != manual.end();
    });
    const bool open = d < out.open.size() && out.open[d];
    if (!on_tiles::SameAxes(inner.dims[d], named) && !(open && named.empty())) {
      return std::nullopt;
    }
    result.dims[d].insert(result.dims[d].end(), inner.dims[d].begin(), inner.dims[d].end());
  }
  if (!on_tiles::SimpleAxes(result) || !result.LocalDims(global.dims).ok()) return std::nullopt;
  return result;
}

// sdy.manual_computation: each operand's tile (over the manual axes) goes
// into the body; each body result, a tile, is held as the tiles of the op's
// result (gathered on its first whole use). Operands split over automatic
// axes too enter as those tiles, and the body's results leave as the tiles
// it holds them in where the out_shardings allow (AutomaticPart,
// CarriedOut).
Status LowerManualComputation(Lowering& lowering, const ir::Operation& op) {
  if (lowering.spmd() == nullptr) {
    return Unimplemented("sdy.manual_computation in a program compiled without its mesh");
  }
  const MeshTable& meshes = lowering.spmd()->meshes;
  KILN_ASSIGN_OR_RETURN(std::vector<TensorSharding> in,
                        ParseShardingPerValue(OpaqueText(op.GetAttr("in_shardings")), meshes));
  KILN_ASSIGN_OR_RETURN(std::vector<TensorSharding> out,
                        ParseShardingPerValue(OpaqueText(op.GetAttr("out_shardings")), meshes));
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> manual,
                        ParseManualAxes(OpaqueText(op.GetAttr("manual_axes"))));
  if (in.size() != op.operands().size() || out.size() != op.num_results()) {
    return InvalidArgument("in_shardings has ", in.size(), " entries for ", op.operands().size(),
                           " operands and out_shardings ", out.size(), " for ", op.num_results(),
                           " results");
  }
  if (!in.empty() || !out.empty()) {
    // Over a mesh refined by the program's sub-axes, a manual axis is its
    // parts.
    const Mesh& mesh = in.empty() ? out[0].mesh : in[0].mesh;
    std::vector<std::string> parts;
    for (const std::string& name : manual) {
      std::optional<std::vector<AxisRef>> covered = mesh.Resolve(AxisRef{name, 1, 0});
      if (!covered)
        return InvalidArgument("manual_axes names \"", name, "\", which the mesh lacks");
      for (const AxisRef& part : *covered) parts.push_back(part.name);
    }
    manual = std::move(parts);
  }
  std::vector<ValueId> arguments;
  std::vector<std::optional<TensorSharding>> automatic(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    TensorSharding sharding = Restricted(in[i], manual);
    // An operand split over automatic axes too enters the body as those
    // tiles (its ops compute on them), where the manual axes are the major
    // ones of each dimension, as Shardy requires.
    KILN_ASSIGN_OR_RETURN(Shape global, lowering.ShapeOf(op.operand(i)));
    if (std::optional<TensorSharding> inner = AutomaticPart(lowering,
                                                            lowering.HeldAsTiles(op.operand(i)),
                                                            in[i], manual, global)) {
      for (size_t d = 0; d < sharding.dims.size(); ++d) {
        sharding.dims[d].insert(sharding.dims[d].end(), inner->dims[d].begin(),
                                inner->dims[d].end());
      }
      automatic[i] = std::move(inner);
    }
    KILN_ASSIGN_OR_RETURN(ValueId tile, lowering.LocalTile(op.operand(i), sharding));
    arguments.push_back(tile);
  }
  std::vector<ValueId> returned;
  KILN_RETURN_IF_ERROR(lowering.InlineBody(op.region(0), arguments, &returned, /*manual=*/true,
                                           automatic));
  if (returned.size() != op.num_results()) {
    return InvalidArgument("the body returns ", returned.size(), " values for ", op.num_results(),
                           " results");
  }
  const ir::Operation* done = op.region(0).block(0).back();
  for (size_t r = 0; r < returned.size(); ++r) {
    TensorSharding sharding = Restricted(out[r], manual);
    KILN_ASSIGN_OR_RETURN(Shape global, lowering.ShapeOf(op.result(r)));
    if (const Lowering::Tiles* tiles = done != nullptr && r < done->operands().size()
                                           ? lowering.HeldAsTiles(done->operand(r))
                                           : nullptr) {
      // Returned as tiles over automatic axes: they stay tiles of the
      // result where its out_sharding leaves them (as Shardy propagates
      // them out); else the body's value is made whole over those axes.
      std::optional<TensorSharding> kept = CarriedOut(lowering, *tiles, out[r], manual, global);
      if (kept) {
        lowering.BindTiles(op.result(r), returned[r], *kept);
        continue;
      }
      KILN_ASSIGN_OR_RETURN(returned[r], lowering.Lookup(done->operand(r)));
    }
    const bool tiles = lowering.spmd()->on_tiles && !sharding.IsReplicated();
    if (!lowering.in_manual_body() && (tiles || !sharding.unreduced.empty())) {
      // Held as the tiles (or partial sums) they are until a use needs them
      // whole or summed; ops after the body compute on them.
      if (sharding.dims.size() != global.dims.size()) {
        return InvalidArgument("out_shardings ", r, " has ", sharding.dims.size(),
                               " dimensions for a result of ", global.ToString());
      }
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, sharding.LocalDims(global.dims));
      if (lowering.graph().shape(returned[r]).dims != local) {
        return InvalidArgument("the body returns ", lowering.graph().shape(returned[r]).ToString(),
                               " for result ", r, ", expected tiles of ",
                               Shape{global.element_type, local}.ToString());
      }
      lowering.BindTiles(op.result(r), returned[r], sharding);
      continue;
    }
    if (!sharding.unreduced.empty()) {
      return Unimplemented("partial sums (unreduced axes) out of an sdy.manual_computation "
                           "nested in another");
    }
    KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.GatherTiles(returned[r], global, sharding));
    KILN_ASSIGN_OR_RETURN(std::optional<TensorSharding> inner,
                          ConstrainedInBody(lowering, op, r, out[r], manual, global));
    if (inner) {
      KILN_ASSIGN_OR_RETURN(ValueId tile, EmitTile(lowering, whole, global, *inner));
      lowering.BindTiles(op.result(r), tile, *inner);
      continue;
    }
    lowering.Bind(op.result(r), whole);
  }
  return Status::Ok();
}

// sdy.named_computation: a named call; its body runs in place.
Status LowerNamedComputation(Lowering& lowering, const ir::Operation& op) {
  std::vector<ValueId> arguments;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId id, lowering.Input(op, i));
    arguments.push_back(id);
  }
  std::vector<ValueId> returned;
  KILN_RETURN_IF_ERROR(lowering.InlineBody(op.region(0), arguments, &returned));
  if (returned.size() != op.num_results()) {
    return InvalidArgument("the body returns ", returned.size(), " values for ", op.num_results(),
                           " results");
  }
  for (size_t r = 0; r < returned.size(); ++r) lowering.Bind(op.result(r), returned[r]);
  return Status::Ok();
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kSdyManualComputation, LowerManualComputation},
    {ir::OpCode::kSdyNamedComputation, LowerNamedComputation},
    {ir::OpCode::kSdyShardingConstraint, LowerIdentity},
    {ir::OpCode::kSdyReshard, LowerIdentity},
    {ir::OpCode::kSdyPropagationBarrier, LowerIdentity},
    {ir::OpCode::kSdyShardingGroup, LowerNothing},
};

// The ops the tile and gather nodes are named after (messages, profiles).
const ir::Operation& TileOp() {
  static const ir::Operation* op = new ir::Operation("kiln.spmd_tile");
  return *op;
}
const ir::Operation& GatherOp() {
  static const ir::Operation* op = new ir::Operation("kiln.spmd_gather");
  return *op;
}
const ir::Operation& MaskPaddingOp() {
  static const ir::Operation* op = new ir::Operation("kiln.spmd_mask_padding");
  return *op;
}
const ir::Operation& PlaceTileOp() {
  static const ir::Operation* op = new ir::Operation("kiln.spmd_place_tile");
  return *op;
}
const ir::Operation& PartialShareOp() {
  static const ir::Operation* op = new ir::Operation("kiln.spmd_partial_share");
  return *op;
}

// The dimensions a GSPMD `Sharding` leaves to propagation
// (backend_config "unspecified_dims=[0,1]", as JAX writes an UNCONSTRAINED
// dimension).
std::vector<int64_t> UnspecifiedDims(const ir::Operation& op) {
  ir::Attribute config = op.GetAttr("backend_config");
  std::vector<int64_t> dims;
  if (!config.Is(ir::AttrKind::kString)) return dims;
  std::string_view text = config->text;
  constexpr std::string_view kKey = "unspecified_dims=[";
  const size_t start = text.find(kKey);
  if (start == std::string_view::npos) return dims;
  int64_t value = -1;
  for (size_t i = start + kKey.size(); i < text.size() && text[i] != ']'; ++i) {
    if (text[i] >= '0' && text[i] <= '9') {
      value = (value < 0 ? 0 : value * 10) + (text[i] - '0');
      if (value > (int64_t{1} << 20)) return {};
    } else if (value >= 0) {
      dims.push_back(value);
      value = -1;
    }
  }
  if (value >= 0) dims.push_back(value);
  return dims;
}

// A GSPMD `Sharding` whose unspecified dimensions are the only ones the
// value's tiles split: the value keeps its tiles (what GSPMD's propagation
// gives them). False when it does not apply.
StatusOr<bool> KeepUnspecifiedDims(Lowering& lowering, const ir::Operation& op,
                                   std::string_view text, const Shape& shape) {
  const std::vector<int64_t> unspecified = UnspecifiedDims(op);
  const Lowering::Tiles* tiles = lowering.HeldAsTiles(op.operand(0));
  if (unspecified.empty() || tiles == nullptr || !tiles->sharding.unreduced.empty() ||
      !lowering.spmd()->on_tiles || lowering.in_manual_body() ||
      tiles->sharding.dims.size() != shape.dims.size()) {
    return false;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<TensorSharding> named,
                        ReadHloSharding(text, *lowering.spmd()));
  for (size_t d = 0; d < shape.dims.size(); ++d) {
    if (std::find(unspecified.begin(), unspecified.end(), static_cast<int64_t>(d)) !=
        unspecified.end()) {
      continue;
    }
    // A fixed dimension: whole in both.
    if (!tiles->sharding.dims[d].empty() ||
        (named && d < named->dims.size() && named->Tiles(d) > 1)) {
      return false;
    }
  }
  const Lowering::Tiles kept = *tiles;
  lowering.BindTiles(op.result(0), kept.local, kept.sharding);
  return true;
}

// How a gather is listed (plan_listing.h): an all_gather per split
// dimension, each over the devices that differ along its axes.
std::vector<std::shared_ptr<const ir::Operation>> GatherListing(const Spmd& spmd, const Shape& tile,
                                                                const Shape& whole,
                                                                const TensorSharding& sharding) {
  std::vector<std::shared_ptr<const ir::Operation>> listing;
  Shape shape = tile;
  for (size_t d = 0; d < sharding.dims.size() && d < shape.dims.size(); ++d) {
    if (sharding.Tiles(d) <= 1) continue;
    ir::Operation gather("stablehlo.all_gather");
    on_tiles::SetGroupsAlong(spmd, sharding.mesh, sharding.dims[d], gather);
    gather.SetAttr("all_gather_dim", ir::Attribute::Integer(static_cast<int64_t>(d),
                                                            ir::Type::Element(ElementType::kS64)));
    shape.dims[d] *= sharding.Tiles(d);
    if (auto listed = DetachForListing(gather, {shape})) listing.push_back(std::move(listed));
  }
  if (shape.dims != whole.dims) {
    // Padded tiles: the gathered array less the padding past its end.
    ir::Operation drop("stablehlo.custom_call");
    drop.SetAttr("call_target_name", ir::Attribute::String("kiln.spmd_drop_padding"));
    if (auto listed = DetachForListing(drop, {whole})) listing.push_back(std::move(listed));
  }
  return listing;
}

}  // namespace

// A sharding over a mesh of one axis per dimension, "_d" of `tiles[d]`
// (as GSPMD's tile assignments read, ParseHloSharding); its devices are
// for the caller to lay out.
TensorSharding AxisPerDimension(std::span<const int64_t> tiles) {
  TensorSharding sharding;
  for (size_t d = 0; d < tiles.size(); ++d) {
    sharding.mesh.axes.push_back(StrCat("_", d));
    sharding.mesh.sizes.push_back(tiles[d]);
    sharding.dims.emplace_back();
    if (tiles[d] > 1) sharding.dims.back().push_back(AxisRef{StrCat("_", d), 1, 0});
  }
  return sharding;
}

// Lays `sharding`'s devices (its mesh: AxisPerDimension(tiles), then one
// axis of `copies`) out by their tiles: device id's tile along dimension d
// is tile_of[id][d]; the devices holding one tile follow one another in id
// order. False when a tile has other than `copies` devices.
bool LayOutByTiles(TensorSharding& sharding, std::span<const int64_t> tiles,
                   const std::vector<std::vector<int64_t>>& tile_of, int64_t copies) {
  int64_t distinct = 1;
  for (int64_t count : tiles) distinct *= count;
  const auto devices = static_cast<int64_t>(tile_of.size());
  if (distinct * copies != devices) return false;
  sharding.mesh.device_ids.assign(static_cast<size_t>(devices), -1);
  std::vector<int64_t> used(static_cast<size_t>(distinct), 0);
  for (int64_t id = 0; id < devices; ++id) {
    int64_t position = 0;
    for (size_t d = 0; d < tiles.size(); ++d) {
      position = position * tiles[d] + tile_of[static_cast<size_t>(id)][d];
    }
    int64_t& copy = used[static_cast<size_t>(position)];
    if (copy >= copies) return false;
    sharding.mesh.device_ids[static_cast<size_t>(position * copies + copy++)] = id;
  }
  return true;
}

// A value held as `held` (whole over a GSPMD manual region's manual
// axes) entering the region: its tiles stay, as tiles of the region's
// value over the automatic axes (GSPMD propagates the operand's sharding
// into the region): a sharding over a mesh of one axis per dimension
// ("_d") and "_m" for the devices holding the same tile again, so that a
// gather meets devices of one copy each. nullopt where it does not apply.
std::optional<TensorSharding> AutomaticPartOfRegion(Lowering& lowering, const Lowering::Tiles& held,
                                                    const Shape& global) {
  const TensorSharding& outer = held.sharding;
  const size_t rank = global.dims.size();
  const int64_t devices = lowering.spmd()->num_partitions;
  if (!outer.unreduced.empty() || outer.dims.size() != rank ||
      outer.mesh.num_devices() != devices || !outer.LocalDims(global.dims).ok()) {
    return std::nullopt;
  }
  std::vector<int64_t> tiles(rank);
  for (size_t d = 0; d < rank; ++d) tiles[d] = outer.Tiles(d);
  int64_t distinct = 1;
  for (int64_t count : tiles) distinct *= count;
  if (distinct <= 1 || devices % distinct != 0) return std::nullopt;
  const int64_t copies = devices / distinct;
  std::vector<std::vector<int64_t>> tile_of(static_cast<size_t>(devices));
  for (int64_t id = 0; id < devices; ++id) {
    std::optional<std::vector<int64_t>> at = outer.mesh.CoordinatesOf(id);
    if (!at) return std::nullopt;
    for (size_t d = 0; d < rank; ++d)
      tile_of[static_cast<size_t>(id)].push_back(outer.TileOf(d, *at));
  }
  TensorSharding sharding = AxisPerDimension(tiles);
  sharding.mesh.axes.push_back("_m");
  sharding.mesh.sizes.push_back(copies);
  if (!LayOutByTiles(sharding, tiles, tile_of, copies)) return std::nullopt;
  return sharding;
}

// A GSPMD manual region's value returned as `held`, tiles over its
// automatic axes (a sharding whose mesh has the manual subgroup "_m"),
// through SPMDShardToFullShape to the manual tiles of `full` (nullopt:
// whole over the manual axes): the full value's tiling, each manual tile
// split further by the automatic tiles, as GSPMD's propagation carries
// them out of the region where the op leaves the dimensions unspecified.
// One axis per dimension of that many tiles, laid over the devices, and
// "_r" for the devices holding the same tile. nullopt where it does not
// apply (a dimension split over automatic axes that the op fixes, tiles
// held by an unequal number of devices).
StatusOr<std::optional<TensorSharding>> CarriedOutOfRegion(
    Lowering& lowering, const ir::Operation& op, const Lowering::Tiles& held,
    const std::optional<TensorSharding>& full, const Shape& global) {
  const TensorSharding& inner = held.sharding;
  const size_t rank = global.dims.size();
  if (inner.mesh.AxisIndex("_m") < 0 || !inner.unreduced.empty() || inner.dims.size() != rank ||
      (full && (full->dims.size() != rank || !full->unreduced.empty()))) {
    return std::optional<TensorSharding>();
  }
  const std::vector<int64_t> unspecified = UnspecifiedDims(op);
  for (size_t d = 0; d < rank; ++d) {
    if (!inner.dims[d].empty() && std::find(unspecified.begin(), unspecified.end(),
                                            static_cast<int64_t>(d)) == unspecified.end()) {
      return std::optional<TensorSharding>();
    }
  }
  const int64_t devices = lowering.spmd()->num_partitions;
  if (inner.mesh.num_devices() != devices || (full && full->mesh.num_devices() != devices)) {
    return std::optional<TensorSharding>();
  }
  // Per device, its tile of the full value along each dimension.
  std::vector<int64_t> tiles(rank);
  std::vector<std::vector<int64_t>> tile_of(static_cast<size_t>(devices));
  for (int64_t id = 0; id < devices; ++id) {
    std::optional<std::vector<int64_t>> at = inner.mesh.CoordinatesOf(id);
    std::optional<std::vector<int64_t>> full_at;
    if (full) full_at = full->mesh.CoordinatesOf(id);
    if (!at || (full && !full_at)) return std::optional<TensorSharding>();
    for (size_t d = 0; d < rank; ++d) {
      const int64_t manual = full ? full->TileOf(d, *full_at) : 0;
      const int64_t manual_tiles = full ? full->Tiles(d) : 1;
      tiles[d] = manual_tiles * inner.Tiles(d);
      tile_of[static_cast<size_t>(id)].push_back(manual * inner.Tiles(d) + inner.TileOf(d, *at));
    }
  }
  int64_t distinct = 1;
  for (int64_t count : tiles) distinct *= count;
  if (distinct <= 1 || devices % distinct != 0) return std::optional<TensorSharding>();
  const int64_t copies = devices / distinct;
  TensorSharding carried = AxisPerDimension(tiles);
  if (copies > 1) {
    carried.mesh.axes.push_back("_r");
    carried.mesh.sizes.push_back(copies);
  }
  if (!LayOutByTiles(carried, tiles, tile_of, copies)) return std::optional<TensorSharding>();
  StatusOr<std::vector<int64_t>> local = carried.LocalDims(global.dims);
  if (!local.ok() || *local != lowering.graph().shape(held.local).dims) {
    return std::optional<TensorSharding>();
  }
  return std::optional<TensorSharding>(std::move(carried));
}

StatusOr<bool> LowerGspmdCustomCall(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute target = op.GetAttr("call_target_name");
  ir::Attribute text = op.GetAttr("mhlo.sharding");
  if (!target.Is(ir::AttrKind::kString) || !text.Is(ir::AttrKind::kString) ||
      op.operands().size() != 1 || op.num_results() != 1) {
    return false;
  }
  const std::string& name = target->text;
  if (name != "Sharding" && name != "SPMDFullToShardShape" && name != "SPMDShardToFullShape") {
    return false;
  }
  KILN_ASSIGN_OR_RETURN(Shape in, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  if (name == "Sharding") {
    // A value entering or leaving a manual region keeps what it is.
    if (IsManualHloSharding(text->text)) return false;
    KILN_ASSIGN_OR_RETURN(bool kept, KeepUnspecifiedDims(lowering, op, text->text, in));
    if (kept) return true;
    KILN_ASSIGN_OR_RETURN(std::optional<TensorSharding> sharding,
                          ReadHloSharding(text->text, *lowering.spmd()));
    if (!sharding || !lowering.spmd()->on_tiles || lowering.in_manual_body()) {
      return false;  // the identity (lower_misc.cc)
    }
    if (!sharding->LocalDims(in.dims).ok()) {
      return ConstrainPadded(lowering, op, *sharding);  // uneven: padded tiles, or the identity
    }
    KILN_ASSIGN_OR_RETURN(ValueId local, lowering.LocalTile(op.operand(0), *sharding));
    lowering.BindTiles(op.result(0), local, *sharding);
    return true;
  }
  if (name == "SPMDFullToShardShape") {
    // The device's tile under the sharding the value was constrained to
    // just before (GSPMD writes `Sharding` then this).
    const ir::Operation* producer = op.operand(0)->defining_op();
    ir::Attribute before = producer != nullptr && producer->code() == ir::OpCode::kCustomCall
                               ? producer->GetAttr("mhlo.sharding")
                               : ir::Attribute();
    std::optional<TensorSharding> sharding;
    if (before.Is(ir::AttrKind::kString)) {
      KILN_ASSIGN_OR_RETURN(sharding, ReadHloSharding(before->text, *lowering.spmd()));
    }
    if (!sharding && in.dims != out.dims) {
      // No Sharding before it: the tiles its operand is held as (PyTorch/XLA
      // writes the call straight on a sharded parameter).
      if (const Lowering::Tiles* held = lowering.HeldAsTiles(op.operand(0));
          held != nullptr && held->sharding.unreduced.empty()) {
        StatusOr<std::vector<int64_t>> local = held->sharding.LocalDims(in.dims);
        if (local.ok() && *local == out.dims) sharding = held->sharding;
      }
      if (!sharding) {
        return InvalidArgument("SPMDFullToShardShape from ", in.ToString(), " to ", out.ToString(),
                               " without the sharding of its tiles");
      }
    }
    if (!sharding) {
      // Whole over the manual axes: tiles over automatic ones enter as
      // they are.
      if (const Lowering::Tiles* held = lowering.HeldAsTiles(op.operand(0));
          held != nullptr && lowering.spmd()->on_tiles && !lowering.in_manual_body()) {
        const Lowering::Tiles kept = *held;
        std::optional<TensorSharding> automatic = AutomaticPartOfRegion(lowering, kept, in);
        if (automatic) {
          lowering.BindTiles(op.result(0), kept.local, *automatic);
          return true;
        }
      }
      return false;
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, sharding->LocalDims(in.dims));
    if (local != out.dims) {
      return InvalidArgument("SPMDFullToShardShape to ", out.ToString(), ", expected tiles of ",
                             Shape{out.element_type, local}.ToString(), " for ", in.ToString());
    }
    // (A value split over the manual axes enters whole over the
    // automatic ones: GSPMD does not refine the sharding named here, its
    // unspecified dimensions notwithstanding, where XLA was seen to.)
    KILN_ASSIGN_OR_RETURN(ValueId tile, lowering.LocalTile(op.operand(0), *sharding));
    lowering.Bind(op.result(0), tile);
    return true;
  }
  // SPMDShardToFullShape: each device's tile of the sharding it names.
  KILN_ASSIGN_OR_RETURN(std::optional<TensorSharding> sharding,
                        ReadHloSharding(text->text, *lowering.spmd()));
  if (const Lowering::Tiles* held = lowering.HeldAsTiles(op.operand(0));
      held != nullptr && lowering.spmd()->on_tiles && !lowering.in_manual_body()) {
    // The region returns tiles over its automatic axes: they stay tiles
    // of the full value.
    const Lowering::Tiles kept = *held;
    KILN_ASSIGN_OR_RETURN(std::optional<TensorSharding> carried,
                          CarriedOutOfRegion(lowering, op, kept, sharding, out));
    if (carried) {
      lowering.BindTiles(op.result(0), kept.local, *carried);
      return true;
    }
  }
  if (!sharding) {
    if (in.dims != out.dims) {
      return InvalidArgument("SPMDShardToFullShape from ", in.ToString(), " to ", out.ToString(),
                             " with a replicated sharding");
    }
    return false;
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, sharding->LocalDims(out.dims));
  if (local != in.dims) {
    return InvalidArgument("SPMDShardToFullShape of ", in.ToString(), ", expected tiles of ",
                           Shape{in.element_type, local}.ToString(), " for ", out.ToString());
  }
  KILN_ASSIGN_OR_RETURN(ValueId tile, lowering.Input(op, 0));
  if (lowering.spmd()->on_tiles && !lowering.in_manual_body()) {
    lowering.BindTiles(op.result(0), tile, *sharding);
  } else {
    KILN_ASSIGN_OR_RETURN(ValueId whole, lowering.GatherTiles(tile, out, *sharding));
    lowering.Bind(op.result(0), whole);
  }
  return true;
}

bool SameTiling(const TensorSharding& a, const TensorSharding& b, std::span<const int64_t> dims) {
  if (a.dims.size() != dims.size() || b.dims.size() != dims.size()) return false;
  // Partial sums over the same axes (or none).
  auto names = [](const std::vector<AxisRef>& axes) {
    std::vector<std::string> list;
    for (const AxisRef& ref : axes) {
      list.push_back(ref.name + ":" + std::to_string(ref.pre_size) + ":" +
                     std::to_string(ref.size));
    }
    std::sort(list.begin(), list.end());
    return list;
  };
  if (names(a.unreduced) != names(b.unreduced)) return false;
  if (a.mesh.num_devices() != b.mesh.num_devices()) return false;
  for (int64_t device = 0; device < a.mesh.num_devices(); ++device) {
    auto ca = a.mesh.CoordinatesOf(device);
    auto cb = b.mesh.CoordinatesOf(device);
    if (!ca || !cb) return false;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (a.Tiles(d) != b.Tiles(d) || a.TileOf(d, *ca) != b.TileOf(d, *cb)) return false;
    }
  }
  return true;
}

StatusOr<ValueId> EmitTile(Lowering& lowering, ValueId value, const Shape& global,
                           const TensorSharding& sharding, bool padded) {
  Shape local = global;
  if (padded) {
    KILN_ASSIGN_OR_RETURN(local.dims, sharding.PaddedDims(global.dims));
  } else {
    KILN_ASSIGN_OR_RETURN(local.dims, sharding.LocalDims(global.dims));
  }
  if (local.dims == global.dims) return value;
  // A padded tile's elements past the array's end are zeros.
  const bool uneven = !sharding.LocalDims(global.dims).ok();
  // Never folded: the tile depends on the device running it.
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(
                            TileOp(), {value}, {local},
                            [sharding, uneven](RunContext& ctx) -> Status {
                              KILN_ASSIGN_OR_RETURN(std::vector<int64_t> coordinates,
                                                    CoordinatesOf(sharding,
                                                                  ctx.env().partition_id));
                              if (uneven) std::memset(ctx.out(0), 0, ctx.out_shape(0).ByteSize());
                              CopyTile(sharding, coordinates, ctx.in_shape(0).element_type,
                                       ctx.in_shape(0).dims, ctx.out_shape(0).dims, ctx.in(0),
                                       ctx.out(0), /*into_whole=*/false);
                              return Status::Ok();
                            },
                            {}, {}, /*foldable=*/false));
  return outputs[0];
}

StatusOr<ValueId> EmitMaskPadding(Lowering& lowering, ValueId tile, ValueId fill,
                                  const Shape& global, const TensorSharding& sharding) {
  const Shape shape = lowering.graph().shape(tile);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> padded, sharding.PaddedDims(global.dims));
  if (padded != shape.dims) {
    return InvalidArgument("a padded tile of ", shape.ToString(), " for ", global.ToString(),
                           ", expected ", Shape{shape.element_type, padded}.ToString());
  }
  if (sharding.LocalDims(global.dims).ok()) return tile;  // no padding
  const std::vector<int64_t> whole = global.dims;
  // Never folded: the padding depends on the device running it.
  KILN_ASSIGN_OR_RETURN(
      std::vector<ValueId> outputs,
      lowering.EmitNode(
          MaskPaddingOp(), {tile, fill}, {shape},
          [sharding, whole](RunContext& ctx) -> Status {
            KILN_ASSIGN_OR_RETURN(std::vector<int64_t> coordinates,
                                  CoordinatesOf(sharding, ctx.env().partition_id));
            const Shape& out = ctx.out_shape(0);
            const size_t bytes = ElementBytes(out.element_type);
            if (ctx.out(0) != ctx.in(0)) std::memcpy(ctx.out(0), ctx.in(0), out.ByteSize());
            const SmallVector<int64_t> extent = TileExtent(sharding, coordinates, whole, out.dims);
            SmallVector<int64_t> strides(out.dims.size());
            kernels::DenseStrides(out.dims, strides);
            // Per dimension past its extent: the slab of the tile beyond it.
            for (size_t d = 0; d < out.dims.size(); ++d) {
              if (extent[d] == out.dims[d]) continue;
              SmallVector<int64_t> box(out.dims.begin(), out.dims.end());
              box[d] = out.dims[d] - extent[d];
              int64_t count = 1;
              for (int64_t n : box) count *= n;
              if (count == 0) continue;
              auto* base = static_cast<uint8_t*>(ctx.out(0)) +
                           extent[d] * strides[d] * static_cast<int64_t>(bytes);
              // The slab's runs along the last dimension (contiguous), an
              // odometer over the others.
              const int64_t run = box.back();
              SmallVector<int64_t> index(box.size(), 0);
              for (int64_t n = 0; n < count; n += run) {
                int64_t at = 0;
                for (size_t k = 0; k + 1 < box.size(); ++k) at += index[k] * strides[k];
                kernels::Fill(bytes, ctx.in(1), base + at * static_cast<int64_t>(bytes), run);
                for (size_t k = box.size() - 1; k-- > 0;) {
                  if (++index[k] < box[k]) break;
                  index[k] = 0;
                }
              }
            }
            return Status::Ok();
          },
          {}, {}, /*foldable=*/false));
  return outputs[0];
}

StatusOr<std::optional<ValueId>> EmitFinerTile(Lowering& lowering, const Lowering::Tiles& held,
                                               const TensorSharding& target) {
  const TensorSharding& from = held.sharding;
  if (!from.unreduced.empty() || !target.unreduced.empty() ||
      from.dims.size() != target.dims.size() || !on_tiles::SameMesh(from.mesh, target.mesh)) {
    return std::optional<ValueId>();
  }
  // The tile of the axes each dimension adds, within the held tile.
  TensorSharding rest = on_tiles::Unsplit(target.mesh, target.dims.size());
  bool finer = false;
  for (size_t d = 0; d < target.dims.size(); ++d) {
    const std::vector<AxisRef>& have = from.dims[d];
    const std::vector<AxisRef>& want = target.dims[d];
    if (have.size() > want.size()) return std::optional<ValueId>();
    for (size_t k = 0; k < have.size(); ++k) {
      if (have[k].name != want[k].name || have[k].pre_size != want[k].pre_size ||
          have[k].size != want[k].size) {
        return std::optional<ValueId>();
      }
    }
    rest.dims[d].assign(want.begin() + static_cast<std::ptrdiff_t>(have.size()), want.end());
    finer = finer || !rest.dims[d].empty();
  }
  const Shape shape = lowering.graph().shape(held.local);
  if (!finer || !rest.LocalDims(shape.dims).ok()) return std::optional<ValueId>();
  KILN_ASSIGN_OR_RETURN(ValueId tile, EmitTile(lowering, held.local, shape, rest));
  return std::optional<ValueId>(tile);
}

namespace {

// The all_to_all of EmitReshard: where the held tiling's `rest` is one
// dimension's axes and the wanted tiling adds exactly those axes, in that
// order, to another dimension (nothing else differs), `local` exchanged
// along them; nullopt otherwise.
StatusOr<std::optional<ValueId>> ExchangeMovedAxes(Lowering& lowering, ValueId local,
                                                   const Shape& global, const TensorSharding& rest,
                                                   const std::vector<std::vector<AxisRef>>& added,
                                                   const TensorSharding& target) {
  std::optional<size_t> from_dim;
  std::optional<size_t> to_dim;
  for (size_t d = 0; d < rest.dims.size(); ++d) {
    if (!rest.dims[d].empty()) {
      if (from_dim) return std::optional<ValueId>();
      from_dim = d;
    }
    if (!added[d].empty()) {
      if (to_dim) return std::optional<ValueId>();
      to_dim = d;
    }
  }
  if (!from_dim || !to_dim || *from_dim == *to_dim ||
      !on_tiles::SameAxes(rest.dims[*from_dim], added[*to_dim])) {
    return std::optional<ValueId>();
  }
  const std::vector<AxisRef>& axes = added[*to_dim];
  int64_t count = 1;
  for (const AxisRef& ref : axes) count *= rest.SizeOf(ref);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> out_dims, target.LocalDims(global.dims));
  const std::vector<int64_t>& in_dims = lowering.graph().shape(local).dims;
  if (in_dims.size() != out_dims.size() || in_dims[*to_dim] != out_dims[*to_dim] * count) {
    return std::optional<ValueId>();
  }
  // Partition ids (the channel makes the exchange cross-partition).
  const std::vector<std::vector<int64_t>> groups = GroupsAlong(rest.mesh, axes);
  std::vector<int64_t> ids;
  for (const std::vector<int64_t>& group : groups)
    ids.insert(ids.end(), group.begin(), group.end());
  std::vector<uint8_t> bytes(ids.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), ids.data(), bytes.size());
  const ir::Type i64 = ir::Type::Element(ElementType::kS64);
  ir::Operation exchange("kiln.reshard");
  exchange.SetAttr("replica_groups",
                   ir::Attribute::DenseElements(
                       ir::Type::Tensor(i64, {static_cast<int64_t>(groups.size()), count}),
                       std::move(bytes), /*splat=*/false));
  exchange.SetAttr("channel_handle",
                   ir::Attribute::Struct("stablehlo.channel_handle",
                                         {{"handle", ir::Attribute::Integer(1, i64)},
                                          {"type", ir::Attribute::Integer(1, i64)}}));
  exchange.SetAttr("split_dimension", ir::Attribute::Integer(static_cast<int64_t>(*to_dim), i64));
  exchange.SetAttr("concat_dimension",
                   ir::Attribute::Integer(static_cast<int64_t>(*from_dim), i64));
  exchange.SetAttr("split_count", ir::Attribute::Integer(count, i64));
  const ir::Type element = ir::Type::Element(global.element_type);
  KILN_ASSIGN_OR_RETURN(
      std::vector<ValueId> exchanged,
      on_tiles::LowerRebuilt(lowering, exchange, "stablehlo.all_to_all",
                             {lowering.StandIn(local, ir::Type::Tensor(element, in_dims))},
                             {ir::Type::Tensor(element, out_dims)}, {}, &exchange));
  return std::optional<ValueId>(exchanged[0]);
}

}  // namespace

StatusOr<std::optional<ValueId>> EmitReshard(Lowering& lowering, const Lowering::Tiles& held,
                                             const Shape& global, const TensorSharding& target) {
  const TensorSharding& from = held.sharding;
  if (!from.unreduced.empty() || !target.unreduced.empty() ||
      from.dims.size() != target.dims.size() || from.dims.size() != global.dims.size() ||
      !on_tiles::SameMesh(from.mesh, target.mesh) || !on_tiles::SimpleAxes(from) ||
      !on_tiles::SimpleAxes(target) || !from.LocalDims(global.dims).ok() ||
      !target.LocalDims(global.dims).ok()) {
    return std::optional<ValueId>();
  }
  // Per dimension, the axes both tilings begin with (`common`), the held
  // tiling's axes after them (`rest`, gathered) and the wanted tiling's
  // (`added`).
  TensorSharding common = on_tiles::Unsplit(from.mesh, from.dims.size());
  TensorSharding rest = on_tiles::Unsplit(from.mesh, from.dims.size());
  std::vector<std::vector<AxisRef>> added(from.dims.size());
  bool kept = false;
  bool gathered = false;
  for (size_t d = 0; d < from.dims.size(); ++d) {
    const std::vector<AxisRef>& have = from.dims[d];
    const std::vector<AxisRef>& want = target.dims[d];
    size_t k = 0;
    while (k < have.size() && k < want.size() && have[k].name == want[k].name) ++k;
    common.dims[d].assign(have.begin(), have.begin() + static_cast<std::ptrdiff_t>(k));
    rest.dims[d].assign(have.begin() + static_cast<std::ptrdiff_t>(k), have.end());
    added[d].assign(want.begin() + static_cast<std::ptrdiff_t>(k), want.end());
    kept = kept || k > 0;
    gathered = gathered || k < have.size();
  }
  // Axes that move from the end of one dimension to the end of another
  // (rows over "x" wanted as columns over "x"): an all_to_all among the
  // devices that differ along them, each sending every other its part of
  // the new dimension, as XLA reshards.
  KILN_ASSIGN_OR_RETURN(std::optional<ValueId> exchanged,
                        ExchangeMovedAxes(lowering, held.local, global, rest, added, target));
  if (exchanged) return exchanged;
  // Nothing in common: the whole value (gathered once, kept for other
  // uses); nothing to gather: a finer cut (EmitFinerTile).
  if (!kept || !gathered) return std::optional<ValueId>();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> common_dims, common.LocalDims(global.dims));
  const Shape common_tile{global.element_type, common_dims};
  KILN_ASSIGN_OR_RETURN(ValueId tile, EmitGather(lowering, held.local, common_tile, rest));
  KILN_ASSIGN_OR_RETURN(std::optional<ValueId> finer,
                        EmitFinerTile(lowering, Lowering::Tiles{tile, common}, target));
  return std::optional<ValueId>(finer ? *finer : tile);
}

StatusOr<ValueId> EmitPlaceTile(Lowering& lowering, ValueId tile, const Shape& shape,
                                const TensorSharding& placed) {
  // Never folded: the result depends on the device running it.
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(
                            PlaceTileOp(), {tile}, {shape},
                            [placed](RunContext& ctx) -> Status {
                              KILN_ASSIGN_OR_RETURN(std::vector<int64_t> coordinates,
                                                    CoordinatesOf(placed, ctx.env().partition_id));
                              std::memset(ctx.out(0), 0, ctx.out_shape(0).ByteSize());
                              CopyTile(placed, coordinates, ctx.out_shape(0).element_type,
                                       ctx.out_shape(0).dims, ctx.in_shape(0).dims, ctx.in(0),
                                       ctx.out(0), /*into_whole=*/true);
                              return Status::Ok();
                            },
                            {}, {}, /*foldable=*/false));
  return outputs[0];
}

StatusOr<ValueId> EmitPartialShare(Lowering& lowering, ValueId tile,
                                   const TensorSharding& sharding) {
  const Shape shape = lowering.graph().shape(tile);
  // Never folded: the result depends on the device running it.
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(
                            PartialShareOp(), {tile}, {shape},
                            [sharding](RunContext& ctx) -> Status {
                              KILN_ASSIGN_OR_RETURN(std::vector<int64_t> coordinates,
                                                    CoordinatesOf(sharding,
                                                                  ctx.env().partition_id));
                              bool first = true;
                              for (const AxisRef& ref : sharding.unreduced) {
                                first = first && sharding.CoordinateOf(ref, coordinates) == 0;
                              }
                              const size_t bytes = ctx.out_shape(0).ByteSize();
                              if (!first) {
                                std::memset(ctx.out(0), 0, bytes);
                              } else if (ctx.out(0) != ctx.in(0)) {
                                std::memcpy(ctx.out(0), ctx.in(0), bytes);
                              }
                              return Status::Ok();
                            },
                            {}, {}, /*foldable=*/false));
  return outputs[0];
}

// A gather of tiles: its tiles' sharding and who meets whom, worked out
// once when it is planned.
struct GatherPlan {
  TensorSharding sharding;
  std::vector<std::vector<int64_t>> groups;       // logical ids, in a fixed order
  std::vector<int32_t> group_of;                  // per logical id
  std::vector<std::vector<int64_t>> coordinates;  // per logical id
  std::string key;                                // the groups, as text
};

namespace {

// Runs the gathers of `plans` (input j the device's tile of plan j, output
// j the whole array) in one meeting of the devices; the plans share their
// groups.
Status RunGathers(RunContext& ctx, std::span<const std::shared_ptr<const GatherPlan>> plans) {
  const ExecutionEnv& env = ctx.env();
  const int64_t partitions = env.num_partitions;
  const GatherPlan& first = *plans[0];
  if (env.partition_id < 0 || static_cast<size_t>(env.partition_id) >= first.group_of.size()) {
    return InvalidArgument("partition ", env.partition_id, " is not a device of the mesh (",
                           first.group_of.size(), " devices)");
  }
  const std::vector<int64_t>& members =
      first.groups[static_cast<size_t>(first.group_of[static_cast<size_t>(env.partition_id)])];
  SmallVector<int64_t> group;
  for (int64_t p : members) group.push_back(env.replica_id * partitions + p);
  SmallVector<void*> mine;
  SmallVector<int64_t> bytes;
  for (size_t j = 0; j < plans.size(); ++j) {
    mine.push_back(const_cast<void*>(ctx.in(j)));
    bytes.push_back(static_cast<int64_t>(ctx.in_shape(j).ByteSize()));
  }
  auto work = [&](std::span<void* const> all) -> Status {
    for (size_t j = 0; j < plans.size(); ++j) {
      const Shape& tile = ctx.in_shape(j);
      const Shape& whole = ctx.out_shape(j);
      for (size_t m = 0; m < members.size(); ++m) {
        CopyTile(plans[j]->sharding, plans[j]->coordinates[static_cast<size_t>(members[m])],
                 whole.element_type, whole.dims, tile.dims, all[m * plans.size() + j], ctx.out(j),
                 /*into_whole=*/true);
      }
    }
    return Status::Ok();
  };
  if (partitions == 1) return work(mine);
  if (env.collectives == nullptr) {
    return FailedPrecondition("gathering a sharded array needs the ", group.size(),
                              " devices holding its tiles to run together");
  }
  return env.collectives->Meet(group, mine, bytes, work);
}

}  // namespace

StatusOr<ValueId> EmitGather(Lowering& lowering, ValueId local, const Shape& global,
                             const TensorSharding& sharding) {
  // Padded tiles where the sharding does not divide the array (only their
  // parts inside it are gathered).
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> tile_dims, sharding.PaddedDims(global.dims));
  if (tile_dims == global.dims) return local;
  if (tile_dims != lowering.graph().shape(local).dims) {
    return InvalidArgument("a tile of ", lowering.graph().shape(local).ToString(),
                           " for a whole array of ", global.ToString());
  }
  // Removable when unused (every device's plan drops it alike); a constant
  // tile is not folded, since folding runs on no device.
  const bool constant = lowering.graph().values[static_cast<size_t>(local)].constant != nullptr;
  // Each device meets the devices that differ from it only along the axes
  // that split the array (in a manual computation's body, devices that
  // differ along its manual axes hold other arrays).
  auto plan = std::make_shared<GatherPlan>();
  plan->sharding = sharding;
  std::vector<AxisRef> axes;
  for (const auto& dim : sharding.dims) axes.insert(axes.end(), dim.begin(), dim.end());
  plan->groups = GroupsAlong(sharding.mesh, axes);
  const auto devices = static_cast<size_t>(sharding.mesh.num_devices());
  plan->group_of.assign(devices, -1);
  plan->coordinates.resize(devices);
  for (size_t g = 0; g < plan->groups.size(); ++g) {
    plan->key += "[";
    for (int64_t id : plan->groups[g]) {
      if (id < 0 || static_cast<size_t>(id) >= devices) {
        return InvalidArgument("device ", id, " outside the mesh's ", devices);
      }
      plan->group_of[static_cast<size_t>(id)] = static_cast<int32_t>(g);
      KILN_ASSIGN_OR_RETURN(plan->coordinates[static_cast<size_t>(id)],
                            CoordinatesOf(sharding, id));
      plan->key += StrCat(id, ",");
    }
    plan->key += "]";
  }
  std::shared_ptr<const GatherPlan> planned = plan;
  KILN_ASSIGN_OR_RETURN(
      std::vector<ValueId> outputs,
      lowering.EmitNode(
          GatherOp(), {local}, {global},
          [planned](RunContext& ctx) -> Status {
            return RunGathers(ctx, std::span<const std::shared_ptr<const GatherPlan>>(&planned, 1));
          },
          {}, {}, /*foldable=*/!constant));
  Node& node = lowering.graph().nodes.back();
  if (lowering.spmd() != nullptr && node.outputs == outputs) {
    node.listing = GatherListing(*lowering.spmd(), lowering.graph().shape(local), global, sharding);
    lowering.NoteGather(outputs[0], planned);
  }
  return outputs[0];
}

std::string GatherCombineKey(const Lowering& lowering, const Node& node) {
  if (node.op != GatherOp().name() || node.inputs.size() != 1 || node.outputs.size() != 1 ||
      node.listing.empty()) {
    return "";
  }
  const std::shared_ptr<const GatherPlan> plan = lowering.GatherPlanOf(node.outputs[0]);
  return plan == nullptr ? "" : plan->key;
}

StatusOr<Node> CombinedGather(Lowering& lowering, std::span<const Node* const> members) {
  std::vector<std::shared_ptr<const GatherPlan>> plans;
  std::vector<ValueId> inputs, outputs;
  std::vector<std::shared_ptr<const ir::Operation>> listing;
  std::vector<uint32_t> chains;
  for (const Node* member : members) {
    std::shared_ptr<const GatherPlan> plan = lowering.GatherPlanOf(member->outputs[0]);
    if (plan == nullptr || (!plans.empty() && plan->key != plans[0]->key)) {
      return Internal("combining gathers of other groups");
    }
    plans.push_back(std::move(plan));
    inputs.push_back(member->inputs[0]);
    outputs.push_back(member->outputs[0]);
    listing.insert(listing.end(), member->listing.begin(), member->listing.end());
    chains.push_back(static_cast<uint32_t>(member->listing.size()));
  }
  std::vector<Shape> shapes;
  for (ValueId out : outputs) shapes.push_back(lowering.graph().shape(out));
  // Emitted (for its node) and taken back out: the caller places it.
  const size_t before = lowering.graph().nodes.size();
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> made,
                        lowering.EmitNode(
                            GatherOp(), inputs, shapes,
                            [plans](RunContext& ctx) -> Status { return RunGathers(ctx, plans); },
                            {}, {}, /*foldable=*/false));
  if (lowering.graph().nodes.size() != before + 1) {
    return Internal("combining gathers made ", lowering.graph().nodes.size() - before, " nodes");
  }
  Node node = std::move(lowering.graph().nodes.back());
  lowering.graph().nodes.pop_back();
  node.outputs = outputs;  // the members' values (the fresh ones stay unused)
  node.listing = std::move(listing);
  node.listing_chains = std::move(chains);
  (void)made;
  return node;
}

std::span<const LoweringRule> SpmdLowerings() { return kRules; }

}  // namespace kiln::compiler
