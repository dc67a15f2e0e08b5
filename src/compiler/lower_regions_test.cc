// Control flow (while, if, case), sort and map compiled from StableHLO text
// and run through compiler::Execute: the recognized (kernel) and the generic
// (region per element) paths, and their edge cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/lowering_test_util.h"

namespace kiln::compiler {
namespace {

using testing::Array;
using testing::Run;

// Runs and expects success; every result.
std::vector<Array> MustRun(const std::string& text, const std::vector<Array>& args) {
  StatusOr<std::vector<Array>> results = Run(text, args);
  EXPECT_TRUE(results.ok()) << results.status().ToString() << "\n" << text;
  return results.ok() ? *results : std::vector<Array>{};
}

// A module whose main takes `signature` and returns `results`.
std::string Main(const std::string& signature, const std::string& results,
                 const std::string& body) {
  return testing::Main(signature, "(" + results + ")", body);
}

// A fori_loop: i < n doubling x, with n captured from outside the loop.
constexpr char kWhile[] = R"(
func.func @main(%arg0: tensor<3xf32>, %n: tensor<i32>) -> (tensor<3xf32>, tensor<i32>) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %x = %arg0) : tensor<i32>, tensor<3xf32>
  cond {
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %2 = stablehlo.add %x, %x : tensor<3xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %3 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %3, %2 : tensor<i32>, tensor<3xf32>
  }
  return %0#1, %0#0 : tensor<3xf32>, tensor<i32>
}
)";

TEST(LowerControlFlowTest, WhileCarriesValuesAndReadsCaptures) {
  for (int32_t n : {0, 1, 2, 5}) {
    auto results = MustRun(kWhile, {Array::Of<float>({1, 2, 3}), Array::Of<int32_t>({n})});
    ASSERT_EQ(results.size(), 2u);
    const auto scale = static_cast<float>(1 << n);
    EXPECT_EQ(results[0].As<float>(), (std::vector<float>{scale, 2 * scale, 3 * scale})) << n;
    EXPECT_EQ(results[1].As<int32_t>()[0], n);
  }
}

TEST(LowerControlFlowTest, WhileOverConstantsIsNotFoldedAndRuns) {
  const std::string text = R"(
func.func @main() -> tensor<i32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.while(%i = %c) : tensor<i32>
  cond {
    %ten = stablehlo.constant dense<10> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %ten, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %three = stablehlo.constant dense<3> : tensor<i32>
    %2 = stablehlo.add %i, %three : tensor<i32>
    stablehlo.return %2 : tensor<i32>
  }
  return %0 : tensor<i32>
}
)";
  auto results = MustRun(text, {});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].As<int32_t>()[0], 12);
}

constexpr char kCase[] = R"(
func.func @main(%index: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.case"(%index) ({
    stablehlo.return %x : tensor<2xf32>
  }, {
    %1 = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %1 : tensor<2xf32>
  }, {
    %2 = stablehlo.add %x, %x : tensor<2xf32>
    stablehlo.return %2 : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
)";

// A scan stacking one row per iteration into a carry: the update is made in
// the carry's own memory (no copy of the whole carry per iteration). In the
// second program the body reads the old carry after the update (its sum),
// so the carry must not be updated in place (the sum would see the new
// row); both give the values of the plain semantics.
std::string StackingLoop(bool read_after_update) {
  const std::string after = read_after_update ? R"(
    %s = stablehlo.reduce(%stack init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<f32>
    %t = stablehlo.add %total, %s : tensor<f32>)"
                                              : R"(
    %t = stablehlo.add %total, %zero : tensor<f32>)";
  return R"(
func.func @main(%x: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %init = stablehlo.constant dense<0.0> : tensor<4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0:3 = stablehlo.while(%i = %c0, %stack = %init, %total = %zero) : tensor<i32>, tensor<4x3xf32>, tensor<f32>
  cond {
    %four = stablehlo.constant dense<4> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %fb = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %row = stablehlo.add %x, %fb : tensor<3xf32>
    %r2 = stablehlo.reshape %row : (tensor<3xf32>) -> tensor<1x3xf32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %acc = stablehlo.dynamic_update_slice %stack, %r2, %i, %z : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>)" +
         after + R"(
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %acc, %t : tensor<i32>, tensor<4x3xf32>, tensor<f32>
  }
  return %0#1, %0#2 : tensor<4x3xf32>, tensor<f32>
}
)";
}

TEST(LowerControlFlowTest, ScanCarriesAreUpdatedInPlaceOnlyWhenNothingReadsThemAfter) {
  const std::vector<float> stacked = {1, 2, 3, 2, 3, 4, 3, 4, 5, 4, 5, 6};
  auto plain = MustRun(StackingLoop(false), {Array::Of<float>({1, 2, 3})});
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0].As<float>(), stacked);
  EXPECT_EQ(plain[1].As<float>()[0], 0.0f);
  auto reread = MustRun(StackingLoop(true), {Array::Of<float>({1, 2, 3})});
  ASSERT_EQ(reread.size(), 2u);
  EXPECT_EQ(reread[0].As<float>(), stacked);
  // Sums of the stack before each update: 0, 6, 6 + 9, 6 + 9 + 12.
  EXPECT_EQ(reread[1].As<float>()[0], 48.0f);
}

// Carries the body returns unchanged (a scan's weights) stay in one buffer;
// the loop still sees them each iteration, returns them unchanged, and a
// carry that is also returned in another position keeps its own copy.
TEST(LowerControlFlowTest, CarriesPassedThroughStayPutAndKeepTheirValues) {
  const std::string text = R"(
func.func @main(%w: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %acc0 = stablehlo.constant dense<0.0> : tensor<3xf32>
  %0:4 = stablehlo.while(%i = %c0, %weights = %w, %acc = %acc0, %last = %acc0) : tensor<i32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  cond {
    %three = stablehlo.constant dense<3> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %sum = stablehlo.add %acc, %weights : tensor<3xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %weights, %sum, %weights : tensor<i32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  }
  return %0#1, %0#2, %0#3 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
)";
  auto results = MustRun(text, {Array::Of<float>({1, 2, -4})});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].As<float>(), (std::vector<float>{1, 2, -4}));
  EXPECT_EQ(results[1].As<float>(), (std::vector<float>{3, 6, -12}));
  EXPECT_EQ(results[2].As<float>(), (std::vector<float>{1, 2, -4}));
}

// A scan as JAX writes it: weights passed through, a stack of rows
// (initialized from a computed value) updated in place. `init_read_after`:
// the init is also summed after the loop, so the stack may not take its
// memory.
std::string ScanWithComputedInit(bool init_read_after) {
  const std::string after = init_read_after ? R"(
  %seen = stablehlo.reduce(%init init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>)"
                                            : R"(
  %seen = stablehlo.add %zero, %zero : tensor<f32>)";
  return R"(
func.func @main(%w: tensor<8xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<8xf32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %init = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
  %0:3 = stablehlo.while(%i = %c0, %weights = %w, %stack = %init) : tensor<i32>, tensor<8xf32>, tensor<4x8xf32>
  cond {
    %four = stablehlo.constant dense<4> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %fb = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %row = stablehlo.multiply %weights, %fb : tensor<8xf32>
    %r2 = stablehlo.reshape %row : (tensor<8xf32>) -> tensor<1x8xf32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %acc = stablehlo.dynamic_update_slice %stack, %r2, %i, %z : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<i32>, tensor<i32>) -> tensor<4x8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %weights, %acc : tensor<i32>, tensor<8xf32>, tensor<4x8xf32>
  }
  %total = stablehlo.reduce(%0#2 init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
  %w2 = stablehlo.add %0#1, %0#1 : tensor<8xf32>)" +
         after + R"(
  return %total, %w2, %seen : tensor<f32>, tensor<8xf32>, tensor<f32>
}
)";
}

const Node* FindNode(const Graph& graph, std::string_view op) {
  for (const Node& node : graph.nodes) {
    if (node.op == op) return &node;
  }
  return nullptr;
}

// The weights the body passes through are the parameter's memory (not a
// copy), and the stacked rows are written over their dying init: the arena
// holds the init once. When the init is read after the loop, the stack gets
// memory of its own. The values are the plain semantics' either way.
TEST(LowerControlFlowTest, ScanOutputsTakeOverTheMemoryOfTheirInits) {
  for (bool init_read_after : {false, true}) {
    const std::string text = ScanWithComputedInit(init_read_after);
    auto program = testing::CompileText(text);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    const Graph& graph = *(*program)->graph;
    const Node* loop = FindNode(graph, "stablehlo.while");
    ASSERT_NE(loop, nullptr);
    ASSERT_EQ(loop->outputs.size(), 3u);
    const Placement& weights = graph.placements[static_cast<size_t>(loop->outputs[1])];
    EXPECT_EQ(weights.storage, Storage::kAlias);
    EXPECT_EQ(weights.index, graph.parameters[0]);
    const Placement& stack = graph.placements[static_cast<size_t>(loop->outputs[2])];
    const Placement& init = graph.placements[static_cast<size_t>(loop->inputs[2])];
    ASSERT_EQ(stack.storage, Storage::kArena);
    ASSERT_EQ(init.storage, Storage::kArena);
    EXPECT_EQ(stack.offset == init.offset, !init_read_after) << init_read_after;
    if (!init_read_after) {
      EXPECT_LT(graph.arena_bytes, 2 * 4 * 8 * 4);
    }

    auto results = MustRun(text,
                           {Array::Of<float>({1, 2, 3, 4, 5, 6, 7, -8}), Array::Of<float>({0.5f})});
    ASSERT_EQ(results.size(), 3u);
    // Rows i * w for i < 4: (0 + 1 + 2 + 3) * sum(w) = 6 * 20.
    EXPECT_EQ(results[0].As<float>()[0], 120.0f) << init_read_after;
    EXPECT_EQ(results[1].As<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12, 14, -16}));
    EXPECT_EQ(results[2].As<float>()[0], init_read_after ? 16.0f : 0.0f);
  }
}

// `xs.at[i].set(i)` on a loop's carry, as JAX writes it (a scatter): the
// scatter writes its one element in the carry's own memory (the loop keeps
// the carry in its output, output_over_input), rather than copying the
// whole carry every trip. `read_after`: the body also sums the old carry
// after the scatter, so the carry may not be updated in place there.
std::string ScatterLoop(bool read_after) {
  const std::string after = read_after ? R"(
    %s = stablehlo.reduce(%xs init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
    %t = stablehlo.add %total, %s : tensor<f32>)"
                                       : R"(
    %t = stablehlo.add %total, %zero : tensor<f32>)";
  return R"(
func.func @main(%x: tensor<6xf32>) -> (tensor<6xf32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0:3 = stablehlo.while(%i = %c0, %xs = %x, %total = %zero) : tensor<i32>, tensor<6xf32>, tensor<f32>
  cond {
    %four = stablehlo.constant dense<4> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %index = stablehlo.broadcast_in_dim %i, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %set = "stablehlo.scatter"(%xs, %index, %f) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%old: tensor<f32>, %new: tensor<f32>):
      stablehlo.return %new : tensor<f32>
    }) : (tensor<6xf32>, tensor<1xi32>, tensor<f32>) -> tensor<6xf32>)" +
         after + R"(
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %set, %t : tensor<i32>, tensor<6xf32>, tensor<f32>
  }
  return %0#1, %0#2 : tensor<6xf32>, tensor<f32>
}
)";
}

TEST(LowerControlFlowTest, ScatterIntoACarryUpdatesItInPlaceUnlessReadAfter) {
  for (bool read_after : {false, true}) {
    auto program = testing::CompileText(ScatterLoop(read_after));
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    const Node* loop = FindNode(*(*program)->graph, "stablehlo.while");
    ASSERT_NE(loop, nullptr);
    ASSERT_EQ(loop->output_over_input.size(), 3u);
    EXPECT_EQ(loop->output_over_input[1], read_after ? -1 : 1) << read_after;

    auto results = MustRun(ScatterLoop(read_after), {Array::Of<float>({9, 9, 9, 9, 9, 9})});
    ASSERT_EQ(results.size(), 2u);
    EXPECT_EQ(results[0].As<float>(), (std::vector<float>{0, 1, 2, 3, 9, 9})) << read_after;
    // Sums of the carry before each trip's scatter: 54, 45, 37, 30.
    EXPECT_EQ(results[1].As<float>()[0], read_after ? 166.0f : 0.0f);
  }
}

// Outside loops too, a scatter writes over an operand that dies there.
TEST(LowerControlFlowTest, AScatterWritesOverAnOperandThatDiesThere) {
  const std::string text = R"(
func.func @main(%x: tensor<6xf32>, %v: tensor<f32>) -> tensor<f32> {
  %doubled = stablehlo.add %x, %x : tensor<6xf32>
  %index = stablehlo.constant dense<[2]> : tensor<1xi32>
  %set = "stablehlo.scatter"(%doubled, %index, %v) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>}> ({
  ^bb0(%old: tensor<f32>, %new: tensor<f32>):
    %sum = stablehlo.add %old, %new : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) : (tensor<6xf32>, tensor<1xi32>, tensor<f32>) -> tensor<6xf32>
  %squares = stablehlo.multiply %set, %set : tensor<6xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %out = stablehlo.reduce(%squares init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
  return %out : tensor<f32>
}
)";
  auto program = testing::CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const Graph& graph = *(*program)->graph;
  const Node* scatter = FindNode(graph, "stablehlo.scatter");
  ASSERT_NE(scatter, nullptr);
  const Placement& in = graph.placements[static_cast<size_t>(scatter->inputs[0])];
  const Placement& out = graph.placements[static_cast<size_t>(scatter->outputs[0])];
  ASSERT_EQ(in.storage, Storage::kArena);
  EXPECT_EQ(out.storage, Storage::kArena);
  EXPECT_EQ(in.offset, out.offset);
  auto results = MustRun(text, {Array::Of<float>({1, 2, 3, 4, 5, 6}), Array::Of<float>({10})});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].As<float>()[0], 4.0f + 16 + 256 + 64 + 100 + 144);
}

// A scatter whose operands are all constants folds into a constant and
// adds no node (its in-place marking must then touch no node: it crashed).
TEST(LowerControlFlowTest, AScatterOfConstantsFolds) {
  const std::string text = R"(
func.func @main() -> tensor<4xf32> {
  %zeros = stablehlo.constant dense<0.0> : tensor<4xf32>
  %index = stablehlo.constant dense<[[1], [3]]> : tensor<2x1xi32>
  %values = stablehlo.constant dense<[5.0, 7.0]> : tensor<2xf32>
  %set = "stablehlo.scatter"(%zeros, %index, %values) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%old: tensor<f32>, %new: tensor<f32>):
    stablehlo.return %new : tensor<f32>
  }) : (tensor<4xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<4xf32>
  return %set : tensor<4xf32>
}
)";
  auto results = MustRun(text, {});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].As<float>(), (std::vector<float>{0, 5, 0, 7}));
}

// The same value is two carries' init: one carry stacks rows into it, the
// other passes it through. Neither may write the other's memory.
TEST(LowerControlFlowTest, AnInitSharedByTwoCarriesIsNotWrittenOverByEither) {
  const std::string text = R"(
func.func @main(%s: tensor<f32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %init = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %0:3 = stablehlo.while(%i = %c0, %stack = %init, %kept = %init) : tensor<i32>, tensor<2x3xf32>, tensor<2x3xf32>
  cond {
    %two = stablehlo.constant dense<2> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %two, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %row = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %acc = stablehlo.dynamic_update_slice %stack, %row, %i, %z : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %acc, %kept : tensor<i32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
  %a = stablehlo.add %0#1, %0#1 : tensor<2x3xf32>
  %b = stablehlo.add %0#2, %0#2 : tensor<2x3xf32>
  return %a, %b : tensor<2x3xf32>, tensor<2x3xf32>
}
)";
  auto results = MustRun(text, {Array::Of<float>({7})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].As<float>(), (std::vector<float>{0, 0, 0, 2, 2, 2}));
  EXPECT_EQ(results[1].As<float>(), (std::vector<float>(6, 14.0f)));
}

TEST(LowerControlFlowTest, CaseClampsOutOfRangeIndexesToTheLastBranch) {
  const Array x = Array::Of<float>({1, -2});
  const std::vector<std::pair<int32_t, std::vector<float>>> cases = {
      {0, {1, -2}}, {1, {-1, 2}}, {2, {2, -4}}, {3, {2, -4}}, {-1, {2, -4}}};
  for (const auto& [index, expected] : cases) {
    auto results = MustRun(kCase, {Array::Of<int32_t>({index}), x});
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].As<float>(), expected) << index;
  }
}

TEST(LowerControlFlowTest, IfPicksABranch) {
  const std::string text = R"(
func.func @main(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.if"(%p) ({
    %1 = stablehlo.negate %x : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }, {
    stablehlo.return %x : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  return %0 : tensor<f32>
}
)";
  EXPECT_EQ(MustRun(text, {Array::Of<uint8_t>({1}), Array::Of<float>({3})})[0].As<float>()[0], -3);
  EXPECT_EQ(MustRun(text, {Array::Of<uint8_t>({0}), Array::Of<float>({3})})[0].As<float>()[0], 3);
}

// JAX's comparator for floats: canonicalize -0 and NaN, then TOTALORDER LT.
std::string JaxSort(const std::string& shape, int dimension, bool with_indices) {
  const std::string f = "tensor<" + shape + "xf32>";
  const std::string i = "tensor<" + shape + "xi32>";
  std::string canonical;
  for (const char* arg : {"%a", "%b"}) {
    const std::string n = std::string(arg).substr(1);
    canonical += "    %z" + n +
                 " = stablehlo.constant dense<0.0> : tensor<f32>\n"
                 "    %e" +
                 n + " = stablehlo.compare EQ, " + arg + ", %z" + n +
                 ", FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
                 "    %s" +
                 n + " = stablehlo.select %e" + n + ", %z" + n + ", " + arg +
                 " : tensor<i1>, tensor<f32>\n"
                 "    %n" +
                 n + " = stablehlo.compare NE, " + arg + ", " + arg +
                 ", FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
                 "    %q" +
                 n +
                 " = stablehlo.constant dense<0x7FC00000> : tensor<f32>\n"
                 "    %k" +
                 n + " = stablehlo.select %n" + n + ", %q" + n + ", %s" + n +
                 " : tensor<i1>, tensor<f32>\n";
  }
  const std::string operands = with_indices ? "%arg0, %iota" : "%arg0";
  const std::string types = with_indices ? f + ", " + i : f;
  const std::string block_args =
      with_indices ? "%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>"
                   : "%a: tensor<f32>, %b: tensor<f32>";
  return Main("%arg0: " + f, types,
              (with_indices ? "  %iota = stablehlo.iota dim = " + std::to_string(dimension) +
                                  " : " + i + "\n"
                            : std::string()) +
                  "  %0:" + (with_indices ? "2" : "1") + " = \"stablehlo.sort\"(" + operands +
                  ") <{dimension = " + std::to_string(dimension) +
                  " : i64, is_stable = true}> ({\n  ^bb0(" + block_args + "):\n" + canonical +
                  "    %lt = stablehlo.compare LT, %ka, %kb, TOTALORDER : (tensor<f32>, "
                  "tensor<f32>) -> tensor<i1>\n    stablehlo.return %lt : tensor<i1>\n  }) : (" +
                  types + ") -> (" + types + ")\n  return " +
                  (with_indices ? "%0#0, %0#1" : "%0#0") + " : " + types);
}

TEST(LowerSortTest, JaxComparatorOrdersNaNLastAndZerosAsEqual) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto results = MustRun(JaxSort("6", 0, true),
                         {Array::Of<float>({3, nan, -0.0f, 0.0f, -1, -nan})});
  ASSERT_EQ(results.size(), 2u);
  const std::vector<float> sorted = results[0].As<float>();
  EXPECT_EQ(results[1].As<int32_t>(), (std::vector<int32_t>{4, 2, 3, 0, 1, 5}));
  EXPECT_EQ(sorted[0], -1);
  EXPECT_TRUE(std::signbit(sorted[1]));  // -0 before +0: stable, they are equal
  EXPECT_TRUE(std::isnan(sorted[4]) && std::isnan(sorted[5]));
}

TEST(LowerSortTest, SortsAlongAnyDimension) {
  auto results = MustRun(JaxSort("2x3", 0, true), {Array::Of<float>({5, 1, 3, 2, 4, 0})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].As<float>(), (std::vector<float>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(results[1].As<int32_t>(), (std::vector<int32_t>{1, 0, 1, 0, 1, 0}));
}

// A comparator no pattern knows: by absolute value, descending.
constexpr char kGenericSort[] = R"(
func.func @main(%x: tensor<5xi32>) -> tensor<5xi32> {
  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %1 = stablehlo.abs %a : tensor<i32>
    %2 = stablehlo.abs %b : tensor<i32>
    %3 = stablehlo.compare GT, %1, %2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %3 : tensor<i1>
  }) : (tensor<5xi32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}
)";

TEST(LowerSortTest, GenericComparatorRunsTheRegion) {
  auto results = MustRun(kGenericSort, {Array::Of<int32_t>({1, -3, 2, 3, -1})});
  EXPECT_EQ(results[0].As<int32_t>(), (std::vector<int32_t>{-3, 3, 2, 1, -1}));
}

// lax.sort((x, y), num_keys=2) with integer keys: lexicographic.
constexpr char kTwoKeys[] = R"(
func.func @main(%x: tensor<5xi32>, %y: tensor<5xui8>) -> (tensor<5xi32>, tensor<5xui8>) {
  %0:2 = "stablehlo.sort"(%x, %y) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<ui8>, %d: tensor<ui8>):
    %1 = stablehlo.compare LT, %c, %d, UNSIGNED : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
    %2 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %3 = stablehlo.compare EQ, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %4 = stablehlo.and %3, %1 : tensor<i1>
    %5 = stablehlo.or %2, %4 : tensor<i1>
    stablehlo.return %5 : tensor<i1>
  }) : (tensor<5xi32>, tensor<5xui8>) -> (tensor<5xi32>, tensor<5xui8>)
  return %0#0, %0#1 : tensor<5xi32>, tensor<5xui8>
}
)";

TEST(LowerSortTest, LexicographicKeys) {
  auto results = MustRun(kTwoKeys, {Array::Of<int32_t>({2, 1, 2, 1, 0}),
                                    Array::Of<uint8_t>({200, 9, 3, 8, 255})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].As<int32_t>(), (std::vector<int32_t>{0, 1, 1, 2, 2}));
  EXPECT_EQ(results[1].As<uint8_t>(), (std::vector<uint8_t>{255, 8, 9, 3, 200}));
}

TEST(LowerMapTest, ComputationsUsingOuterValuesRunAsRegions) {
  const std::string text = R"(
func.func @main(%x: tensor<300xi32>, %k: tensor<i32>) -> tensor<300xi32> {
  %0 = "stablehlo.map"(%x) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<i32>):
    %1 = stablehlo.multiply %a, %k : tensor<i32>
    stablehlo.return %1 : tensor<i32>
  }) : (tensor<300xi32>) -> tensor<300xi32>
  return %0 : tensor<300xi32>
}
)";
  std::vector<int32_t> x(300);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i);
  auto results = MustRun(text, {Array::Of(x), Array::Of<int32_t>({-3})});
  ASSERT_EQ(results.size(), 1u);
  const std::vector<int32_t> y = results[0].As<int32_t>();
  ASSERT_EQ(y.size(), 300u);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], -3 * static_cast<int32_t>(i));
}

TEST(LowerMapTest, RunsTheComputationPerElement) {
  const std::string text = R"(
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.map"(%x, %y) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.multiply %a, %b : tensor<f32>
    %2 = stablehlo.add %1, %a : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
)";
  auto results = MustRun(text, {Array::Of<float>({1, 2, 3}), Array::Of<float>({4, 5, 6})});
  EXPECT_EQ(results[0].As<float>(), (std::vector<float>{5, 12, 21}));
}

}  // namespace
}  // namespace kiln::compiler
