// CombineCollectives (lower_collectives.cc): independent collectives of a
// partitioned program that meet the same devices become one meeting.
#include <gtest/gtest.h>

#include <string>

#include "compiler/compile.h"
#include "frontend/text/parser.h"
#include "ir/verifier.h"

namespace kiln::compiler {
namespace {

std::shared_ptr<const Program> CompileOn4(const std::string& text) {
  StatusOr<ir::Module> module = frontend::text::ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  EXPECT_TRUE(ir::Verify(*module).ok());
  frontend::CompileOptions options;
  options.num_partitions = 4;
  options.use_spmd_partitioning = true;
  options.use_shardy_partitioner = true;
  StatusOr<std::shared_ptr<const Program>> program = Compile(*module, options);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  return program.ok() ? *program : nullptr;
}

// The nodes of `graph` running `op`.
std::vector<const Node*> NodesOf(const Graph& graph, std::string_view op) {
  std::vector<const Node*> found;
  for (const Node& node : graph.nodes) {
    if (node.op == op) found.push_back(&node);
  }
  return found;
}

// FSDP's shape: two weights split on their rows, a batch split on its
// rows. The forward pass gathers both weights; their gradients (partial
// over the batch) are summed into the weights' tiles.
constexpr const char* kFsdpStep = R"(
module @jit_step attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %w1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %w2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
          tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
          tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %h1 = stablehlo.dot_general %a, %w1, contracting_dims = [1] x [0]
        : (tensor<16x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
    %h2 = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0]
        : (tensor<16x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
    %h = stablehlo.add %h1, %h2 : tensor<16x8xf32>
    %g1 = stablehlo.dot_general %a, %h, contracting_dims = [0] x [0]
        : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %g2 = stablehlo.dot_general %h, %a, contracting_dims = [0] x [0]
        : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %n1 = stablehlo.subtract %w1, %g1 : tensor<8x8xf32>
    %n2 = stablehlo.subtract %w2, %g2 : tensor<8x8xf32>
    return %h, %n1, %n2 : tensor<16x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}
)";

TEST(CombineCollectivesTest, GathersAndReduceScattersOfOneGroupMeetOnce) {
  std::shared_ptr<const Program> program = CompileOn4(kFsdpStep);
  ASSERT_NE(program, nullptr);
  const Graph& graph = *program->graph;
  // Both weights in one gather: two tiles in, two whole weights out,
  // listed as an all_gather each.
  std::vector<const Node*> gathers = NodesOf(graph, "kiln.spmd_gather");
  ASSERT_EQ(gathers.size(), 1u);
  EXPECT_EQ(gathers[0]->inputs.size(), 2u);
  EXPECT_EQ(gathers[0]->outputs.size(), 2u);
  EXPECT_EQ(gathers[0]->listing_chains, (std::vector<uint32_t>{1, 1}));
  EXPECT_EQ(graph.shape(gathers[0]->outputs[0]).dims, (std::vector<int64_t>{8, 8}));
  // Both gradients summed into the weights' row tiles in one
  // reduce_scatter of two operands.
  std::vector<const Node*> scatters = NodesOf(graph, "stablehlo.reduce_scatter");
  ASSERT_EQ(scatters.size(), 1u);
  EXPECT_EQ(scatters[0]->inputs.size(), 2u);
  EXPECT_EQ(scatters[0]->listing_chains, (std::vector<uint32_t>{1, 1}));
  for (ValueId out : scatters[0]->outputs) {
    EXPECT_EQ(graph.shape(out).dims, (std::vector<int64_t>{2, 8}));
  }
  // The program each device runs lists each collective on its own (a
  // reduce_scatter has one operand in StableHLO).
  EXPECT_EQ(program->listing.find("kiln.spmd_gather"), std::string::npos);
  size_t listed = 0;
  for (size_t at = program->listing.find("stablehlo.reduce_scatter"); at != std::string::npos;
       at = program->listing.find("stablehlo.reduce_scatter", at + 1)) {
    ++listed;
  }
  EXPECT_EQ(listed, 2u) << program->listing;
}

}  // namespace
}  // namespace kiln::compiler
