// gather, scatter, dynamic_slice, dynamic_update_slice and pad compiled from
// StableHLO text and run through compiler::Execute: dimension numbers,
// clamping and skipping at the bounds, recognized and generic scatter bodies.
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

TEST(Gather, RowsWithStartsClampedIntoBounds) {
  // x[idx] as JAX emits it; 7 and -2 are clamped to the last and first rows.
  const std::string program = Main(
      "%x: tensor<5x3xf32>, %i: tensor<4x1xi32>", "tensor<4x3xf32>",
      "  %0 = \"stablehlo.gather\"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims "
      "= [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, "
      "indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<5x3xf32>, "
      "tensor<4x1xi32>) -> tensor<4x3xf32>\n  return %0 : tensor<4x3xf32>");
  const std::vector<int32_t> indices{1, 7, -2, 3};
  EXPECT_EQ(MustRun(program, {Array::Of(Ramp<float>(15)), Array::Of(indices)}).As<float>(),
            (std::vector<float>{3, 4, 5, 12, 13, 14, 0, 1, 2, 9, 10, 11}));
}

TEST(Gather, WindowsWithIndexVectorFirstAndPartialClamp) {
  // 2x2 windows of a 4x4 array at (row, column) starts held in columns of
  // the indices: index_vector_dim 0. Start (3, 1) is clamped to (2, 1).
  const std::string program = Main(
      "%x: tensor<4x4xi32>, %i: tensor<2x2xi64>", "tensor<2x2x2xi32>",
      "  %0 = \"stablehlo.gather\"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims "
      "= [1, 2], start_index_map = [0, 1], index_vector_dim = 0>, slice_sizes = "
      "array<i64: 2, 2>}> : (tensor<4x4xi32>, tensor<2x2xi64>) -> tensor<2x2x2xi32>\n"
      "  return %0 : tensor<2x2x2xi32>");
  const std::vector<int64_t> indices{0, 3, 2, 1};  // starts (0, 2) and (3, 1)
  EXPECT_EQ(MustRun(program, {Array::Of(Ramp<int32_t>(16)), Array::Of(indices)}).As<int32_t>(),
            (std::vector<int32_t>{2, 3, 6, 7, 9, 10, 13, 14}));
}

TEST(Gather, BatchingDimensions) {
  // take_along_axis: out[b, j] = x[b, idx[b, j]].
  const std::string program = Main(
      "%x: tensor<2x3xf32>, %i: tensor<2x2x1xi32>", "tensor<2x2xf32>",
      "  %0 = \"stablehlo.gather\"(%x, %i) <{dimension_numbers = #stablehlo.gather<"
      "collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = "
      "[0], start_index_map = [1], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1>}> : "
      "(tensor<2x3xf32>, tensor<2x2x1xi32>) -> tensor<2x2xf32>\n  return %0 : tensor<2x2xf32>");
  const std::vector<int32_t> indices{2, 0, 1, 1};
  EXPECT_EQ(MustRun(program, {Array::Of(Ramp<float>(6)), Array::Of(indices)}).As<float>(),
            (std::vector<float>{2, 0, 4, 4}));
}

// A scatter of rows of `updates` (2x3) into `x` (5x3) at rows `indices`
// with the body `body` (its block arguments are %a, %b).
std::string RowScatter(const std::string& body, const std::string& element = "f32") {
  const std::string x = "tensor<5x3x" + element + ">", u = "tensor<3x3x" + element + ">",
                    s = "tensor<" + element + ">";
  return Main("%x: " + x + ", %i: tensor<3x1xi32>, %u: " + u, x,
              "  %0 = \"stablehlo.scatter\"(%x, %i, %u) <{scatter_dimension_numbers = "
              "#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], "
              "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({\n"
              "  ^bb0(%a: " +
                  s + ", %b: " + s + "):\n" + body + "\n  }) : (" + x + ", tensor<3x1xi32>, " + u +
                  ") -> " + x + "\n  return %0 : " + x);
}

// An embedding gradient as JAX writes it: rows of g added into zeros at
// rows `ids` (repeated, and some out of bounds), large enough that threads
// split the table. The zeros come from a broadcast constant the scatter
// fills from directly; the sums equal a serial loop's, bit for bit.
TEST(Scatter, EmbeddingGradientMatchesSerialSums) {
  constexpr int kVocab = 300, kDim = 70, kIds = 2000;
  const std::string table = "tensor<300x70xf32>", rows = "tensor<2000x70xf32>";
  const std::string program = Main(
      "%i: tensor<2000x1xi32>, %g: " + rows, table,
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %x = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> " +
          table +
          "\n"
          "  %0 = \"stablehlo.scatter\"(%x, %i, %g) <{scatter_dimension_numbers = "
          "#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], "
          "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({\n"
          "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
          "    %s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>\n"
          "  }) : (" +
          table + ", tensor<2000x1xi32>, " + rows + ") -> " + table + "\n  return %0 : " + table);
  std::vector<int32_t> ids(kIds);
  for (int k = 0; k < kIds; ++k) ids[static_cast<size_t>(k)] = (k * 7919) % (kVocab + 3) - 1;
  const std::vector<float> g = Ramp<float>(kIds * kDim, 0.013, -900.0);
  std::vector<float> want(kVocab * kDim, 0.0f);
  for (int k = 0; k < kIds; ++k) {
    const int row = ids[static_cast<size_t>(k)];
    if (row < 0 || row >= kVocab) continue;  // out of bounds: skipped
    for (int c = 0; c < kDim; ++c) {
      want[static_cast<size_t>(row * kDim + c)] += g[static_cast<size_t>(k * kDim + c)];
    }
  }
  EXPECT_EQ(MustRun(program, {Array::Of(ids), Array::Of(g)}).As<float>(), want);
}

TEST(Scatter, AddCombinesRepeatedIndicesAndSkipsOutOfBounds) {
  const std::string program = RowScatter(
      "    %s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>");
  const std::vector<int32_t> indices{1, 1, 5};  // row 5 is out of bounds: skipped
  const std::vector<float> updates{1, 2, 3, 10, 20, 30, 100, 200, 300};
  const std::vector<float> got = MustRun(program, {Array::Of(std::vector<float>(15, 0.5f)),
                                                   Array::Of(indices), Array::Of(updates)})
                                     .As<float>();
  std::vector<float> want(15, 0.5f);
  want[3] += 11;
  want[4] += 22;
  want[5] += 33;
  EXPECT_EQ(got, want);
}

TEST(Scatter, OverwriteMaxAndGenericBodies) {
  const std::vector<int32_t> indices{4, 0, -1};  // -1: skipped
  const std::vector<int32_t> updates{1, 9, 3, 7, 7, 7, 5, 5, 5};
  const std::vector<int32_t> x = Ramp<int32_t>(15);
  struct Body {
    std::string name, text;
    std::vector<int32_t> row0, row4;
  };
  const std::vector<Body> bodies{
      {"overwrite", "    stablehlo.return %b : tensor<i32>", {7, 7, 7}, {1, 9, 3}},
      {"max",
       "    %s = stablehlo.maximum %b, %a : tensor<i32>\n    stablehlo.return %s : tensor<i32>",
       {7, 7, 7},
       {12, 13, 14}},
      // Not one op: runs the region per element (2a - b).
      {"generic",
       "    %s = stablehlo.add %a, %a : tensor<i32>\n    %t = stablehlo.subtract %s, %b : "
       "tensor<i32>\n    stablehlo.return %t : tensor<i32>",
       {-7, -5, -3},
       {23, 17, 25}},
  };
  for (const Body& body : bodies) {
    const std::vector<int32_t> got = MustRun(RowScatter(body.text, "i32"),
                                             {Array::Of(x), Array::Of(indices), Array::Of(updates)})
                                         .As<int32_t>();
    std::vector<int32_t> want = x;
    std::copy(body.row0.begin(), body.row0.end(), want.begin());
    std::copy(body.row4.begin(), body.row4.end(), want.begin() + 12);
    EXPECT_EQ(got, want) << body.name;
  }
}

TEST(Scatter, BatchingDimensionsAndTwoInputs) {
  // out[b, idx[b, j]] += u[b, j] for two inputs at once: the first adds, the
  // second overwrites.
  const std::string x = "tensor<2x3xf32>", u = "tensor<2x2xf32>", s = "tensor<f32>";
  const std::string program = Main(
      "%x: " + x + ", %y: " + x + ", %i: tensor<2x2x1xi32>, %u: " + u + ", %v: " + u,
      "(" + x + ", " + x + ")",
      "  %0:2 = \"stablehlo.scatter\"(%x, %y, %i, %u, %v) <{scatter_dimension_numbers = "
      "#stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], "
      "scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], "
      "index_vector_dim = 2>}> ({\n  ^bb0(%a: " +
          s + ", %c: " + s + ", %b: " + s + ", %d: " + s +
          "):\n    %s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s, %d : "
          "tensor<f32>, tensor<f32>\n  }) : (" +
          x + ", " + x + ", tensor<2x2x1xi32>, " + u + ", " + u + ") -> (" + x + ", " + x +
          ")\n  return %0#0, %0#1 : " + x + ", " + x);
  const std::vector<int32_t> indices{2, 2, 0, 1};
  StatusOr<std::vector<Array>> results = testing::Run(
      program,
      {Array::Of(Ramp<float>(6)), Array::Of(Ramp<float>(6)), Array::Of(indices),
       Array::Of(std::vector<float>{1, 2, 3, 4}), Array::Of(std::vector<float>{-1, -2, -3, -4})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<float>(), (std::vector<float>{0, 1, 5, 6, 8, 5}));
  EXPECT_EQ((*results)[1].As<float>(), (std::vector<float>{0, 1, -2, -3, -4, 5}));
}

TEST(Scatter, IntoAnEmptyDimensionWritesNothing) {
  const std::string x = "tensor<0x3xf32>", u = "tensor<2x3xf32>", s = "tensor<f32>";
  const std::string program = Main(
      "%x: " + x + ", %i: tensor<2x1xi32>, %u: " + u, x,
      "  %0 = \"stablehlo.scatter\"(%x, %i, %u) <{scatter_dimension_numbers = "
      "#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], "
      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({\n  ^bb0(%a: " +
          s + ", %b: " + s + "):\n    stablehlo.return %b : tensor<f32>\n  }) : (" + x +
          ", tensor<2x1xi32>, " + u + ") -> " + x + "\n  return %0 : " + x);
  EXPECT_TRUE(MustRun(program, {Array{}, Array::Of(std::vector<int32_t>{0, 0}),
                                Array::Of(std::vector<float>(6, 1.0f))})
                  .bytes.empty());
}

TEST(DynamicSlice, StartsAreClamped) {
  const std::string program = Main(
      "%x: tensor<4x5xf32>, %r: tensor<i32>, %c: tensor<i32>", "tensor<2x3xf32>",
      "  %0 = \"stablehlo.dynamic_slice\"(%x, %r, %c) <{slice_sizes = array<i64: 2, 3>}> : "
      "(tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>\n"
      "  return %0 : tensor<2x3xf32>");
  const auto run = [&](int32_t r, int32_t c) {
    return MustRun(program, {Array::Of(Ramp<float>(20)), Array::Of(std::vector<int32_t>{r}),
                             Array::Of(std::vector<int32_t>{c})})
        .As<float>();
  };
  EXPECT_EQ(run(1, 1), (std::vector<float>{6, 7, 8, 11, 12, 13}));
  EXPECT_EQ(run(9, -3), (std::vector<float>{10, 11, 12, 15, 16, 17}));
}

TEST(DynamicUpdateSlice, StartsAreClamped) {
  const std::string program = Main(
      "%x: tensor<3x4xi32>, %u: tensor<2x2xi32>, %r: tensor<i64>, %c: tensor<i64>",
      "tensor<3x4xi32>",
      "  %0 = \"stablehlo.dynamic_update_slice\"(%x, %u, %r, %c) : (tensor<3x4xi32>, "
      "tensor<2x2xi32>, tensor<i64>, tensor<i64>) -> tensor<3x4xi32>\n"
      "  return %0 : tensor<3x4xi32>");
  const auto run = [&](int64_t r, int64_t c) {
    return MustRun(program,
                   {Array::Of(std::vector<int32_t>(12, 0)),
                    Array::Of(std::vector<int32_t>{1, 2, 3, 4}), Array::Of(std::vector<int64_t>{r}),
                    Array::Of(std::vector<int64_t>{c})})
        .As<int32_t>();
  };
  EXPECT_EQ(run(0, 1), (std::vector<int32_t>{0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0}));
  EXPECT_EQ(run(5, 7), (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4}));
}

TEST(Pad, EdgeInteriorAndNegativePadding) {
  // Rows: low 1, high 0, interior 1 (3 -> 6). Columns: low -1, high 2
  // (crop the first, two after): 3 -> 4.
  const std::string program = Main(
      "%x: tensor<3x3xf32>, %v: tensor<f32>", "tensor<6x4xf32>",
      "  %0 = \"stablehlo.pad\"(%x, %v) <{edge_padding_high = array<i64: 0, 2>, "
      "edge_padding_low = array<i64: 1, -1>, interior_padding = array<i64: 1, 0>}> : "
      "(tensor<3x3xf32>, tensor<f32>) -> tensor<6x4xf32>\n  return %0 : tensor<6x4xf32>");
  const std::vector<float> got =
      MustRun(program, {Array::Of(Ramp<float>(9)), Array::Of(std::vector<float>{-1})}).As<float>();
  EXPECT_EQ(got, (std::vector<float>{-1, -1, -1, -1,  //
                                     1,  2,  -1, -1,  //
                                     -1, -1, -1, -1,  //
                                     4,  5,  -1, -1,  //
                                     -1, -1, -1, -1,  //
                                     7,  8,  -1, -1}));
}

TEST(Pad, CropsEverything) {
  const std::string program = Main(
      "%x: tensor<2xf32>, %v: tensor<f32>", "tensor<1xf32>",
      "  %0 = \"stablehlo.pad\"(%x, %v) <{edge_padding_high = array<i64: 1>, "
      "edge_padding_low = array<i64: -2>, interior_padding = array<i64: 0>}> : "
      "(tensor<2xf32>, tensor<f32>) -> tensor<1xf32>\n  return %0 : tensor<1xf32>");
  EXPECT_EQ(MustRun(program,
                    {Array::Of(std::vector<float>{1, 2}), Array::Of(std::vector<float>{9})})
                .As<float>(),
            (std::vector<float>{9}));
}

}  // namespace
}  // namespace kiln::compiler
