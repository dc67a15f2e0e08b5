// Splitting a plan between a backend's code and the host kernels
// (split.cc): segments of consecutive nodes, their own graphs, and the
// copies between the device's memory and the host's.
#include "compiler/split.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/lowering_test_util.h"

namespace kiln::compiler {
namespace {

using testing::Main;

// The unfused plan of `text`.
std::shared_ptr<const Graph> Unfused(const std::string& text) {
  auto module = frontend::text::ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  auto program = Compile(*module, frontend::CompileOptions{}, /*keep_unfused=*/true);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  return program.ok() ? (*program)->unfused_graph : nullptr;
}

const std::string kChain = Main("%x: tensor<8xf32>", "tensor<8xf32>", R"(
  %0 = stablehlo.exponential %x : tensor<8xf32>
  %1 = stablehlo.sine %0 : tensor<8xf32>
  %2 = stablehlo.add %1, %x : tensor<8xf32>
  return %2 : tensor<8xf32>)");

TEST(SplitTest, AllOnTheDeviceCopiesNothing) {
  auto graph = Unfused(kChain);
  ASSERT_NE(graph, nullptr);
  ASSERT_EQ(graph->nodes.size(), 3u);
  SplitPlan plan = SplitGraph(*graph, [](const Node&) { return true; });
  ASSERT_EQ(plan.segments.size(), 1u);
  EXPECT_TRUE(plan.segments[0].on_device);
  EXPECT_EQ(plan.segments[0].inputs, graph->parameters);
  EXPECT_EQ(plan.segments[0].outputs, graph->results);
  EXPECT_TRUE(plan.crossings.empty());
  EXPECT_EQ(plan.CrossingBytes(), 0u);
}

// The sine on the host: x's exponential goes to the host, the sine comes
// back; x itself is read on the device only.
TEST(SplitTest, AHostNodeInTheMiddleCopiesItsInputsAndOutputs) {
  auto graph = Unfused(kChain);
  ASSERT_NE(graph, nullptr);
  SplitPlan plan = SplitGraph(*graph, [](const Node& node) { return node.op != "stablehlo.sine"; });
  ASSERT_EQ(plan.segments.size(), 3u);
  EXPECT_TRUE(plan.segments[0].on_device);
  EXPECT_FALSE(plan.segments[1].on_device);
  EXPECT_TRUE(plan.segments[2].on_device);
  const ValueId exp = graph->nodes[0].outputs[0];
  const ValueId sine = graph->nodes[1].outputs[0];
  ASSERT_EQ(plan.crossings.size(), 2u);
  EXPECT_EQ(plan.crossings[0].value, exp);
  EXPECT_FALSE(plan.crossings[0].to_device);
  EXPECT_EQ(plan.crossings[0].before, 1u);
  EXPECT_EQ(plan.crossings[1].value, sine);
  EXPECT_TRUE(plan.crossings[1].to_device);
  EXPECT_EQ(plan.crossings[1].before, 2u);
  EXPECT_EQ(plan.CrossingBytes(), 64u);
  // Each segment is a graph of its own over its inputs and outputs.
  const Segment& host = plan.segments[1];
  EXPECT_EQ(host.inputs, std::vector<ValueId>{exp});
  EXPECT_EQ(host.outputs, std::vector<ValueId>{sine});
  ASSERT_EQ(host.graph->nodes.size(), 1u);
  EXPECT_EQ(host.graph->parameters.size(), 1u);
  EXPECT_EQ(host.graph->results.size(), 1u);
  EXPECT_EQ(plan.segments[2].inputs, (std::vector<ValueId>{sine, graph->parameters[0]}));
  const std::string listing = ListSplit(*graph, plan);
  EXPECT_NE(listing.find("segment 1 on host: 1 nodes"), std::string::npos) << listing;
  EXPECT_NE(listing.find("copy to device: %"), std::string::npos) << listing;
  EXPECT_NE(listing.find("bytes crossing per run: 64"), std::string::npos) << listing;
}

// Everything on the host: the parameter comes over, the result goes back.
TEST(SplitTest, AllOnTheHostCopiesParametersAndResults) {
  auto graph = Unfused(kChain);
  ASSERT_NE(graph, nullptr);
  SplitPlan plan = SplitGraph(*graph, [](const Node&) { return false; });
  ASSERT_EQ(plan.segments.size(), 1u);
  ASSERT_EQ(plan.crossings.size(), 2u);
  EXPECT_EQ(plan.crossings[0].value, graph->parameters[0]);
  EXPECT_EQ(plan.crossings[0].before, 0u);
  EXPECT_EQ(plan.crossings[1].value, graph->results[0]);
  EXPECT_EQ(plan.crossings[1].before, 1u);
}

// A constant a segment reads stays a constant of its graph, never copied.
TEST(SplitTest, ConstantsStayInTheSegmentsGraph) {
  auto graph = Unfused(Main("%x: tensor<8xf32>", "tensor<8xf32>", R"(
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %0 = stablehlo.multiply %x, %c : tensor<8xf32>
  return %0 : tensor<8xf32>)"));
  ASSERT_NE(graph, nullptr);
  SplitPlan plan = SplitGraph(*graph, [](const Node&) { return true; });
  ASSERT_EQ(plan.segments.size(), 1u);
  EXPECT_EQ(plan.segments[0].inputs, graph->parameters);
  EXPECT_EQ(plan.segments[0].graph->parameters.size(), 1u);
  EXPECT_TRUE(plan.crossings.empty());
}

}  // namespace
}  // namespace kiln::compiler
