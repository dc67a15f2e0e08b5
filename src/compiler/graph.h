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
#include <vector>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::compiler {

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

class Graph;
class RunContext;

// What a node does at run time: reads ctx.in(i), writes ctx.out(i).
using RunFn = std::function<Status(RunContext& ctx)>;

// A value: an array with a static shape. Constants carry their data.
struct ValueInfo {
  Shape shape;
  size_t bytes = 0;  // dense storage size
  std::shared_ptr<const std::vector<uint8_t>> constant;  // non-null: known at compile time
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
  // The node's outputs may share memory with its inputs: it is a no-op view
  // (reshape, bitcast of the same size) and `run` copies nothing.
  bool output_aliases_input = false;
};

// The placement of one value at run time.
enum class Storage : uint8_t {
  kArena,      // at `offset` in the execution's arena
  kParameter,  // the caller's argument `index`
  kConstant,   // the value's constant data
  kResult,     // the caller's result buffer `index`
  kAlias,      // the memory of value `index` (a view)
};

struct Placement {
  Storage storage = Storage::kArena;
  int64_t index = 0;   // parameter / result / aliased value
  int64_t offset = 0;  // kArena
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
void PlanBuffers(Graph& graph);

// Drops nodes whose outputs nothing uses (unless they have side effects).
void EliminateDeadNodes(Graph& graph);

}  // namespace kiln::compiler
