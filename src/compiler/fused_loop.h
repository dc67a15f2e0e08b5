// The fused loop of compiler/fusion.cc, shared with the row groups of
// compiler/row_groups.cc: what a fused node computes per tile, and how a
// range of its elements is run. Internal to the compiler: fusion.cc chooses
// the runs, fused_loop_build.cc builds their loops, fused_loop_run.cc runs
// them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/small_vector.h"
#include "compiler/executor.h"
#include "compiler/graph.h"
#include "kernels/loop_jit.h"
#include "kernels/reduce.h"
#include "kernels/tile_f32.h"

namespace kiln::compiler::fusion_internal {

// Elements per tile: a member's tile of f32 is 16 KiB, so a chain's tiles
// stay in the L2 cache while each kernel call does enough work to hide its
// dispatch (about a tenth of a microsecond).
constexpr int64_t kTile = 4096;
// Elements per tile when every map of the loop has an f32 tile kernel
// (kernels/tile_f32.h): eight members' tiles of 2 KiB fit in the L1 cache
// beside the loop's inputs, and a call costs little beside a tile's work.
// With 4096-element tiles each member's pass streamed from L2: a chain of
// four adds over 4M elements spent 0.75 ms per member on this machine.
constexpr int64_t kSmallTile = 512;
// The longest row a reducing loop with small tiles takes as one tile.
constexpr int64_t kRowTile = 2048;

// Where a member finds one operand during a tile.
struct Operand {
  enum class From : uint8_t { kInput, kMember, kSplat } from;
  size_t index;  // into the fused node's inputs, the producing member, or the splats
};

struct Member {
  std::shared_ptr<const Pointwise> pointwise;  // null: a splat, computed at compile time
  kernels::TileKernel tile_f32 = nullptr;      // pointwise's, when the loop uses it
  SmallVector<Operand, 4> operands;
  size_t output_bytes;
  size_t slot_offset;  // of its tile buffer in the tile scratch
  // >= 0: the fused node's output this member's value is copied to.
  int64_t output = -1;
  std::string location, op;
  // A gather that reads index k for output element k (take_along_axis):
  // its indices, and a mask folded into it, may come from earlier members,
  // whose tiles hold the tile's own elements.
  bool indices_in_order = false;
  // A gather with a select folded in (FoldMaskedGathers): operands[2] is a
  // predicate per index (read where the index is), operands[3] a splat of
  // the value an element takes where the predicate is `fill_if` (jnp's
  // fill of out-of-bounds indices); elsewhere the gathered value.
  bool masked = false;
  bool fill_if = false;
};

// A reduction folded into the loop: the values of `member`, as `rows` rows
// of the loop's `cols` elements, reduced into the fused node's output
// `output`, starting from the value of input `init`.
struct Reducer {
  size_t member;
  kernels::ReduceOp op;
  ElementType type;
  size_t bytes;
  size_t output;
  size_t init;
};

struct FusedLoop {
  std::vector<Member> members;
  std::vector<Reducer> reducers;
  // With reducers: the row length. Threads then split the elements at row
  // boundaries (no two threads fold into one result) and tiles hold whole
  // rows when a row fits in one.
  int64_t cols = 0;
  int64_t tile = kTile;
  // Tiles of one repeated element: the constants a chain broadcasts
  // (`x * 2` reads a broadcast scalar), filled once here.
  std::vector<std::vector<uint8_t>> splats;
  std::vector<size_t> input_bytes;  // element size of each input
  int64_t count = 0;                // elements of every member's output
  size_t scratch_bytes = 0;         // all members' tile buffers
  int64_t cost = 1;                 // rough operations per element
  // Generated code for the maps (kernels/loop_jit.h), when each has a
  // generated form. Per tile, after the reads, the stages run in order: a
  // stage of generated code computes a run of maps with values in
  // registers (its inputs fused inputs or members' tiles, its outputs the
  // tiles of the maps needed by later stages or outside the loop); a
  // transcendental map is a stage of its own and runs its tile kernel over
  // the tile, since vector_math's loop over a tile is faster than calling
  // its packet form from generated code per eight elements.
  struct CodeArray {
    bool member;   // a member's tile, else a fused input
    size_t index;  // of the member or input
  };
  struct Stage {
    std::unique_ptr<kernels::LoopCode> code;  // null: member `tile_member` alone
    std::vector<CodeArray> inputs;
    std::vector<size_t> outputs;  // members
    size_t tile_member = 0;
    // For tiles where the uniform reads are uniform (FusedLoop::uniform):
    // the same maps reading one element of each; its inputs (outputs as
    // `outputs`). Null when the stage reads none.
    std::unique_ptr<kernels::LoopCode> uniform_code;
    std::vector<CodeArray> uniform_inputs;
  };
  std::vector<Stage> stages;  // empty: the tile kernels, member by member
  // Per member: a read whose values are not an output nor reduced, so its
  // tile need not be filled when it can be read in place.
  std::vector<bool> read_in_place;
  // Per member: such a read that repeats one element along the loop's
  // innermost run (a row broadcast: a mean per row) and only generated
  // code uses. A tile within one run reads the element itself.
  std::vector<bool> uniform;
  // The members that are reads, and those of them that are uniform, in
  // order: what a tile walks instead of every member.
  std::vector<uint32_t> reads, uniform_reads;
};

inline int64_t Elements(const Graph& graph, ValueId value) {
  return graph.shape(value).NumElements();
}

// Whether a gather reads its index array element for element: index k for
// output element k (take_along_axis, where the indices have the output's
// shape; `index_elements` in all).
bool GatherIndicesInOrder(const Pointwise& gather, int64_t index_elements);

// Replaces each of `runs` (indexes of graph.nodes, in order) with its fused
// node (fused_loop_build.cc). Returns per node of the new graph its loop
// (null but for the fused nodes), as GroupRows takes them.
std::vector<std::shared_ptr<const FusedLoop>> FuseEachRun(
    Graph& graph, const std::vector<std::vector<size_t>>& runs);

// What a fused node runs: all of `loop`'s elements, split among threads
// (fused_loop_run.cc).
RunFn LoopRunner(std::shared_ptr<const FusedLoop> loop);

// Computes elements [begin, end) of `loop` (at tile boundaries from
// `begin`) on this thread: per member, `direct[m]` says its output is
// written straight into the node's output rather than through the tile
// buffer in `scratch` (loop.scratch_bytes).
Status RunTiles(const FusedLoop& loop, RunContext& ctx, std::span<const bool> direct, int64_t begin,
                int64_t end, uint8_t* scratch);

// Replaces runs of consecutive nodes that compute their outputs row by row
// (fused loops, whose FusedLoop is loops[n], and row reductions) with row
// groups that run them block of rows by block of rows (row_groups.cc).
// `loops` stays aligned with graph.nodes.
void GroupRows(Graph& graph, std::vector<std::shared_ptr<const FusedLoop>>& loops);

}  // namespace kiln::compiler::fusion_internal
