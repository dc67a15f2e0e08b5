// The compiler's entry point: a verified module and the framework's compile
// options in, an executable plan out.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/cost_analysis.h"
#include "compiler/graph.h"
#include "compiler/sharding.h"
#include "frontend/compile_options.h"
#include "ir/module.h"

namespace kiln::compiler {

// Everything an executable needs at run time and for the framework's
// queries; immutable once built, shared by executables loaded from it.
struct Program {
  std::string name;  // the module's name ("jit_f"), or "main"
  std::shared_ptr<const Graph> graph;
  std::vector<Shape> parameter_shapes;
  std::vector<Shape> result_shapes;
  frontend::CompileOptions options;
  // Donation, per parameter (from the entry function's argument attributes):
  // whether the framework may donate the argument (`jax.buffer_donor` or
  // `tf.aliasing_output`), the result it may be overwritten with (-1: none),
  // and whether that result can be computed in the argument's memory (the
  // plan reads the parameter for the last time before it writes the result).
  std::vector<bool> parameter_donatable;
  std::vector<int> parameter_aliased_result;
  std::vector<bool> alias_in_place;
  // Whether a run meets other devices' runs (a collective anywhere in the
  // plan): the runtime then starts the runs of one launch together.
  bool has_collectives = false;
  // Small enough to run on the caller's thread when its device is idle, and
  // free of anything that waits on others (collectives, feeds, host
  // transfers, side effects).
  bool run_inline = false;
  // More than one node runs per call (at the top or in a loop's body): the
  // runtime keeps the kernels' pool workers polling between them
  // (kernels::KeepWorkersWarm). A single node gains nothing from it, and
  // a worker polling after its last chunk takes a core from the caller.
  bool keep_workers_warm = false;
  // An SPMD program (sdy meshes): its devices exchange tiles of the
  // parameters and results with these shardings (nullopt: whole).
  bool partitioned = false;
  std::vector<std::optional<TensorSharding>> parameter_shardings;
  std::vector<std::optional<TensorSharding>> result_shardings;
  // The memory kind each parameter arrives in and each result lands in
  // ("device", "pinned_host" or "unpinned_host", JAX's names): the entry's
  // `mhlo.memory_kind` argument or result attribute, or for a result the
  // `_xla_buffer_placement` of the annotate_device_placement custom call
  // returning it (JAX's host offload); "device" otherwise.
  std::vector<std::string> parameter_memory_kinds;
  std::vector<std::string> result_memory_kinds;
  CostAnalysis cost;  // GetCostAnalysis
  std::string text;   // the module as StableHLO text (OptimizedProgram)
  // A partitioned program: the program each device runs as StableHLO text
  // (plan_listing.h), which OptimizedProgram reports instead of `text`.
  std::string listing;
  // For a program compiled from an HloModuleProto: what OptimizedProgram
  // reports instead of `text` (format "hlo_with_config"; see
  // frontend/hlo/hlo_reader.h). Empty otherwise.
  std::vector<uint8_t> hlo_with_config;
  uint64_t fingerprint = 0;  // of the program text and the options
  // The entry graph as lowered, before the host's fusion and buffer plan:
  // what a backend that compiles nodes into its own code splits between
  // itself and the host (runtime/device_plan.h). Kept when Compile is asked.
  std::shared_ptr<const Graph> unfused_graph;
};

// Lowers `module`'s entry function (public `main`, or its only function)
// into a plan. Ops Kiln cannot run are UNIMPLEMENTED naming the op and its
// source location. `keep_unfused`: also keep Program::unfused_graph.
StatusOr<std::shared_ptr<const Program>> Compile(const ir::Module& module,
                                                 frontend::CompileOptions options,
                                                 bool keep_unfused = false);

}  // namespace kiln::compiler
