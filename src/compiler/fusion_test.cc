// Fusion of elementwise chains (fusion.cc): which nodes a plan keeps, and
// that fused loops compute what the unfused nodes would, across tile and
// row boundaries, with broadcasts, transposes, escaping intermediates and
// an output written over an input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "compiler/lowering_test_util.h"

namespace kiln::compiler {
namespace {

using testing::Array;
using testing::Main;
using testing::Ramp;

StatusOr<std::shared_ptr<const Program>> CompileText(const std::string& text) {
  KILN_ASSIGN_OR_RETURN(ir::Module module, frontend::text::ParseModule(text));
  KILN_RETURN_IF_ERROR(ir::Verify(module));
  return Compile(module, frontend::CompileOptions{});
}

std::vector<std::string> PlanOps(const Program& program) {
  std::vector<std::string> ops;
  for (const Node& node : program.graph->nodes) ops.push_back(node.op);
  return ops;
}

// Runs `program` with its results in `results` (already sized).
Status RunInto(const Program& program, const std::vector<const void*>& parameters,
               const std::vector<void*>& results) {
  ExecutionEnv env;
  return Execute(*program.graph, parameters, results, env);
}

// tanh(x * 2 + broadcast(b)) over 3 x 5000 (several tiles, tiles crossing
// rows), also returning the escaping x * 2: one fused node.
TEST(FusionTest, ChainWithBroadcastsIsOneLoop) {
  const std::string text = Main("%x: tensor<3x5000xf32>, %b: tensor<5000xf32>",
                                "(tensor<3x5000xf32>, tensor<3x5000xf32>)", R"(
  %two = stablehlo.constant dense<2.0> : tensor<f32>
  %t = stablehlo.broadcast_in_dim %two, dims = [] : (tensor<f32>) -> tensor<3x5000xf32>
  %0 = stablehlo.multiply %x, %t : tensor<3x5000xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<5000xf32>) -> tensor<3x5000xf32>
  %1 = stablehlo.add %0, %bb : tensor<3x5000xf32>
  %2 = stablehlo.tanh %1 : tensor<3x5000xf32>
  return %2, %0 : tensor<3x5000xf32>, tensor<3x5000xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kFusionOp)});
  const std::vector<float> x = Ramp<float>(15000, 0.001, -7.0);
  const std::vector<float> b = Ramp<float>(5000, -0.002, 3.0);
  std::vector<float> y(15000), doubled(15000);
  ASSERT_TRUE(RunInto(**program, {x.data(), b.data()}, {y.data(), doubled.data()}).ok());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(doubled[i], x[i] * 2.0f) << i;
    ASSERT_NEAR(y[i], std::tanh(x[i] * 2.0f + b[i % 5000]), 1e-6) << i;
  }
}

// A transpose read inside a run; a read of a value the run computes ends
// the run (a tile cannot read other positions of a tile buffer).
TEST(FusionTest, ReadsOfComputedValuesStartANewRun) {
  const std::string text = Main("%x: tensor<60x70xf32>, %y: tensor<70x60xf32>",
                                "tensor<70x60xf32>", R"(
  %one = stablehlo.constant dense<1.0> : tensor<60x70xf32>
  %0 = stablehlo.add %x, %one : tensor<60x70xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<60x70xf32>) -> tensor<70x60xf32>
  %2 = stablehlo.transpose %x, dims = [1, 0] : (tensor<60x70xf32>) -> tensor<70x60xf32>
  %3 = stablehlo.multiply %1, %2 : tensor<70x60xf32>
  %4 = stablehlo.subtract %3, %y : tensor<70x60xf32>
  return %4 : tensor<70x60xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(PlanOps(**program),
            (std::vector<std::string>{"stablehlo.add", std::string(kFusionOp)}));
  const std::vector<float> x = Ramp<float>(4200, 0.5, -100.0);
  const std::vector<float> y = Ramp<float>(4200, -0.25, 7.0);
  std::vector<float> out(4200);
  ASSERT_TRUE(RunInto(**program, {x.data(), y.data()}, {out.data()}).ok());
  for (int r = 0; r < 70; ++r) {
    for (int c = 0; c < 60; ++c) {
      const float xv = x[static_cast<size_t>(c * 70 + r)];
      ASSERT_EQ(out[static_cast<size_t>(r * 60 + c)], (xv + 1.0f) * xv - y[r * 60 + c]);
    }
  }
}

// Result 0 is written over the memory of x (as a donated argument is) while
// the loop still reads x for result 1: the loop must read each tile of x
// before writing it, not write result 0 straight into x.
TEST(FusionTest, AnOutputOverItsInputIsWrittenAfterTheTileIsRead) {
  const std::string text = Main("%x: tensor<10000xf32>", "(tensor<10000xf32>, tensor<10000xf32>)", R"(
  %one = stablehlo.constant dense<1.0> : tensor<10000xf32>
  %0 = stablehlo.add %x, %one : tensor<10000xf32>
  %1 = stablehlo.multiply %x, %x : tensor<10000xf32>
  return %0, %1 : tensor<10000xf32>, tensor<10000xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kFusionOp)});
  const std::vector<float> original = Ramp<float>(10000, 0.01, -50.0);
  std::vector<float> x = original, squares(10000);
  ASSERT_TRUE(RunInto(**program, {x.data()}, {x.data(), squares.data()}).ok());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(x[i], original[i] + 1.0f) << i;
    ASSERT_EQ(squares[i], original[i] * original[i]) << i;
  }
}

// Integer, pred and converting members; an element count below one tile.
TEST(FusionTest, MixedTypesAndSmallArrays) {
  const std::string text = Main("%x: tensor<7xi32>", "tensor<7xf32>", R"(
  %c = stablehlo.constant dense<3> : tensor<7xi32>
  %0 = stablehlo.multiply %x, %c : tensor<7xi32>
  %1 = stablehlo.compare GT, %0, %x : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
  %2 = stablehlo.select %1, %0, %x : tensor<7xi1>, tensor<7xi32>
  %3 = stablehlo.convert %2 : (tensor<7xi32>) -> tensor<7xf32>
  return %3 : tensor<7xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kFusionOp)});
  const std::vector<int32_t> x = {-3, -2, -1, 0, 1, 2, 3};
  std::vector<float> out(7);
  ASSERT_TRUE(RunInto(**program, {x.data()}, {out.data()}).ok());
  EXPECT_EQ(out, (std::vector<float>{-3, -2, -1, 0, 3, 6, 9}));
}

}  // namespace
}  // namespace kiln::compiler
