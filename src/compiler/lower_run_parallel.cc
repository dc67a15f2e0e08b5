// interpreter.run_parallel: a grid of processes, each running its own
// function of the module, whose collectives meet each other (`kiln run`'s
// ProcessGrid).
#include <memory>
#include <string>
#include <vector>

#include "compiler/lowering.h"

namespace kiln::compiler {
namespace {

// A function of the module lowered as a graph of its own (run_parallel's
// programs and infeed functions).
StatusOr<std::shared_ptr<const Graph>> FunctionGraph(Lowering& lowering, const ir::Attribute& ref) {
  if (!ref.Is(ir::AttrKind::kSymbolRef) || ref->symbol_path.empty()) {
    return InvalidArgument("expected a function symbol");
  }
  const std::string& name = ref->symbol_path.back();
  const ir::Operation* function = lowering.module().LookupFunction(name);
  if (function == nullptr || function->num_regions() != 1) {
    return InvalidArgument("no function @", name);
  }
  std::vector<ValueId> captures;
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> graph,
                        lowering.LowerRegion(function->region(0), &captures));
  if (!captures.empty()) return InvalidArgument("@", name, " uses values from outside it");
  return graph;
}

// interpreter.run_parallel's programs, in process order, and its infeed
// functions, for a grid of `replicas` x `partitions` processes.
struct ParallelPrograms {
  std::vector<std::shared_ptr<const Graph>> graphs, infeeds;
  size_t replicas = 0, partitions = 0;
};

// The programs and infeed functions of run_parallel `op`, lowered.
StatusOr<ParallelPrograms> ReadPrograms(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute programs = op.GetAttr("programs");
  if (!programs.Is(ir::AttrKind::kArray) || programs->elements.empty()) {
    return InvalidArgument("programs must be a non-empty array of arrays of functions");
  }
  ParallelPrograms result;
  result.replicas = programs->elements.size();
  const size_t partitions = programs->elements[0].Is(ir::AttrKind::kArray)
                                ? programs->elements[0]->elements.size()
                                : 0;
  result.partitions = partitions;
  for (const ir::Attribute& row : programs->elements) {
    if (!row.Is(ir::AttrKind::kArray) || row->elements.size() != partitions || partitions == 0) {
      return InvalidArgument("programs must have the same number of functions (partitions) "
                             "in every row (replica)");
    }
    for (const ir::Attribute& ref : row->elements) {
      KILN_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> graph, FunctionGraph(lowering, ref));
      result.graphs.push_back(std::move(graph));
    }
  }
  if (ir::Attribute infeed = op.GetAttr("infeed"); infeed.Is(ir::AttrKind::kArray)) {
    for (const ir::Attribute& ref : infeed->elements) {
      KILN_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> graph, FunctionGraph(lowering, ref));
      if (!graph->parameters.empty()) return InvalidArgument("infeed functions take no arguments");
      result.infeeds.push_back(std::move(graph));
    }
  }
  return result;
}

// Runs each infeed function and queues its results on the grid's infeed.
Status PushInfeeds(ProcessGrid& grid, const std::vector<std::shared_ptr<const Graph>>& infeeds) {
  for (const auto& infeed : infeeds) {
    std::vector<std::vector<uint8_t>> storage;
    std::vector<void*> results;
    std::vector<const void*> data;
    std::vector<Shape> shapes;
    for (ValueId id : infeed->results) {
      shapes.push_back(infeed->shape(id));
      storage.emplace_back(static_cast<size_t>(shapes.back().ByteSize()));
    }
    for (auto& bytes : storage) {
      results.push_back(bytes.data());
      data.push_back(bytes.data());
    }
    ExecutionEnv env;
    KILN_RETURN_IF_ERROR(Execute(*infeed, {}, results, env));
    grid.PushInfeed(shapes, data);
  }
  return Status::Ok();
}

// Runs every program on its process of the grid, on the node's next
// operands and results; the checks they ran count in the caller's env.
Status RunPrograms(RunContext& ctx, ProcessGrid& grid, const ParallelPrograms& programs) {
  const auto& graphs = programs.graphs;
  std::vector<size_t> first_input(graphs.size() + 1), first_output(graphs.size() + 1);
  for (size_t g = 0; g < graphs.size(); ++g) {
    first_input[g + 1] = first_input[g] + graphs[g]->parameters.size();
    first_output[g + 1] = first_output[g] + graphs[g]->results.size();
  }
  // Check ops inside the programs count in the caller's env once all ran.
  std::vector<int64_t> checks(graphs.size());
  std::vector<std::vector<std::string>> failures(graphs.size());
  Status status = grid.RunAll(static_cast<int64_t>(graphs.size()),
                              [&](int64_t process, DeviceCollectives* collectives,
                                  DeviceFeeds* feeds, HostTransfer* host) -> Status {
                                const auto g = static_cast<size_t>(process);
                                std::vector<const void*> parameters;
                                for (size_t i = first_input[g]; i < first_input[g + 1]; ++i) {
                                  parameters.push_back(ctx.in(i));
                                }
                                std::vector<void*> results;
                                for (size_t i = first_output[g]; i < first_output[g + 1]; ++i) {
                                  results.push_back(ctx.out(i));
                                }
                                ExecutionEnv env;
                                env.interpreter = ctx.env().interpreter;
                                env.collectives = collectives;
                                env.feeds = feeds;
                                env.host = host;
                                env.replica_id = process /
                                                 static_cast<int64_t>(programs.partitions);
                                env.partition_id = process %
                                                   static_cast<int64_t>(programs.partitions);
                                env.num_replicas = static_cast<int64_t>(programs.replicas);
                                env.num_partitions = static_cast<int64_t>(programs.partitions);
                                Status ran = Execute(*graphs[g], parameters, results, env);
                                checks[g] = env.checks_run;
                                failures[g] = std::move(env.check_failures);
                                return ran;
                              });
  for (size_t g = 0; g < graphs.size(); ++g) {
    ctx.env().checks_run += checks[g];
    for (std::string& failure : failures[g]) {
      ctx.env().check_failures.push_back(StrCat("process ", g, ": ", failure));
    }
  }
  return status;
}

// interpreter.run_parallel: a replicas x partitions grid of processes,
// process (r, p) running programs[r][p] on the next operands (in process
// order) and giving the next results; the `infeed` functions' results are
// queued on the grid's infeed first. Runs on `kiln run`'s process grid.
Status LowerRunParallel(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ParallelPrograms programs, ReadPrograms(lowering, op));
  size_t inputs = 0;
  size_t outputs = 0;
  for (const auto& graph : programs.graphs) {
    inputs += graph->parameters.size();
    outputs += graph->results.size();
  }
  if (inputs != op.operands().size() || outputs != op.num_results()) {
    return InvalidArgument("the programs take ", inputs, " operands and give ", outputs,
                           " results; the op has ", op.operands().size(), " and ",
                           op.num_results());
  }
  auto run = [programs = std::move(programs)](RunContext& ctx) -> Status {
    ProcessGrid* grid = ctx.env().grid;
    if (grid == nullptr) {
      return FailedPrecondition("interpreter.run_parallel runs under `kiln run` only");
    }
    KILN_RETURN_IF_ERROR(PushInfeeds(*grid, programs.infeeds));
    return RunPrograms(ctx, *grid, programs);
  };
  std::vector<ValueId> ins;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId id, lowering.Input(op, i));
    ins.push_back(id);
  }
  std::vector<Shape> outs;
  for (size_t i = 0; i < op.num_results(); ++i) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(i)));
    outs.push_back(std::move(shape));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> ids,
                        lowering.EmitNode(op, std::move(ins), std::move(outs), std::move(run), {},
                                          {}, /*foldable=*/false));
  for (size_t i = 0; i < ids.size(); ++i) lowering.Bind(op.result(i), ids[i]);
  return Status::Ok();
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kInterpreterRunParallel, LowerRunParallel},
};

}  // namespace

std::span<const LoweringRule> RunParallelLowerings() { return kRules; }

}  // namespace kiln::compiler
