// Row groups: consecutive nodes that each compute rows [r0, r1) of their
// outputs from rows [r0, r1) of what the group computes before them (fused
// loops, single maps, row reductions) run together, block of rows by block
// of rows.
// A layer norm is a reduction for the mean, a loop folding the variance and
// a loop computing the output, each reading the same input: run one after
// the other, each streams it from memory; in a group a block of rows is
// read from memory once and twice more from the L2 cache. Values the group
// computes and only its members read (the per-row mean, softmax's
// exponentials) never reach memory: each thread keeps the current block's
// rows of them in scratch.
#include <algorithm>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "compiler/fused_loop.h"
#include "kernels/parallel.h"
#include "kernels/scratch.h"

namespace kiln::compiler::fusion_internal {
namespace {

// Fewer rows than this leave too little to split between blocks and threads.
constexpr int64_t kMinRows = 16;
// Bytes of the widest array's rows per block: with the block's other
// arrays this stays within a core's L2 cache (512 KiB here).
constexpr int64_t kBlockBytes = 96 << 10;
// A group pays when an array at least this large is read by two members or
// need not be written out; below it, every pass is in cache anyway.
constexpr int64_t kWorthBytes = 256 << 10;

struct RowMember {
  Node node;  // its inputs and outputs are the graph's values
  // Null: a row reduction (node.row_reduction) or a map (node.pointwise).
  std::shared_ptr<const FusedLoop> loop;
  int64_t per_row = 0;  // the member's elements per group row
  // Per loop member: writes its output straight to memory.
  std::unique_ptr<bool[]> direct;
};

// A value only the group's members read: the current block's rows of it
// live at `offset` in each thread's block scratch.
struct Local {
  ValueId value;
  int64_t row_bytes;
  size_t offset;
};

struct RowGroup {
  std::vector<RowMember> members;
  std::vector<Local> locals;
  int64_t rows = 0, block_rows = 0;
  size_t block_bytes = 0;    // all locals' rows of one block
  size_t scratch_bytes = 0;  // the largest loop's tile buffers
  int64_t cost_per_row = 0;
};

// Whether the strided read `read`, over an output of `rows` rows, reads for
// each row r only elements [r * width, (r + 1) * width) of its source: its
// leading dimensions (the rows) step through the source's rows and the rest
// stays within one. A broadcast of a per-row mean over the row does.
bool ReadsOwnRow(const Pointwise& read, int64_t rows, int64_t width) {
  const size_t rank = read.dims.size();
  size_t split = 0;
  int64_t leading = 1;
  while (split < rank && leading < rows) leading *= read.dims[split++];
  if (leading != rows) return false;
  int64_t step = width;
  for (size_t j = split; j-- > 0;) {
    if (read.dims[j] != 1 && read.strides[j] != step) return false;
    step *= read.dims[j];
  }
  int64_t low = read.base, high = read.base;
  for (size_t j = split; j < rank; ++j) {
    const int64_t extent = (read.dims[j] - 1) * read.strides[j];
    (extent < 0 ? low : high) += extent;
  }
  return low >= 0 && high < width;
}

// Whether `node` (with `loop`, null unless a fused loop) computes its rows
// of a group of `rows` rows from the same rows of the values the group
// produced before it (`produced`); sets its elements per row.
bool JoinsRows(const Graph& graph, const Node& node, const FusedLoop* loop, int64_t rows,
               const std::unordered_set<ValueId>& produced, int64_t& per_row) {
  if (node.has_side_effects || !node.regions.empty()) return false;
  if (loop == nullptr && node.pointwise != nullptr) {
    // A map alone (a run of one): its operands have its element count.
    if (node.pointwise->kind != Pointwise::Kind::kMap || node.outputs.size() != 1 ||
        node.output_aliases_input || Elements(graph, node.outputs[0]) % rows != 0) {
      return false;
    }
    per_row = Elements(graph, node.outputs[0]) / rows;
    return true;
  }
  if (loop == nullptr) {
    const RowReduction* row = node.row_reduction.get();
    // A reduction over empty rows (cols 0) has rows 0 for its nonempty
    // result: its kernel fills the result with init, no fold does.
    if (row == nullptr || node.inputs.size() != 2 || node.outputs.size() != 1 || row->rows <= 0 ||
        row->cols <= 0 || row->rows % rows != 0 || produced.contains(node.inputs[1])) {
      return false;
    }
    per_row = row->rows / rows * row->cols;
    return true;
  }
  if (loop->count % rows != 0) return false;
  per_row = loop->count / rows;
  if (!loop->reducers.empty() && (loop->cols <= 0 || per_row % loop->cols != 0)) return false;
  for (const Reducer& reducer : loop->reducers) {
    if (produced.contains(node.inputs[reducer.init])) return false;
  }
  // A map's operands from outside the loop have its element count, so they
  // line up row for row; a strided read must stay within its row.
  for (const Member& member : loop->members) {
    if (member.pointwise == nullptr || member.pointwise->kind == Pointwise::Kind::kMap) continue;
    if (member.pointwise->kind == Pointwise::Kind::kGather) {
      // Its rows come from anywhere in the source: only from memory.
      for (const Operand& operand : member.operands) {
        if (operand.from == Operand::From::kInput &&
            produced.contains(node.inputs[operand.index])) {
          return false;
        }
      }
      continue;
    }
    const ValueId source = node.inputs[member.operands[0].index];
    if (!produced.contains(source)) continue;
    const int64_t elements = Elements(graph, source);
    if (elements % rows != 0 || !ReadsOwnRow(*member.pointwise, rows, elements / rows)) {
      return false;
    }
  }
  return true;
}

// The rows a group starting at `node` has: a row reduction's, or those of
// the reduction a fused loop folds into; 0 when it starts none.
int64_t GroupRowsAt(const Node& node, const FusedLoop* loop) {
  if (loop != nullptr) {
    return loop->reducers.empty() || loop->cols <= 0 ? 0 : loop->count / loop->cols;
  }
  if (node.row_reduction == nullptr || node.has_side_effects) return 0;
  return node.row_reduction->rows;
}

// Rows [r0, r1) of a group through a row reduction: each group row holds
// per_row / cols of its rows.
Status FoldRows(const RowReduction& row, RunContext& ctx, int64_t per_row, int64_t r0, int64_t r1) {
  const int64_t factor = per_row / row.cols;
  const auto bytes = static_cast<int64_t>(GetElementTypeInfo(row.type).storage_bytes);
  const int64_t first = r0 * factor, count = (r1 - r0) * factor;
  auto* out = static_cast<uint8_t*>(ctx.out(0)) + first * bytes;
  for (int64_t r = 0; r < count; ++r) {
    std::memcpy(out + r * bytes, ctx.in(1), static_cast<size_t>(bytes));
  }
  return kernels::FoldRowsInto(row.op, row.type,
                               static_cast<const uint8_t*>(ctx.in(0)) + first * row.cols * bytes,
                               count, row.cols, out);
}

// Rows [r0, r1) of a group through a map alone.
Status MapRows(const Pointwise& map, RunContext& ctx, int64_t per_row, int64_t r0, int64_t r1) {
  const int64_t first = r0 * per_row;
  SmallVector<const void*, 4> in;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const auto bytes = static_cast<int64_t>(
        GetElementTypeInfo(ctx.in_shape(i).element_type).storage_bytes);
    in.push_back(static_cast<const uint8_t*>(ctx.in(i)) + first * bytes);
  }
  const auto bytes = static_cast<int64_t>(
      GetElementTypeInfo(ctx.out_shape(0).element_type).storage_bytes);
  return map.map(std::span<const void* const>(in.data(), in.size()),
                 static_cast<uint8_t*>(ctx.out(0)) + first * bytes, (r1 - r0) * per_row);
}

// Blocks [begin, end) of `group` on this thread, with `table` the run's
// value memory (this thread's copy: the locals point into `slots`).
Status RunBlocks(const RowGroup& group, const Graph& graph, std::span<uint8_t*> table,
                 ExecutionEnv& env, int64_t begin, int64_t end, uint8_t* slots, uint8_t* scratch) {
  for (int64_t block = begin; block < end; ++block) {
    const int64_t r0 = block * group.block_rows;
    const int64_t r1 = std::min(group.rows, r0 + group.block_rows);
    // A local's row r0 is the start of its slot: members index it by row
    // as they index any other value, and touch rows [r0, r1) only.
    for (const Local& local : group.locals) {
      table[static_cast<size_t>(local.value)] = reinterpret_cast<uint8_t*>(
          reinterpret_cast<uintptr_t>(slots + local.offset) -
          static_cast<uintptr_t>(r0 * local.row_bytes));
    }
    for (const RowMember& member : group.members) {
      RunContext context(graph, member.node, table, env);
      if (member.loop == nullptr) {
        Status status = member.node.pointwise != nullptr
                            ? MapRows(*member.node.pointwise, context, member.per_row, r0, r1)
                            : FoldRows(*member.node.row_reduction, context, member.per_row, r0, r1);
        if (!status.ok()) {
          return Status(status.code(),
                        StrCat(member.node.location, ": ", member.node.op, ": ", status.message()));
        }
        continue;
      }
      const std::span<const bool> direct(member.direct.get(), member.loop->members.size());
      KILN_RETURN_IF_ERROR(RunTiles(*member.loop, context, direct, r0 * member.per_row,
                                    r1 * member.per_row, scratch));
    }
  }
  return Status::Ok();
}

Status RunGroup(const RowGroup& group, RunContext& ctx) {
  const std::span<uint8_t* const> memory = ctx.memory();
  const int64_t blocks = (group.rows + group.block_rows - 1) / group.block_rows;
  const int64_t cost = group.cost_per_row * group.block_rows;
  return kernels::ParallelForStatus(blocks, cost, [&](int64_t begin, int64_t end) {
    kernels::ScratchArray<uint8_t*> table(memory.size());
    std::copy(memory.begin(), memory.end(), table.data());
    kernels::ScratchArray<uint8_t> slots(group.block_bytes);
    kernels::ScratchArray<uint8_t> scratch(group.scratch_bytes);
    return RunBlocks(group, ctx.graph(), table, ctx.env(), begin, end, slots.data(),
                     scratch.data());
  });
}

// Builds the group of graph.nodes[first, last) (rows `rows`, elements per
// row of each in `per_row`), or returns false when it would not pay.
bool BuildGroup(const Graph& graph, size_t first, size_t last, int64_t rows,
                const std::vector<int64_t>& per_row,
                const std::vector<std::shared_ptr<const FusedLoop>>& loops,
                const std::vector<std::vector<size_t>>& users, const std::vector<bool>& is_result,
                Node& grouped) {
  auto group = std::make_shared<RowGroup>();
  group->rows = rows;
  std::unordered_map<ValueId, int> readers;  // by how many members
  std::unordered_set<ValueId> produced;
  std::vector<ValueId> inputs, outputs;
  std::unordered_set<ValueId> seen_inputs;
  bool worth = false;
  int64_t widest = 1;
  for (size_t n = first; n < last; ++n) {
    const Node& node = graph.nodes[n];
    std::unordered_set<ValueId> read;
    for (ValueId in : node.inputs) {
      if (!read.insert(in).second) continue;
      if (++readers[in] == 2 && graph.values[static_cast<size_t>(in)].bytes >= kWorthBytes) {
        worth = true;
      }
      if (!produced.contains(in) && seen_inputs.insert(in).second) inputs.push_back(in);
      if (Elements(graph, in) % rows == 0) {
        const auto bytes = static_cast<int64_t>(graph.values[static_cast<size_t>(in)].bytes);
        widest = std::max(widest, bytes / rows);
      }
    }
    for (ValueId out : node.outputs) {
      produced.insert(out);
      const auto bytes = static_cast<int64_t>(graph.values[static_cast<size_t>(out)].bytes);
      widest = std::max(widest, bytes / rows);
      bool local = !is_result[static_cast<size_t>(out)];
      for (size_t user : users[static_cast<size_t>(out)]) local = local && user > n && user < last;
      if (!local) {
        outputs.push_back(out);
        continue;
      }
      worth = worth || bytes >= kWorthBytes;
      const auto element_bytes = static_cast<int64_t>(
          GetElementTypeInfo(graph.shape(out).element_type).storage_bytes);
      group->locals.push_back({out, Elements(graph, out) / rows * element_bytes, 0});
    }
  }
  if (!worth) return false;
  group->block_rows = std::clamp<int64_t>(kBlockBytes / widest, 1, std::max<int64_t>(1, rows / 8));
  for (Local& local : group->locals) {
    local.offset = group->block_bytes;
    group->block_bytes += static_cast<size_t>(local.row_bytes * group->block_rows + 63) / 64 * 64;
  }
  std::string detail;
  for (size_t n = first; n < last; ++n) {
    RowMember member;
    member.node = graph.nodes[n];
    member.loop = loops[n];
    member.per_row = per_row[n - first];
    if (member.loop != nullptr) {
      // The group's outputs never share memory with its inputs (it is no
      // pointwise op to the buffer plan) and its locals are its own.
      const std::vector<Member>& loop_members = member.loop->members;
      member.direct = std::make_unique<bool[]>(loop_members.size());
      for (size_t m = 0; m < loop_members.size(); ++m) {
        member.direct[m] = loop_members[m].output >= 0 && loop_members[m].pointwise != nullptr;
      }
      group->scratch_bytes = std::max(group->scratch_bytes, member.loop->scratch_bytes);
      group->cost_per_row += member.loop->cost * member.per_row;
    } else {
      group->cost_per_row += member.per_row;
    }
    if (!detail.empty()) detail += "; ";
    const std::string& op = member.node.op;
    detail += op.starts_with("stablehlo.") ? op.substr(10) : op;
    if (!member.node.detail.empty()) detail += " [" + member.node.detail + "]";
    group->members.push_back(std::move(member));
  }
  grouped = Node();
  grouped.op = std::string(kRowGroupOp);
  grouped.location = graph.nodes[first].location;
  grouped.inputs = std::move(inputs);
  grouped.outputs = std::move(outputs);
  grouped.detail = detail + " (blocks of " + std::to_string(group->block_rows) + " rows)";
  grouped.run = [group](RunContext& ctx) { return RunGroup(*group, ctx); };
  return true;
}

}  // namespace

void GroupRows(Graph& graph, std::vector<std::shared_ptr<const FusedLoop>>& loops) {
  const size_t count = graph.nodes.size();
  std::vector<std::vector<size_t>> users(graph.values.size());
  for (size_t n = 0; n < count; ++n) {
    for (ValueId in : graph.nodes[n].inputs) users[static_cast<size_t>(in)].push_back(n);
  }
  std::vector<bool> is_result(graph.values.size(), false);
  for (ValueId result : graph.results) is_result[static_cast<size_t>(result)] = true;
  std::vector<Node> nodes;
  std::vector<std::shared_ptr<const FusedLoop>> kept_loops;
  for (size_t n = 0; n < count;) {
    const int64_t rows = GroupRowsAt(graph.nodes[n], loops[n].get());
    size_t end = n;
    std::vector<int64_t> per_row;
    if (rows >= kMinRows) {
      std::unordered_set<ValueId> produced;
      int64_t elements = 0;
      while (end < count &&
             JoinsRows(graph, graph.nodes[end], loops[end].get(), rows, produced, elements)) {
        per_row.push_back(elements);
        for (ValueId out : graph.nodes[end].outputs) produced.insert(out);
        ++end;
      }
    }
    Node grouped;
    if (end - n >= 2 &&
        BuildGroup(graph, n, end, rows, per_row, loops, users, is_result, grouped)) {
      nodes.push_back(std::move(grouped));
      kept_loops.emplace_back();
      n = end;
      continue;
    }
    nodes.push_back(std::move(graph.nodes[n]));
    kept_loops.push_back(std::move(loops[n]));
    ++n;
  }
  graph.nodes = std::move(nodes);
  loops = std::move(kept_loops);
}

}  // namespace kiln::compiler::fusion_internal
