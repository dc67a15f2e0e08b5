// Fusion of elementwise chains: each run of consecutive nodes that compute
// their output element for element (Pointwise maps) or read it from another
// array (Pointwise reads: broadcast, transpose, slice, reverse) over the same
// number of elements becomes one node. That node splits the elements across
// threads and, for each tile of kTile elements, runs the members' kernels on
// the tile in order, keeping every member's result in a small per-thread
// buffer; values used outside the run are copied out at the end of each
// tile. A chain of ten ops then reads its inputs and writes its results once
// instead of streaming ten arrays through memory, and the values only the
// chain uses get no memory in the plan.
//
// A reduction over trailing dimensions (RowReduction) right after a run
// that computes its operand joins the run: each tile's values are folded
// into their rows' results while still in cache, and the operand itself is
// never written out (layernorm's variance, softmax's denominator). Before
// runs are formed, pointwise nodes move down to just before their first
// user, so that what a later run needs is computed there rather than
// materialized early, and small computations between them do not split
// runs.
//
// This file chooses the runs (sinking, forming runs, recomputing values in
// later runs) and replaces them; fused_loop_build.cc builds each run's
// loop, fused_loop_run.cc runs it, and row_groups.cc groups loops by rows.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/fused_loop.h"
#include "compiler/graph.h"

namespace kiln::compiler {
namespace fusion_internal {
namespace {

// Whether node `n` can join a run whose members produce `produced` and
// whose outputs have `count` elements.
bool Joins(const Graph& graph, const Node& node, int64_t count,
           const std::unordered_map<ValueId, bool>& produced) {
  if (Elements(graph, node.outputs[0]) != count) return false;
  if (node.pointwise->kind != Pointwise::Kind::kMap) {
    // A read walks its whole source (a gather its indices too), which must
    // be in memory already; but a gather reading index k for element k
    // (take_along_axis) finds its indices in the tile's own elements, so
    // the run may compute them (jnp's wrapping of negative indices).
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const bool in_order = i == 1 && node.pointwise->kind == Pointwise::Kind::kGather &&
                            GatherIndicesInOrder(*node.pointwise, Elements(graph, node.inputs[1]));
      if (produced.contains(node.inputs[i]) && !in_order) return false;
    }
  }
  return true;
}

// Whether view `node` (a reshape, a bitcast between types of one size)
// can join a run whose members produce `produced` over `count` elements: its
// input is the run's, so its output is that member's tile again.
bool JoinsAsView(const Graph& graph, const Node& node, int64_t count,
                 const std::unordered_map<ValueId, bool>& produced) {
  return node.output_aliases_input && node.inputs.size() == 1 && node.outputs.size() == 1 &&
         node.regions.empty() && !node.has_side_effects && produced.contains(node.inputs[0]) &&
         Elements(graph, node.outputs[0]) == count &&
         graph.values[static_cast<size_t>(node.outputs[0])].bytes ==
             graph.values[static_cast<size_t>(node.inputs[0])].bytes;
}

bool Fusible(const Node& node) {
  return node.pointwise != nullptr && node.outputs.size() == 1 && node.regions.empty() &&
         !node.has_side_effects && !node.output_aliases_input;
}

// Whether the row reduction `node` can end a run whose members produce
// `produced` over `count` elements: the run computes its operand (not its
// init), and there are enough rows to share among threads.
bool Absorbs(const Node& node, int64_t count, const std::unordered_map<ValueId, bool>& produced) {
  if (node.row_reduction == nullptr || node.inputs.size() != 2 || node.has_side_effects) {
    return false;
  }
  const RowReduction& row = *node.row_reduction;
  return produced.contains(node.inputs[0]) && !produced.contains(node.inputs[1]) &&
         row.rows * row.cols == count && row.rows >= 8 && row.cols >= 2;
}

// Moves each pointwise node that does not shrink its inputs down to just
// before its first user. A kept node's slot is its own index; a moved
// node's is its earliest user's slot. Each kept node is preceded by the
// nodes moved to its slot, in an order that respects their dependencies and
// otherwise takes smaller arrays first: in a layer norm, the per-row
// statistics (a few elements) are computed before the chain over the whole
// matrix that broadcasts them, so that chain is one run. The original order
// is topological, so the new one is too; side effects and every kept node
// keep their order.
void SinkPointwise(Graph& graph) {
  const size_t count = graph.nodes.size();
  const auto end = static_cast<int64_t>(count);
  std::vector<int64_t> first_user(graph.values.size(), end);
  std::vector<int64_t> slot(count);
  std::vector<bool> moved(count, false);
  for (size_t n = count; n-- > 0;) {
    const Node& node = graph.nodes[n];
    bool sinks = Fusible(node);
    for (ValueId in : node.inputs) {
      sinks = sinks && Elements(graph, in) <= Elements(graph, node.outputs[0]);
    }
    // A result nobody reads stays: moving it to the end would only keep its
    // inputs alive longer (and a loop body's carry read after its update
    // could no longer be updated in place).
    sinks = sinks && first_user[static_cast<size_t>(node.outputs[0])] < end;
    moved[n] = sinks;
    slot[n] = sinks ? first_user[static_cast<size_t>(node.outputs[0])] : static_cast<int64_t>(n);
    for (ValueId in : node.inputs) {
      int64_t& user = first_user[static_cast<size_t>(in)];
      user = std::min(user, slot[n]);
    }
  }
  if (std::none_of(moved.begin(), moved.end(), [](bool m) { return m; })) return;
  std::vector<std::vector<size_t>> groups(count);
  std::vector<size_t> producer(graph.values.size(), count);
  for (size_t n = 0; n < count; ++n) {
    if (moved[n]) groups[static_cast<size_t>(slot[n])].push_back(n);
    for (ValueId out : graph.nodes[n].outputs) producer[static_cast<size_t>(out)] = n;
  }
  std::vector<size_t> order;
  order.reserve(count);
  std::vector<size_t> waiting(count, 0);              // unplaced producers in the same group
  std::vector<std::vector<size_t>> consumers(count);  // in the same group
  using Ready = std::pair<int64_t, size_t>;           // (elements, node): smallest first
  std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
  for (size_t s = 0; s < count; ++s) {
    for (size_t n : groups[s]) {
      for (ValueId in : graph.nodes[n].inputs) {
        const size_t p = producer[static_cast<size_t>(in)];
        if (p < count && moved[p] && slot[p] == slot[n]) {
          ++waiting[n];
          consumers[p].push_back(n);
        }
      }
    }
    for (size_t n : groups[s]) {
      if (waiting[n] == 0) ready.emplace(Elements(graph, graph.nodes[n].outputs[0]), n);
    }
    while (!ready.empty()) {
      const size_t n = ready.top().second;
      ready.pop();
      order.push_back(n);
      for (size_t c : consumers[n]) {
        if (--waiting[c] == 0) ready.emplace(Elements(graph, graph.nodes[c].outputs[0]), c);
      }
    }
    if (!moved[s]) order.push_back(s);
  }
  std::vector<Node> nodes;
  nodes.reserve(count);
  for (size_t n : order) nodes.push_back(std::move(graph.nodes[n]));
  graph.nodes = std::move(nodes);
}

// At most this many members are recomputed for one value.
constexpr size_t kMaxRecomputed = 32;

// What RecomputeInLaterRuns reads of the graph as it was before it added
// clones.
struct RunUses {
  size_t values = 0;                       // values before the clones
  std::vector<int64_t> run_of;             // per node: its run, or -1
  std::vector<int64_t> producer;           // per value: its node, or -1
  std::vector<std::vector<size_t>> users;  // per value: the nodes reading it
  std::vector<int64_t> last_use;           // per value: its last reader (node count: a result)
  // Per node, the last node before it that no row group can hold (neither
  // pointwise nor a row reduction: a product, a scatter, ...), or -1.
  std::vector<int64_t> barrier_before;
};

// Runs, producers, readers, liveness and barriers of `graph` with `runs`.
RunUses FindRunUses(const Graph& graph, const std::vector<std::vector<size_t>>& runs) {
  const size_t count = graph.nodes.size();
  RunUses uses;
  uses.values = graph.values.size();
  uses.run_of.assign(count, -1);
  for (size_t r = 0; r < runs.size(); ++r) {
    for (size_t n : runs[r]) uses.run_of[n] = static_cast<int64_t>(r);
  }
  uses.producer.assign(uses.values, -1);
  uses.users.resize(uses.values);
  uses.last_use.assign(uses.values, -1);
  for (size_t n = 0; n < count; ++n) {
    for (ValueId out : graph.nodes[n].outputs) {
      uses.producer[static_cast<size_t>(out)] = static_cast<int64_t>(n);
    }
    for (ValueId in : graph.nodes[n].inputs) {
      uses.users[static_cast<size_t>(in)].push_back(n);
      uses.last_use[static_cast<size_t>(in)] = static_cast<int64_t>(n);
    }
  }
  for (ValueId result : graph.results) {
    uses.last_use[static_cast<size_t>(result)] = static_cast<int64_t>(count);
  }
  uses.barrier_before.assign(count, -1);
  for (size_t n = 1; n < count; ++n) {
    const Node& previous = graph.nodes[n - 1];
    uses.barrier_before[n] = previous.pointwise == nullptr && previous.row_reduction == nullptr
                                 ? static_cast<int64_t>(n - 1)
                                 : uses.barrier_before[n - 1];
  }
  return uses;
}

// Whether clones of `elements` elements put in front of node `first` start
// a run with it, rather than joining a run ending before it (which would
// then write them to memory after all): the node before is no pointwise
// node of that many elements.
bool StartsARun(const Graph& graph, size_t first, int64_t elements) {
  if (first == 0) return true;
  const Node& previous = graph.nodes[first - 1];
  return !Fusible(previous) || Elements(graph, previous.outputs[0]) != elements;
}

// The bytes of value `v`.
int64_t BytesOf(const Graph& graph, ValueId v) {
  return static_cast<int64_t>(graph.values[static_cast<size_t>(v)].bytes);
}

// The members of run `r` value v depends on (its own among them), in node
// order; empty when one of them is not a pointwise member or there are too
// many.
std::vector<size_t> Cone(const Graph& graph, const RunUses& uses, size_t r, ValueId v) {
  std::vector<size_t> members;
  std::vector<ValueId> pending{v};
  while (!pending.empty()) {
    const ValueId value = pending.back();
    pending.pop_back();
    // A clone made for an earlier run: not recomputed again.
    if (static_cast<size_t>(value) >= uses.values) return std::vector<size_t>{};
    const int64_t n = uses.producer[static_cast<size_t>(value)];
    if (n < 0 || uses.run_of[static_cast<size_t>(n)] != static_cast<int64_t>(r)) continue;
    if (std::find(members.begin(), members.end(), static_cast<size_t>(n)) != members.end()) {
      continue;
    }
    if (graph.nodes[static_cast<size_t>(n)].pointwise == nullptr ||
        members.size() == kMaxRecomputed) {
      return std::vector<size_t>{};
    }
    members.push_back(static_cast<size_t>(n));
    for (ValueId in : graph.nodes[static_cast<size_t>(n)].inputs) pending.push_back(in);
  }
  std::sort(members.begin(), members.end());
  return members;
}

// The last node reading value `v` of run `r` when only later runs read it,
// each element for element in a map past a barrier, and it is no result;
// else nullopt.
std::optional<int64_t> LastLaterReader(const Graph& graph,
                                       const std::vector<std::vector<size_t>>& runs,
                                       const RunUses& uses, size_t r, ValueId v) {
  const std::vector<size_t>& run = runs[r];
  bool later_only = !uses.users[static_cast<size_t>(v)].empty();
  int64_t last = -1;
  for (size_t user : uses.users[static_cast<size_t>(v)]) {
    const int64_t later = uses.run_of[user];
    if (later == static_cast<int64_t>(r)) continue;
    const Node& reader = graph.nodes[user];
    // Past a barrier: else the two runs may share a row group, where v
    // never reaches memory (softmax's exp(x - max)), and recomputing
    // would only cost time.
    later_only = later_only && later > static_cast<int64_t>(r) && reader.pointwise != nullptr &&
                 reader.pointwise->kind == Pointwise::Kind::kMap &&
                 Elements(graph, reader.outputs[0]) == Elements(graph, v) &&
                 uses.barrier_before[user] > static_cast<int64_t>(run.back()) &&
                 StartsARun(graph, runs[static_cast<size_t>(later)].front(), Elements(graph, v));
    last = std::max<int64_t>(last, static_cast<int64_t>(user));
  }
  if (!later_only || last < 0 ||
      uses.last_use[static_cast<size_t>(v)] == static_cast<int64_t>(graph.nodes.size())) {
    return std::nullopt;
  }
  return last;
}

// The values of one run to recompute in later runs, if it pays.
struct Recomputed {
  std::vector<ValueId> moved;
  std::vector<std::vector<size_t>> cones;  // per moved value
  std::vector<size_t> moved_members;       // union of the cones
  int64_t saved = 0;                       // bytes of the moved values
  int64_t latest = -1;                     // the last node reading one
};

// The values of run `r` only later runs read, with their cones.
Recomputed FindRecomputed(const Graph& graph, const std::vector<std::vector<size_t>>& runs,
                          const RunUses& uses, size_t r) {
  Recomputed found;
  for (size_t n : runs[r]) {
    const Node& node = graph.nodes[n];
    if (node.pointwise == nullptr) continue;
    const ValueId v = node.outputs[0];
    const std::optional<int64_t> last = LastLaterReader(graph, runs, uses, r, v);
    if (!last) continue;
    std::vector<size_t> members = Cone(graph, uses, r, v);
    if (members.empty()) continue;
    found.moved.push_back(v);
    found.saved += BytesOf(graph, v);
    found.latest = std::max(found.latest, *last);
    for (size_t m : members) {
      if (std::find(found.moved_members.begin(), found.moved_members.end(), m) ==
          found.moved_members.end()) {
        found.moved_members.push_back(m);
      }
    }
    found.cones.push_back(std::move(members));
  }
  return found;
}

// The bytes of run `r`'s inputs the recomputed members read whose lives
// recomputing lengthens (kept until the last later run that reads them);
// parameters and constants cost nothing.
int64_t LengthenedBytes(const Graph& graph, const RunUses& uses, size_t r,
                        const Recomputed& found) {
  int64_t lengthened = 0;
  std::vector<ValueId> inputs;
  for (size_t m : found.moved_members) {
    for (ValueId in : graph.nodes[m].inputs) {
      const int64_t n = uses.producer[static_cast<size_t>(in)];
      if (n >= 0 && uses.run_of[static_cast<size_t>(n)] == static_cast<int64_t>(r)) continue;
      if (std::find(inputs.begin(), inputs.end(), in) != inputs.end()) continue;
      inputs.push_back(in);
      if (n >= 0 && uses.last_use[static_cast<size_t>(in)] < found.latest) {
        lengthened += BytesOf(graph, in);
      }
    }
  }
  return lengthened;
}

// Per later run: the clones to insert in front of it, and the values they
// replace there.
struct Clones {
  std::vector<std::vector<Node>> nodes;
  std::vector<std::unordered_map<ValueId, ValueId>> renamed;
};

// Clones the cones of run `r`'s moved values in front of each later run
// reading them, and points the readers at the clones.
void CloneIntoLaterRuns(Graph& graph, const RunUses& uses, size_t r, const Recomputed& found,
                        Clones& clones) {
  for (size_t k = 0; k < found.moved.size(); ++k) {
    const ValueId v = found.moved[k];
    for (size_t user : uses.users[static_cast<size_t>(v)]) {
      const int64_t later = uses.run_of[user];
      if (later == static_cast<int64_t>(r)) continue;
      auto& names = clones.renamed[static_cast<size_t>(later)];
      // Clone v's members in front of the later run (once per run); the
      // reader then reads the clone (only maps read moved values, never a
      // view, so no alias ever points at a clone).
      for (size_t m : found.cones[k]) {
        const ValueId old_value = graph.nodes[m].outputs[0];
        if (names.contains(old_value)) continue;
        Node copy = graph.nodes[m];
        for (ValueId& in : copy.inputs) {
          if (auto it = names.find(in); it != names.end()) in = it->second;
        }
        const ValueId fresh = graph.AddValue(graph.shape(old_value));
        copy.outputs = {fresh};
        names.emplace(old_value, fresh);
        clones.nodes[static_cast<size_t>(later)].push_back(std::move(copy));
      }
      const ValueId clone = names.find(v)->second;  // v's own member is in its cone
      for (ValueId& in : graph.nodes[user].inputs) {
        if (in == v) in = clone;
      }
    }
  }
}

// Puts each run's clones in front of its first node.
void InsertClones(Graph& graph, const std::vector<std::vector<size_t>>& runs, Clones& clones) {
  const size_t count = graph.nodes.size();
  std::vector<size_t> first_of(count, runs.size());
  for (size_t r = 0; r < runs.size(); ++r) first_of[runs[r].front()] = r;
  std::vector<Node> nodes;
  nodes.reserve(count);
  for (size_t n = 0; n < count; ++n) {
    if (first_of[n] < runs.size()) {
      for (Node& copy : clones.nodes[first_of[n]]) nodes.push_back(std::move(copy));
    }
    nodes.push_back(std::move(graph.nodes[n]));
  }
  graph.nodes = std::move(nodes);
}

}  // namespace

// The runs of consecutive nodes FuseRuns makes one fused loop each
// (indexes of graph.nodes, in order).
std::vector<std::vector<size_t>> FormRuns(const Graph& graph) {
  std::vector<std::vector<size_t>> runs;
  std::vector<size_t> current;
  std::unordered_map<ValueId, bool> produced;
  int64_t count = -1;
  // A run is worth fusing when it computes something: a run of reads alone
  // would only copy through the tiles.
  // A gather alone is worth a loop too: its tiles gather element by element
  // or row by row (GatherTile), where the gather kernel copied a window per
  // index (a column of a matrix, jnp.linalg.inv's permutation, one 8-byte
  // copy at a time).
  auto close = [&] {
    // Views at the end stay views of the run's output (joined, they would
    // copy it).
    while (!current.empty() && graph.nodes[current.back()].output_aliases_input) {
      current.pop_back();
    }
    const auto kind_of = [&](size_t n) {
      const auto& pointwise = graph.nodes[n].pointwise;
      return pointwise == nullptr ? Pointwise::Kind::kRead : pointwise->kind;
    };
    const bool computes = std::any_of(current.begin(), current.end(), [&](size_t n) {
      return kind_of(n) == Pointwise::Kind::kMap;
    });
    const bool gathers = std::any_of(current.begin(), current.end(), [&](size_t n) {
      return kind_of(n) == Pointwise::Kind::kGather;
    });
    if ((current.size() >= 2 && computes) || gathers) runs.push_back(current);
    current.clear();
    produced.clear();
  };
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (!current.empty() && JoinsAsView(graph, node, count, produced)) {
      current.push_back(n);
      produced.emplace(node.outputs[0], true);
      continue;
    }
    if (!Fusible(node)) {
      if (!current.empty() && Absorbs(node, count, produced)) current.push_back(n);
      close();
      continue;
    }
    if (current.empty() || !Joins(graph, node, count, produced)) {
      close();
      count = Elements(graph, node.outputs[0]);
    }
    if (count == 0) continue;  // nothing to compute
    current.push_back(n);
    produced.emplace(node.outputs[0], true);
  }
  close();
  return runs;
}

// Recomputes values of one run in the later runs that read them, instead of
// keeping them in memory in between: the gradient of a GELU reads four
// arrays its forward loop computed from one product (x, x^3, tanh(...)),
// each as large as the product. The values of a run that only later runs
// read, element for element, are recomputed there from the run's inputs
// (the members they depend on are cloned in front of each later run, which
// then fuses them) when the bytes they hold exceed the bytes of the inputs
// whose lives this lengthens; parameters and constants cost nothing. XLA
// duplicates cheap producers into their consumers the same way. Only for
// later runs past a node no row group can hold (a product, say): between
// runs a row group may join, a value stays in the group's blocks anyway.
// Returns whether it changed the graph.
bool RecomputeInLaterRuns(Graph& graph, const std::vector<std::vector<size_t>>& runs) {
  const RunUses uses = FindRunUses(graph, runs);
  Clones clones{std::vector<std::vector<Node>>(runs.size()),
                std::vector<std::unordered_map<ValueId, ValueId>>(runs.size())};
  bool changed = false;
  for (size_t r = 0; r < runs.size(); ++r) {
    const Recomputed found = FindRecomputed(graph, runs, uses, r);
    if (found.moved.empty() || found.saved <= LengthenedBytes(graph, uses, r, found)) continue;
    changed = true;
    CloneIntoLaterRuns(graph, uses, r, found, clones);
  }
  if (!changed) return false;
  InsertClones(graph, runs, clones);
  return true;
}

// FuseElementwise's work, then the row groups over its loops.
void FuseRuns(Graph& graph) {
  SinkPointwise(graph);
  std::vector<std::vector<size_t>> runs = FormRuns(graph);
  if (RecomputeInLaterRuns(graph, runs)) {
    EliminateDeadNodes(graph);
    runs = FormRuns(graph);
  }
  std::vector<std::shared_ptr<const FusedLoop>> loops = FuseEachRun(graph, runs);
  GroupRows(graph, loops);
}

}  // namespace fusion_internal

void FuseElementwise(Graph& graph) { fusion_internal::FuseRuns(graph); }

}  // namespace kiln::compiler
