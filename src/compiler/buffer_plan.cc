// The buffer plan (PlanBuffers, graph.h): where each value of a graph lives
// at run time. Phases, in order: the values the caller places (parameters,
// constants, results); views ending the program in their result's buffer;
// views and passed-through values onto their input's memory; liveness;
// intermediates written over by the fused loop computing a result; the
// result buffers free before their first write; and a first fit of every
// other value, by liveness, in the arena or such a free result buffer.
// docs/execution.md ("Buffer plan") gives the reasons and the measurements.
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/graph.h"

namespace kiln::compiler {
namespace {

constexpr int64_t kAlignment = 64;

int64_t AlignUp(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// First-fit allocator over an address range, by liveness: the arena's
// (unbounded), or a result buffer's (`limit` bytes).
class ArenaAllocator {
 public:
  // The offset of `bytes` of free memory, or -1 when they end past `limit`.
  int64_t Allocate(int64_t bytes, int64_t limit = std::numeric_limits<int64_t>::max()) {
    const int64_t size = std::max<int64_t>(AlignUp(bytes), kAlignment);
    int64_t offset = 0;
    for (const auto& [start, used] : used_) {
      if (start - offset >= size) break;
      offset = std::max(offset, start + used);
    }
    if (offset > limit - bytes) return -1;
    used_.emplace(offset, size);
    high_water_ = std::max(high_water_, offset + size);
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

// What the phases of PlanBuffers share about the graph's values.
struct PlanState {
  explicit PlanState(Graph& planned)
      : graph(planned),
        count(planned.values.size()),
        placed(count, false),
        taken(planned.results.size(), false),
        root(count),
        last_use(count, -1) {}

  Graph& graph;
  size_t count;              // values
  std::vector<bool> placed;  // per value: its placement is final
  // Per result: an intermediate was placed in its buffer (its own node
  // writes over it), so no other intermediate may go there.
  std::vector<bool> taken;
  std::vector<ValueId> root;      // per value: whose memory it is (itself unless a view)
  std::vector<int64_t> last_use;  // per root: the last node reading it or a view of it
};

// Parameters, constants and results go where the caller has them.
void PlaceCallersValues(PlanState& state) {
  Graph& graph = state.graph;
  graph.placements.assign(state.count, Placement{});
  for (size_t i = 0; i < graph.parameters.size(); ++i) {
    const auto v = static_cast<size_t>(graph.parameters[i]);
    graph.placements[v] = {Storage::kParameter, static_cast<int64_t>(i), 0};
    state.placed[v] = true;
  }
  for (size_t v = 0; v < state.count; ++v) {
    if (graph.values[v].constant) {
      graph.placements[v] = {Storage::kConstant, 0, 0};
      state.placed[v] = true;
    }
  }
  for (size_t i = 0; i < graph.results.size(); ++i) {
    const auto v = static_cast<size_t>(graph.results[i]);
    if (state.placed[v]) continue;  // a parameter, constant or repeated result: copied at the end
    graph.placements[v] = {Storage::kResult, static_cast<int64_t>(i), 0};
    state.placed[v] = true;
  }
}

// A result that is a view (a reshape ending the program, a convolution's
// product seen in the result's layout) of an intermediate of its size:
// the intermediate, and the views between, live in the result's buffer,
// so no view copies and the arena does not hold them. Nothing else writes
// that buffer (a result taken here gets no other intermediate below), and
// CanWriteInPlace (compile.cc) gives such a result memory of its own
// rather than a donated argument's.
void PlaceViewedResults(PlanState& state) {
  Graph& graph = state.graph;
  for (size_t n = graph.nodes.size(); n-- > 0;) {
    const Node& node = graph.nodes[n];
    if (!node.output_aliases_input || node.inputs.empty()) continue;
    const auto out = static_cast<size_t>(node.outputs[0]);
    const auto in = static_cast<size_t>(node.inputs[0]);
    const Placement home = graph.placements[out];
    if (home.storage != Storage::kResult || state.placed[in] ||
        graph.values[in].bytes != graph.values[out].bytes) {
      continue;
    }
    graph.placements[in] = home;
    state.placed[in] = true;
    state.taken[static_cast<size_t>(home.index)] = true;
  }
}

// Views, and outputs that are an input the node never writes, share that
// input's memory unless they are results themselves.
void PlaceViews(PlanState& state) {
  Graph& graph = state.graph;
  for (size_t v = 0; v < state.count; ++v) state.root[v] = static_cast<ValueId>(v);
  for (const Node& node : graph.nodes) {
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const auto o = static_cast<size_t>(node.outputs[k]);
      const int64_t input = node.output_aliases_input ? 0 : InputIndex(node.output_is_input, k);
      if (input < 0 || input >= static_cast<int64_t>(node.inputs.size()) || state.placed[o]) {
        continue;
      }
      const auto v = static_cast<size_t>(node.inputs[static_cast<size_t>(input)]);
      if (graph.values[v].bytes != graph.values[o].bytes && !node.output_aliases_input) continue;
      state.root[o] = state.root[v];
      graph.placements[o] = {Storage::kAlias, state.root[o], 0};
      state.placed[o] = true;
    }
  }
}

// Liveness of arena roots: from the node defining a value to the last node
// using it (or any view of it).
void FindLastUses(PlanState& state) {
  const Graph& graph = state.graph;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId in : graph.nodes[n].inputs) {
      state.last_use[static_cast<size_t>(state.root[static_cast<size_t>(in)])] =
          static_cast<int64_t>(n);
    }
  }
  for (ValueId result : graph.results) {
    state.last_use[static_cast<size_t>(state.root[static_cast<size_t>(result)])] =
        static_cast<int64_t>(graph.nodes.size());
  }
}

// Values with another name for their memory (a view, a while carry passed
// through): a loop may read that other name at other elements than it
// writes.
std::vector<bool> ViewedValues(const PlanState& state) {
  std::vector<bool> viewed(state.count, false);
  for (const Node& node : state.graph.nodes) {
    if (!node.output_aliases_input) continue;
    for (ValueId in : node.inputs) viewed[static_cast<size_t>(in)] = true;
  }
  for (size_t v = 0; v < state.count; ++v) {
    if (state.root[v] != static_cast<ValueId>(v)) {
      viewed[static_cast<size_t>(state.root[v])] = true;
    }
  }
  return viewed;
}

// An intermediate value that dies at the fused loop computing result i,
// read there element for element and of the result's size, lives in
// result i's buffer: the loop writes the result over it (fused loops
// write an output over an input only after reading the tile), and the
// arena does not hold it. Softmax's exp(x - max) is computed into the
// output buffer and divided in place. The same for an input a node's
// result may be written over (output_over_input): a scan's stacked
// outputs are zero-filled in the result's buffer and the loop updates
// them there, rather than being copied into it.
//
// The input may be a view of the intermediate (a bitcast or reshape of
// the same element size: element k of the view is element k's bytes of
// the intermediate), and the intermediate may itself be computed by a
// fused loop over another one dying there: the whole chain then lives in
// the result's buffer, each loop writing over the one before. A normal
// sample from rbg bits (bits, a u32 loop, a bitcast, an f32 loop) held
// 32 MB for a 16 MB result before.
void PlaceInputsOfResultLoops(PlanState& state) {
  Graph& graph = state.graph;
  const std::vector<bool> viewed = ViewedValues(state);
  std::vector<int64_t> producer(state.count, -1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId out : graph.nodes[n].outputs)
      producer[static_cast<size_t>(out)] = static_cast<int64_t>(n);
  }
  // The memory (a root value) of an input of node `n` that output `out`
  // may be written over, or -1.
  auto over = [&](size_t n, size_t o, size_t out) -> int64_t {
    const Node& node = graph.nodes[n];
    const bool pointwise = node.inputs_read_pointwise.size() == node.inputs.size();
    if (!pointwise && node.output_over_input.empty()) return -1;
    const int64_t named = InputIndex(node.output_over_input, o);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const auto v = static_cast<size_t>(node.inputs[k]);
      const auto r = static_cast<size_t>(state.root[v]);
      const auto reads = std::count_if(node.inputs.begin(), node.inputs.end(), [&](ValueId in) {
        return state.root[static_cast<size_t>(in)] == state.root[v];
      });
      const bool may_take = pointwise ? node.inputs_read_pointwise[k] && (r == v || reads == 1)
                                      : named == static_cast<int64_t>(k) && reads == 1;
      // A view qualifies when it keeps the element size (so the same
      // positions); a value with views, only through them.
      const bool same_positions = r == v ? !viewed[v]
                                         : graph.values[v].bytes == graph.values[r].bytes &&
                                               graph.shape(v).NumElements() ==
                                                   graph.shape(r).NumElements();
      if (!may_take || state.placed[r] || !same_positions ||
          state.last_use[r] != static_cast<int64_t>(n) ||
          graph.values[r].bytes != graph.values[out].bytes ||
          graph.shape(r).NumElements() != graph.shape(out).NumElements()) {
        continue;
      }
      return static_cast<int64_t>(r);
    }
    return -1;
  };
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const ValueId out = node.outputs[o];
      const Placement& home = graph.placements[static_cast<size_t>(out)];
      if (home.storage != Storage::kResult ||
          graph.results[static_cast<size_t>(home.index)] != out ||
          state.taken[static_cast<size_t>(home.index)]) {
        continue;
      }
      const Placement place = home;
      int64_t r = over(n, o, static_cast<size_t>(out));
      while (r >= 0) {
        graph.placements[static_cast<size_t>(r)] = place;
        state.placed[static_cast<size_t>(r)] = true;
        state.taken[static_cast<size_t>(place.index)] = true;
        // Up the chain: a fused loop computing r over an input dying there.
        const int64_t m = producer[static_cast<size_t>(r)];
        if (m < 0 || graph.nodes[static_cast<size_t>(m)].op != kFusionOp) break;
        const Node& loop = graph.nodes[static_cast<size_t>(m)];
        const auto k = static_cast<size_t>(std::find(loop.outputs.begin(), loop.outputs.end(),
                                                     static_cast<ValueId>(r)) -
                                           loop.outputs.begin());
        r = over(static_cast<size_t>(m), k, static_cast<size_t>(r));
      }
    }
  }
}

// A result buffer free before its first write, as memory for values that
// die by then.
struct ResultSpace {
  size_t result = 0;
  int64_t bytes = 0;
  int64_t first_write = 0;  // node index
  ArenaAllocator space;
};

// Result buffers are the caller's fresh memory, unused until the first
// node writing one runs (the nodes computing the result or a value placed
// in it above; never, for a result copied after the last node). A value
// dying before then can live there instead of the arena: a training
// step's activations in the memory of its weight updates, which are
// written last. Not a result that may be a donated argument's memory.
// Returns them shortest free span first: later ones stay free for longer
// lives.
std::vector<ResultSpace> FreeResultSpaces(const PlanState& state,
                                          const std::vector<bool>& aliased_results) {
  const Graph& graph = state.graph;
  std::vector<ResultSpace> result_spaces;
  std::vector<int64_t> first_write(graph.results.size(), static_cast<int64_t>(graph.nodes.size()));
  for (size_t n = graph.nodes.size(); n-- > 0;) {
    for (ValueId out : graph.nodes[n].outputs) {
      const Placement& home = graph.placements[static_cast<size_t>(out)];
      if (state.placed[static_cast<size_t>(out)] && home.storage == Storage::kResult) {
        first_write[static_cast<size_t>(home.index)] = static_cast<int64_t>(n);
      }
    }
  }
  for (size_t i = 0; i < graph.results.size(); ++i) {
    const auto bytes = static_cast<int64_t>(
        graph.values[static_cast<size_t>(graph.results[i])].bytes);
    if (bytes == 0 || first_write[i] == 0 || (i < aliased_results.size() && aliased_results[i])) {
      continue;
    }
    result_spaces.push_back({i, bytes, first_write[i], {}});
  }
  std::stable_sort(result_spaces.begin(), result_spaces.end(),
                   [](const ResultSpace& a, const ResultSpace& b) {
                     return a.first_write < b.first_write;
                   });
  return result_spaces;
}

// The first fit of the values no earlier phase placed: its allocators, and
// where each value it placed went.
struct FirstFit {
  FirstFit(size_t count, std::vector<ResultSpace> spaces)
      : result_spaces(std::move(spaces)), space_of(count, -1), handed_over(count, false) {}

  ArenaAllocator allocator;  // the arena's
  std::vector<ResultSpace> result_spaces;
  // Per value placed in a result buffer: its entry of result_spaces.
  std::vector<int32_t> space_of;
  // Values whose memory an output of the node they die at took over.
  std::vector<bool> handed_over;

  // The allocator value `v` came from.
  ArenaAllocator& allocator_of(size_t v) {
    return space_of[v] < 0 ? allocator : result_spaces[static_cast<size_t>(space_of[v])].space;
  }
};

// The memory of input `input` of node `n`, when output `o` (dying at node
// `dies`) may be written over it: the input is a value of the output's size
// and element count that this plan placed (in the arena or a result buffer
// free for the output's whole life), no view, dying here and read by this
// node once. Marks the input handed over.
std::optional<Placement> TakeOver(const PlanState& state, FirstFit& fit, size_t n, size_t input,
                                  size_t o, int64_t dies) {
  const Graph& graph = state.graph;
  const Node& node = graph.nodes[n];
  if (input >= node.inputs.size()) return std::nullopt;
  const auto v = static_cast<size_t>(node.inputs[input]);
  const Placement& place = graph.placements[v];
  const bool ours = place.storage == Storage::kArena ||
                    (fit.space_of[v] >= 0 &&
                     fit.result_spaces[static_cast<size_t>(fit.space_of[v])].first_write > dies);
  const auto reads = std::count_if(node.inputs.begin(), node.inputs.end(), [&](ValueId in) {
    return state.root[static_cast<size_t>(in)] == state.root[v];
  });
  if (ours && state.root[v] == static_cast<ValueId>(v) && !fit.handed_over[v] &&
      state.last_use[v] == static_cast<int64_t>(n) && reads == 1 &&
      graph.values[v].bytes == graph.values[o].bytes && graph.values[o].bytes > 0 &&
      graph.shape(v).NumElements() == graph.shape(o).NumElements()) {
    fit.space_of[o] = fit.space_of[v];
    fit.handed_over[v] = true;
    return place;
  }
  return std::nullopt;
}

// Output `k` (value `o`) of node `n` written over an input's memory (see
// TakeOver), if any. A fused loop may write any output over any input it
// reads element for element (it writes a tile after reading it); other
// nodes name the input (output_over_input).
std::optional<Placement> OverAnInput(const PlanState& state, FirstFit& fit, size_t n, size_t k,
                                     size_t o, int64_t dies) {
  const Node& node = state.graph.nodes[n];
  if (node.op == kFusionOp) {
    for (size_t i = 0; i < node.inputs_read_pointwise.size(); ++i) {
      if (!node.inputs_read_pointwise[i]) continue;
      if (std::optional<Placement> home = TakeOver(state, fit, n, i, o, dies)) return home;
    }
  } else if (const int64_t input = InputIndex(node.output_over_input, k); input >= 0) {
    return TakeOver(state, fit, n, static_cast<size_t>(input), o, dies);
  }
  return std::nullopt;
}

// `bytes` for value `o` in the first result buffer still free when it dies
// (at node `dies`) that has room, if any.
std::optional<Placement> InAFreeResult(FirstFit& fit, size_t o, int64_t bytes, int64_t dies) {
  const auto free_after = std::partition_point(fit.result_spaces.begin(), fit.result_spaces.end(),
                                               [&](const ResultSpace& space) {
                                                 return space.first_write <= dies;
                                               });
  for (auto s = static_cast<size_t>(free_after - fit.result_spaces.begin());
       s < fit.result_spaces.size(); ++s) {
    ResultSpace& target = fit.result_spaces[s];
    if (target.bytes < bytes) continue;
    const int64_t offset = target.space.Allocate(bytes, target.bytes);
    if (offset < 0) continue;
    fit.space_of[o] = static_cast<int32_t>(s);
    return Placement{Storage::kResult, static_cast<int64_t>(target.result), offset};
  }
  return std::nullopt;
}

// Every value left, node by node: over a dying input, else in a free result
// buffer, else in the arena; each freed after the node where it dies ran.
void PlaceByFirstFit(PlanState& state, FirstFit& fit) {
  Graph& graph = state.graph;
  std::vector<std::vector<size_t>> frees(graph.nodes.size() + 1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const auto o = static_cast<size_t>(node.outputs[k]);
      if (state.placed[o]) continue;
      // A value nobody reads dies after its node.
      const int64_t dies = std::max<int64_t>(state.last_use[o], static_cast<int64_t>(n));
      const auto bytes = static_cast<int64_t>(graph.values[o].bytes);
      std::optional<Placement> home = OverAnInput(state, fit, n, k, o, dies);
      if (!home) home = InAFreeResult(fit, o, bytes, dies);
      if (!home) home = Placement{Storage::kArena, 0, fit.allocator.Allocate(bytes)};
      graph.placements[o] = *home;
      state.placed[o] = true;
      frees[static_cast<size_t>(dies)].push_back(o);
    }
    // Free after the node ran: its inputs may not share memory with its
    // outputs (but for the memory handed over above).
    for (size_t v : frees[n]) {
      if (!fit.handed_over[v]) fit.allocator_of(v).Free(graph.placements[v].offset);
    }
  }
  graph.arena_bytes = fit.allocator.high_water();
}

}  // namespace

void PlanBuffers(Graph& graph, bool intermediates_in_results,
                 const std::vector<bool>& aliased_results) {
  PlanState state(graph);
  PlaceCallersValues(state);
  if (intermediates_in_results) PlaceViewedResults(state);
  PlaceViews(state);
  FindLastUses(state);
  if (intermediates_in_results) PlaceInputsOfResultLoops(state);
  FirstFit fit(state.count, intermediates_in_results ? FreeResultSpaces(state, aliased_results)
                                                     : std::vector<ResultSpace>{});
  PlaceByFirstFit(state, fit);
}

}  // namespace kiln::compiler
