// ConvByBlocks against the whole-matrix path (Im2Col then one MatMul) and
// a direct loop, over geometries with padding, strides, both dilations,
// one to three spatial dimensions and row counts that are not a multiple
// of the block.
#include "kernels/conv.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/dot.h"

namespace kiln::kernels {
namespace {

struct Case {
  int64_t batch, features, outputs;
  std::vector<int64_t> input, window, strides, padding, lhs_dilation, rhs_dilation;
};

ConvGeometry GeometryOf(const Case& c) {
  ConvGeometry g;
  g.batch = c.batch;
  g.features = c.features;
  g.output_features = c.outputs;
  g.input_spatial = c.input;
  g.window = c.window;
  g.strides = c.strides;
  g.padding_low = c.padding;
  g.lhs_dilation = c.lhs_dilation;
  g.rhs_dilation = c.rhs_dilation;
  for (size_t d = 0; d < c.input.size(); ++d) {
    const int64_t dilated_input = (c.input[d] - 1) * c.lhs_dilation[d] + 1;
    const int64_t dilated_window = (c.window[d] - 1) * c.rhs_dilation[d] + 1;
    const int64_t padded = dilated_input + 2 * c.padding[d];
    g.output_spatial.push_back((padded - dilated_window) / c.strides[d] + 1);
  }
  return g;
}

TEST(ConvByBlocksTest, MatchesIm2ColAndOneGemm) {
  const std::vector<Case> cases = {
      // ResNet-style 3x3, padding 1: 8 x 20 x 20 = 3200 rows, several blocks.
      {8, 16, 24, {20, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      // Strided 2x2 with window dilation, odd sizes.
      {3, 5, 7, {17, 13}, {2, 3}, {2, 1}, {0, 2}, {1, 1}, {2, 1}},
      // Input dilation (a transposed convolution's gradient shape), 1-D.
      {2, 4, 3, {50}, {5}, {1}, {3}, {2}, {1}},
      // 3-D.
      {1, 3, 4, {6, 7, 5}, {2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 1}, {1, 1, 1}},
      // Weight gradients (rows deeper than the block budget: sliced by
      // window positions): a 3x3 output, its window the whole image.
      {6, 3, 5, {30, 30}, {28, 28}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},
      // ...with padding, so that runs of window positions break at zeros.
      {5, 8, 9, {20, 20}, {20, 20}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      // ...with window dilation: no two window positions' inputs adjoin.
      {4, 8, 3, {40, 40}, {19, 19}, {1, 1}, {0, 0}, {1, 1}, {2, 2}},
  };
  std::mt19937 random(3);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (const Case& c : cases) {
    const ConvGeometry g = GeometryOf(c);
    int64_t input_count = c.batch * c.features;
    for (int64_t size : c.input) input_count *= size;
    const int64_t depth = g.window_size() * g.features;
    std::vector<float> input(static_cast<size_t>(input_count)), kernel(
        static_cast<size_t>(depth * c.outputs));
    for (float& x : input) x = uniform(random);
    for (float& x : kernel) x = uniform(random);
    // The whole-matrix path.
    std::vector<float> columns(static_cast<size_t>(g.rows() * depth));
    Im2Col(sizeof(float), g, input.data(), columns.data());
    MatMulShape shape;
    shape.m = g.rows();
    shape.n = c.outputs;
    shape.k = depth;
    std::vector<float> expected(static_cast<size_t>(g.rows() * c.outputs));
    ASSERT_TRUE(MatMul(ElementType::kF32, shape, columns.data(), kernel.data(), expected.data())
                    .ok());
    std::vector<float> actual(expected.size(), 99.0f);
    ASSERT_TRUE(
        ConvByBlocks(ElementType::kF32, g, input.data(), kernel.data(), actual.data()).ok());
    ASSERT_GT(g.rows(), 8);
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_NEAR(actual[i], expected[i], 1e-4f * (1.0f + std::abs(expected[i])))
          << "case with " << c.input.size() << " spatial dims, element " << i;
    }
  }
}

TEST(ConvByBlocksTest, DepthSlicesAddUpInF64) {
  const ConvGeometry g =
      GeometryOf({6, 6, 5, {16, 16}, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {1, 1}});
  ASSERT_TRUE(ConvSlicesDepth(g, ElementType::kF64));
  const int64_t depth = g.window_size() * g.features;
  std::mt19937 random(5);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> input(static_cast<size_t>(6 * 16 * 16 * 6)),
      kernel(static_cast<size_t>(depth * 5));
  for (double& x : input) x = uniform(random);
  for (double& x : kernel) x = uniform(random);
  std::vector<double> columns(static_cast<size_t>(g.rows() * depth));
  Im2Col(sizeof(double), g, input.data(), columns.data());
  MatMulShape shape;
  shape.m = g.rows();
  shape.n = 5;
  shape.k = depth;
  std::vector<double> expected(static_cast<size_t>(g.rows() * 5));
  ASSERT_TRUE(
      MatMul(ElementType::kF64, shape, columns.data(), kernel.data(), expected.data()).ok());
  std::vector<double> actual(expected.size(), 99.0);
  ASSERT_TRUE(ConvByBlocks(ElementType::kF64, g, input.data(), kernel.data(), actual.data()).ok());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], 1e-12 * (1.0 + std::abs(expected[i]))) << i;
  }
}

TEST(ConvByBlocksTest, BlocksHoldAboutAQuarterMegabyteOfColumns) {
  ConvGeometry g = GeometryOf({8, 64, 64, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}});
  EXPECT_EQ(ConvBlockRows(g, sizeof(float)), 112);  // 112 rows x 576 x 4 bytes = 252 KiB
  EXPECT_FALSE(ConvSlicesDepth(g, ElementType::kF32));
  // That layer's weight gradient: rows of 56 x 56 x 8 columns.
  const ConvGeometry gradient =
      GeometryOf({64, 8, 64, {58, 58}, {56, 56}, {1, 1}, {0, 0}, {1, 1}, {1, 1}});
  EXPECT_TRUE(ConvSlicesDepth(gradient, ElementType::kF32));
  EXPECT_FALSE(ConvSlicesDepth(gradient, ElementType::kS32));  // only f32 and f64 add slices
  g.feature_groups = 2;
  EXPECT_FALSE(ConvByBlocks(ElementType::kF32, g, nullptr, nullptr, nullptr).ok());
}

}  // namespace
}  // namespace kiln::kernels
