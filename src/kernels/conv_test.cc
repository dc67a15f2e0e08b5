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

TEST(ConvByBlocksTest, BlocksHoldAboutAQuarterMegabyteOfColumns) {
  ConvGeometry g = GeometryOf({8, 64, 64, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}});
  EXPECT_EQ(ConvBlockRows(g, sizeof(float)), 112);  // 112 rows x 576 x 4 bytes = 252 KiB
  g.feature_groups = 2;
  EXPECT_FALSE(ConvByBlocks(ElementType::kF32, g, nullptr, nullptr, nullptr).ok());
}

}  // namespace
}  // namespace kiln::kernels
