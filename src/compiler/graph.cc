#include "compiler/graph.h"

#include <algorithm>
#include <map>

namespace kiln::compiler {

ValueId Graph::AddValue(Shape shape) {
  ValueInfo info;
  info.bytes = shape.ByteSize();
  info.shape = std::move(shape);
  values.push_back(std::move(info));
  return static_cast<ValueId>(values.size() - 1);
}

ValueId Graph::AddConstant(Shape shape, std::vector<uint8_t> data) {
  const ValueId id = AddValue(std::move(shape));
  values.back().constant = std::make_shared<const std::vector<uint8_t>>(std::move(data));
  return id;
}

namespace {

constexpr int64_t kAlignment = 64;

int64_t AlignUp(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// First-fit allocator over the arena's address range, by liveness.
class ArenaAllocator {
 public:
  int64_t Allocate(int64_t bytes) {
    bytes = std::max<int64_t>(AlignUp(bytes), kAlignment);
    int64_t offset = 0;
    for (const auto& [start, size] : used_) {
      if (start - offset >= bytes) break;
      offset = std::max(offset, start + size);
    }
    used_.emplace(offset, bytes);
    high_water_ = std::max(high_water_, offset + bytes);
    return offset;
  }
  void Free(int64_t offset) { used_.erase(offset); }
  int64_t high_water() const { return high_water_; }

 private:
  std::map<int64_t, int64_t> used_;  // offset -> size
  int64_t high_water_ = 0;
};

}  // namespace

void PlanBuffers(Graph& graph, bool intermediates_in_results) {
  const size_t count = graph.values.size();
  graph.placements.assign(count, Placement{});
  std::vector<bool> placed(count, false);
  for (size_t i = 0; i < graph.parameters.size(); ++i) {
    const auto v = static_cast<size_t>(graph.parameters[i]);
    graph.placements[v] = {Storage::kParameter, static_cast<int64_t>(i), 0};
    placed[v] = true;
  }
  for (size_t v = 0; v < count; ++v) {
    if (graph.values[v].constant) {
      graph.placements[v] = {Storage::kConstant, 0, 0};
      placed[v] = true;
    }
  }
  for (size_t i = 0; i < graph.results.size(); ++i) {
    const auto v = static_cast<size_t>(graph.results[i]);
    if (placed[v]) continue;  // a parameter, constant or repeated result: copied at the end
    graph.placements[v] = {Storage::kResult, static_cast<int64_t>(i), 0};
    placed[v] = true;
  }
  // Views share their input's memory unless they are results themselves.
  std::vector<ValueId> root(count);
  for (size_t v = 0; v < count; ++v) root[v] = static_cast<ValueId>(v);
  for (const Node& node : graph.nodes) {
    if (!node.output_aliases_input || node.inputs.empty()) continue;
    for (ValueId out : node.outputs) {
      const auto o = static_cast<size_t>(out);
      if (placed[o]) continue;
      root[o] = root[static_cast<size_t>(node.inputs[0])];
      graph.placements[o] = {Storage::kAlias, root[o], 0};
      placed[o] = true;
    }
  }
  // Liveness of arena roots: from the node defining a value to the last node
  // using it (or any view of it).
  std::vector<int64_t> last_use(count, -1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId in : graph.nodes[n].inputs) {
      last_use[static_cast<size_t>(root[static_cast<size_t>(in)])] = static_cast<int64_t>(n);
    }
  }
  for (ValueId result : graph.results) {
    last_use[static_cast<size_t>(root[static_cast<size_t>(result)])] =
        static_cast<int64_t>(graph.nodes.size());
  }
  // An intermediate value that dies at the fused loop computing result i,
  // read there element for element and of the result's size, lives in
  // result i's buffer: the loop writes the result over it (fused loops
  // write an output over an input only after reading the tile), and the
  // arena does not hold it. Softmax's exp(x - max) is computed into the
  // output buffer and divided in place.
  if (intermediates_in_results) {
    std::vector<bool> viewed(count, false), taken(graph.results.size(), false);
    for (const Node& node : graph.nodes) {
      if (!node.output_aliases_input) continue;
      for (ValueId in : node.inputs) viewed[static_cast<size_t>(in)] = true;
    }
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const Node& node = graph.nodes[n];
      if (node.inputs_read_pointwise.size() != node.inputs.size()) continue;
      for (ValueId out : node.outputs) {
        const Placement& home = graph.placements[static_cast<size_t>(out)];
        if (home.storage != Storage::kResult ||
            graph.results[static_cast<size_t>(home.index)] != out ||
            taken[static_cast<size_t>(home.index)]) {
          continue;
        }
        for (size_t k = 0; k < node.inputs.size(); ++k) {
          const auto v = static_cast<size_t>(node.inputs[k]);
          if (!node.inputs_read_pointwise[k] || placed[v] || viewed[v] ||
              last_use[v] != static_cast<int64_t>(n) ||
              graph.values[v].bytes != graph.values[static_cast<size_t>(out)].bytes) {
            continue;
          }
          graph.placements[v] = {Storage::kResult, home.index, 0};
          placed[v] = true;
          taken[static_cast<size_t>(home.index)] = true;
          break;
        }
      }
    }
  }
  ArenaAllocator allocator;
  std::vector<std::vector<size_t>> frees(graph.nodes.size() + 1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId out : graph.nodes[n].outputs) {
      const auto o = static_cast<size_t>(out);
      if (placed[o]) continue;
      graph.placements[o] = {Storage::kArena, 0,
                             allocator.Allocate(static_cast<int64_t>(graph.values[o].bytes))};
      placed[o] = true;
      // A value nobody reads dies after its node.
      const int64_t dies = std::max<int64_t>(last_use[o], static_cast<int64_t>(n));
      frees[static_cast<size_t>(dies)].push_back(o);
    }
    // Free after the node ran: its inputs may not share memory with its outputs.
    for (size_t v : frees[n]) allocator.Free(graph.placements[v].offset);
  }
  graph.arena_bytes = allocator.high_water();
}

}  // namespace kiln::compiler
