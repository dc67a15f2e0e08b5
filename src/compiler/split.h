// Splitting a plan between a backend that runs some of its nodes in its own
// code and the host kernels, which run the rest: the graph becomes a
// sequence of segments, each a graph of its own, with the values that cross
// between the device's memory and the host's named (docs/porting.md,
// "Compiling nodes").
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/function_ref.h"
#include "compiler/graph.h"

namespace kiln::compiler {

// A run of consecutive nodes of one side. Its graph holds copies of the
// nodes over values of its own: parameters are `inputs` (values of the split
// graph, in order), results are `outputs`; constants it reads stay
// constants. The graph is neither fused nor planned.
struct Segment {
  bool on_device = false;
  // A device segment of one collective node (Node::collective), which the
  // runtime runs over device memory rather than the backend's Compile.
  bool collective = false;
  std::shared_ptr<Graph> graph;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
};

// A value copied between the host's memory and the device's: before
// segment `before` runs (segments.size(): after the last, for a result).
struct Crossing {
  ValueId value = kNoValue;
  size_t before = 0;
  bool to_device = false;
  size_t bytes = 0;
};

struct SplitPlan {
  std::vector<Segment> segments;
  std::vector<Crossing> crossings;
  // Bytes crossing per run, both ways.
  size_t CrossingBytes() const;
};

// Splits `graph` (lowered, unfused) by `on_device(node)`. Parameters
// arrive in the device's memory and results leave in it, so a program whose
// nodes all run on the device has no crossing.
SplitPlan SplitGraph(const Graph& graph, FunctionRef<bool(const Node&)> on_device);
// Where a node runs: on the host, in a device segment, or on the device in
// a segment of its own (a collective, Segment::collective).
enum class Side : uint8_t { kHost, kDevice, kDeviceCollective };
SplitPlan SplitGraph(const Graph& graph, FunctionRef<Side(const Node&)> side);

// The listing `kiln plan` prints for a split plan: each segment's side and
// nodes, and each crossing with its value's shape and bytes.
std::string ListSplit(const Graph& graph, const SplitPlan& plan);

}  // namespace kiln::compiler
