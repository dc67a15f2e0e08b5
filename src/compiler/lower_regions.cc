// Lowering of control flow (while, if, case) and of the other ops whose
// regions run per element: sort (a recognized comparator runs as typed
// keys, kernels/sort.h) and map.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "base/small_vector.h"
#include "compiler/elementwise_ops.h"
#include "compiler/loop_program.h"
#include "compiler/lowering.h"
#include "compiler/region_patterns.h"
#include "compiler/scalar_program.h"
#include "kernels/copy.h"
#include "kernels/sort.h"
#include "kernels/types.h"

namespace kiln::compiler {
namespace {

constexpr int64_t kAlignment = 64;

// The node's outputs as a span for RunRegion (kept in the environment, so
// that a steady-state run allocates nothing).
std::span<void* const> Outputs(const RunContext& ctx) {
  void** outputs = ctx.env().Pointers(&ctx.node(), ctx.num_outputs());
  for (size_t i = 0; i < ctx.num_outputs(); ++i) outputs[i] = ctx.out(i);
  return {outputs, ctx.num_outputs()};
}

bool AllConstant(Lowering& lowering, const ir::Operation& op) {
  for (size_t i = 0; i < op.operands().size(); ++i) {
    StatusOr<ValueId> id = lowering.Input(op, i);
    if (!id.ok() || !lowering.graph().values[static_cast<size_t>(*id)].constant) return false;
  }
  return true;
}

// The memory value `value` of `graph` lives in: its view root, or itself.
ValueId MemoryRootOf(const Graph& graph, ValueId value) {
  const Placement& place = graph.placements[static_cast<size_t>(value)];
  return place.storage == Storage::kAlias ? static_cast<ValueId>(place.index) : value;
}

// Whether a while body may compute its result `i` in the memory of its
// parameter `i`: the result is a dynamic_update_slice of that parameter
// (a scan stacking its outputs) or a scatter into it (`xs.at[i].set(v)`
// on a carry), and nothing reads the parameter's memory after the update
// but the update itself (as its operand) and no other result is that
// memory. Then the loop keeps the carry in one buffer and the update writes
// only its slice or windows, instead of copying the whole carry every
// iteration (2000 trips of `.at[i].set` on 200K floats: 72 ms before).
bool InPlaceCarry(const Graph& body, size_t i) {
  if (i >= body.parameters.size() || i >= body.results.size()) return false;
  const ValueId parameter = body.parameters[i];
  const ValueId result = body.results[i];
  const Placement& place = body.placements[static_cast<size_t>(result)];
  if (place.storage != Storage::kResult || place.index != static_cast<int64_t>(i)) return false;
  size_t update = body.nodes.size();
  for (size_t n = 0; n < body.nodes.size(); ++n) {
    const Node& node = body.nodes[n];
    if (node.outputs.size() == 1 && node.outputs[0] == result) {
      const bool updates = node.op == "stablehlo.dynamic_update_slice" ||
                           (node.op == "stablehlo.scatter" && node.outputs.size() == 1 &&
                            node.output_over_input == std::vector<int32_t>{0});
      if (!updates || node.inputs.empty() || node.inputs[0] != parameter) {
        return false;
      }
      update = n;
    }
  }
  if (update == body.nodes.size()) return false;
  for (size_t n = 0; n < body.nodes.size(); ++n) {
    const std::vector<ValueId>& inputs = body.nodes[n].inputs;
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (MemoryRootOf(body, inputs[k]) != parameter) continue;
      if (n > update || (n == update && k != 0)) return false;
    }
  }
  for (size_t j = 0; j < body.results.size(); ++j) {
    if (j != i && MemoryRootOf(body, body.results[j]) == parameter) return false;
  }
  return true;
}

// Whether a while body returns its parameter `i` unchanged (a loop
// invariant JAX carries through a scan: its inputs and weights). The carry
// then stays in one buffer: the body's result is its parameter's memory,
// which Execute does not copy onto itself. Copying it every iteration was
// most of a scan's time (a 64-step RNN: 1.4 MB of weights and inputs per
// step).
bool PassThroughCarry(const Graph& body, size_t i) {
  return i < body.parameters.size() && i < body.results.size() &&
         body.results[i] == body.parameters[i];
}

// A while loop with a small body as one node running its LoopProgram.
Status EmitLoopProgram(Lowering& lowering, const ir::Operation& op, LoopProgram compiled) {
  auto program = std::make_shared<const LoopProgram>(std::move(compiled));
  const size_t count = op.operands().size();
  std::vector<ValueId> inputs;
  std::vector<Shape> outputs;
  for (size_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, i));
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(i)));
    inputs.push_back(input);
    outputs.push_back(std::move(shape));
  }
  for (const ir::Value* capture : program->captures()) {
    KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Lookup(capture));
    inputs.push_back(input);
  }
  // As the region form: a loop over constants is never folded (it may run
  // long), and any other loop is a plain node. Marking every loop program
  // unfoldable made it a node with side effects, which kept small programs
  // off the caller's thread (Program::run_inline).
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> results,
                        lowering.EmitNode(
                            op, std::move(inputs), std::move(outputs),
                            [program](RunContext& ctx) { return program->Run(ctx); }, {}, {},
                            /*foldable=*/!AllConstant(lowering, op)));
  Node& node = lowering.graph().nodes.back();
  node.detail = program->Describe();
  node.output_is_input.assign(count, -1);
  node.output_over_input.assign(count, -1);
  for (size_t i = 0; i < count; ++i) {
    if (program->passes_through(i)) node.output_is_input[i] = static_cast<int32_t>(i);
    if (program->updates_in_place(i)) node.output_over_input[i] = static_cast<int32_t>(i);
    lowering.Bind(op.result(i), results[i]);
  }
  return Status::Ok();
}

// while: the loop-carried values live in the node's outputs and in a second
// set of buffers (scratch memory of the execution), swapped every
// iteration, since a region's results may not alias its arguments; except
// in-place carries (InPlaceCarry) and carries the body passes through
// unchanged (PassThroughCarry), which stay in the node's outputs.
Status LowerWhile(Lowering& lowering, const ir::Operation& op) {
  const size_t count = op.operands().size();
  if (std::optional<LoopProgram> compiled = LoopProgram::Compile(lowering, op)) {
    return EmitLoopProgram(lowering, op, std::move(*compiled));
  }
  // Filled once the body is lowered (below): which carries stay in the
  // node's outputs, and where the others' second buffers lie in the
  // loop's scratch memory (only theirs: a scan's stacked outputs and
  // weights need none).
  struct Carries {
    std::vector<size_t> bytes;
    std::vector<bool> in_place;
    std::vector<int64_t> offsets;
    int64_t scratch_bytes = 0;
  };
  auto carries = std::make_shared<Carries>();
  for (size_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(i)));
    carries->bytes.push_back(shape.ByteSize());
  }
  carries->in_place.assign(count, false);
  carries->offsets.assign(count, 0);
  // Every carry swapped until the body is known (a loop folded while it is
  // emitted runs so).
  const auto lay_out = [count, carries] {
    carries->scratch_bytes = 0;
    for (size_t i = 0; i < count; ++i) {
      if (carries->in_place[i]) continue;
      carries->offsets[i] = carries->scratch_bytes;
      const auto size = static_cast<int64_t>(carries->bytes[i]);
      carries->scratch_bytes += (size + kAlignment - 1) / kAlignment * kAlignment;
    }
  };
  lay_out();
  // The key of this loop's scratch memory in the ExecutionEnv: a graph of
  // its own, so that it never collides with a region's arena.
  auto scratch_key = std::make_shared<const Graph>();
  // A loop over constants is not folded at compile time (as XLA does not):
  // it may run long, or forever.
  const bool foldable = !AllConstant(lowering, op);
  RunFn run = [count, carries, scratch_key](RunContext& ctx) -> Status {
    const std::vector<size_t>& bytes = carries->bytes;
    uint8_t* scratch = nullptr;
    if (carries->scratch_bytes > 0) {
      scratch = ctx.env().Arena(scratch_key.get(), carries->scratch_bytes);
      if (scratch == nullptr) {
        return ResourceExhausted("out of host memory: the while loop's carries need ",
                                 carries->scratch_bytes, " bytes of scratch");
      }
    }
    // The loop-carried buffers: current[i] holds value i, next[i] receives it.
    void** slots = ctx.env().Pointers(&ctx.node(), 2 * count);
    std::span<const void*> current(const_cast<const void**>(slots), count);
    std::span<void*> next(slots + count, count);
    for (size_t i = 0; i < count; ++i) {
      if (bytes[i] > 0 && ctx.out(i) != ctx.in(i)) {
        kernels::CopyBytes(ctx.out(i), ctx.in(i), bytes[i]);
      }
      current[i] = ctx.out(i);
      next[i] = carries->in_place[i] ? ctx.out(i) : scratch + carries->offsets[i];
    }
    bool proceed = false;
    void* cond_result[] = {&proceed};
    for (;;) {
      KILN_RETURN_IF_ERROR(ctx.RunRegion(0, current, cond_result));
      if (!proceed) break;
      KILN_RETURN_IF_ERROR(ctx.RunRegion(1, current, next));
      for (size_t i = 0; i < count; ++i) {
        void* previous = const_cast<void*>(current[i]);
        current[i] = next[i];
        next[i] = previous;
      }
    }
    for (size_t i = 0; i < count; ++i) {
      if (current[i] != ctx.out(i) && bytes[i] > 0) {
        kernels::CopyBytes(ctx.out(i), current[i], bytes[i]);
      }
    }
    return Status::Ok();
  };
  const size_t before = lowering.graph().nodes.size();
  KILN_RETURN_IF_ERROR(lowering.EmitWithRegions(op, std::move(run), foldable));
  if (lowering.graph().nodes.size() > before) {
    Node& node = lowering.graph().nodes.back();
    if (node.regions.size() == 2 && node.outputs.size() == count) {
      // A carry passed through is its init's memory; a carry updated in
      // place may take over its init's memory when the init dies here (a
      // scan's zero-filled stacked outputs).
      node.output_is_input.assign(count, -1);
      node.output_over_input.assign(count, -1);
      for (size_t i = 0; i < count; ++i) {
        const auto carry = static_cast<int32_t>(i);
        if (PassThroughCarry(*node.regions[1], i)) {
          node.output_is_input[i] = carry;
          carries->in_place[i] = true;
        } else if (InPlaceCarry(*node.regions[1], i)) {
          node.output_over_input[i] = carry;
          carries->in_place[i] = true;
        }
      }
    }
  }
  lay_out();
  return Status::Ok();
}

// Lowers branch `index` of an if or case in place of the op (its selector
// is a constant).
Status InlineBranch(Lowering& lowering, const ir::Operation& op, size_t index) {
  std::vector<ValueId> results;
  KILN_RETURN_IF_ERROR(lowering.InlineRegion(op.region(index), &results));
  if (results.size() != op.num_results()) {
    return InvalidArgument("branch ", index, " returns ", results.size(), " values, the op has ",
                           op.num_results(), " results");
  }
  for (size_t i = 0; i < results.size(); ++i) lowering.Bind(op.result(i), results[i]);
  return Status::Ok();
}

// The data of operand 0 when it is a constant, else null.
const std::vector<uint8_t>* ConstantSelector(Lowering& lowering, const ir::Operation& op) {
  StatusOr<ValueId> id = lowering.Input(op, 0);
  if (!id.ok()) return nullptr;
  return lowering.graph().values[static_cast<size_t>(*id)].constant.get();
}

Status LowerIf(Lowering& lowering, const ir::Operation& op) {
  if (const std::vector<uint8_t>* pred = ConstantSelector(lowering, op)) {
    return InlineBranch(lowering, op, !pred->empty() && (*pred)[0] != 0 ? 0 : 1);
  }
  return lowering.EmitWithRegions(op, [](RunContext& ctx) -> Status {
    const bool pred = *static_cast<const bool*>(ctx.in(0));
    return ctx.RunRegion(pred ? 0 : 1, {}, Outputs(ctx));
  });
}

// case: an index outside [0, branches) runs the last branch (the spec).
Status LowerCase(Lowering& lowering, const ir::Operation& op) {
  const auto branches = static_cast<int64_t>(op.num_regions());
  if (const std::vector<uint8_t>* selector = ConstantSelector(lowering, op)) {
    auto index = static_cast<int32_t>(branches - 1);
    if (selector->size() >= sizeof(int32_t)) std::memcpy(&index, selector->data(), sizeof(index));
    if (index < 0 || index >= branches) index = static_cast<int32_t>(branches - 1);
    return InlineBranch(lowering, op, static_cast<size_t>(index));
  }
  return lowering.EmitWithRegions(op, [branches](RunContext& ctx) -> Status {
    int64_t index = *static_cast<const int32_t*>(ctx.in(0));
    if (index < 0 || index >= branches) index = branches - 1;
    return ctx.RunRegion(static_cast<size_t>(index), {}, Outputs(ctx));
  });
}

// Whether the sort kernel can load keys of `type`.
bool SortableKey(ElementType type) {
  return ElementwiseKernelType(type) && type != ElementType::kC64 && type != ElementType::kC128;
}

Status LowerSort(Lowering& lowering, const ir::Operation& op) {
  const size_t count = op.operands().size();
  std::vector<ElementType> types;
  KILN_ASSIGN_OR_RETURN(Shape first, lowering.ShapeOf(op.operand(0)));
  for (size_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(i)));
    types.push_back(shape.element_type);
  }
  const auto rank = static_cast<int64_t>(first.dims.size());
  int64_t dimension = IntAttr(op, "dimension", -1);
  if (dimension < 0) dimension += rank;
  if (dimension < 0 || dimension >= rank) {
    return InvalidArgument("sort dimension ", IntAttr(op, "dimension", -1),
                           " is out of range for rank ", rank);
  }
  auto operands_of = [types](RunContext& ctx) {
    SmallVector<kernels::SortOperand> operands;
    for (size_t i = 0; i < types.size(); ++i) operands.push_back({types[i], ctx.in(i), ctx.out(i)});
    return operands;
  };
  std::optional<std::vector<kernels::SortKey>> keys = MatchComparator(op.region(0));
  bool fast = keys.has_value();
  for (size_t k = 0; fast && k < keys->size(); ++k) {
    const kernels::SortKey& key = (*keys)[k];
    fast = key.operand < count &&
           (key.part != kernels::SortKeyPart::kWhole || SortableKey(types[key.operand]));
  }
  if (fast) {
    return lowering.Emit(op, [operands_of, dims = first.dims, dimension,
                              keys = *keys](RunContext& ctx) {
      return kernels::Sort(operands_of(ctx), dims, dimension, keys);
    });
  }
  return lowering.EmitWithRegions(op, [operands_of, dims = first.dims, dimension,
                                       types](RunContext& ctx) {
    std::span<const void*> args(const_cast<const void**>(ctx.env().Pointers(&ctx.node(),
                                                                            2 * types.size())),
                                2 * types.size());
    bool less = false;
    void* result[] = {&less};
    auto compare = [&](int64_t lhs, int64_t rhs) -> StatusOr<bool> {
      for (size_t i = 0; i < types.size(); ++i) {
        const auto* data = static_cast<const uint8_t*>(ctx.in(i));
        const auto element = static_cast<int64_t>(ElementBytes(types[i]));
        args[2 * i] = data + lhs * element;
        args[2 * i + 1] = data + rhs * element;
      }
      KILN_RETURN_IF_ERROR(ctx.RunRegion(0, args, result));
      return less;
    };
    return kernels::SortWithComparator(operands_of(ctx), dims, dimension, compare);
  });
}

// map: the computation runs once per element.
Status LowerMap(Lowering& lowering, const ir::Operation& op) {
  std::vector<size_t> bytes;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(i)));
    bytes.push_back(ElementBytes(shape.element_type));
  }
  KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(0)));
  const size_t result_bytes = ElementBytes(result.element_type);
  const int64_t elements = result.NumElements();
  if (std::optional<ScalarProgram> body = ScalarProgram::Compile(op.region(0))) {
    // Elementwise computations run batched: lanes are consecutive elements.
    auto program = std::make_shared<const ScalarProgram>(std::move(*body));
    return lowering.Emit(op, [program, bytes, result_bytes, elements](RunContext& ctx) -> Status {
      ScalarProgram::Scratch scratch(*program);
      std::vector<const void*> args(bytes.size());
      for (int64_t start = 0; start < elements; start += ScalarProgram::kMaxLanes) {
        for (size_t i = 0; i < bytes.size(); ++i) {
          args[i] = static_cast<const uint8_t*>(ctx.in(i)) + start * static_cast<int64_t>(bytes[i]);
        }
        void* out[] = {static_cast<uint8_t*>(ctx.out(0)) +
                       start * static_cast<int64_t>(result_bytes)};
        KILN_RETURN_IF_ERROR(program->Run(std::min(ScalarProgram::kMaxLanes, elements - start),
                                          args, out, scratch));
      }
      return Status::Ok();
    });
  }
  return lowering.EmitWithRegions(op, [bytes, result_bytes, elements](RunContext& ctx) -> Status {
    std::vector<const void*> args(bytes.size());
    auto* out = static_cast<uint8_t*>(ctx.out(0));
    for (int64_t e = 0; e < elements; ++e) {
      for (size_t i = 0; i < bytes.size(); ++i) {
        args[i] = static_cast<const uint8_t*>(ctx.in(i)) + e * static_cast<int64_t>(bytes[i]);
      }
      void* element[] = {out + e * static_cast<int64_t>(result_bytes)};
      KILN_RETURN_IF_ERROR(ctx.RunRegion(0, args, element));
    }
    return Status::Ok();
  });
}

// One operand or result of chlo.scan seen as [outer, length, inner bytes].
struct ScanStacked {
  int64_t outer = 1;
  int64_t inner = 0;     // bytes of one position's row
  int64_t scratch = -1;  // offset of its slice in scratch; -1 when in place
};

// What a chlo.scan node needs at run time: its operand counts and the
// layout of its stacked values and carries in scratch memory.
struct ScanPlan {
  size_t inputs = 0, carries = 0, outputs = 0;
  int64_t length = 0;
  bool reverse = false;
  std::vector<ScanStacked> stacked;  // inputs, then outputs
  std::vector<size_t> carry_bytes;
  std::vector<int64_t> carry_offsets;
  int64_t scratch_bytes = 0;
};

// The run-time plan of chlo.scan `op`: its segments, direction and length,
// each stacked value's rows and each carry's spare copy in scratch.
StatusOr<std::shared_ptr<ScanPlan>> PlanScan(Lowering& lowering, const ir::Operation& op) {
  std::optional<std::vector<int64_t>> segments = ir::IntegersOf(op.GetAttr("operandSegmentSizes"));
  if (!segments || segments->size() != 2) {
    return InvalidArgument("chlo.scan needs operandSegmentSizes [inputs, inits]");
  }
  auto plan = std::make_shared<ScanPlan>();
  plan->inputs = static_cast<size_t>((*segments)[0]);
  plan->carries = static_cast<size_t>((*segments)[1]);
  plan->outputs = op.num_results() - plan->carries;
  plan->reverse = false;
  if (ir::Attribute reverse = op.GetAttr("is_reverse"); reverse.Is(ir::AttrKind::kBool)) {
    plan->reverse = reverse->bool_value;
  }
  const int64_t dimension = IntAttr(op, "dimension", 0);
  const auto reserve = [plan](int64_t bytes) {
    const int64_t offset = plan->scratch_bytes;
    plan->scratch_bytes += (bytes + kAlignment - 1) / kAlignment * kAlignment;
    return offset;
  };
  const auto stack = [&](const Shape& shape) {
    ScanStacked entry;
    entry.inner = static_cast<int64_t>(ElementBytes(shape.element_type));
    for (size_t d = 0; d < shape.dims.size(); ++d) {
      const auto axis = static_cast<int64_t>(d);
      if (axis < dimension) entry.outer *= shape.dims[d];
      if (axis > dimension) entry.inner *= shape.dims[d];
    }
    if (entry.outer != 1) entry.scratch = reserve(entry.outer * entry.inner);
    return entry;
  };
  for (size_t i = 0; i < plan->inputs; ++i) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(i)));
    plan->length = shape.dims[static_cast<size_t>(dimension)];
    plan->stacked.push_back(stack(shape));
  }
  for (size_t k = 0; k < plan->outputs; ++k) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(k)));
    if (plan->inputs == 0) plan->length = shape.dims[static_cast<size_t>(dimension)];
    plan->stacked.push_back(stack(shape));
  }
  for (size_t j = 0; j < plan->carries; ++j) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(plan->inputs + j)));
    plan->carry_bytes.push_back(shape.ByteSize());
    plan->carry_offsets.push_back(reserve(static_cast<int64_t>(shape.ByteSize())));
  }
  return plan;
}

// The offset of row o of position t of a stacked value: (o * length + t) *
// inner.
int64_t ScanRow(const ScanPlan& p, const ScanStacked& s, int64_t o, int64_t t) {
  return (o * p.length + t) * s.inner;
}

// Position t of a scan: the inputs' slices (in place, or gathered into
// scratch) and the carries in `args`, the outputs' slices and the spare
// carries in `outs`; the body runs, the outputs' gathered slices are
// scattered back and the new carries become the next arguments.
Status RunScanStep(const ScanPlan& p, RunContext& ctx, uint8_t* scratch, int64_t t,
                   std::span<const void*> args, std::span<void*> outs, std::span<void*> spare) {
  for (size_t i = 0; i < p.inputs; ++i) {
    const ScanStacked& s = p.stacked[i];
    const auto* base = static_cast<const uint8_t*>(ctx.in(i));
    if (s.scratch < 0) {
      args[i] = base + t * s.inner;
      continue;
    }
    uint8_t* slice = scratch + s.scratch;
    for (int64_t o = 0; o < s.outer; ++o) {
      std::memcpy(slice + o * s.inner, base + ScanRow(p, s, o, t), static_cast<size_t>(s.inner));
    }
    args[i] = slice;
  }
  for (size_t k = 0; k < p.outputs; ++k) {
    const ScanStacked& s = p.stacked[p.inputs + k];
    outs[k] = s.scratch < 0 ? static_cast<uint8_t*>(ctx.out(k)) + t * s.inner : scratch + s.scratch;
  }
  for (size_t j = 0; j < p.carries; ++j) outs[p.outputs + j] = spare[j];
  KILN_RETURN_IF_ERROR(ctx.RunRegion(0, args, outs));
  for (size_t k = 0; k < p.outputs; ++k) {
    const ScanStacked& s = p.stacked[p.inputs + k];
    if (s.scratch < 0) continue;
    auto* base = static_cast<uint8_t*>(ctx.out(k));
    for (int64_t o = 0; o < s.outer; ++o) {
      std::memcpy(base + ScanRow(p, s, o, t), scratch + s.scratch + o * s.inner,
                  static_cast<size_t>(s.inner));
    }
  }
  for (size_t j = 0; j < p.carries; ++j) {
    spare[j] = const_cast<void*>(args[p.inputs + j]);
    args[p.inputs + j] = outs[p.outputs + j];
  }
  return Status::Ok();
}

// Runs a chlo.scan node: the carries start in the node's outputs (copied
// from their inits) and swap with scratch step by step; the last ones are
// copied back where they end elsewhere.
Status RunScan(const ScanPlan& p, const Graph* scratch_key, RunContext& ctx) {
  uint8_t* scratch = nullptr;
  if (p.scratch_bytes > 0) {
    scratch = ctx.env().Arena(scratch_key, p.scratch_bytes);
    if (scratch == nullptr) {
      return ResourceExhausted("out of host memory: chlo.scan needs ", p.scratch_bytes,
                               " bytes of scratch");
    }
  }
  const size_t arity = p.inputs + p.carries;
  const size_t results = p.outputs + p.carries;
  void** slots = ctx.env().Pointers(&ctx.node(), arity + results + p.carries);
  std::span<const void*> args(const_cast<const void**>(slots), arity);
  std::span<void*> outs(slots + arity, results);
  std::span<void*> spare(slots + arity + results, p.carries);
  for (size_t j = 0; j < p.carries; ++j) {
    void* carry = ctx.out(p.outputs + j);
    if (p.carry_bytes[j] > 0 && carry != ctx.in(p.inputs + j)) {
      std::memcpy(carry, ctx.in(p.inputs + j), p.carry_bytes[j]);
    }
    args[p.inputs + j] = carry;
    spare[j] = scratch + p.carry_offsets[j];
  }
  for (int64_t step = 0; step < p.length; ++step) {
    const int64_t t = p.reverse ? p.length - 1 - step : step;
    KILN_RETURN_IF_ERROR(RunScanStep(p, ctx, scratch, t, args, outs, spare));
  }
  for (size_t j = 0; j < p.carries; ++j) {
    if (args[p.inputs + j] != ctx.out(p.outputs + j) && p.carry_bytes[j] > 0) {
      std::memcpy(ctx.out(p.outputs + j), args[p.inputs + j], p.carry_bytes[j]);
    }
  }
  return Status::Ok();
}

// chlo.scan: the body runs once per position along `dimension` (from the
// end when is_reverse), on one slice of each input and the carries,
// returning one slice of each stacked output and the next carries, as
// upstream's decomposition into a while loop does. A slice whose rows lie
// together (nothing before the scan dimension) is read or written in place;
// others are gathered to and scattered from scratch memory. Carries swap
// between the node's outputs and scratch, as a while loop's do.
Status LowerScan(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<ScanPlan> plan, PlanScan(lowering, op));
  auto scratch_key = std::make_shared<const Graph>();
  RunFn run = [plan, scratch_key](RunContext& ctx) -> Status {
    return RunScan(*plan, scratch_key.get(), ctx);
  };
  return lowering.EmitWithRegions(op, std::move(run));
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kWhile, LowerWhile}, {ir::OpCode::kIf, LowerIf},
    {ir::OpCode::kCase, LowerCase},   {ir::OpCode::kSort, LowerSort},
    {ir::OpCode::kMap, LowerMap},     {ir::OpCode::kChloScan, LowerScan},
};

}  // namespace

std::span<const LoweringRule> RegionLowerings() { return kRules; }

}  // namespace kiln::compiler
