// Loop programs (loop_program.h): which loops become one, and that they
// compute what the region form computes: in-place and staged carries,
// carries swapped, captured values, calls, windows clamped or skipped.
#include "compiler/loop_program.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "compiler/lowering_test_util.h"

namespace kiln::compiler {
namespace {

using testing::Array;
using testing::MustRun;

const Node* Loop(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    if (node.op == "stablehlo.while") return &node;
  }
  return nullptr;
}

// Compiles `text`; whether its while loop is a loop program.
bool IsLoopProgram(const std::string& text) {
  auto program = testing::CompileText(text);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return false;
  const Node* loop = Loop(*(*program)->graph);
  EXPECT_NE(loop, nullptr);
  return loop != nullptr && loop->regions.empty() && loop->detail.starts_with("loop program");
}

// fori_loop(0, n, lambda i, xs: xs.at[i].set(f(i)) (as jaxlib writes it,
// negative indices wrapped), from index `first`: indices past the end are
// skipped, as XLA skips a window that does not fit.
std::string SetLoop(int first, int trips) {
  return R"(
func.func @main(%x: tensor<5xf32>) -> tensor<5xf32> {
  %c0 = stablehlo.constant dense<)" +
         std::to_string(first) + R"(> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %xs = %x) : tensor<i32>, tensor<5xf32>
  cond {
    %n = stablehlo.constant dense<)" +
         std::to_string(first + trips) + R"(> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %negative = stablehlo.compare LT, %i, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %five = stablehlo.constant dense<5> : tensor<i32>
    %wrapped = stablehlo.add %i, %five : tensor<i32>
    %at = stablehlo.select %negative, %wrapped, %i : tensor<i1>, tensor<i32>
    %index = stablehlo.broadcast_in_dim %at, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %set = "stablehlo.scatter"(%xs, %index, %f) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%old: tensor<f32>, %new: tensor<f32>):
      stablehlo.return %new : tensor<f32>
    }) : (tensor<5xf32>, tensor<1xi32>, tensor<f32>) -> tensor<5xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %set : tensor<i32>, tensor<5xf32>
  }
  return %0#1 : tensor<5xf32>
}
)";
}

// A slice at an s16 start has no generated form: the interpreter computes
// it, and the scalar it writes, read by the adds after it, must be read from
// memory (not a register the generated loop keeps for it).
TEST(LoopProgramTest, AScalarACalledBackInstructionWritesIsReadFromMemory) {
  const std::string text = R"(
func.func @main(%x: tensor<10xi32>) -> tensor<i32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %five = stablehlo.constant dense<5> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %five) : tensor<i32>, tensor<i32>
  cond {
    %n = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %j = stablehlo.convert %i : (tensor<i32>) -> tensor<i16>
    %s = stablehlo.dynamic_slice %x, %j, sizes = [1] : (tensor<10xi32>, tensor<i16>) -> tensor<1xi32>
    %v = stablehlo.reshape %s : (tensor<1xi32>) -> tensor<i32>
    %w = stablehlo.add %v, %v : tensor<i32>
    %u = stablehlo.add %w, %v : tensor<i32>
    %t = stablehlo.add %u, %v : tensor<i32>
    %a = stablehlo.add %acc, %t : tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %k = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %k, %a : tensor<i32>, tensor<i32>
  }
  return %0#1 : tensor<i32>
}
)";
  ASSERT_TRUE(IsLoopProgram(text));
  std::vector<int32_t> x(10);
  int32_t want = 5;
  for (int32_t k = 0; k < 10; ++k) {
    x[static_cast<size_t>(k)] = 3 * k + 1;
    want += 4 * (3 * k + 1);
  }
  EXPECT_EQ(MustRun(text, {Array::Of<int32_t>(x)}).As<int32_t>(), (std::vector<int32_t>{want}));
}

TEST(LoopProgramTest, SetsOneElementPerTripInPlace) {
  const std::string text = SetLoop(0, 3);
  ASSERT_TRUE(IsLoopProgram(text));
  auto program = testing::CompileText(text);
  ASSERT_TRUE(program.ok());
  const Node* loop = Loop(*(*program)->graph);
  ASSERT_EQ(loop->output_over_input.size(), 2u);
  EXPECT_EQ(loop->output_over_input[1], 1);
  EXPECT_EQ(MustRun(text, {Array::Of<float>({9, 9, 9, 9, 9})}).As<float>(),
            (std::vector<float>{0, 1, 2, 9, 9}));
  // -2, -1 wrap to 3, 4; 0..4 land; 5 and 6 do not fit and are skipped.
  EXPECT_EQ(MustRun(SetLoop(-2, 9), {Array::Of<float>({9, 9, 9, 9, 9})}).As<float>(),
            (std::vector<float>{0, 1, 2, 3, 4}));
}

// A scan step: a row read by dynamic_slice (through a call, as jaxlib
// writes dynamic_index_in_dim), a carry computed elementwise, the previous
// carry stacked into the output by dynamic_update_slice.
TEST(LoopProgramTest, AScanStacksItsCarryThroughCalls) {
  const std::string text = R"(
func.func private @row(%xs: tensor<4x3xf32>, %i: tensor<i32>) -> tensor<3xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %xs, %i, %c, sizes = [1, 3] : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
  %1 = stablehlo.reshape %0 : (tensor<1x3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func @main(%x: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<3xf32>
  %out = stablehlo.constant dense<0.0> : tensor<4x3xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:4 = stablehlo.while(%xs = %x, %i = %c0, %c = %zero, %ys = %out) : tensor<4x3xf32>, tensor<i32>, tensor<3xf32>, tensor<4x3xf32>
  cond {
    %n = stablehlo.constant dense<4> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %x_i = func.call @row(%xs, %i) : (tensor<4x3xf32>, tensor<i32>) -> tensor<3xf32>
    %half = stablehlo.constant dense<0.5> : tensor<f32>
    %halves = stablehlo.broadcast_in_dim %half, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %decayed = stablehlo.multiply %c, %halves : tensor<3xf32>
    %next_c = stablehlo.add %decayed, %x_i : tensor<3xf32>
    %row = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %next_ys = stablehlo.dynamic_update_slice %ys, %row, %i, %z : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next_i = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %xs, %next_i, %next_c, %next_ys : tensor<4x3xf32>, tensor<i32>, tensor<3xf32>, tensor<4x3xf32>
  }
  return %0#2, %0#3 : tensor<3xf32>, tensor<4x3xf32>
}
)";
  ASSERT_TRUE(IsLoopProgram(text));
  auto program = testing::CompileText(text);
  ASSERT_TRUE(program.ok());
  const Node* loop = Loop(*(*program)->graph);
  EXPECT_EQ(loop->output_is_input, (std::vector<int32_t>{0, -1, -1, -1}));
  EXPECT_EQ(loop->output_over_input, (std::vector<int32_t>{-1, -1, -1, 3}));
  auto results = testing::Run(text, {Array::Of<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  // c: (1, 2, 3), (4.5, 6, 7.5), (9.25, 11, 12.75), (14.625, 16.5, 18.375).
  EXPECT_EQ((*results)[0].As<float>(), (std::vector<float>{14.625f, 16.5f, 18.375f}));
  EXPECT_EQ((*results)[1].As<float>(),
            (std::vector<float>{0, 0, 0, 1, 2, 3, 4.5f, 6, 7.5f, 9.25f, 11, 12.75f}));
}

// Carries swapped every trip are assigned together (each reads the
// other's value from before the trip); a value from outside the loop is
// read where it is; integer arithmetic wraps.
TEST(LoopProgramTest, SwapsCarriesReadsCapturesAndWraps) {
  const std::string text = R"(
func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>, %step: tensor<i32>) -> (tensor<2xi32>, tensor<2xi32>, tensor<i32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:4 = stablehlo.while(%i = %c0, %x = %a, %y = %b, %s = %c0) : tensor<i32>, tensor<2xi32>, tensor<2xi32>, tensor<i32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %big = stablehlo.constant dense<2147483647> : tensor<i32>
    %t = stablehlo.add %s, %step : tensor<i32>
    %wrapped = stablehlo.add %t, %big : tensor<i32>
    stablehlo.return %next, %y, %x, %wrapped : tensor<i32>, tensor<2xi32>, tensor<2xi32>, tensor<i32>
  }
  return %0#1, %0#2, %0#3 : tensor<2xi32>, tensor<2xi32>, tensor<i32>
}
)";
  ASSERT_TRUE(IsLoopProgram(text));
  auto results = testing::Run(text, {Array::Of<int32_t>({1, 2}), Array::Of<int32_t>({3, 4}),
                                     Array::Of<int32_t>({5})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<int32_t>(), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ((*results)[1].As<int32_t>(), (std::vector<int32_t>{1, 2}));
  // Three trips of s + 5 + (2^31 - 1) in 32 bits: 15 + 3 * (2^31 - 1) wraps to 2^31 + 12.
  EXPECT_EQ((*results)[2].As<int32_t>()[0], std::numeric_limits<int32_t>::min() + 12);
}

// What every trip computes alike (a captured scale broadcast and doubled,
// a slice of a captured table at a constant start) runs once, before the
// first trip; what depends on a carry stays in the loop. A loop of no trips
// still returns its initial carries.
TEST(LoopProgramTest, ValuesEveryTripComputesAlikeAreComputedOnce) {
  const auto text = [](int trips) {
    return R"(
func.func @main(%x: tensor<4xf32>, %scale: tensor<f32>, %table: tensor<8xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<)" +
           std::to_string(trips) + R"(> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %s = stablehlo.broadcast_in_dim %scale, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %s2 = stablehlo.add %s, %s : tensor<4xf32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %w = stablehlo.dynamic_slice %table, %two, sizes = [4] : (tensor<8xf32>, tensor<i32>) -> tensor<4xf32>
    %m = stablehlo.multiply %v, %s2 : tensor<4xf32>
    %a = stablehlo.add %m, %w : tensor<4xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %a : tensor<i32>, tensor<4xf32>
  }
  return %0#1 : tensor<4xf32>
}
)";
  };
  auto program = testing::CompileText(text(3));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const Node* loop = Loop(*(*program)->graph);
  ASSERT_NE(loop, nullptr);
  EXPECT_TRUE((loop->detail.find(", 3 before the loop") != std::string::npos)) << loop->detail;
  const std::vector<Array> args = {Array::Of<float>({1, 2, 3, 4}), Array::Of<float>({0.5f}),
                                   Array::Of<float>({0, 1, 2, 3, 4, 5, 6, 7})};
  // v -> v * 1 + table[2:6], three times.
  EXPECT_EQ(MustRun(text(3), args).As<float>(), (std::vector<float>{7, 11, 15, 19}));
  EXPECT_EQ(MustRun(text(0), args).As<float>(), (std::vector<float>{1, 2, 3, 4}));
}

// A row of an array no trip writes (a capture here; a scan's xs, which the
// loop passes through) is read in place, not copied; a slice of a carry
// the body changes is copied, so that it keeps the values of its trip.
TEST(LoopProgramTest, SlicesOfUnchangingArraysAreReadInPlace) {
  const std::string text = R"(
func.func @main(%x: tensor<4xf32>, %table: tensor<3x4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:3 = stablehlo.while(%i = %c0, %v = %x, %w = %x) : tensor<i32>, tensor<4xf32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %row = stablehlo.dynamic_slice %table, %i, %z, sizes = [1, 4] : (tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
    %r = stablehlo.reshape %row : (tensor<1x4xf32>) -> tensor<4xf32>
    %sum = stablehlo.add %v, %r : tensor<4xf32>
    %head = stablehlo.dynamic_slice %w, %z, sizes = [2] : (tensor<4xf32>, tensor<i32>) -> tensor<2xf32>
    %ten = stablehlo.constant dense<10.0> : tensor<2xf32>
    %w2 = stablehlo.dynamic_update_slice %w, %ten, %i : (tensor<4xf32>, tensor<2xf32>, tensor<i32>) -> tensor<4xf32>
    %t = stablehlo.dynamic_update_slice %w2, %head, %z : (tensor<4xf32>, tensor<2xf32>, tensor<i32>) -> tensor<4xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %sum, %t : tensor<i32>, tensor<4xf32>, tensor<4xf32>
  }
  return %0#1, %0#2 : tensor<4xf32>, tensor<4xf32>
}
)";
  auto program = testing::CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const Node* loop = Loop(*(*program)->graph);
  ASSERT_NE(loop, nullptr);
  EXPECT_TRUE((loop->detail.find(", 1 slice read in place") != std::string::npos)) << loop->detail;
  auto results = testing::Run(text, {Array::Of<float>({1, 2, 3, 4}),
                                     Array::Of<float>({1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<float>(), (std::vector<float>{7, 8, 9, 10}));
  // Trip i writes 10s at i (in place), then puts back the first two
  // elements as it read them before: [1, 2, 10, 10] after three trips. Read
  // in place, the first two would have been overwritten by then.
  EXPECT_EQ((*results)[1].As<float>(), (std::vector<float>{1, 2, 10, 10}));
}

// A carry's next value is written into the carry itself when the op
// computing it can move past the last read of the old value: i's next
// value computed first still lets the later ops read the old i, and a
// read of the next value after the move reads the carry. Where an op in
// between reads the next value before the old one is read (j's), the
// value stays in scratch.
TEST(LoopProgramTest, NextValuesWrittenIntoTheirCarriesKeepOldReadsOld) {
  const std::string text = R"(
func.func @main(%x: tensor<3xi32>) -> (tensor<i32>, tensor<i32>, tensor<3xi32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:3 = stablehlo.while(%i = %c0, %j = %c0, %v = %x) : tensor<i32>, tensor<i32>, tensor<3xi32>
  cond {
    %n = stablehlo.constant dense<4> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %ni = stablehlo.add %i, %one : tensor<i32>
    %three = stablehlo.constant dense<3> : tensor<i32>
    %nj = stablehlo.add %j, %three : tensor<i32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %twice = stablehlo.multiply %nj, %two : tensor<i32>
    %k = stablehlo.add %j, %twice : tensor<i32>
    %b = stablehlo.broadcast_in_dim %k, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %w = stablehlo.add %v, %b : tensor<3xi32>
    %s = stablehlo.dynamic_slice %w, %ni, sizes = [1] : (tensor<3xi32>, tensor<i32>) -> tensor<1xi32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %u = stablehlo.dynamic_update_slice %w, %s, %z : (tensor<3xi32>, tensor<1xi32>, tensor<i32>) -> tensor<3xi32>
    stablehlo.return %ni, %nj, %u : tensor<i32>, tensor<i32>, tensor<3xi32>
  }
  return %0#0, %0#1, %0#2 : tensor<i32>, tensor<i32>, tensor<3xi32>
}
)";
  ASSERT_TRUE(IsLoopProgram(text));
  auto results = testing::Run(text, {Array::Of<int32_t>({10, 20, 30})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<int32_t>()[0], 4);
  // j' = j + 3; v' = v + (j + 2 j'), then v'[0] = v'[min(i + 1, 2)].
  int32_t j = 0;
  std::vector<int32_t> v = {10, 20, 30};
  for (int i = 0; i < 4; ++i) {
    const int32_t next = j + 3;
    for (int32_t& e : v) e += j + 2 * next;
    v[0] = v[static_cast<size_t>(std::min(i + 1, 2))];
    j = next;
  }
  EXPECT_EQ((*results)[1].As<int32_t>()[0], j);
  EXPECT_EQ((*results)[2].As<int32_t>(), v);
}

// A carry read after its update is not updated in place: the read sees the
// carry from before the trip. dynamic_slice and dynamic_update_slice clamp
// their starts so that the window fits.
TEST(LoopProgramTest, ACarryReadAfterItsUpdateKeepsTheOldValueAndWindowsClamp) {
  const std::string text = R"(
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0:3 = stablehlo.while(%i = %c0, %xs = %x, %sum = %zero) : tensor<i32>, tensor<4xf32>, tensor<f32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %ten = stablehlo.constant dense<10.0> : tensor<2xf32>
    %far = stablehlo.constant dense<7> : tensor<i32>
    %set = stablehlo.dynamic_update_slice %xs, %ten, %far : (tensor<4xf32>, tensor<2xf32>, tensor<i32>) -> tensor<4xf32>
    %last = stablehlo.dynamic_slice %xs, %far, sizes = [1] : (tensor<4xf32>, tensor<i32>) -> tensor<1xf32>
    %value = stablehlo.reshape %last : (tensor<1xf32>) -> tensor<f32>
    %next_sum = stablehlo.add %sum, %value : tensor<f32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %set, %next_sum : tensor<i32>, tensor<4xf32>, tensor<f32>
  }
  return %0#1, %0#2 : tensor<4xf32>, tensor<f32>
}
)";
  ASSERT_TRUE(IsLoopProgram(text));
  auto program = testing::CompileText(text);
  ASSERT_TRUE(program.ok());
  EXPECT_EQ(Loop(*(*program)->graph)->output_over_input[1], -1);
  auto results = testing::Run(text, {Array::Of<float>({1, 2, 3, 4})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  // The update lands at 2 (7 clamped); the read at 3 sees 4, then 10, 10.
  EXPECT_EQ((*results)[0].As<float>(), (std::vector<float>{1, 2, 10, 10}));
  EXPECT_EQ((*results)[1].As<float>()[0], 24.0f);
}

// A function called twice in a body (jnp.where inside remainder and on its
// own) is compiled twice: each call's values are its own.
TEST(LoopProgramTest, AFunctionCalledTwiceIsCompiledTwice) {
  const std::string text = R"(
func.func private @pick(%p: tensor<i1>, %a: tensor<i32>, %b: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.select %p, %a, %b : tensor<i1>, tensor<i32>
  return %0 : tensor<i32>
}
func.func @main(%x: tensor<i32>) -> tensor<i32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<i32>
  cond {
    %n = stablehlo.constant dense<2> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %true = stablehlo.constant dense<true> : tensor<i1>
    %ten = stablehlo.constant dense<10> : tensor<i32>
    %first = func.call @pick(%true, %ten, %v) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %sum = stablehlo.add %first, %v : tensor<i32>
    %false = stablehlo.constant dense<false> : tensor<i1>
    %second = func.call @pick(%false, %first, %sum) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %second : tensor<i32>, tensor<i32>
  }
  return %0#1 : tensor<i32>
}
)";
  ASSERT_TRUE(IsLoopProgram(text));
  // v + 10 per trip; with the first call's select reused, 10.
  EXPECT_EQ(MustRun(text, {Array::Of<int32_t>({1})}).As<int32_t>()[0], 21);
}

// An update whose result the body drops, or a second update of a carry's
// old value, must not write the carry in place: the carry keeps its value
// (or the second update sees the old one).
TEST(LoopProgramTest, DroppedAndRepeatedUpdatesLeaveTheCarryAlone) {
  const auto loop = [](const std::string& body, const std::string& result) {
    return R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %o = stablehlo.constant dense<1> : tensor<i32>
    %ones = stablehlo.constant dense<1.0> : tensor<1xf32>
    %twos = stablehlo.constant dense<2.0> : tensor<1xf32>
    )" + body +
           R"(
    %next = stablehlo.add %i, %o : tensor<i32>
    stablehlo.return %next, )" +
           result + R"( : tensor<i32>, tensor<4xf32>
  }
  return %0#1 : tensor<4xf32>
}
)";
  };
  const std::string dropped = loop(
      "%dead = stablehlo.dynamic_update_slice %v, %ones, %z : (tensor<4xf32>, "
      "tensor<1xf32>, tensor<i32>) -> tensor<4xf32>",
      "%v");
  ASSERT_TRUE(IsLoopProgram(dropped));
  EXPECT_EQ(MustRun(dropped, {Array::Of<float>({0, 0, 0, 0})}).As<float>(),
            (std::vector<float>{0, 0, 0, 0}));
  const std::string twice = loop(
      "%a = stablehlo.dynamic_update_slice %v, %ones, %z : (tensor<4xf32>, tensor<1xf32>, "
      "tensor<i32>) -> tensor<4xf32>\n"
      "    %b = stablehlo.dynamic_update_slice %v, %twos, %o : (tensor<4xf32>, tensor<1xf32>, "
      "tensor<i32>) -> tensor<4xf32>",
      "%b");
  ASSERT_TRUE(IsLoopProgram(twice));
  EXPECT_EQ(MustRun(twice, {Array::Of<float>({0, 0, 0, 0})}).As<float>(),
            (std::vector<float>{0, 2, 0, 0}));
  // Chained updates stay in place and see each other.
  const std::string chained = loop(
      "%a = stablehlo.dynamic_update_slice %v, %ones, %z : (tensor<4xf32>, tensor<1xf32>, "
      "tensor<i32>) -> tensor<4xf32>\n"
      "    %b = stablehlo.dynamic_update_slice %a, %twos, %o : (tensor<4xf32>, tensor<1xf32>, "
      "tensor<i32>) -> tensor<4xf32>",
      "%b");
  auto program = testing::CompileText(chained);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(Loop(*(*program)->graph)->output_over_input[1], 1);
  EXPECT_EQ(MustRun(chained, {Array::Of<float>({0, 0, 0, 0})}).As<float>(),
            (std::vector<float>{1, 2, 0, 0}));
}

// A loop computing values above kMaxValueBytes, or using an op loop
// programs do not run (a reduce), keeps its region form.
TEST(LoopProgramTest, LargeValuesAndOtherOpsKeepTheRegionForm) {
  const std::string large = R"(
func.func @main(%x: tensor<32768xf32>) -> tensor<32768xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %xs = %x) : tensor<i32>, tensor<32768xf32>
  cond {
    %n = stablehlo.constant dense<2> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %twice = stablehlo.add %xs, %xs : tensor<32768xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %twice : tensor<i32>, tensor<32768xf32>
  }
  return %0#1 : tensor<32768xf32>
}
)";
  EXPECT_FALSE(IsLoopProgram(large));
  std::vector<float> x(32768, 1.5f);
  EXPECT_EQ(MustRun(large, {Array::Of<float>(x)}).As<float>(), std::vector<float>(32768, 6.0f));

  const std::string reduces = R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.while(%xs = %x) : tensor<4xf32>
  cond {
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %total = stablehlo.reduce(%xs init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %limit = stablehlo.constant dense<100.0> : tensor<f32>
    %1 = stablehlo.compare LT, %total, %limit, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %twice = stablehlo.add %xs, %xs : tensor<4xf32>
    stablehlo.return %twice : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
)";
  EXPECT_FALSE(IsLoopProgram(reduces));
  EXPECT_EQ(MustRun(reduces, {Array::Of<float>({1, 2, 3, 4})}).As<float>(),
            (std::vector<float>{16, 32, 48, 64}));
}

// Inline compares follow IEEE: NaN compares unequal and unordered; select
// on an array of preds picks per element.
TEST(LoopProgramTest, InlineOpsFollowTheKernels) {
  const std::string text = R"(
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %xs = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %less = stablehlo.compare LT, %xs, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %ne = stablehlo.compare NE, %xs, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %both = stablehlo.and %less, %ne : tensor<4xi1>
    %minus = stablehlo.subtract %y, %xs : tensor<4xf32>
    %picked = stablehlo.select %both, %minus, %xs : tensor<4xi1>, tensor<4xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %picked : tensor<i32>, tensor<4xf32>
  }
  return %0#1 : tensor<4xf32>
}
)";
  ASSERT_TRUE(IsLoopProgram(text));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> out =
      MustRun(text, {Array::Of<float>({1, 5, nan, 2}), Array::Of<float>({3, 4, 0, 2})}).As<float>();
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[1], 5.0f);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 2.0f);
}

}  // namespace
}  // namespace kiln::compiler
