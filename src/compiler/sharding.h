// Shardy (sdy) meshes and tensor shardings, read from the attribute text
// Kiln IR keeps for them (`#sdy.mesh<...>`, `#sdy.sharding<...>`,
// `#sdy.sharding_per_value<...>`, `#sdy<manual_axes...>`), and the
// geometry the partitioner needs: which tile of a tensor a device holds.
//
// A mesh names axes with sizes; its devices are numbered row-major over
// the axes (the first axis major) and `device_ids` maps that position to a
// logical device id (the partition id); without it the position is the id.
// A dimension sharded over axes ["a", "b"] is split into size(a) * size(b)
// tiles, "a" major. A sub-axis "a":(k)m is the m-sized part of "a" after
// the k-sized major part.
//
// A program that names sub-axes has its meshes refined (RefineMesh): each
// axis its sub-axes cut becomes its parts, axes of their own ("a":(1)2 and
// "a":(2)2 for "a"=4 cut at 2), and its shardings are read over the parts,
// so the partitioner, whose rules take whole axes, applies to sub-axes too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::compiler {

// An axis of a mesh, or a sub-axis of it (`pre_size` > 1 or `size` smaller
// than the axis).
struct AxisRef {
  std::string name;
  int64_t pre_size = 1;
  int64_t size = 0;  // 0: the whole axis
};

struct Mesh {
  std::vector<std::string> axes;
  std::vector<int64_t> sizes;
  std::vector<int64_t> device_ids;  // position -> logical id; empty: the position
  // A refined mesh's parts (RefineMesh): per axis, the axis as the program
  // wrote it, with the sub-axis of it this axis is. Empty: every axis is as
  // written.
  std::vector<AxisRef> written;

  int64_t num_devices() const;
  int AxisIndex(std::string_view name) const;  // -1 when absent
  // The coordinates (one per axis) of logical device `device`; nullopt when
  // the mesh does not hold it.
  std::optional<std::vector<int64_t>> CoordinatesOf(int64_t device) const;
  // The logical device at `coordinates`.
  int64_t DeviceAt(std::span<const int64_t> coordinates) const;
  // The size of the axis the program wrote as `name` (the product of its
  // parts in a refined mesh); -1 when the mesh has none.
  int64_t WrittenSize(std::string_view name) const;
  // The axes of this mesh that cover axis or sub-axis `ref` as the program
  // wrote it: `ref` itself, or the parts of a refined axis it spans; nullopt
  // when it names no axis or cuts a part.
  std::optional<std::vector<AxisRef>> Resolve(const AxisRef& ref) const;
};

// `mesh` with each axis cut into parts at the bounds of the sub-axes of it
// in `used` ("a":(k)m cuts at k and k * m): the part of "a" of size m after
// a major part of size k becomes axis "a":(k)m. The devices keep their
// order. An axis whose cuts do not each divide the next stays as it is (its
// sub-axes then stay sub-axes); so does a mesh nothing cuts.
Mesh RefineMesh(const Mesh& mesh, std::span<const AxisRef> used);

struct TensorSharding {
  Mesh mesh;
  // Per tensor dimension, the axes it is split over, major first.
  std::vector<std::vector<AxisRef>> dims;
  // Axes over which the devices hold partial sums of the value (Shardy's
  // `unreduced`): the value is the sum of the tiles of the devices that
  // differ only along them.
  std::vector<AxisRef> unreduced;
  // Per dimension, whether it is open (`{?}`, `{"x", ?}`): Shardy may add
  // axes to it. Empty (a sharding not read from sdy text): none is.
  std::vector<bool> open;

  // The size of `ref` in `mesh` and the coordinate of a device along it.
  int64_t SizeOf(const AxisRef& ref) const;
  int64_t CoordinateOf(const AxisRef& ref, std::span<const int64_t> coordinates) const;
  // How many tiles dimension `d` is split into, and which of them the
  // device at `coordinates` holds.
  int64_t Tiles(size_t d) const;
  int64_t TileOf(size_t d, std::span<const int64_t> coordinates) const;
  // The local shape of a tensor of `global` dims; INVALID_ARGUMENT when a
  // dimension does not split evenly.
  StatusOr<std::vector<int64_t>> LocalDims(std::span<const int64_t> global) const;
  // The dims of every device's tile when they may be uneven: each dimension
  // rounded up to a multiple of its tile count and divided by it (XLA's
  // padded tiles); the last tiles reach past the array's end, and a tile
  // may lie past it entirely. INVALID_ARGUMENT for a rank mismatch.
  StatusOr<std::vector<int64_t>> PaddedDims(std::span<const int64_t> global) const;
  // Whether every dimension is whole and no axis unreduced (a replicated
  // tensor).
  bool IsReplicated() const;
  // Whether any dimension is open.
  bool AnyOpen() const { return std::find(open.begin(), open.end(), true) != open.end(); }
};

// `sharding` with each dimension's axes cut before the first that is no
// whole axis as the program wrote it (a sub-axis, or a part of a refined
// axis without the parts after it). XLA leaves sub-axes out of the
// sharding it gives a result left to propagation, and what follows them.
TensorSharding WithoutSubAxes(const TensorSharding& sharding);

// The groups of `mesh`'s logical devices that differ only along `axes`
// (whole axes or sub-axes of the mesh), each ordered by its members'
// coordinates along `axes`, the first major; groups in the order of the
// coordinates the axes leave out. Collectives over mesh axes meet in them.
std::vector<std::vector<int64_t>> GroupsAlong(const Mesh& mesh, std::span<const AxisRef> axes);

// The module's meshes by symbol name.
using MeshTable = std::map<std::string, Mesh, std::less<>>;

// `#sdy.mesh<[...]>` (or its body `<[...]>`).
StatusOr<Mesh> ParseMesh(std::string_view text);
// `#sdy.sharding<@mesh, [...]>` (or `<...>` as inside a per-value list),
// its mesh by name from `meshes` or written inline.
StatusOr<TensorSharding> ParseSharding(std::string_view text, const MeshTable& meshes);
// `#sdy.sharding_per_value<[<...>, ...]>`: one sharding per value.
StatusOr<std::vector<TensorSharding>> ParseShardingPerValue(std::string_view text,
                                                            const MeshTable& meshes);
// GSPMD's `mhlo.sharding` text (XLA's HloSharding: `{replicated}`,
// `{maximal device=N}`, `{devices=[a,b,...]ids}` with ids listed or as an
// iota `<=[dims]T(perm)`, `last_tile_dim_replicate`), as a sharding over a
// mesh of its own: one axis "_k" per tiled dimension k (and "_r" for the
// devices sharing a tile), laid over the tile assignment's devices.
// nullopt for a whole value (replicated, or maximal: every device computes
// it); UNIMPLEMENTED for manual and other subgroup shardings;
// INVALID_ARGUMENT unless the devices are `devices` ids, each once.
StatusOr<std::optional<TensorSharding>> ParseHloSharding(std::string_view text, int64_t devices);
// A sharding as XLA's tile assignment (HloSharding, OpSharding OTHER): one
// tile dimension per tensor dimension, then one for the partial sums along
// unreduced axes (`partial`), then one for the devices sharing a tile
// (`replicated`) where there are several; `devices` lists the logical
// device ids tile by tile, those of one tile by their place along the
// unreduced axes (in mesh order).
struct TileAssignment {
  std::vector<int64_t> tiles;
  std::vector<int64_t> devices;
  bool partial = false;
  bool replicated = false;
};
TileAssignment AssignTiles(const TensorSharding& sharding);
// XLA's HloSharding text of `sharding`: `{replicated}` when whole (or
// nullopt), else `{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}` and the
// like (partial sums as `last_tile_dims={unreduced}`).
std::string HloShardingText(const std::optional<TensorSharding>& sharding);

// `sharding` over `mesh`, where every device holds the same tile under
// both: each split dimension's tile is the device's coordinate over a
// sequence of distinct `mesh` axes (up to three, major first). nullopt
// where some dimension's tiles follow no such sequence, the meshes hold
// other devices, or the sharding holds partial sums.
std::optional<TensorSharding> OnMesh(const TensorSharding& sharding, const Mesh& mesh);
// A mesh every one of `shardings` is OnMesh of: the mesh of one of them
// without its axes of size 1 (axes renamed "_g0", "_g1", ...), the one of
// most axes first. nullopt where none fits them all. GSPMD reads each
// sharding over a mesh of its own; a program whose shardings all come
// from one logical mesh (PyTorch/XLA's `xs.Mesh`, JAX's) shares one again.
std::optional<Mesh> CommonMesh(std::span<const TensorSharding> shardings);
// Whether `mhlo.sharding` text is `{manual}` (GSPMD's manual regions).
bool IsManualHloSharding(std::string_view text);

// `#sdy<manual_axes{"a", "b"}>`.
StatusOr<std::vector<std::string>> ParseManualAxes(std::string_view text);

}  // namespace kiln::compiler
