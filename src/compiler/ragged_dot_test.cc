// chlo.ragged_dot in its three modes, against products computed by hand
// (numpy, integer-valued floats so the sums are exact).
#include <gtest/gtest.h>

#include "compiler/lowering_test_util.h"

namespace kiln::compiler {
namespace {

using testing::Array;
using testing::MustRun;

std::string RaggedDot(const std::string& lhs, const std::string& rhs, const std::string& sizes,
                      const std::string& out, const std::string& numbers) {
  return "func.func @main(%lhs: tensor<" + lhs + ">, %rhs: tensor<" + rhs + ">, %sizes: tensor<" +
         sizes + ">) -> tensor<" + out +
         "> {\n"
         "  %0 = \"chlo.ragged_dot\"(%lhs, %rhs, %sizes) {ragged_dot_dimension_numbers = "
         "#chlo.ragged_dot<" +
         numbers + ">} : (tensor<" + lhs + ">, tensor<" + rhs + ">, tensor<" + sizes +
         ">) -> tensor<" + out +
         ">\n"
         "  return %0 : tensor<" +
         out + ">\n}\n";
}

// Mode 1 with a batch dimension, the ragged dimension last among the lhs's
// and per-batch group sizes: batch 0's groups end before the last row (a
// row of zeros), batch 1's run past the end (cut to fit).
TEST(RaggedDotTest, RowsTakeTheirGroupsRhs) {
  const std::string program = RaggedDot(
      "2x3x5xf32", "2x3x3x2xf32", "2x3xi32", "2x5x2xf32",
      "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
      "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [2], "
      "lhs_ragged_dimensions = [2], rhs_group_dimensions = [1]");
  const std::vector<float> lhs = {-1, -3, -2, 0, -3, -3, -3, 2,  2,  0,  -1, 0, -2, -2, -1,
                                  2,  3,  -3, 1, 1,  2,  3,  -3, -1, -2, -1, 3, -1, -1, 1};
  const std::vector<float> rhs = {-2, 0, -1, 2, -3, 3, -2, 2, -1, -3, 0,  3,  -3, 0, -2, 0,  -3, 2,
                                  1,  3, -2, 2, 3,  1, 1,  3, -3, -3, -2, -1, 1,  2, -3, -3, 2,  2};
  const Array result = MustRun(program, {Array::Of(lhs), Array::Of(rhs),
                                         Array::Of<int32_t>({2, 0, 2, 1, 3, 4})});
  EXPECT_EQ(result.As<float>(), (std::vector<float>{8,  -9, 9,   -6, 8, -4, 2, -4, 0, 0,
                                                    -5, 9,  -12, -3, 8, 1,  6, 7,  9, 10}));
}

// Mode 2: each group sums over its slice of the contracting dimension; an
// empty group gives zeros.
TEST(RaggedDotTest, GroupsSumTheirSliceOfTheDepth) {
  const std::string program = RaggedDot(
      "2x5xf32", "5x3xf32", "3xi64", "3x2x3xf32",
      "lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
      "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0], "
      "lhs_ragged_dimensions = [1], rhs_group_dimensions = []");
  const Array result = MustRun(program, {Array::Of<float>({3, -2, -2, -2, 2, 2, -1, 0, 1, 1}),
                                         Array::Of<float>({0, 0, -3, -3, -3, -3, -1, -1, 0, -3, 2,
                                                           2, 3, -3, 2}),
                                         Array::Of<int64_t>({2, 0, 3})});
  EXPECT_EQ(result.As<float>(),
            (std::vector<float>{6, 6, -3, 3, 3, -3, 0, 0, 0, 0, 0, 0, 14, -8, 0, 0, -1, 4}));
}

// Mode 3: the ragged dimension is a batch dimension; a plain batched product.
TEST(RaggedDotTest, ARaggedBatchIsABatchedProduct) {
  const std::string program = RaggedDot(
      "2x1x2xf32", "2x2x1xf32", "2xi32", "2x1x1xf32",
      "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
      "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1], "
      "lhs_ragged_dimensions = [0], rhs_group_dimensions = []");
  const Array result = MustRun(program,
                               {Array::Of<float>({1, 2, 3, 4}), Array::Of<float>({5, 6, 7, 8}),
                                Array::Of<int32_t>({1, 1})});
  EXPECT_EQ(result.As<float>(), (std::vector<float>{17, 53}));
}

}  // namespace
}  // namespace kiln::compiler
