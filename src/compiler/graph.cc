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

// Entry k of a per-output input list, or -1 when it has none.
int64_t InputIndex(const std::vector<int32_t>& inputs, size_t k) {
  return k < inputs.size() ? inputs[k] : -1;
}

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
  // A result that is a view (a reshape ending the program, a convolution's
  // product seen in the result's layout) of an intermediate of its size:
  // the intermediate, and the views between, live in the result's buffer,
  // so no view copies and the arena does not hold them. Nothing else writes
  // that buffer (a result taken here gets no other intermediate below), and
  // CanWriteInPlace (compile.cc) gives such a result memory of its own
  // rather than a donated argument's.
  std::vector<bool> taken(graph.results.size(), false);
  if (intermediates_in_results) {
    for (size_t n = graph.nodes.size(); n-- > 0;) {
      const Node& node = graph.nodes[n];
      if (!node.output_aliases_input || node.inputs.empty()) continue;
      const auto out = static_cast<size_t>(node.outputs[0]);
      const auto in = static_cast<size_t>(node.inputs[0]);
      const Placement home = graph.placements[out];
      if (home.storage != Storage::kResult || placed[in] ||
          graph.values[in].bytes != graph.values[out].bytes) {
        continue;
      }
      graph.placements[in] = home;
      placed[in] = true;
      taken[static_cast<size_t>(home.index)] = true;
    }
  }
  // Views, and outputs that are an input the node never writes, share that
  // input's memory unless they are results themselves.
  std::vector<ValueId> root(count);
  for (size_t v = 0; v < count; ++v) root[v] = static_cast<ValueId>(v);
  for (const Node& node : graph.nodes) {
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const auto o = static_cast<size_t>(node.outputs[k]);
      const int64_t input = node.output_aliases_input ? 0 : InputIndex(node.output_is_input, k);
      if (input < 0 || input >= static_cast<int64_t>(node.inputs.size()) || placed[o]) continue;
      const auto v = static_cast<size_t>(node.inputs[static_cast<size_t>(input)]);
      if (graph.values[v].bytes != graph.values[o].bytes && !node.output_aliases_input) continue;
      root[o] = root[v];
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
    // Values with another name for their memory (a view, a while carry
    // passed through): a loop may read that other name at other elements
    // than it writes.
    std::vector<bool> viewed(count, false);
    for (const Node& node : graph.nodes) {
      if (!node.output_aliases_input) continue;
      for (ValueId in : node.inputs) viewed[static_cast<size_t>(in)] = true;
    }
    for (size_t v = 0; v < count; ++v) {
      if (root[v] != static_cast<ValueId>(v)) viewed[static_cast<size_t>(root[v])] = true;
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
  // Arena values whose memory an output of the node they die at took over.
  std::vector<bool> handed_over(count, false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const auto o = static_cast<size_t>(node.outputs[k]);
      if (placed[o]) continue;
      // An output written over an input: the input is an arena value of the
      // output's size and element count, no view, dying here and read by
      // this node once. A
      // fused loop may write any output over any input it reads element for
      // element (it writes a tile after reading it); other nodes name the
      // input (output_over_input).
      int64_t offset = -1;
      auto take_over = [&](size_t input) {
        if (offset >= 0 || input >= node.inputs.size()) return;
        const auto v = static_cast<size_t>(node.inputs[input]);
        const auto reads = std::count_if(node.inputs.begin(), node.inputs.end(), [&](ValueId in) {
          return root[static_cast<size_t>(in)] == root[v];
        });
        if (graph.placements[v].storage == Storage::kArena && root[v] == static_cast<ValueId>(v) &&
            !handed_over[v] && last_use[v] == static_cast<int64_t>(n) && reads == 1 &&
            graph.values[v].bytes == graph.values[o].bytes && graph.values[o].bytes > 0 &&
            graph.shape(v).NumElements() == graph.shape(o).NumElements()) {
          offset = graph.placements[v].offset;
          handed_over[v] = true;
        }
      };
      if (node.op == kFusionOp) {
        for (size_t i = 0; i < node.inputs_read_pointwise.size(); ++i) {
          if (node.inputs_read_pointwise[i]) take_over(i);
        }
      } else if (const int64_t input = InputIndex(node.output_over_input, k); input >= 0) {
        take_over(static_cast<size_t>(input));
      }
      if (offset < 0) offset = allocator.Allocate(static_cast<int64_t>(graph.values[o].bytes));
      graph.placements[o] = {Storage::kArena, 0, offset};
      placed[o] = true;
      // A value nobody reads dies after its node.
      const int64_t dies = std::max<int64_t>(last_use[o], static_cast<int64_t>(n));
      frees[static_cast<size_t>(dies)].push_back(o);
    }
    // Free after the node ran: its inputs may not share memory with its
    // outputs (but for the memory handed over above).
    for (size_t v : frees[n]) {
      if (!handed_over[v]) allocator.Free(graph.placements[v].offset);
    }
  }
  graph.arena_bytes = allocator.high_water();
}

}  // namespace kiln::compiler
