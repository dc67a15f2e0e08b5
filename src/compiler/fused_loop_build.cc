// Building the fused loop of a run of nodes (fused_loop.h): its members,
// inputs, splat tiles, folded reductions and outputs, its tile size, and
// the generated code of its f32 maps (kernels/loop_jit.h). Choosing the
// runs is fusion.cc; running the loop is fused_loop_run.cc.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/fused_loop.h"
#include "compiler/graph.h"
#include "kernels/loop_jit.h"

namespace kiln::compiler {
namespace fusion_internal {
namespace {

// A tile of kTile copies of the element at `element`.
std::vector<uint8_t> Splat(const uint8_t* element, size_t bytes) {
  std::vector<uint8_t> tile(static_cast<size_t>(kTile) * bytes);
  for (size_t offset = 0; offset < tile.size(); offset += bytes) {
    std::memcpy(tile.data() + offset, element, bytes);
  }
  return tile;
}

// Whether every element of `data` has the same bytes.
bool Uniform(const std::vector<uint8_t>& data, size_t bytes) {
  if (data.size() < bytes || bytes == 0) return false;
  for (size_t offset = bytes; offset < data.size(); offset += bytes) {
    if (std::memcmp(data.data() + offset, data.data(), bytes) != 0) return false;
  }
  return true;
}

// Whether a map member runs as a stage of its own (a transcendental op).
bool RunsAlone(const Member& member) {
  const Pointwise::F32& f32 = member.pointwise->f32;
  if (f32.kind != Pointwise::F32::Kind::kUnary ||
      kernels::LoopJitInlines(static_cast<kernels::UnaryOp>(f32.op))) {
    return false;
  }
  switch (static_cast<kernels::UnaryOp>(f32.op)) {
    case kernels::UnaryOp::kExponential:
    case kernels::UnaryOp::kLog:
    case kernels::UnaryOp::kTanh:
    case kernels::UnaryOp::kLogistic:
    case kernels::UnaryOp::kLogPlusOne:
    case kernels::UnaryOp::kExponentialMinusOne:
    case kernels::UnaryOp::kSine:
    case kernels::UnaryOp::kCosine: return true;
    default: return false;
  }
}

// The code of one stage for the map members [first, last) (none runs
// alone), reading the reads marked in `scalar` one element per tile, into
// `stage` (its inputs and outputs too); false when it cannot be generated.
bool BuildStage(const FusedLoop& loop, size_t first, size_t last,
                const std::vector<size_t>& last_user, const std::vector<bool>& kept,
                const std::vector<bool>& scalar, FusedLoop::Stage& stage) {
  stage.inputs.clear();
  stage.outputs.clear();
  std::vector<kernels::LoopStep> steps;
  std::unordered_map<size_t, int> value_of, load_of_input, load_of_member, splat_of;
  const auto add = [&](kernels::LoopStep step) {
    steps.push_back(step);
    return static_cast<int>(steps.size()) - 1;
  };
  const auto load = [&](std::unordered_map<size_t, int>& loads, bool member, size_t index) {
    if (auto it = loads.find(index); it != loads.end()) return it->second;
    kernels::LoopStep step;
    step.kind = member && scalar[index] ? kernels::LoopStep::Kind::kLoadScalar
                                        : kernels::LoopStep::Kind::kLoad;
    step.slot = static_cast<int32_t>(stage.inputs.size());
    stage.inputs.push_back({member, index});
    return loads[index] = add(step);
  };
  const auto value = [&](const Operand& operand) -> int {
    switch (operand.from) {
      case Operand::From::kInput:
        if (loop.input_bytes[operand.index] != sizeof(float)) return -1;
        return load(load_of_input, false, operand.index);
      case Operand::From::kMember:
        if (auto it = value_of.find(operand.index); it != value_of.end()) return it->second;
        // A read, or a map of an earlier stage: its tile.
        return load(load_of_member, true, operand.index);
      case Operand::From::kSplat: {
        if (auto it = splat_of.find(operand.index); it != splat_of.end()) return it->second;
        kernels::LoopStep step;
        step.kind = kernels::LoopStep::Kind::kSplat;
        std::memcpy(&step.constant, loop.splats[operand.index].data(), sizeof(float));
        return splat_of[operand.index] = add(step);
      }
    }
    return -1;
  };
  for (size_t m = first; m < last; ++m) {
    const Member& member = loop.members[m];
    if (member.pointwise == nullptr || member.pointwise->kind != Pointwise::Kind::kMap) continue;
    const Pointwise::F32& f32 = member.pointwise->f32;
    const bool unary = f32.kind == Pointwise::F32::Kind::kUnary;
    if (unary ? !kernels::LoopJitSupports(static_cast<kernels::UnaryOp>(f32.op))
              : !kernels::LoopJitSupports(static_cast<kernels::BinaryOp>(f32.op))) {
      return false;
    }
    kernels::LoopStep step;
    step.kind = unary ? kernels::LoopStep::Kind::kUnary : kernels::LoopStep::Kind::kBinary;
    step.op = f32.op;
    step.a = value(member.operands[0]);
    step.b = unary ? -1 : value(member.operands[1]);
    if (step.a < 0 || (!unary && step.b < 0)) return false;
    value_of[m] = add(step);
    if (kept[m] || last_user[m] >= last) {  // needed outside this stage
      kernels::LoopStep store;
      store.kind = kernels::LoopStep::Kind::kStore;
      store.a = value_of[m];
      store.slot = static_cast<int32_t>(stage.outputs.size());
      stage.outputs.push_back(m);
      add(store);
    }
  }
  if (value_of.empty()) return true;  // only reads: nothing to compute
  stage.code = kernels::CompileLoop(steps, static_cast<int>(stage.inputs.size()),
                                    static_cast<int>(stage.outputs.size()));
  return stage.code != nullptr;
}

// Adds the stage of generated code for the map members [first, last): code
// reading every read as a tile, and when the stage reads one that can be
// uniform over a tile (`uniform`), a second code for the tiles where they
// all are, reading one element of each.
bool AddCodeStage(FusedLoop& loop, size_t first, size_t last, const std::vector<size_t>& last_user,
                  const std::vector<bool>& kept, const std::vector<bool>& uniform) {
  FusedLoop::Stage stage;
  if (!BuildStage(loop, first, last, last_user, kept, std::vector<bool>(loop.members.size(), false),
                  stage)) {
    return false;
  }
  if (stage.code == nullptr) return true;  // only reads
  const bool reads_uniform = std::any_of(stage.inputs.begin(), stage.inputs.end(),
                                         [&](const FusedLoop::CodeArray& array) {
                                           return array.member && uniform[array.index];
                                         });
  if (reads_uniform) {
    FusedLoop::Stage scalar;
    if (BuildStage(loop, first, last, last_user, kept, uniform, scalar)) {
      stage.uniform_code = std::move(scalar.code);
      stage.uniform_inputs = std::move(scalar.inputs);
    }
  }
  loop.stages.push_back(std::move(stage));
  return true;
}

// Gives `loop` stages of generated code when every map is an f32 op with a
// tile kernel and the generator has the ones not run alone
// (kernels/loop_jit.h); else the loop keeps its tile kernels throughout.
void GenerateCode(FusedLoop& loop) {
  const size_t count = loop.members.size();
  std::vector<bool> kept(count, false);  // an output or reduced
  for (const Reducer& reducer : loop.reducers) kept[reducer.member] = true;
  std::vector<size_t> last_user(count, 0);
  for (size_t m = 0; m < count; ++m) {
    const Member& member = loop.members[m];
    kept[m] = kept[m] || member.output >= 0;
    if (member.pointwise == nullptr) continue;
    for (const Operand& operand : member.operands) {
      if (operand.from == Operand::From::kMember) last_user[operand.index] = m;
    }
    if (member.pointwise->kind == Pointwise::Kind::kMap &&
        (member.pointwise->f32.kind == Pointwise::F32::Kind::kNone ||
         member.output_bytes != sizeof(float))) {
      return;
    }
    // Stages fill every read's tile before the maps run: a gather reading
    // a member's tile runs in member order, with the tile kernels.
    if (member.pointwise->kind == Pointwise::Kind::kGather &&
        std::any_of(member.operands.begin(), member.operands.end(), [](const Operand& operand) {
          return operand.from == Operand::From::kMember;
        })) {
      return;
    }
  }
  loop.read_in_place.assign(count, false);
  loop.uniform.assign(count, false);
  std::vector<bool> used_alone(count, false);
  for (size_t m = 0; m < count; ++m) {
    const Member& member = loop.members[m];
    if (member.pointwise == nullptr || member.pointwise->kind != Pointwise::Kind::kMap ||
        !RunsAlone(member)) {
      continue;
    }
    for (const Operand& operand : member.operands) {
      if (operand.from == Operand::From::kMember) used_alone[operand.index] = true;
    }
  }
  for (size_t m = 0; m < count; ++m) {
    const Member& member = loop.members[m];
    if (member.pointwise == nullptr || member.pointwise->kind != Pointwise::Kind::kRead) continue;
    const Pointwise& read = *member.pointwise;
    loop.read_in_place[m] = !kept[m];
    loop.uniform[m] = !kept[m] && !used_alone[m] && !read.dims.empty() &&
                      read.strides.back() == 0 && read.element_bytes == sizeof(float);
  }
  size_t first = 0;
  for (size_t m = 0; m <= count; ++m) {
    const bool alone = m < count && loop.members[m].pointwise != nullptr &&
                       loop.members[m].pointwise->kind == Pointwise::Kind::kMap &&
                       RunsAlone(loop.members[m]);
    if (m < count && !alone) continue;
    if (!AddCodeStage(loop, first, m, last_user, kept, loop.uniform)) {
      loop.stages.clear();
      return;
    }
    if (alone) {
      FusedLoop::Stage stage;
      stage.tile_member = m;
      loop.stages.push_back(std::move(stage));
    }
    first = m + 1;
  }
  // Only transcendental maps: the tile kernels alone do the same.
  if (std::none_of(loop.stages.begin(), loop.stages.end(),
                   [](const FusedLoop::Stage& stage) { return stage.code != nullptr; })) {
    loop.stages.clear();
    return;
  }
  // Tiles skip filling the uniform reads only if every stage reading one
  // has code that reads them so (a stage whose second code could not be
  // generated reads their tiles).
  const bool all_have_uniform_code = std::all_of(
      loop.stages.begin(), loop.stages.end(), [&](const FusedLoop::Stage& stage) {
        return stage.code == nullptr || stage.uniform_code != nullptr ||
               std::none_of(stage.inputs.begin(), stage.inputs.end(),
                            [&](const FusedLoop::CodeArray& array) {
                              return array.member && loop.uniform[array.index];
                            });
      });
  if (!all_have_uniform_code) {
    loop.uniform.assign(count, false);
    for (FusedLoop::Stage& stage : loop.stages) {
      stage.uniform_code.reset();
      stage.uniform_inputs.clear();
    }
  }
  for (size_t m = 0; m < count; ++m) {
    if (loop.uniform[m]) loop.uniform_reads.push_back(static_cast<uint32_t>(m));
  }
}

// A fused node and its loop while Fuse adds a run's nodes to them.
struct LoopBuilder {
  const Graph& graph;
  Node fused;
  std::shared_ptr<FusedLoop> loop = std::make_shared<FusedLoop>();
  std::unordered_map<ValueId, size_t> member_of;  // value -> member producing it
  std::unordered_map<ValueId, size_t> input_of;   // value -> fused input index
};

// The fused input index of `value` (of `bytes` per element), added read
// element for element when it is new.
size_t AddInput(LoopBuilder& builder, ValueId value, size_t bytes) {
  auto [it, added] = builder.input_of.emplace(value, builder.fused.inputs.size());
  if (added) {
    builder.fused.inputs.push_back(value);
    builder.loop->input_bytes.push_back(bytes);
    builder.fused.inputs_read_pointwise.push_back(true);
  }
  return it->second;
}

// The run's last node, a row reduction: folds a member's values into the
// fused node's next output, from its init input.
void AddReduction(LoopBuilder& builder, const Node& node) {
  const RowReduction& row = *node.row_reduction;
  const size_t bytes = GetElementTypeInfo(row.type).storage_bytes;
  const size_t init = AddInput(builder, node.inputs[1], bytes);
  builder.fused.inputs_read_pointwise[init] = false;
  builder.loop->reducers.push_back({builder.member_of.at(node.inputs[0]), row.op, row.type, bytes,
                                    builder.fused.outputs.size(), init});
  builder.fused.outputs.push_back(node.outputs[0]);
  builder.loop->cols = row.cols;
  builder.loop->cost += 1;
}

// Where `member` (a read when `read`) finds `value`: an earlier member (or
// its splat), a splat of a uniform constant, or a fused input.
void AddOperand(LoopBuilder& builder, Member& member, ValueId value, bool read) {
  const Graph& graph = builder.graph;
  FusedLoop& loop = *builder.loop;
  if (auto it = builder.member_of.find(value); it != builder.member_of.end()) {
    const Member& producer = loop.members[it->second];
    if (producer.pointwise == nullptr) {
      member.operands.push_back({Operand::From::kSplat, producer.slot_offset});
    } else {
      member.operands.push_back({Operand::From::kMember, it->second});
    }
    return;
  }
  // A constant of one repeated element: a splat tile too.
  if (const auto& data = graph.values[static_cast<size_t>(value)].constant;
      !read && data &&
      Uniform(*data, GetElementTypeInfo(graph.shape(value).element_type).storage_bytes)) {
    member.operands.push_back({Operand::From::kSplat, loop.splats.size()});
    loop.splats.push_back(Splat(data->data(),
                                GetElementTypeInfo(graph.shape(value).element_type).storage_bytes));
    return;
  }
  const size_t input = AddInput(builder, value,
                                GetElementTypeInfo(graph.shape(value).element_type).storage_bytes);
  if (read) builder.fused.inputs_read_pointwise[input] = false;
  member.operands.push_back({Operand::From::kInput, input});
}

}  // namespace

// Such a gather's output may be written over its indices like any input
// read element for element (buffer_plan.cc), and a run may compute them
// (fusion.cc).
bool GatherIndicesInOrder(const Pointwise& gather, int64_t index_elements) {
  int64_t stride = 1;
  for (size_t d = gather.dims.size(); d-- > 0;) {
    if (gather.dims[d] != 1 && gather.index_strides[d] != stride) return false;
    stride *= gather.dims[d];
  }
  return index_elements == stride;
}

namespace {

// The map of a view joined to a run (FormRuns: a reshape of a member's
// value): a copy of its input's tile, elements of `bytes`.
std::shared_ptr<const Pointwise> ViewMap(size_t bytes) {
  auto view = std::make_shared<Pointwise>();
  view->map = [bytes](std::span<const void* const> in, void* out, int64_t count) {
    std::memcpy(out, in[0], static_cast<size_t>(count) * bytes);
    return Status::Ok();
  };
  return view;
}

// The member computing pointwise `node`'s output; a broadcast of a constant
// element becomes a splat.
Member MakeMember(LoopBuilder& builder, const Node& node) {
  const Graph& graph = builder.graph;
  Member member;
  // A view (FormRuns joins those of the run's values) is a copy of its
  // input's elements in order, whatever read a dense view also describes.
  member.pointwise =
      node.output_aliases_input
          ? ViewMap(GetElementTypeInfo(graph.shape(node.outputs[0]).element_type).storage_bytes)
          : node.pointwise;
  member.location = node.location;
  member.op = node.op;
  member.output_bytes = GetElementTypeInfo(graph.shape(node.outputs[0]).element_type).storage_bytes;
  const bool read = member.pointwise->kind != Pointwise::Kind::kMap;
  // A constant element broadcast: a splat tile made now.
  if (member.pointwise->kind == Pointwise::Kind::kRead &&
      graph.values[static_cast<size_t>(node.inputs[0])].constant &&
      std::all_of(node.pointwise->strides.begin(), node.pointwise->strides.end(),
                  [](int64_t stride) { return stride == 0; })) {
    const auto& data = *graph.values[static_cast<size_t>(node.inputs[0])].constant;
    member.pointwise = nullptr;
    member.slot_offset = builder.loop->splats.size();
    builder.loop->splats.push_back(
        Splat(data.data() + node.pointwise->base * static_cast<int64_t>(member.output_bytes),
              member.output_bytes));
  }
  member.indices_in_order = member.pointwise != nullptr &&
                            member.pointwise->kind == Pointwise::Kind::kGather &&
                            GatherIndicesInOrder(*node.pointwise,
                                                 graph.shape(node.inputs[1]).NumElements());
  for (size_t i = 0; member.pointwise != nullptr && i < node.inputs.size(); ++i) {
    AddOperand(builder, member, node.inputs[i], read && !(i == 1 && member.indices_in_order));
  }
  return member;
}

// Folds `select(p, g, fill)` (or `select(p, fill, g)`) into gather member
// g when p holds one predicate per index of g and fill is a splat: jnp.take
// and take_along_axis mask their out-of-bounds indices so. p is either a
// broadcast of an array shaped like the indices (jnp.take: one predicate
// per row) or, when g reads its indices in order, any predicate of the
// output's shape. The gather then writes the fill where the predicate
// says so, straight into the output, and neither the select's tile nor
// the broadcast predicate's is written. Members left unused are dropped.
void FoldMaskedGathers(FusedLoop& loop) {
  const size_t count = loop.members.size();
  std::vector<int> uses(count, 0);
  for (const Member& member : loop.members) {
    for (const Operand& operand : member.operands) {
      if (operand.from == Operand::From::kMember) ++uses[operand.index];
    }
  }
  for (const Reducer& reducer : loop.reducers) ++uses[reducer.member];
  bool folded_any = false;
  for (Member& select : loop.members) {
    if (select.pointwise == nullptr || select.pointwise->kind != Pointwise::Kind::kMap ||
        select.op != "stablehlo.select" || select.operands.size() != 3) {
      continue;
    }
    for (size_t side = 1; side <= 2; ++side) {
      const Operand gathered = select.operands[side], fill = select.operands[3 - side];
      if (gathered.from != Operand::From::kMember || fill.from != Operand::From::kSplat) continue;
      const Member& g = loop.members[gathered.index];
      if (g.pointwise == nullptr || g.pointwise->kind != Pointwise::Kind::kGather || g.masked ||
          g.output >= 0 || uses[gathered.index] != 1 || g.output_bytes != select.output_bytes) {
        continue;
      }
      const Operand predicate = select.operands[0];
      std::optional<Operand> mask;
      if (predicate.from == Operand::From::kMember) {
        const Member& p = loop.members[predicate.index];
        if (p.pointwise != nullptr && p.pointwise->kind == Pointwise::Kind::kRead &&
            p.pointwise->element_bytes == 1 && p.pointwise->base == 0 &&
            p.pointwise->dims == g.pointwise->dims &&
            p.pointwise->strides == g.pointwise->index_strides) {
          mask = p.operands[0];  // the array it broadcasts, indexed as the indices are
        }
      }
      if (!mask && g.indices_in_order && predicate.from != Operand::From::kSplat) mask = predicate;
      if (!mask) continue;
      Member masked = g;
      masked.operands.resize(2);
      masked.operands.push_back(*mask);
      masked.operands.push_back(fill);
      masked.masked = true;
      masked.fill_if = side == 2;
      masked.output = select.output;
      if (predicate.from == Operand::From::kMember) --uses[predicate.index];
      if (mask->from == Operand::From::kMember) ++uses[mask->index];
      --uses[gathered.index];
      select = std::move(masked);
      folded_any = true;
      break;
    }
  }
  if (!folded_any) return;
  // Drop the members nothing reads any more (a splat's member stays: its
  // index names its tile).
  std::vector<size_t> renumbered(count, count);
  std::vector<Member> kept;
  for (size_t m = 0; m < count; ++m) {
    Member& member = loop.members[m];
    if (member.pointwise != nullptr && uses[m] == 0 && member.output < 0) continue;
    renumbered[m] = kept.size();
    kept.push_back(std::move(member));
  }
  for (Member& member : kept) {
    for (Operand& operand : member.operands) {
      if (operand.from == Operand::From::kMember) operand.index = renumbered[operand.index];
    }
  }
  for (Reducer& reducer : loop.reducers) reducer.member = renumbered[reducer.member];
  loop.members = std::move(kept);
}

// The loop's tile size and its members' tile buffers, then its generated
// code. Small tiles when every map has a tile kernel; a reducing loop's
// tiles hold whole rows when a row fits in one, and a row of up to kRowTile
// elements is one tile: each row then folds in one call, with one
// horizontal sum, rather than in pieces (softmax over rows of 1024: the
// plan's time went from 1.08 to 0.97 ms, layer norm's from 5.27 to 4.73,
// means of four alternating runs each).
void PlanTiles(FusedLoop& loop) {
  const bool small = std::all_of(loop.members.begin(), loop.members.end(), [](const Member& m) {
    return m.pointwise == nullptr || m.pointwise->kind != Pointwise::Kind::kMap ||
           m.pointwise->f32.tile != nullptr;
  });
  int64_t tile = small ? kSmallTile : kTile;
  if (small && loop.cols > tile && loop.cols <= kRowTile) tile = loop.cols;
  loop.tile = loop.cols > 0 && loop.cols <= tile ? tile / loop.cols * loop.cols : tile;
  for (Member& member : loop.members) {
    if (member.pointwise == nullptr) continue;
    if (small) member.tile_f32 = member.pointwise->f32.tile;
    member.slot_offset = loop.scratch_bytes;
    loop.scratch_bytes += (static_cast<size_t>(loop.tile) * member.output_bytes + 63) / 64 * 64;
  }
  if (small) GenerateCode(loop);
}

// What a plan listing shows for the fused node of `run`: its members' ops.
std::string Describe(const Graph& graph, const std::vector<size_t>& run, const FusedLoop& loop) {
  std::string detail;
  for (size_t n : run) {
    const std::string& op = graph.nodes[n].op;
    if (!detail.empty()) detail += graph.nodes[n].row_reduction ? " => " : ", ";
    detail += op.starts_with("stablehlo.") ? op.substr(10) : op;
  }
  if (std::any_of(loop.members.begin(), loop.members.end(),
                  [](const Member& member) { return member.masked; })) {
    detail += " (masked gather)";
  }
  if (!loop.stages.empty()) detail += " (generated code)";
  return detail;
}

// Builds the fused node of `run` (indexes of graph.nodes, in order) and
// sets `built` to its loop.
Node Fuse(const Graph& graph, const std::vector<size_t>& run,
          const std::vector<std::vector<size_t>>& users, const std::vector<bool>& is_result,
          std::shared_ptr<const FusedLoop>& built) {
  LoopBuilder builder{graph, Node{}};
  Node& fused = builder.fused;
  FusedLoop& loop = *builder.loop;
  fused.op = std::string(kFusionOp);
  fused.location = graph.nodes[run.front()].location;
  const size_t first = run.front(), last = run.back();
  for (size_t n : run) {
    const Node& node = graph.nodes[n];
    if (node.row_reduction != nullptr) {  // the run's last node: folds a member's values
      AddReduction(builder, node);
      continue;
    }
    const ValueId output = node.outputs[0];
    // Needed outside the run: by a later node, or as a result.
    bool escapes = is_result[static_cast<size_t>(output)];
    for (size_t user : users[static_cast<size_t>(output)]) {
      escapes = escapes || user < first || user > last;
    }
    // A view only the run reads is its input's member under another name.
    if (node.output_aliases_input && !escapes) {
      builder.member_of.emplace(output, builder.member_of.at(node.inputs[0]));
      continue;
    }
    Member member = MakeMember(builder, node);
    if (escapes) {
      member.output = static_cast<int64_t>(fused.outputs.size());
      fused.outputs.push_back(output);
    }
    if (member.pointwise != nullptr) {
      loop.cost += member.pointwise->kind == Pointwise::Kind::kMap ? 4 : 1;
    }
    builder.member_of.emplace(output, loop.members.size());
    loop.members.push_back(std::move(member));
  }
  loop.count = Elements(graph, graph.nodes[first].outputs[0]);
  FoldMaskedGathers(loop);
  for (size_t m = 0; m < loop.members.size(); ++m) {
    const auto& pointwise = loop.members[m].pointwise;
    if (pointwise != nullptr && pointwise->kind != Pointwise::Kind::kMap) {
      loop.reads.push_back(static_cast<uint32_t>(m));
    }
  }
  PlanTiles(loop);
  fused.detail = Describe(graph, run, loop);
  fused.run = LoopRunner(builder.loop);
  built = builder.loop;
  return std::move(fused);
}

}  // namespace

std::vector<std::shared_ptr<const FusedLoop>> FuseEachRun(
    Graph& graph, const std::vector<std::vector<size_t>>& runs) {
  const size_t values = graph.values.size();
  std::vector<std::vector<size_t>> users(values);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId in : graph.nodes[n].inputs) users[static_cast<size_t>(in)].push_back(n);
  }
  std::vector<bool> is_result(values, false);
  for (ValueId result : graph.results) is_result[static_cast<size_t>(result)] = true;

  std::vector<Node> nodes;
  std::vector<std::shared_ptr<const FusedLoop>> loops;
  nodes.reserve(graph.nodes.size());
  size_t next_run = 0;
  for (size_t n = 0; n < graph.nodes.size();) {
    if (next_run < runs.size() && runs[next_run].front() == n) {
      loops.emplace_back();
      nodes.push_back(Fuse(graph, runs[next_run], users, is_result, loops.back()));
      n = runs[next_run].back() + 1;
      ++next_run;
      continue;
    }
    nodes.push_back(std::move(graph.nodes[n]));
    loops.emplace_back();
    ++n;
  }
  graph.nodes = std::move(nodes);
  return loops;
}

}  // namespace fusion_internal
}  // namespace kiln::compiler
