// The per-device program of a partitioned executable as StableHLO text:
// what PJRT_Executable_OptimizedProgram reports for it (JAX's
// `compiled.as_text()`), as XLA reports its partitioned HLO. Every value
// has the shape each device holds; the collectives Kiln inserted appear as
// StableHLO collectives with their groups; every other node appears as a
// custom call named after the kernel it runs ("stablehlo.dot_general",
// "kiln.fusion"), its nested graphs as called functions.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/graph.h"
#include "compiler/sharding.h"
#include "ir/module.h"

namespace kiln::compiler {

// Whether nodes made for `op` are listed as `op` itself (a collective).
bool ListedAsItself(const ir::Operation& op);

// `op` without operands, its results of `outputs`: a Node::listing entry.
std::shared_ptr<const ir::Operation> DetachForListing(const ir::Operation& op,
                                                      const std::vector<Shape>& outputs);

// The module: a public `main` over `graph`, `name` and the partition and
// replica counts as module attributes, and the meshes `source` declares
// (collectives may name their groups by a mesh's axes). Given `shardings`
// (a GSPMD program's), the module also says them as XLA's partitioner
// leaves them: `mhlo.spmd_parameters_shardings` and
// `mhlo.spmd_output_sharding` (a tuple's text for several results), which
// XLA's client turns into the HloModuleProto fields PyTorch/XLA reads.
struct ListedShardings {
  std::span<const std::optional<TensorSharding>> parameters, results;
};
StatusOr<std::string> ListPlan(const Graph& graph, const ir::Module& source, std::string_view name,
                               int64_t num_partitions, int64_t num_replicas,
                               const ListedShardings* shardings = nullptr);

}  // namespace kiln::compiler
