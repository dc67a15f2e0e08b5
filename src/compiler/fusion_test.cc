// Fusion of elementwise chains (fusion.cc): which nodes a plan keeps, and
// that fused loops compute what the unfused nodes would, across tile and
// row boundaries, with broadcasts, transposes, escaping intermediates and
// an output written over an input.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "compiler/lowering_test_util.h"
#include "kernels/loop_jit.h"

namespace kiln::compiler {
namespace {

using testing::Array;
using testing::CompileText;
using testing::Main;
using testing::Ramp;
using testing::RunInto;

std::vector<std::string> PlanOps(const Program& program) {
  std::vector<std::string> ops;
  for (const Node& node : program.graph->nodes) ops.push_back(node.op);
  return ops;
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
  const std::string text = Main("%x: tensor<60x70xf32>, %y: tensor<70x60xf32>", "tensor<70x60xf32>",
                                R"(
  %one = stablehlo.constant dense<1.0> : tensor<60x70xf32>
  %0 = stablehlo.add %x, %one : tensor<60x70xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<60x70xf32>) -> tensor<70x60xf32>
  %2 = stablehlo.transpose %x, dims = [1, 0] : (tensor<60x70xf32>) -> tensor<70x60xf32>
  %3 = stablehlo.multiply %1, %2 : tensor<70x60xf32>
  %4 = stablehlo.subtract %3, %y : tensor<70x60xf32>
  return %4 : tensor<70x60xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  // Two runs: the add (with the broadcast of its splat constant, over 16
  // KiB so not expanded), then the rest, which reads the add's result
  // transposed.
  EXPECT_EQ(PlanOps(**program),
            (std::vector<std::string>{std::string(kFusionOp), std::string(kFusionOp)}));
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
  const std::string text = Main("%x: tensor<10000xf32>", "(tensor<10000xf32>, tensor<10000xf32>)",
                                R"(
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

// jnp.take's gather of rows joins the loop that masks it (Pointwise's
// kGather): the gathered array never reaches memory. Rows of 24 cross the
// tiles; indices out of range are clamped as the gather spec says (the
// select's mask is what makes jnp.take fill them).
TEST(FusionTest, AGatherOfRowsJoinsTheLoopReadingIt) {
  const std::string text = Main("%t: tensor<50x24xf32>, %i: tensor<300x1xi32>",
                                "tensor<300x24xf32>",
                                R"(
  %g = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 24>}> : (tensor<50x24xf32>, tensor<300x1xi32>) -> tensor<300x24xf32>
  %two = stablehlo.constant dense<2.0> : tensor<300x24xf32>
  %0 = stablehlo.multiply %g, %two : tensor<300x24xf32>
  return %0 : tensor<300x24xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kFusionOp)});
  EXPECT_EQ((*program)->graph->nodes[0].detail.rfind("gather, ", 0), 0u)
      << (*program)->graph->nodes[0].detail;
  const std::vector<float> table = Ramp<float>(50 * 24, 0.5, -100.0);
  std::vector<int32_t> indices(300);
  for (size_t r = 0; r < indices.size(); ++r) indices[r] = static_cast<int32_t>(r * 7 % 61) - 5;
  indices[3] = INT32_MIN;
  indices[4] = INT32_MAX;
  std::vector<float> y(300 * 24);
  ASSERT_TRUE(RunInto(**program, {table.data(), indices.data()}, {y.data()}).ok());
  for (size_t r = 0; r < 300; ++r) {
    const size_t row = static_cast<size_t>(std::clamp(indices[r], 0, 49));
    for (size_t c = 0; c < 24; ++c) ASSERT_EQ(y[r * 24 + c], table[row * 24 + c] * 2.0f) << r;
  }
}

// take_along_axis's gather (a batching dimension, one s64 index per
// element) and a window of two rows along the indexed dimension, each in a
// loop with the map reading it.
TEST(FusionTest, GathersAlongAnAxisAndOfWindowsJoinLoops) {
  const std::string along = Main("%x: tensor<40x100xf32>, %i: tensor<40x30x1xi64>",
                                 "tensor<40x30xf32>", R"(
  %g = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<40x100xf32>, tensor<40x30x1xi64>) -> tensor<40x30xf32>
  %one = stablehlo.constant dense<1.0> : tensor<40x30xf32>
  %0 = stablehlo.add %g, %one : tensor<40x30xf32>
  return %0 : tensor<40x30xf32>)");
  auto program = CompileText(along);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kFusionOp)});
  const std::vector<float> x = Ramp<float>(4000, 0.25, 1.0);
  std::vector<int64_t> indices(40 * 30);
  for (size_t k = 0; k < indices.size(); ++k) indices[k] = static_cast<int64_t>(k * 13 % 107) - 3;
  std::vector<float> y(40 * 30);
  ASSERT_TRUE(RunInto(**program, {x.data(), indices.data()}, {y.data()}).ok());
  for (size_t r = 0; r < 40; ++r) {
    for (size_t c = 0; c < 30; ++c) {
      const auto column = static_cast<size_t>(std::clamp<int64_t>(indices[r * 30 + c], 0, 99));
      ASSERT_EQ(y[r * 30 + c], x[r * 100 + column] + 1.0f) << r << "," << c;
    }
  }

  const std::string windows = Main("%t: tensor<9x5xf32>, %i: tensor<200xi32>",
                                   "tensor<200x2x5xf32>", R"(
  %g = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2, 5>}> : (tensor<9x5xf32>, tensor<200xi32>) -> tensor<200x2x5xf32>
  %0 = stablehlo.negate %g : tensor<200x2x5xf32>
  return %0 : tensor<200x2x5xf32>)");
  program = CompileText(windows);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kFusionOp)});
  const std::vector<float> t = Ramp<float>(45, 1.0, 0.0);
  std::vector<int32_t> starts(200);
  for (size_t k = 0; k < starts.size(); ++k) starts[k] = static_cast<int32_t>(k % 12) - 2;
  std::vector<float> w(200 * 10);
  ASSERT_TRUE(RunInto(**program, {t.data(), starts.data()}, {w.data()}).ok());
  for (size_t k = 0; k < 200; ++k) {
    const auto start = static_cast<size_t>(std::clamp(starts[k], 0, 7));  // 9 rows, windows of 2
    for (size_t e = 0; e < 10; ++e) ASSERT_EQ(w[k * 10 + e], -t[start * 5 + e]) << k << "," << e;
  }
}

// jnp.take and take_along_axis as JAX writes them (fill mode): negative
// indices wrapped, a mask of the indices in bounds, and a select of the
// gathered value or NaN. The select folds into the gather (its fill is
// written where the mask is false), and take_along_axis's index
// arithmetic joins the gather's loop, whose indices are read in order:
// one loop, nothing but the result in memory. Rows of 300 cross tiles;
// f32 and f64 (the gather runs of 4 and 8 bytes), s32 and s64 indices.
template <typename T, typename I>
void CheckTakeAlongAxis(const std::string& type, const std::string& index_type) {
  const std::string shapes = "%x: tensor<40x100x" + type + ">, %i: tensor<40x300x" + index_type +
                             ">";
  std::string body = R"(
  %c = stablehlo.constant dense<0> : tensor<IT>
  %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<IT>) -> tensor<40x300xIT>
  %1 = stablehlo.compare LT, %i, %0, SIGNED : (tensor<40x300xIT>, tensor<40x300xIT>) -> tensor<40x300xi1>
  %c_0 = stablehlo.constant dense<100> : tensor<IT>
  %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<IT>) -> tensor<40x300xIT>
  %3 = stablehlo.add %i, %2 : tensor<40x300xIT>
  %4 = stablehlo.select %1, %3, %i : tensor<40x300xi1>, tensor<40x300xIT>
  %5 = stablehlo.reshape %4 : (tensor<40x300xIT>) -> tensor<40x300x1xIT>
  %c_1 = stablehlo.constant dense<99> : tensor<1xIT>
  %6 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<IT>) -> tensor<40x300x1xIT>
  %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<40x300x1xIT>, tensor<40x300x1xIT>) -> tensor<40x300x1xi1>
  %8 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xIT>) -> tensor<1x1x1xIT>
  %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xIT>) -> tensor<40x300x1xIT>
  %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<40x300x1xIT>, tensor<40x300x1xIT>) -> tensor<40x300x1xi1>
  %11 = stablehlo.and %7, %10 : tensor<40x300x1xi1>
  %c_3 = stablehlo.constant dense<true> : tensor<i1>
  %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<40x300x1xi1>, tensor<i1>) -> tensor<40x300xi1>
  %13 = "stablehlo.gather"(%x, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<40x100xT>, tensor<40x300x1xIT>) -> tensor<40x300xT>
  %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %nan = stablehlo.convert %cst : (tensor<f32>) -> tensor<T>
  %14 = stablehlo.broadcast_in_dim %nan, dims = [] : (tensor<T>) -> tensor<40x300xT>
  %15 = stablehlo.select %12, %13, %14 : tensor<40x300xi1>, tensor<40x300xT>
  return %15 : tensor<40x300xT>)";
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"IT>", index_type + ">"},
                                 {"xIT>", "x" + index_type + ">"},
                                 {"T>", type + ">"}}) {
    for (size_t at = body.find(from); at != std::string::npos; at = body.find(from, at)) {
      body.replace(at, from.size(), to);
      at += to.size();
    }
  }
  auto program = CompileText(Main(shapes, "tensor<40x300x" + type + ">", body));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kFusionOp)});
  EXPECT_NE((*program)->graph->nodes[0].detail.find("(masked gather)"), std::string::npos)
      << (*program)->graph->nodes[0].detail;
  const std::vector<T> x = Ramp<T>(4000, 0.25, 1.0);
  std::vector<I> indices(40 * 300);
  for (size_t k = 0; k < indices.size(); ++k) indices[k] = static_cast<I>(k * 13 % 307) - 150;
  indices[7] = std::numeric_limits<I>::min();
  indices[8] = std::numeric_limits<I>::max();
  std::vector<T> y(40 * 300);
  ASSERT_TRUE(RunInto(**program, {x.data(), indices.data()}, {y.data()}).ok());
  for (size_t r = 0; r < 40; ++r) {
    for (size_t c = 0; c < 300; ++c) {
      I index = indices[r * 300 + c];
      if (index < 0) index = static_cast<I>(index + 100);  // wraps (as s32/s64 adds do)
      if (index < 0 || index > 99) {
        ASSERT_TRUE(std::isnan(y[r * 300 + c])) << r << "," << c;
      } else {
        ASSERT_EQ(y[r * 300 + c], x[r * 100 + static_cast<size_t>(index)]) << r << "," << c;
      }
    }
  }
}

TEST(FusionTest, TakeAlongAxisIsOneLoopWithItsFillFolded) {
  CheckTakeAlongAxis<float, int32_t>("f32", "i32");
  CheckTakeAlongAxis<double, int32_t>("f64", "i32");
  CheckTakeAlongAxis<float, int64_t>("f32", "i64");
}

// jnp.take of rows: the mask is one predicate per row, broadcast along it;
// the select folds into the gather, which fills a row whose index is out
// of bounds and copies the others. The fill may also be the select's
// first operand (the gathered value where the mask is false).
TEST(FusionTest, TakeOfRowsFoldsItsFillIntoTheGather) {
  for (const bool gathered_first : {true, false}) {
    const std::string select = gathered_first ? "%m, %g, %fill" : "%m, %fill, %g";
    const std::string text =
        Main("%t: tensor<50x24xf32>, %i: tensor<300x1xi32>, %ok: tensor<300xi1>",
             "tensor<300x24xf32>", R"(
  %g = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 24>}> : (tensor<50x24xf32>, tensor<300x1xi32>) -> tensor<300x24xf32>
  %m = stablehlo.broadcast_in_dim %ok, dims = [0] : (tensor<300xi1>) -> tensor<300x24xi1>
  %c = stablehlo.constant dense<-7.0> : tensor<f32>
  %fill = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<300x24xf32>
  %0 = stablehlo.select )" + select + R"( : tensor<300x24xi1>, tensor<300x24xf32>
  return %0 : tensor<300x24xf32>)");
    auto program = CompileText(text);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    ASSERT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kFusionOp)});
    EXPECT_NE((*program)->graph->nodes[0].detail.find("(masked gather)"), std::string::npos)
        << (*program)->graph->nodes[0].detail;
    const std::vector<float> table = Ramp<float>(50 * 24, 0.5, -100.0);
    std::vector<int32_t> indices(300);
    bool ok[300];
    for (size_t r = 0; r < 300; ++r) {
      indices[r] = static_cast<int32_t>(r * 7 % 61) - 5;
      ok[r] = r % 3 != 1;
    }
    std::vector<float> y(300 * 24);
    ASSERT_TRUE(RunInto(**program, {table.data(), indices.data(), ok}, {y.data()}).ok());
    for (size_t r = 0; r < 300; ++r) {
      const size_t row = static_cast<size_t>(std::clamp(indices[r], 0, 49));
      const bool gathered = ok[r] == gathered_first;
      for (size_t c = 0; c < 24; ++c) {
        ASSERT_EQ(y[r * 24 + c], gathered ? table[row * 24 + c] : -7.0f) << r << "," << c;
      }
    }
  }
}

// A large iota is the read of one row of its values, so it joins the loop
// reading it rather than being written out (threefry's counters, argmax's
// positions); along an inner and an outer dimension, in i32 and u64.
TEST(FusionTest, ALargeIotaJoinsTheLoopReadingIt) {
  const std::string text = Main("%x: tensor<64x100xi32>, %w: tensor<64x100xui64>",
                                "(tensor<64x100xi32>, tensor<64x100xui64>)", R"(
  %i = stablehlo.iota dim = 1 : tensor<64x100xi32>
  %0 = stablehlo.multiply %i, %x : tensor<64x100xi32>
  %j = stablehlo.iota dim = 0 : tensor<64x100xui64>
  %1 = stablehlo.add %j, %w : tensor<64x100xui64>
  return %0, %1 : tensor<64x100xi32>, tensor<64x100xui64>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  for (const std::string& op : PlanOps(**program)) EXPECT_EQ(op, std::string(kFusionOp));
  std::vector<int32_t> x(6400);
  std::vector<uint64_t> w(6400);
  for (size_t k = 0; k < x.size(); ++k) {
    x[k] = static_cast<int32_t>(k % 7) - 3;
    w[k] = uint64_t{1} << 40 | k;
  }
  std::vector<int32_t> y(6400);
  std::vector<uint64_t> z(6400);
  ASSERT_TRUE(RunInto(**program, {x.data(), w.data()}, {y.data(), z.data()}).ok());
  for (size_t r = 0; r < 64; ++r) {
    for (size_t c = 0; c < 100; ++c) {
      ASSERT_EQ(y[r * 100 + c], static_cast<int32_t>(c) * x[r * 100 + c]) << r << "," << c;
      ASSERT_EQ(z[r * 100 + c], r + w[r * 100 + c]) << r << "," << c;
    }
  }
}

// A gather alone is a loop of its own: jnp.linalg.inv's gather of columns
// (size-1 dimensions and all) runs 256 elements at a time, not a strided
// copy per column; out-of-range indices clamp.
TEST(FusionTest, AGatherAloneIsALoopOfItsOwn) {
  const std::string text = Main("%a: tensor<5x7x1xf64>, %i: tensor<9x1xi32>", "tensor<5x9x1xf64>",
                                R"(
  %g = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 2], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 5, 1, 1>}> : (tensor<5x7x1xf64>, tensor<9x1xi32>) -> tensor<5x9x1xf64>
  return %g : tensor<5x9x1xf64>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kFusionOp)});
  EXPECT_EQ((*program)->graph->nodes[0].detail, "gather");
  const std::vector<double> a = Ramp<double>(35, 1.0, 0.0);
  const std::vector<int32_t> columns = {6, 0, 3, -2, 9, 1, 1, 5, 2};
  std::vector<double> out(45);
  ASSERT_TRUE(RunInto(**program, {a.data(), columns.data()}, {out.data()}).ok());
  for (size_t r = 0; r < 5; ++r) {
    for (size_t j = 0; j < 9; ++j) {
      const auto column = static_cast<size_t>(std::clamp(columns[j], 0, 6));
      ASSERT_EQ(out[r * 9 + j], a[r * 7 + column]) << r << "," << j;
    }
  }
}

// A gather reading index k for element k joins the loop computing its
// indices (through a reshape): a tile computes its own indices first. One
// whose indices are per row (jnp.take) starts a loop of its own: a tile
// cannot wait for indices of elements it has not computed.
TEST(FusionTest, AGatherOfComputedIndicesJoinsTheirLoopWhenReadInOrder) {
  const std::string text = Main("%t: tensor<1000xf32>, %i: tensor<6000xi32>", "tensor<6000xf32>",
                                R"(
  %three = stablehlo.constant dense<3> : tensor<6000xi32>
  %j = stablehlo.multiply %i, %three : tensor<6000xi32>
  %k = stablehlo.reshape %j : (tensor<6000xi32>) -> tensor<6000x1xi32>
  %g = "stablehlo.gather"(%t, %k) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<1000xf32>, tensor<6000x1xi32>) -> tensor<6000xf32>
  %0 = stablehlo.sqrt %g : tensor<6000xf32>
  return %0 : tensor<6000xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kFusionOp)});
  const std::vector<float> t = Ramp<float>(1000, 2.0, 1.0);
  std::vector<int32_t> i(6000);
  for (size_t k = 0; k < i.size(); ++k) i[k] = static_cast<int32_t>(k % 400);
  const std::vector<float> y = testing::MustRun(text, {Array::Of(t), Array::Of(i)}).As<float>();
  ASSERT_EQ(y.size(), i.size());
  for (size_t k = 0; k < i.size(); ++k) {
    ASSERT_EQ(y[k], std::sqrt(t[std::min<size_t>(static_cast<size_t>(i[k]) * 3, 999)])) << k;
  }

  const std::string rows = Main("%t: tensor<50x24xf32>, %i: tensor<300xi32>", "tensor<300x24xf32>",
                                R"(
  %three = stablehlo.constant dense<3> : tensor<300xi32>
  %j = stablehlo.multiply %i, %three : tensor<300xi32>
  %k = stablehlo.reshape %j : (tensor<300xi32>) -> tensor<300x1xi32>
  %g = "stablehlo.gather"(%t, %k) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 24>}> : (tensor<50x24xf32>, tensor<300x1xi32>) -> tensor<300x24xf32>
  %0 = stablehlo.sqrt %g : tensor<300x24xf32>
  return %0 : tensor<300x24xf32>)");
  program = CompileText(rows);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_GE(PlanOps(**program).size(), 2u);  // the multiply (and its reshape) before
  EXPECT_EQ((*program)->graph->nodes.back().detail.rfind("gather", 0), 0u)
      << (*program)->graph->nodes.back().detail;
  const std::vector<float> table = Ramp<float>(50 * 24, 1.0, 0.0);
  std::vector<int32_t> r(300);
  for (size_t k = 0; k < r.size(); ++k) r[k] = static_cast<int32_t>(k % 20);
  const std::vector<float> z = testing::MustRun(rows, {Array::Of(table), Array::Of(r)}).As<float>();
  ASSERT_EQ(z.size(), 300u * 24);
  for (size_t k = 0; k < 300; ++k) {
    const size_t row = std::min<size_t>(static_cast<size_t>(r[k]) * 3, 49);
    for (size_t c = 0; c < 24; ++c) ASSERT_EQ(z[k * 24 + c], std::sqrt(table[row * 24 + c])) << k;
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

int Occurrences(const std::string& text, const std::string& part) {
  int count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

std::vector<std::string> CountOps(const Program& program, const std::string& op, int* count) {
  std::vector<std::string> ops = PlanOps(program);
  *count = static_cast<int>(std::count(ops.begin(), ops.end(), op));
  return ops;
}

// A layer norm as JAX writes it, over rows of `cols` floats: the variance's
// reduce folds the loop computing (x - mean)^2, so only the mean's reduce
// stays a node, and the second x - mean (JAX computes it again) moves down
// into the output's loop. Checked against the same sums in double.
void CheckLayerNorm(int64_t rows, int64_t cols, bool grouped) {
  const std::string r = std::to_string(rows), c = std::to_string(cols);
  const std::string m = "tensor<" + r + "x" + c + "xf32>", v = "tensor<" + r + "xf32>",
                    g = "tensor<" + c + "xf32>";
  std::string body = R"(
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<COLS.0> : VEC
  %eps = stablehlo.constant dense<1.0e-05> : VEC
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (MAT, tensor<f32>) -> VEC
  %mean = stablehlo.divide %s, %n : VEC
  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : (VEC) -> MAT
  %d = stablehlo.subtract %x, %mb : MAT
  %sq = stablehlo.multiply %d, %d : MAT
  %s2 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (MAT, tensor<f32>) -> VEC
  %var = stablehlo.divide %s2, %n : VEC
  %mb2 = stablehlo.broadcast_in_dim %mean, dims = [0] : (VEC) -> MAT
  %d2 = stablehlo.subtract %x, %mb2 : MAT
  %ve = stablehlo.add %var, %eps : VEC
  %rs = stablehlo.rsqrt %ve : VEC
  %rb = stablehlo.broadcast_in_dim %rs, dims = [0] : (VEC) -> MAT
  %y = stablehlo.multiply %d2, %rb : MAT
  %gb = stablehlo.broadcast_in_dim %gamma, dims = [1] : (GAM) -> MAT
  %yg = stablehlo.multiply %y, %gb : MAT
  %bb = stablehlo.broadcast_in_dim %beta, dims = [1] : (GAM) -> MAT
  %out = stablehlo.add %yg, %bb : MAT
  return %out : MAT)";
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"COLS", c}, {"MAT", m}, {"VEC", v}, {"GAM", g}}) {
    for (size_t at; (at = body.find(from)) != std::string::npos;) body.replace(at, from.size(), to);
  }
  const std::string text = Main("%x: " + m + ", %gamma: " + g + ", %beta: " + g, m, body);
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const std::vector<Node>& nodes = (*program)->graph->nodes;
  std::string plan;
  for (const Node& node : nodes) plan += node.op + " [" + node.detail + "] ";
  // The mean's reduce; the mean's divide; the loop ending in the
  // variance's reduce; the loop over the variance; the output's loop. Over
  // a large enough array they run as one row group, whose values other
  // than the output stay in its blocks (row_groups.cc).
  if (grouped) {
    ASSERT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kRowGroupOp)}) << plan;
    EXPECT_TRUE(nodes[0].detail.starts_with("reduce; ")) << plan;
    EXPECT_EQ(Occurrences(nodes[0].detail, "kiln.fusion ["), 3) << plan;
    EXPECT_EQ((*program)->graph->arena_bytes, 0) << plan;
  } else {
    int reduces = 0, loops = 0;
    const std::vector<std::string> ops = CountOps(**program, "stablehlo.reduce", &reduces);
    CountOps(**program, std::string(kFusionOp), &loops);
    EXPECT_EQ(reduces, 1) << plan;
    EXPECT_EQ(loops, 3) << plan;
    EXPECT_EQ(ops.size(), 5u) << plan;
  }
  // Where this machine runs generated code, the variance's loop and the
  // output's loop (reading the mean and scale as one element per tile
  // where a tile lies within a row) use it.
  if (kernels::CompileLoop(
          std::vector<kernels::LoopStep>{{kernels::LoopStep::Kind::kLoad, 0, -1, -1, 0, 0},
                                         {kernels::LoopStep::Kind::kStore, 0, 0, -1, 0, 0}},
          1, 1) != nullptr) {
    EXPECT_GE(Occurrences(plan, "(generated code)"), 2) << plan;
  }

  const auto count = static_cast<size_t>(rows * cols);
  // Values within a few hundred: a float row's mean and deviations keep
  // the precision the tolerance asks for.
  std::vector<float> x(count);
  for (size_t k = 0; k < count; ++k) x[k] = static_cast<float>((k * 7919) % 1009) * 0.37f - 40.0f;
  const std::vector<float> gamma = Ramp<float>(static_cast<size_t>(cols), 0.01, 0.5);
  const std::vector<float> beta = Ramp<float>(static_cast<size_t>(cols), -0.02, 1.0);
  std::vector<float> out(count);
  ASSERT_TRUE(RunInto(**program, {x.data(), gamma.data(), beta.data()}, {out.data()}).ok());
  for (int64_t i = 0; i < rows; ++i) {
    double sum = 0, squares = 0;
    for (int64_t j = 0; j < cols; ++j) sum += x[static_cast<size_t>(i * cols + j)];
    const double mean = sum / static_cast<double>(cols);
    for (int64_t j = 0; j < cols; ++j) {
      const double d = x[static_cast<size_t>(i * cols + j)] - mean;
      squares += d * d;
    }
    const double scale = 1.0 / std::sqrt(squares / static_cast<double>(cols) + 1e-5);
    for (int64_t j = 0; j < cols; ++j) {
      const auto k = static_cast<size_t>(i * cols + j);
      const double want = (x[k] - mean) * scale * gamma[static_cast<size_t>(j)] +
                          beta[static_cast<size_t>(j)];
      ASSERT_NEAR(out[k], want, 2e-4 * (1 + std::abs(want))) << "row " << i << " col " << j;
    }
  }
}

// Rows shorter than a tile: a tile holds 13 whole rows. 75 KiB: the
// nodes stay apart.
TEST(FusionTest, LayerNormFoldsTheVarianceIntoItsLoop) { CheckLayerNorm(64, 300, false); }

// Rows longer than a tile: each row folds in pieces, tile by tile, in a
// row group of one row per block.
TEST(FusionTest, RowsLongerThanATileFoldInPieces) { CheckLayerNorm(16, 10000, true); }

// Blocks of several rows, the last one short (1000 rows).
TEST(FusionTest, LayerNormRunsAsOneRowGroup) { CheckLayerNorm(1000, 1024, true); }

// y holds softmax over each of the `rows` rows of `cols` of x, within
// `relative` of the same computed in double.
void ExpectSoftmaxRows(const float* x, const float* y, size_t rows, size_t cols, double relative) {
  for (size_t r = 0; r < rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (size_t c = 0; c < cols; ++c) max = std::max<double>(max, x[r * cols + c]);
    for (size_t c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - max);
    for (size_t c = 0; c < cols; ++c) {
      const double want = std::exp(x[r * cols + c] - max) / sum;
      ASSERT_NEAR(y[r * cols + c], want, relative * want + 1e-12) << r << "," << c;
    }
  }
}

// Softmax over rows: exp(x - max) is kept for the division and dies there,
// so it lives in the result's buffer (PlanBuffers) and the arena holds only
// the row statistics. `donate`: x is also aliased with the result.
void CheckSoftmax(bool donate) {
  const std::string body = R"(
    %low = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %m = stablehlo.reduce(%x init: %low) applies stablehlo.maximum across dimensions = [1] : (tensor<64x300xf32>, tensor<f32>) -> tensor<64xf32>
    %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x300xf32>
    %d = stablehlo.subtract %x, %mb : tensor<64x300xf32>
    %e = stablehlo.exponential %d : tensor<64x300xf32>
    %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x300xf32>, tensor<f32>) -> tensor<64xf32>
    %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x300xf32>
    %y = stablehlo.divide %e, %sb : tensor<64x300xf32>
    return %y : tensor<64x300xf32>)";
  const std::string attrs = donate ? " {tf.aliasing_output = 0 : i32}" : "";
  const std::string text = "func.func public @main(%x: tensor<64x300xf32>" + attrs +
                           ") -> tensor<64x300xf32> {" + body + "\n}\n";
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_LT((*program)->graph->arena_bytes, 64 * 300 * 4);
  const std::vector<float> original = Ramp<float>(64 * 300, 0.37, -40.0);
  std::vector<float> x = original, separate(x.size());
  // Donated and computable in place: the result goes over x, as the runtime
  // would place it.
  const bool in_place = donate && (*program)->alias_in_place[0];
  float* y = in_place ? x.data() : separate.data();
  ASSERT_TRUE(RunInto(**program, {x.data()}, {y}).ok());
  ExpectSoftmaxRows(original.data(), y, 64, 300, 1e-6);
}

TEST(FusionTest, SoftmaxKeepsItsExponentialsInTheResultBuffer) { CheckSoftmax(false); }
TEST(FusionTest, SoftmaxWithItsInputDonatedToTheResult) { CheckSoftmax(true); }

// Softmax as jax.nn.softmax writes it (the max taken with an initial
// -inf) over 512 x 700 floats: one row group from the max's reduce to the
// division, x read from memory once per block, exp(x - max) kept in the
// block (not recomputed for the division: RecomputeInLaterRuns stops at
// runs a row group may join).
TEST(FusionTest, SoftmaxRunsAsOneRowGroup) {
  const std::string text = Main("%x: tensor<512x700xf32>", "tensor<512x700xf32>", R"(
  %low = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %low) applies stablehlo.maximum across dimensions = [1] : (tensor<512x700xf32>, tensor<f32>) -> tensor<512xf32>
  %lows = stablehlo.broadcast_in_dim %low, dims = [] : (tensor<f32>) -> tensor<512xf32>
  %m2 = stablehlo.maximum %lows, %m : tensor<512xf32>
  %mb = stablehlo.broadcast_in_dim %m2, dims = [0] : (tensor<512xf32>) -> tensor<512x700xf32>
  %d = stablehlo.subtract %x, %mb : tensor<512x700xf32>
  %e = stablehlo.exponential %d : tensor<512x700xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<512x700xf32>, tensor<f32>) -> tensor<512xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<512xf32>) -> tensor<512x700xf32>
  %y = stablehlo.divide %e, %sb : tensor<512x700xf32>
  return %y : tensor<512x700xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const std::vector<std::string> ops = PlanOps(**program);
  ASSERT_EQ(ops, std::vector<std::string>{std::string(kRowGroupOp)});
  const std::string& detail = (*program)->graph->nodes[0].detail;
  EXPECT_TRUE(detail.starts_with("reduce; "));
  // exp(x - max) is computed once (not again for the division's loop).
  ASSERT_NE(detail.find("exponential"), std::string::npos) << detail;
  EXPECT_EQ(detail.find("exponential"), detail.rfind("exponential")) << detail;
  EXPECT_EQ((*program)->graph->arena_bytes, 0);
  const std::vector<float> x = Ramp<float>(512 * 700, 0.037, -40.0);
  std::vector<float> y(x.size());
  ASSERT_TRUE(RunInto(**program, {x.data()}, {y.data()}).ok());
  ExpectSoftmaxRows(x.data(), y.data(), 512, 700, 1e-5);
}

// A loop that reads a row statistic across rows (broadcast along the other
// dimension: row r reads every row's sum) cannot run block by block: the
// reduce and the loop stay apart, and the sums reach memory.
TEST(FusionTest, ReadsAcrossRowsStayOutOfRowGroups) {
  const std::string text = Main("%x: tensor<512x512xf32>", "tensor<512x512xf32>", R"(
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
  %rows = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<512xf32>) -> tensor<512x512xf32>
  %cols = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<512xf32>) -> tensor<512x512xf32>
  %a = stablehlo.subtract %x, %rows : tensor<512x512xf32>
  %b = stablehlo.multiply %a, %cols : tensor<512x512xf32>
  return %b : tensor<512x512xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(PlanOps(**program),
            (std::vector<std::string>{"stablehlo.reduce", std::string(kFusionOp)}));
  std::vector<float> x(512 * 512);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 97) / 97.0f - 0.5f;
  std::vector<float> b(x.size());
  ASSERT_TRUE(RunInto(**program, {x.data()}, {b.data()}).ok());
  std::vector<double> sums(512, 0.0);
  for (size_t r = 0; r < 512; ++r) {
    for (size_t c = 0; c < 512; ++c) sums[r] += x[r * 512 + c];
  }
  for (size_t r = 0; r < 512; ++r) {
    for (size_t c = 0; c < 512; ++c) {
      const double want = (x[r * 512 + c] - sums[r]) * sums[c];
      ASSERT_NEAR(b[r * 512 + c], want, 1e-4 * (1 + std::abs(want))) << r << "," << c;
    }
  }
}

// A read within each row (reversing it) of a value the group computed
// keeps the group whole: exp(x - max) stays in the block and the last loop
// reads its row backwards there.
TEST(FusionTest, ReversedRowsOfAGroupValueStayInTheGroup) {
  const std::string text = Main("%x: tensor<512x600xf32>", "tensor<512x600xf32>", R"(
  %low = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %two = stablehlo.constant dense<2.0> : tensor<512x600xf32>
  %m = stablehlo.reduce(%x init: %low) applies stablehlo.maximum across dimensions = [1] : (tensor<512x600xf32>, tensor<f32>) -> tensor<512xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<512xf32>) -> tensor<512x600xf32>
  %d = stablehlo.subtract %x, %mb : tensor<512x600xf32>
  %e = stablehlo.exponential %d : tensor<512x600xf32>
  %r = stablehlo.reverse %e, dims = [1] : tensor<512x600xf32>
  %y = stablehlo.multiply %r, %two : tensor<512x600xf32>
  return %y : tensor<512x600xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kRowGroupOp)});
  EXPECT_EQ((*program)->graph->arena_bytes, 0);
  const std::vector<float> x = Ramp<float>(512 * 600, 0.01, -20.0);
  std::vector<float> y(x.size());
  ASSERT_TRUE(RunInto(**program, {x.data()}, {y.data()}).ok());
  for (size_t r = 0; r < 512; ++r) {
    double max = -INFINITY;
    for (size_t c = 0; c < 600; ++c) max = std::max<double>(max, x[r * 600 + c]);
    for (size_t c = 0; c < 600; ++c) {
      const double want = 2 * std::exp(x[r * 600 + 599 - c] - max);
      ASSERT_NEAR(y[r * 600 + c], want, 1e-6 * want + 1e-30) << r << "," << c;
    }
  }
}

// A reduction over rows of no elements has a result all the same (its
// init) and no rows to fold: it stays out of the row group around it, whose
// members fold real rows. (It joined once, and divided by its zero columns.)
TEST(FusionTest, ReductionOfEmptyRowsStaysOutOfRowGroups) {
  const std::string text = Main("%x: tensor<4096x256xf32>, %z: tensor<4096x0xf32>",
                                "(tensor<4096xf32>, tensor<4096xf32>)", R"(
  %c0 = stablehlo.constant dense<0.0> : tensor<f32>
  %c1 = stablehlo.constant dense<1.5> : tensor<f32>
  %s = stablehlo.reduce(%x init: %c0) applies stablehlo.add across dimensions = [1] : (tensor<4096x256xf32>, tensor<f32>) -> tensor<4096xf32>
  %t = stablehlo.reduce(%z init: %c1) applies stablehlo.add across dimensions = [1] : (tensor<4096x0xf32>, tensor<f32>) -> tensor<4096xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<4096xf32>) -> tensor<4096x256xf32>
  %d = stablehlo.subtract %x, %b : tensor<4096x256xf32>
  %e = stablehlo.multiply %d, %d : tensor<4096x256xf32>
  %q = stablehlo.reduce(%e init: %c0) applies stablehlo.add across dimensions = [1] : (tensor<4096x256xf32>, tensor<f32>) -> tensor<4096xf32>
  %u = stablehlo.add %q, %t : tensor<4096xf32>
  return %u, %t : tensor<4096xf32>, tensor<4096xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::vector<float> x(4096 * 256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  std::vector<float> u(4096), t(4096);
  ASSERT_TRUE(RunInto(**program, {x.data(), nullptr}, {u.data(), t.data()}).ok());
  for (size_t r = 0; r < 4096; ++r) {
    double sum = 0, squares = 0;
    for (size_t c = 0; c < 256; ++c) sum += x[r * 256 + c];
    for (size_t c = 0; c < 256; ++c) squares += (x[r * 256 + c] - sum) * (x[r * 256 + c] - sum);
    ASSERT_EQ(t[r], 1.5f) << r;
    ASSERT_NEAR(u[r], squares + 1.5, 1e-5 * squares + 1e-3) << r;
  }
}

// Too few rows to share among threads: the reduce stays a node of its own.
TEST(FusionTest, FewRowsKeepTheirReduce) {
  const std::string text = Main("%x: tensor<4x1000xf32>", "tensor<4xf32>", R"(
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %e = stablehlo.exponential %x : tensor<4x1000xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x1000xf32>, tensor<f32>) -> tensor<4xf32>
  return %s : tensor<4xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(PlanOps(**program),
            (std::vector<std::string>{"stablehlo.exponential", "stablehlo.reduce"}));
}

// A max-reduction folded into the loop that computes its operand, whose
// values are also a result (written out as well): integer rows.
TEST(FusionTest, FoldedReductionOfAnEscapingValue) {
  const std::string text = Main("%x: tensor<40x7xi32>", "(tensor<40xi32>, tensor<40x7xi32>)", R"(
  %low = stablehlo.constant dense<-2147483648> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<40x7xi32>
  %p = stablehlo.multiply %x, %three : tensor<40x7xi32>
  %q = stablehlo.remainder %p, %three : tensor<40x7xi32>
  %w = stablehlo.subtract %p, %q : tensor<40x7xi32>
  %m = stablehlo.reduce(%w init: %low) applies stablehlo.maximum across dimensions = [1] : (tensor<40x7xi32>, tensor<i32>) -> tensor<40xi32>
  return %m, %w : tensor<40xi32>, tensor<40x7xi32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(PlanOps(**program), std::vector<std::string>{std::string(kFusionOp)});
  std::vector<int32_t> x(280);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>((i * 7919) % 201) - 100;
  std::vector<int32_t> m(40), w(280);
  ASSERT_TRUE(RunInto(**program, {x.data()}, {m.data(), w.data()}).ok());
  for (size_t r = 0; r < 40; ++r) {
    int32_t want = INT32_MIN;
    for (size_t c = 0; c < 7; ++c) {
      ASSERT_EQ(w[r * 7 + c], x[r * 7 + c] * 3) << r << "," << c;
      want = std::max(want, x[r * 7 + c] * 3);
    }
    ASSERT_EQ(m[r], want) << r;
  }
}

// A GELU-like split: the forward loop computes a = tanh(p), c = a * a and
// h = c * p from a product p (h feeds another product); the backward loop
// reads a and c (`both`) or a alone, besides gy.
std::string ResidualProgram(bool both) {
  const std::string backward = both ? R"(
  %one = stablehlo.constant dense<1.0> : tensor<64x64xf32>
  %u = stablehlo.subtract %one, %c : tensor<64x64xf32>
  %v = stablehlo.multiply %gy, %u : tensor<64x64xf32>
  %d = stablehlo.add %v, %a : tensor<64x64xf32>)"
                                    : R"(
  %e = stablehlo.add %gy, %a : tensor<64x64xf32>
  %d = stablehlo.multiply %e, %gy : tensor<64x64xf32>)";
  return Main("%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %g: tensor<64x64xf32>",
              "(tensor<64x64xf32>, tensor<64x64xf32>)",
              R"(
  %p = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = stablehlo.tanh %p : tensor<64x64xf32>
  %c = stablehlo.multiply %a, %a : tensor<64x64xf32>
  %h = stablehlo.multiply %c, %p : tensor<64x64xf32>
  %y = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %gy = stablehlo.dot_general %g, %y, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>)" +
                  backward + R"(
  return %y, %d : tensor<64x64xf32>, tensor<64x64xf32>)");
}

// The inputs of the last fused loop of `program`.
std::vector<ValueId> LastLoopInputs(const Program& program) {
  for (size_t n = program.graph->nodes.size(); n-- > 0;) {
    if (program.graph->nodes[n].op == kFusionOp) return program.graph->nodes[n].inputs;
  }
  return {};
}

// l times r, 64 x 64 each, row-major.
std::vector<double> Product64(const std::vector<double>& l, const std::vector<double>& r) {
  std::vector<double> out(4096, 0.0);
  for (int i = 0; i < 64; ++i) {
    for (int k = 0; k < 64; ++k) {
      for (int j = 0; j < 64; ++j) out[i * 64 + j] += l[i * 64 + k] * r[k * 64 + j];
    }
  }
  return out;
}

// The forward loop of the residual programs, in double: p = x w, a = tanh(p),
// c = a * a, h = c * p.
struct Forward {
  std::vector<double> p, a, c, h;
};
Forward ForwardOf(const std::vector<float>& x, const std::vector<float>& w) {
  Forward f;
  f.p = Product64(std::vector<double>(x.begin(), x.end()), std::vector<double>(w.begin(), w.end()));
  for (double p : f.p) {
    f.a.push_back(std::tanh(p));
    f.c.push_back(f.a.back() * f.a.back());
    f.h.push_back(f.c.back() * p);
  }
  return f;
}

// Runs ResidualProgram(both) and checks d against a double reference.
void CheckResiduals(const Program& program, bool both) {
  const std::vector<float> x = Ramp<float>(4096, 0.0005, -1.0), w = Ramp<float>(4096, -0.0003, 0.6),
                           g = Ramp<float>(4096, 0.0002, -0.4);
  std::vector<float> y(4096), d(4096);
  ASSERT_TRUE(RunInto(program, {x.data(), w.data(), g.data()}, {y.data(), d.data()}).ok());
  const std::vector<double> wd(w.begin(), w.end()), gd(g.begin(), g.end());
  const Forward f = ForwardOf(x, w);
  const std::vector<double> want_y = Product64(f.h, wd), gy = Product64(gd, want_y);
  for (size_t i = 0; i < 4096; ++i) {
    const double want = both ? gy[i] * (1.0 - f.c[i]) + f.a[i] : (gy[i] + f.a[i]) * gy[i];
    ASSERT_NEAR(y[i], want_y[i], 1e-4 * std::abs(want_y[i]) + 1e-5) << i;
    ASSERT_NEAR(d[i], want, 1e-4 * std::abs(want) + 1e-5) << i;
  }
}

// a and c (32 KiB) are recomputed in the backward loop from p (16 KiB),
// which then lives until that loop instead: the loop reads p, not a or c.
TEST(FusionTest, ValuesOnlyALaterLoopReadsAreRecomputedThere) {
  auto program = CompileText(ResidualProgram(/*both=*/true));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const std::vector<ValueId> inputs = LastLoopInputs(**program);
  const Graph& graph = *(*program)->graph;
  EXPECT_EQ(inputs.size(), 2u);  // p and gy
  for (ValueId in : inputs) EXPECT_EQ(graph.shape(in).dims, (std::vector<int64_t>{64, 64}));
  // The forward loop writes h alone.
  size_t loops = 0;
  for (const Node& node : graph.nodes) {
    if (node.op != kFusionOp) continue;
    if (++loops == 1) {
      EXPECT_EQ(node.outputs.size(), 1u);
    }
  }
  EXPECT_EQ(loops, 2u);
  CheckResiduals(**program, true);
}

// a alone (16 KiB) would cost as much as keeping p: it stays in memory.
TEST(FusionTest, AValueNoLargerThanWhatItsRecomputationKeepsStays) {
  auto program = CompileText(ResidualProgram(/*both=*/false));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const std::vector<ValueId> inputs = LastLoopInputs(**program);
  ASSERT_EQ(inputs.size(), 2u);  // gy and a
  const Graph& graph = *(*program)->graph;
  size_t loops = 0;
  for (const Node& node : graph.nodes) {
    if (node.op != kFusionOp) continue;
    if (++loops == 1) {
      EXPECT_EQ(node.outputs.size(), 2u);  // a and h
    }
  }
  CheckResiduals(**program, false);
}

// Two later loops, each past its own product, read a and c: each gets its
// own clones, and neither reads a or c from memory.
TEST(FusionTest, ValuesAreRecomputedInEachLaterLoopThatReadsThem) {
  const std::string text = Main("%x: tensor<64x64xf32>, %w: tensor<64x64xf32>",
                                "(tensor<64x64xf32>, tensor<64x64xf32>)", R"(
  %p = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = stablehlo.tanh %p : tensor<64x64xf32>
  %c = stablehlo.multiply %a, %a : tensor<64x64xf32>
  %h = stablehlo.multiply %c, %p : tensor<64x64xf32>
  %q = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %d1 = stablehlo.multiply %q, %c : tensor<64x64xf32>
  %e1 = stablehlo.add %d1, %a : tensor<64x64xf32>
  %q2 = stablehlo.dot_general %e1, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %d2 = stablehlo.subtract %q2, %c : tensor<64x64xf32>
  %e2 = stablehlo.multiply %d2, %a : tensor<64x64xf32>
  return %e1, %e2 : tensor<64x64xf32>, tensor<64x64xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const Graph& graph = *(*program)->graph;
  std::vector<const Node*> loops;
  for (const Node& node : graph.nodes) {
    if (node.op == kFusionOp) loops.push_back(&node);
  }
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(loops[0]->outputs.size(), 1u);  // h alone
  for (const Node* later : {loops[1], loops[2]}) {
    EXPECT_NE(later->detail.find("tanh"), std::string::npos) << later->detail;
    EXPECT_EQ(later->inputs.size(), 2u) << later->detail;  // p and the product
  }
  const std::vector<float> x = Ramp<float>(4096, 0.0005, -1.0), w = Ramp<float>(4096, -0.0003, 0.6);
  std::vector<float> e1(4096), e2(4096);
  ASSERT_TRUE(RunInto(**program, {x.data(), w.data()}, {e1.data(), e2.data()}).ok());
  const std::vector<double> wd(w.begin(), w.end());
  const Forward f = ForwardOf(x, w);
  const std::vector<double> q = Product64(f.h, wd);
  std::vector<double> want1(4096), want2(4096);
  for (size_t i = 0; i < 4096; ++i) want1[i] = q[i] * f.c[i] + f.a[i];
  const std::vector<double> q2 = Product64(want1, wd);
  for (size_t i = 0; i < 4096; ++i) {
    want2[i] = (q2[i] - f.c[i]) * f.a[i];
    ASSERT_NEAR(e1[i], want1[i], 1e-4 * std::abs(want1[i]) + 1e-5) << i;
    ASSERT_NEAR(e2[i], want2[i], 1e-4 * std::abs(want2[i]) + 1e-5) << i;
  }
}

// The later loop starts with a transpose of the loop just before it: clones
// put in front of it would join that earlier loop and reach memory anyway,
// so t and c stay the backward loop's inputs. (Found in review: the clones
// did join it, and the product then lived until the end as well.)
TEST(FusionTest, NoRecomputationWhereTheClonesWouldJoinTheLoopBefore) {
  const std::string text = Main("%x: tensor<64x64xf32>, %w: tensor<64x64xf32>", "tensor<64x64xf32>",
                                R"(
  %p = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %t = stablehlo.tanh %p : tensor<64x64xf32>
  %c = stablehlo.multiply %t, %t : tensor<64x64xf32>
  %h = stablehlo.multiply %c, %p : tensor<64x64xf32>
  %q = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = stablehlo.tanh %q : tensor<64x64xf32>
  %s2 = stablehlo.multiply %s, %q : tensor<64x64xf32>
  %tr = stablehlo.transpose %s2, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %one = stablehlo.constant dense<1.0> : tensor<64x64xf32>
  %u = stablehlo.subtract %one, %c : tensor<64x64xf32>
  %m = stablehlo.multiply %tr, %u : tensor<64x64xf32>
  %d = stablehlo.add %m, %t : tensor<64x64xf32>
  return %d : tensor<64x64xf32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  size_t tanhs = 0, loops = 0;
  for (const Node& node : (*program)->graph->nodes) {
    for (size_t at = node.detail.find("tanh"); at != std::string::npos;
         at = node.detail.find("tanh", at + 1)) {
      ++tanhs;
    }
    if (node.op == kFusionOp && ++loops == 1) {
      EXPECT_EQ(node.outputs.size(), 3u);  // t, c and h
    }
  }
  EXPECT_EQ(tanhs, 2u);  // one per forward loop, no clone
}

}  // namespace
}  // namespace kiln::compiler
