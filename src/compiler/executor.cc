#include "compiler/executor.h"

#include <chrono>
#include <cstring>
#include <new>

#include "kernels/float_env.h"

namespace kiln::compiler {

uint8_t* ExecutionEnv::Arena(const Graph* graph, int64_t bytes) {
  Block& block = arenas_[graph];
  if (block.bytes < bytes) {
    constexpr int64_t kAlignment = 64;
    block.storage.reset(new (std::nothrow) uint8_t[static_cast<size_t>(bytes + kAlignment)]);
    if (block.storage == nullptr) {
      block.aligned = nullptr;
      block.bytes = 0;
      return nullptr;
    }
    const auto address = reinterpret_cast<uintptr_t>(block.storage.get());
    block.aligned = block.storage.get() + ((kAlignment - address % kAlignment) % kAlignment);
    block.bytes = bytes;
  }
  return block.aligned;
}

uint8_t** ExecutionEnv::ValueTable(const Graph* graph, size_t size) {
  std::vector<uint8_t*>& table = arenas_[graph].table;
  if (table.size() < size) table.resize(size);
  return table.data();
}

const void** ExecutionEnv::RegionArguments(const Graph* graph, size_t size) {
  std::vector<const void*>& arguments = arenas_[graph].arguments;
  if (arguments.size() < size) arguments.resize(size);
  return arguments.data();
}

void** ExecutionEnv::Pointers(const void* key, size_t size) {
  std::vector<void*>& pointers = pointers_[key];
  if (pointers.size() < size) pointers.resize(size);
  return pointers.data();
}

namespace {

// Execute without setting the floating-point environment: for regions
// (loop bodies and conditions, called branches), which run inside their
// program's Execute on its thread. Reading MXCSR waits for the floating
// point operations in flight, and a region runs once per loop trip: it was
// a tenth of a small interpreted loop's time (perf, Zen 5).
Status ExecuteGraph(const Graph& graph, std::span<const void* const> parameters,
                    std::span<void* const> results, ExecutionEnv& env);

}  // namespace

Status RunContext::RunRegion(size_t index, std::span<const void* const> args,
                             std::span<void* const> results) const {
  const std::vector<size_t>& captures = node_.region_captures[index];
  if (captures.empty()) return ExecuteGraph(*node_.regions[index], args, results, env_);
  constexpr size_t kInline = 16;
  const void* inline_args[kInline];
  const void** all = inline_args;
  const size_t total = args.size() + captures.size();
  if (total > kInline) all = env_.RegionArguments(node_.regions[index].get(), total);
  for (size_t i = 0; i < args.size(); ++i) all[i] = args[i];
  for (size_t i = 0; i < captures.size(); ++i) all[args.size() + i] = in(captures[i]);
  return ExecuteGraph(*node_.regions[index], std::span(all, total), results, env_);
}

Status Execute(const Graph& graph, std::span<const void* const> parameters,
               std::span<void* const> results, ExecutionEnv& env) {
  // Denormals flush to zero while a program runs, as on XLA's CPU backend;
  // constant folding runs through here too, so folded values agree.
  kernels::ScopedFlushDenormals flush_denormals;
  return ExecuteGraph(graph, parameters, results, env);
}

namespace {

Status ExecuteGraph(const Graph& graph, std::span<const void* const> parameters,
                    std::span<void* const> results, ExecutionEnv& env) {
  if (parameters.size() != graph.parameters.size() || results.size() != graph.results.size()) {
    return InvalidArgument("the program takes ", graph.parameters.size(), " arguments and gives ",
                           graph.results.size(), " results; called with ", parameters.size(),
                           " arguments and ", results.size(), " result buffers");
  }
  uint8_t* arena = graph.arena_bytes > 0 ? env.Arena(&graph, graph.arena_bytes) : nullptr;
  if (graph.arena_bytes > 0 && arena == nullptr) {
    return ResourceExhausted("out of host memory: the program's intermediate values need ",
                             graph.arena_bytes, " bytes");
  }
  // Small graphs (region bodies run per loop iteration) keep their pointer
  // table on the stack.
  constexpr size_t kInline = 32;
  uint8_t* inline_memory[kInline];
  uint8_t** memory = inline_memory;
  if (graph.values.size() > kInline) memory = env.ValueTable(&graph, graph.values.size());
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const Placement& place = graph.placements[v];
    switch (place.storage) {
      case Storage::kArena: memory[v] = arena + place.offset; break;
      case Storage::kParameter:
        memory[v] = static_cast<uint8_t*>(const_cast<void*>(parameters[place.index]));
        break;
      case Storage::kConstant:
        memory[v] = const_cast<uint8_t*>(graph.values[v].constant->data());
        break;
      case Storage::kResult:
        memory[v] = static_cast<uint8_t*>(results[place.index]) + place.offset;
        break;
      case Storage::kAlias: memory[v] = memory[place.index]; break;
    }
  }
  std::span<uint8_t* const> table(memory, graph.values.size());
  const bool timed = env.timed_graph == &graph && env.timed_nodes != nullptr &&
                     env.timed_nodes->size() == graph.nodes.size();
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    RunContext context(graph, node, table, env);
    const auto start = timed ? std::chrono::steady_clock::now()
                             : std::chrono::steady_clock::time_point();
    Status status = node.run(context);
    if (timed) {
      (*env.timed_nodes)[n] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    if (!status.ok()) {
      return Status(status.code(), StrCat(node.location, ": ", node.op, ": ", status.message()));
    }
  }
  // Results the nodes did not write in place: parameters, constants, and
  // values returned more than once.
  for (size_t i = 0; i < graph.results.size(); ++i) {
    const auto v = static_cast<size_t>(graph.results[i]);
    if (memory[v] != results[i] && graph.values[v].bytes > 0) {
      std::memmove(results[i], memory[v], graph.values[v].bytes);
    }
  }
  return Status::Ok();
}

}  // namespace

}  // namespace kiln::compiler
