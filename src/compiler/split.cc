#include "compiler/split.h"

#include <algorithm>
#include <unordered_map>

#include "base/status.h"

namespace kiln::compiler {

namespace {

// Copies `value` of `graph` into `segment` (a parameter, or a constant
// sharing its data) and maps it.
ValueId Import(const Graph& graph, ValueId value, Graph& segment,
               std::unordered_map<ValueId, ValueId>& inner) {
  auto found = inner.find(value);
  if (found != inner.end()) return found->second;
  const ValueInfo& info = graph.values[static_cast<size_t>(value)];
  const ValueId id = segment.AddValue(info.shape);
  segment.values[static_cast<size_t>(id)].constant = info.constant;
  if (!info.constant) segment.parameters.push_back(id);
  inner.emplace(value, id);
  return id;
}

}  // namespace

size_t SplitPlan::CrossingBytes() const {
  size_t bytes = 0;
  for (const Crossing& crossing : crossings) bytes += crossing.bytes;
  return bytes;
}

SplitPlan SplitGraph(const Graph& graph, FunctionRef<bool(const Node&)> on_device) {
  return SplitGraph(graph, [&](const Node& node) {
    return on_device(node) ? Side::kDevice : Side::kHost;
  });
}

SplitPlan SplitGraph(const Graph& graph, FunctionRef<Side(const Node&)> side) {
  SplitPlan plan;
  // The segment each node falls in, and the segment producing each value
  // (-1: a parameter or a constant).
  std::vector<int64_t> producer(graph.values.size(), -1);
  std::vector<size_t> segment_of(graph.nodes.size(), 0);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Side place = side(graph.nodes[n]);
    const bool device = place != Side::kHost;
    const bool collective = place == Side::kDeviceCollective;
    if (plan.segments.empty() || plan.segments.back().on_device != device || collective ||
        plan.segments.back().collective) {
      Segment segment;
      segment.on_device = device;
      segment.collective = collective;
      segment.graph = std::make_shared<Graph>();
      plan.segments.push_back(std::move(segment));
    }
    segment_of[n] = plan.segments.size() - 1;
    for (ValueId out : graph.nodes[n].outputs) {
      producer[static_cast<size_t>(out)] = static_cast<int64_t>(segment_of[n]);
    }
  }
  // The last segment reading each value (results count as read after all).
  std::vector<int64_t> last_read(graph.values.size(), -1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId in : graph.nodes[n].inputs) {
      last_read[static_cast<size_t>(in)] = static_cast<int64_t>(segment_of[n]);
    }
  }
  for (ValueId result : graph.results) {
    last_read[static_cast<size_t>(result)] = static_cast<int64_t>(plan.segments.size());
  }

  std::vector<std::unordered_map<ValueId, ValueId>> inner(plan.segments.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const size_t s = segment_of[n];
    Segment& segment = plan.segments[s];
    Node node = graph.nodes[n];
    for (ValueId& in : node.inputs) {
      const ValueId outer = in;
      const bool imported = !inner[s].contains(outer);
      in = Import(graph, outer, *segment.graph, inner[s]);
      if (imported && !graph.values[static_cast<size_t>(outer)].constant) {
        segment.inputs.push_back(outer);
      }
    }
    for (ValueId& out : node.outputs) {
      const ValueId outer = out;
      out = segment.graph->AddValue(graph.shape(outer));
      inner[s].emplace(outer, out);
      if (last_read[static_cast<size_t>(outer)] > static_cast<int64_t>(s)) {
        segment.outputs.push_back(outer);
        segment.graph->results.push_back(out);
      }
    }
    segment.graph->nodes.push_back(std::move(node));
  }

  // Where each value has a copy as the segments run: parameters arrive on
  // the device; a segment's outputs are on its side.
  std::vector<bool> on_host(graph.values.size(), false), on_dev(graph.values.size(), false);
  for (ValueId parameter : graph.parameters) on_dev[static_cast<size_t>(parameter)] = true;
  auto need = [&](ValueId value, bool device, size_t before) {
    const auto v = static_cast<size_t>(value);
    if (graph.values[v].constant && before < plan.segments.size()) return;
    std::vector<bool>& here = device ? on_dev : on_host;
    if (here[v]) return;
    here[v] = true;
    plan.crossings.push_back({value, before, device, graph.values[v].bytes});
  };
  for (size_t s = 0; s < plan.segments.size(); ++s) {
    const Segment& segment = plan.segments[s];
    for (ValueId in : segment.inputs) need(in, segment.on_device, s);
    for (ValueId out : segment.outputs) {
      (segment.on_device ? on_dev : on_host)[static_cast<size_t>(out)] = true;
    }
  }
  for (ValueId result : graph.results) need(result, true, plan.segments.size());
  return plan;
}

std::string ListSplit(const Graph& graph, const SplitPlan& plan) {
  std::string text;
  auto crossings_before = [&](size_t s) {
    for (const Crossing& crossing : plan.crossings) {
      if (crossing.before != s) continue;
      text += StrCat("  copy to ", crossing.to_device ? "device" : "host", ": %", crossing.value,
                     " ", graph.shape(crossing.value).ToString(), " (", crossing.bytes,
                     " bytes)\n");
    }
  };
  for (size_t s = 0; s < plan.segments.size(); ++s) {
    crossings_before(s);
    const Segment& segment = plan.segments[s];
    text += StrCat("segment ", s, " on ", segment.on_device ? "device" : "host",
                   segment.collective ? " (a collective between devices)" : "", ": ",
                   segment.graph->nodes.size(), " nodes\n");
    for (const Node& node : segment.graph->nodes) text += StrCat("    ", node.op, "\n");
  }
  crossings_before(plan.segments.size());
  text += StrCat("bytes crossing per run: ", plan.CrossingBytes(), "\n");
  return text;
}

}  // namespace kiln::compiler
