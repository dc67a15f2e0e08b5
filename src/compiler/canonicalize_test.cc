// Canonicalization while lowering: chains of data-movement ops become one
// strided read (or none), and ops whose outcome is known at compile time
// (an if or case on a constant, a select on a uniform constant predicate, a
// dynamic slice at constant indices, an update covering its operand) lower
// to the simpler form. Each test checks both the plan (which nodes remain)
// and the values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/lowering_test_util.h"

namespace kiln::compiler {
namespace {

using testing::Array;
using testing::Main;
using testing::MustRun;
using testing::Ramp;

// The ops of the nodes left in `text`'s plan, in order.
std::vector<std::string> PlanOps(const std::string& text) {
  auto module = frontend::text::ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  auto program = Compile(*module, frontend::CompileOptions{});
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return {};
  std::vector<std::string> ops;
  for (const Node& node : (*program)->graph->nodes) ops.push_back(node.op);
  return ops;
}

TEST(CanonicalizeTest, TransposeOfTransposeIsNoCopy) {
  const std::string text = Main("%x: tensor<2x3x4xf32>", "tensor<2x3x4xf32>", R"(
  %0 = stablehlo.transpose %x, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = stablehlo.transpose %0, dims = [1, 2, 0] : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>)");
  EXPECT_TRUE(PlanOps(text).empty());
  const std::vector<float> x = Ramp<float>(24);
  EXPECT_EQ(MustRun(text, {Array::Of(x)}).As<float>(), x);
}

TEST(CanonicalizeTest, ReverseTwiceAndFullSliceAreNoCopy) {
  const std::string text = Main("%x: tensor<3x5xi32>", "tensor<3x5xi32>", R"(
  %0 = stablehlo.reverse %x, dims = [0, 1] : tensor<3x5xi32>
  %1 = stablehlo.slice %0 [0:3, 0:5] : (tensor<3x5xi32>) -> tensor<3x5xi32>
  %2 = stablehlo.reverse %1, dims = [1, 0] : tensor<3x5xi32>
  return %2 : tensor<3x5xi32>)");
  EXPECT_TRUE(PlanOps(text).empty());
  const std::vector<int32_t> x = Ramp<int32_t>(15);
  EXPECT_EQ(MustRun(text, {Array::Of(x)}).As<int32_t>(), x);
}

TEST(CanonicalizeTest, BroadcastTransposeSliceReverseIsOneCopy) {
  // y[i, j, k] = x[k] broadcast to [2, 3, 4], transposed to [4, 3, 2],
  // sliced [1:4:2, 0:3, 1:2], reversed along 0.
  const std::string text = Main("%x: tensor<4xf32>", "tensor<2x3x1xf32>", R"(
  %0 = stablehlo.broadcast_in_dim %x, dims = [2] : (tensor<4xf32>) -> tensor<2x3x4xf32>
  %1 = stablehlo.transpose %0, dims = [2, 1, 0] : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %2 = stablehlo.slice %1 [1:4:2, 0:3, 1:2] : (tensor<4x3x2xf32>) -> tensor<2x3x1xf32>
  %3 = stablehlo.reverse %2, dims = [0] : tensor<2x3x1xf32>
  return %3 : tensor<2x3x1xf32>)");
  EXPECT_EQ(PlanOps(text), std::vector<std::string>{"stablehlo.reverse"});
  EXPECT_EQ(MustRun(text, {Array::Of<float>({10, 11, 12, 13})}).As<float>(),
            (std::vector<float>{13, 13, 13, 11, 11, 11}));
}

TEST(CanonicalizeTest, AnIntermediateUsedElsewhereIsStillComputed) {
  const std::string text = Main("%x: tensor<2x3xf32>", "(tensor<3x2xf32>, tensor<2x3xf32>)", R"(
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = stablehlo.reverse %0, dims = [0] : tensor<3x2xf32>
  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %0, %2 : tensor<3x2xf32>, tensor<2x3xf32>)");
  EXPECT_EQ(PlanOps(text),
            (std::vector<std::string>{"stablehlo.transpose", "stablehlo.transpose"}));
  auto results = testing::Run(text, {Array::Of<float>({1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ((*results)[1].As<float>(), (std::vector<float>{3, 2, 1, 6, 5, 4}));
}

TEST(CanonicalizeTest, DynamicSliceAtConstantIndicesIsAClampedSlice) {
  // Start (1, 5) clamps to (1, 2) so the 2x2 window fits the 3x4 operand;
  // then a transpose of it is still one copy.
  const std::string text = Main("%x: tensor<3x4xi32>", "tensor<2x2xi32>", R"(
  %i = stablehlo.constant dense<1> : tensor<i64>
  %j = stablehlo.constant dense<5> : tensor<i64>
  %0 = stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 2] : (tensor<3x4xi32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x2xi32>) -> tensor<2x2xi32>
  return %1 : tensor<2x2xi32>)");
  EXPECT_EQ(PlanOps(text), std::vector<std::string>{"stablehlo.transpose"});
  EXPECT_EQ(MustRun(text, {Array::Of(Ramp<int32_t>(12))}).As<int32_t>(),
            (std::vector<int32_t>{6, 10, 7, 11}));
}

TEST(CanonicalizeTest, UpdateCoveringItsOperandReplacesIt) {
  const std::string text = Main("%x: tensor<2x2xf32>, %u: tensor<2x2xf32>, %i: tensor<i32>",
                                "tensor<2x2xf32>", R"(
  %0 = stablehlo.dynamic_update_slice %x, %u, %i, %i : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>)");
  EXPECT_TRUE(PlanOps(text).empty());
  EXPECT_EQ(MustRun(text, {Array::Of<float>({1, 2, 3, 4}), Array::Of<float>({5, 6, 7, 8}),
                           Array::Of<int32_t>({7})})
                .As<float>(),
            (std::vector<float>{5, 6, 7, 8}));
}

TEST(CanonicalizeTest, IfOnAConstantRunsItsBranchInline) {
  const std::string text = Main("%x: tensor<3xf32>", "tensor<3xf32>", R"(
  %p = stablehlo.constant dense<false> : tensor<i1>
  %0 = "stablehlo.if"(%p) ({
    %a = stablehlo.add %x, %x : tensor<3xf32>
    stablehlo.return %a : tensor<3xf32>
  }, {
    %m = stablehlo.multiply %x, %x : tensor<3xf32>
    stablehlo.return %m : tensor<3xf32>
  }) : (tensor<i1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>)");
  EXPECT_EQ(PlanOps(text), std::vector<std::string>{"stablehlo.multiply"});
  EXPECT_EQ(MustRun(text, {Array::Of<float>({1, 2, 3})}).As<float>(),
            (std::vector<float>{1, 4, 9}));
}

TEST(CanonicalizeTest, CaseOnAConstantOutOfRangeRunsTheLastBranchInline) {
  const std::string text = Main("%x: tensor<2xi32>", "tensor<2xi32>", R"(
  %k = stablehlo.constant dense<9> : tensor<i32>
  %0 = "stablehlo.case"(%k) ({
    stablehlo.return %x : tensor<2xi32>
  }, {
    %n = stablehlo.negate %x : tensor<2xi32>
    stablehlo.return %n : tensor<2xi32>
  }) : (tensor<i32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>)");
  EXPECT_EQ(PlanOps(text), std::vector<std::string>{"stablehlo.negate"});
  EXPECT_EQ(MustRun(text, {Array::Of<int32_t>({4, -5})}).As<int32_t>(),
            (std::vector<int32_t>{-4, 5}));
}

TEST(CanonicalizeTest, SelectOnAUniformConstantPredicatePicksAnOperand) {
  const std::string text = Main("%x: tensor<2xf32>, %y: tensor<2xf32>", "tensor<2xf32>", R"(
  %p = stablehlo.constant dense<[true, true]> : tensor<2xi1>
  %0 = stablehlo.select %p, %x, %y : tensor<2xi1>, tensor<2xf32>
  return %0 : tensor<2xf32>)");
  EXPECT_TRUE(PlanOps(text).empty());
  EXPECT_EQ(MustRun(text, {Array::Of<float>({1, 2}), Array::Of<float>({3, 4})}).As<float>(),
            (std::vector<float>{1, 2}));
  // A mixed predicate still selects per element.
  const std::string mixed = Main("%x: tensor<2xf32>, %y: tensor<2xf32>", "tensor<2xf32>", R"(
  %p = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %0 = stablehlo.select %p, %x, %y : tensor<2xi1>, tensor<2xf32>
  return %0 : tensor<2xf32>)");
  EXPECT_EQ(PlanOps(mixed), std::vector<std::string>{"stablehlo.select"});
  EXPECT_EQ(MustRun(mixed, {Array::Of<float>({1, 2}), Array::Of<float>({3, 4})}).As<float>(),
            (std::vector<float>{1, 4}));
}

// x^T . dy transposed back, as JAX writes a weight gradient: one GEMM
// writing the transposed product, no copy after it. The product is
// [3, 2] = a[4, 3] contracted with b[4, 2] over dimension 0.
TEST(CanonicalizeTest, TransposedProductIsOneGemm) {
  const std::string text = Main("%a: tensor<4x3xf32>, %b: tensor<4x2xf32>", "tensor<2x3xf32>", R"(
  %p = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %t = stablehlo.transpose %p, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>)");
  EXPECT_EQ(PlanOps(text), std::vector<std::string>{"stablehlo.transpose"});
  const std::vector<float> a = Ramp<float>(12, 1.0, 1.0), b = Ramp<float>(8, -0.5, 2.0);
  std::vector<float> want(6, 0.0f);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) want[i * 3 + j] += a[k * 3 + j] * b[k * 2 + i];
    }
  }
  EXPECT_EQ(MustRun(text, {Array::Of(a), Array::Of(b)}).As<float>(), want);
}

// The product is also a result: it is computed once, and the transpose is a
// copy of it.
TEST(CanonicalizeTest, TransposedProductUsedElsewhereIsComputedOnce) {
  const std::string text = Main("%a: tensor<4x3xf32>, %b: tensor<4x2xf32>",
                                "(tensor<2x3xf32>, tensor<3x2xf32>)", R"(
  %p = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %t = stablehlo.transpose %p, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %t, %p : tensor<2x3xf32>, tensor<3x2xf32>)");
  EXPECT_EQ(PlanOps(text),
            (std::vector<std::string>{"stablehlo.dot_general", "stablehlo.transpose"}));
  auto results = testing::Run(text, {Array::Of(Ramp<float>(12, 1.0, 1.0)),
                                     Array::Of(Ramp<float>(8, -0.5, 2.0))});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  const std::vector<float> t = (*results)[0].As<float>(), p = (*results)[1].As<float>();
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(t[i * 3 + j], p[j * 2 + i]) << i << "," << j;
  }
}

}  // namespace
}  // namespace kiln::compiler
