// ConvByBlocks against the whole-matrix path (Im2Col then one MatMul), and
// Im2Col against a column matrix built by direct index arithmetic, over
// geometries with padding, strides, both dilations, one to three spatial
// dimensions and row counts that are not a multiple of the block.
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

// ConvByBlocks over `c` in T against Im2Col and one MatMul, elements within
// `tolerance` x (1 + |expected|).
template <typename T>
void CheckAgainstOneGemm(ElementType type, const Case& c, double tolerance) {
  const ConvGeometry g = GeometryOf(c);
  int64_t input_count = c.batch * c.features;
  for (int64_t size : c.input) input_count *= size;
  const int64_t depth = g.window_size() * g.features;
  std::mt19937 random(3);
  std::uniform_real_distribution<T> uniform(-1, 1);
  std::vector<T> input(static_cast<size_t>(input_count)),
      kernel(static_cast<size_t>(depth * c.outputs));
  for (T& x : input) x = uniform(random);
  for (T& x : kernel) x = uniform(random);
  // The whole-matrix path.
  std::vector<T> columns(static_cast<size_t>(g.rows() * depth));
  Im2Col(sizeof(T), g, input.data(), columns.data());
  MatMulShape shape;
  shape.m = g.rows();
  shape.n = c.outputs;
  shape.k = depth;
  std::vector<T> expected(static_cast<size_t>(g.rows() * c.outputs));
  ASSERT_TRUE(MatMul(type, shape, columns.data(), kernel.data(), expected.data()).ok());
  std::vector<T> actual(expected.size(), T(99));
  ASSERT_TRUE(ConvByBlocks(type, g, input.data(), kernel.data(), actual.data()).ok());
  ASSERT_GT(g.rows(), 8);
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], tolerance * (1 + std::abs(expected[i])))
        << "case with " << c.input.size() << " spatial dims, element " << i;
  }
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
  for (const Case& c : cases) CheckAgainstOneGemm<float>(ElementType::kF32, c, 1e-4);
}

// Row (n, y...) of the column matrix by direct index arithmetic: for each
// window position k (row-major), the features of the input element at
// y * stride + k * rhs_dilation - padding_low (divided by lhs_dilation),
// or zeros where that is padding or a dilation hole. One group.
std::vector<float> NaiveColumns(const ConvGeometry& g, const std::vector<float>& input) {
  const size_t rank = g.window.size();
  const int64_t depth = g.window_size() * g.features;
  std::vector<float> columns(static_cast<size_t>(g.rows() * depth), 0.0f);
  for (int64_t row = 0; row < g.rows(); ++row) {
    std::vector<int64_t> y(rank);
    int64_t rest = row;
    for (size_t d = rank; d-- > 0;) {
      y[d] = rest % g.output_spatial[d];
      rest /= g.output_spatial[d];
    }
    const int64_t n = rest;
    for (int64_t w = 0; w < g.window_size(); ++w) {
      int64_t k_rest = w, offset = 0, pixel = 1;
      bool inside = true;
      for (size_t d = rank; d-- > 0;) {
        const int64_t k = k_rest % g.window[d];
        k_rest /= g.window[d];
        const int64_t dilated = y[d] * g.strides[d] + k * g.rhs_dilation[d] - g.padding_low[d];
        const int64_t x = dilated / g.lhs_dilation[d];
        inside = inside && dilated >= 0 && dilated % g.lhs_dilation[d] == 0 &&
                 x < g.input_spatial[d];
        offset += x * pixel;
        pixel *= g.input_spatial[d];
      }
      if (!inside) continue;
      for (int64_t f = 0; f < g.features; ++f) {
        columns[static_cast<size_t>(row * depth + w * g.features + f)] =
            input[static_cast<size_t>((n * pixel + offset) * g.features + f)];
      }
    }
  }
  return columns;
}

TEST(ConvByBlocksTest, Im2ColMatchesIndexArithmetic) {
  // Runs of window positions copied whole (no dilation along the innermost
  // dimension), broken by padding (including negative), and position by
  // position (dilations), in one to three dimensions.
  const std::vector<Case> cases = {
      {2, 3, 1, {9, 8}, {3, 4}, {1, 1}, {1, 2}, {1, 1}, {1, 1}},
      {2, 2, 1, {10, 7}, {4, 3}, {2, 1}, {-1, 1}, {1, 1}, {1, 1}},
      {1, 4, 1, {12}, {5}, {3}, {4}, {1}, {1}},
      {2, 2, 1, {6, 9}, {2, 3}, {1, 1}, {1, 1}, {1, 2}, {1, 1}},
      {1, 3, 1, {5, 6}, {2, 2}, {1, 1}, {0, 1}, {1, 1}, {2, 2}},
      {1, 2, 1, {4, 5, 6}, {2, 3, 4}, {1, 1, 1}, {1, 0, 2}, {1, 1, 1}, {1, 1, 1}},
  };
  for (const Case& c : cases) {
    const ConvGeometry g = GeometryOf(c);
    int64_t input_count = c.batch * c.features;
    for (int64_t size : c.input) input_count *= size;
    std::vector<float> input(static_cast<size_t>(input_count));
    for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i + 1);
    const std::vector<float> expected = NaiveColumns(g, input);
    std::vector<float> actual(expected.size(), -1.0f);
    Im2Col(sizeof(float), g, input.data(), actual.data());
    EXPECT_EQ(actual, expected) << "case with " << c.input.size() << " spatial dims, window "
                                << c.window[0];
  }
}

TEST(ConvByBlocksTest, EmptyBatchesAndWindowsComputeWithoutDividingByZero) {
  // Deep rows (the sliced path) over an empty batch: nothing to write.
  ConvGeometry sliced = GeometryOf({1, 8, 4, {30, 30}, {28, 28}, {1, 1}, {0, 0}, {1, 1}, {1, 1}});
  ASSERT_TRUE(ConvSlicesDepth(sliced, ElementType::kF32));
  sliced.batch = 0;
  EXPECT_TRUE(ConvByBlocks(ElementType::kF32, sliced, nullptr, nullptr, nullptr).ok());
  // A window dimension of size 0: rows of no columns, every output zero.
  ConvGeometry empty = GeometryOf({2, 3, 4, {5, 5}, {1, 3}, {1, 1}, {0, 0}, {1, 1}, {1, 1}});
  empty.window[0] = 0;
  const std::vector<float> input(2 * 5 * 5 * 3, 1.0f);
  std::vector<float> out(static_cast<size_t>(empty.rows() * 4), 7.0f);
  ASSERT_TRUE(ConvByBlocks(ElementType::kF32, empty, input.data(), nullptr, out.data()).ok());
  for (float x : out) EXPECT_EQ(x, 0.0f);
}

TEST(ConvByBlocksTest, DepthSlicesAddUpInF64) {
  const Case c{6, 6, 5, {16, 16}, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  ASSERT_TRUE(ConvSlicesDepth(GeometryOf(c), ElementType::kF64));
  CheckAgainstOneGemm<double>(ElementType::kF64, c, 1e-12);
}

TEST(ConvByBlocksTest, BlocksHoldAboutAQuarterMegabyteOfColumns) {
  ConvGeometry g = GeometryOf({8, 64, 64, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}});
  EXPECT_EQ(ConvBlockRows(g, sizeof(float)), 112);  // 112 rows x 576 x 4 bytes = 252 KiB
  EXPECT_FALSE(ConvSlicesDepth(g, ElementType::kF32));
  // That layer's weight gradient: rows of 56 x 56 x 8 columns.
  const ConvGeometry gradient = GeometryOf(
      {64, 8, 64, {58, 58}, {56, 56}, {1, 1}, {0, 0}, {1, 1}, {1, 1}});
  EXPECT_TRUE(ConvSlicesDepth(gradient, ElementType::kF32));
  EXPECT_FALSE(ConvSlicesDepth(gradient, ElementType::kS32));  // only f32 and f64 add slices
  g.feature_groups = 2;
  EXPECT_FALSE(ConvByBlocks(ElementType::kF32, g, nullptr, nullptr, nullptr).ok());
}

}  // namespace
}  // namespace kiln::kernels
