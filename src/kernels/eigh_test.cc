#include "kernels/eigh.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

namespace kiln::kernels {
namespace {

TEST(Eigh, TwoByTwoHasKnownSpectrum) {
  // [[2, 1], [1, 2]]: eigenvalues 1 and 3, eigenvectors (1, -1) and (1, 1) / sqrt 2.
  const std::vector<double> a = {2, 1, 1, 2};
  std::vector<double> vectors(4), values(2);
  ASSERT_TRUE(Eigh(ElementType::kF64, a.data(), vectors.data(), values.data(), 1, 2, true).ok());
  EXPECT_NEAR(values[0], 1, 1e-12);
  EXPECT_NEAR(values[1], 3, 1e-12);
  const double h = 1 / std::sqrt(2.0);
  // Columns are eigenvectors (each up to its sign).
  EXPECT_NEAR(std::abs(vectors[0]), h, 1e-12);
  EXPECT_NEAR(vectors[0] + vectors[2], 0, 1e-12);
  EXPECT_NEAR(vectors[1] - vectors[3], 0, 1e-12);
}

TEST(Eigh, ReadsOnlyTheChosenTriangle) {
  // Lower triangle of [[1, x], [0, 5]] is diag(1, 5); the upper one is [[1, 7], [7, 5]].
  const std::vector<float> a = {1, 7, 0, 5};
  std::vector<float> vectors(4), values(2);
  ASSERT_TRUE(Eigh(ElementType::kF32, a.data(), vectors.data(), values.data(), 1, 2, true).ok());
  EXPECT_FLOAT_EQ(values[0], 1);
  EXPECT_FLOAT_EQ(values[1], 5);
  ASSERT_TRUE(Eigh(ElementType::kF32, a.data(), vectors.data(), values.data(), 1, 2, false).ok());
  const float mean = 3, radius = std::sqrt(4.0f + 49.0f);
  EXPECT_NEAR(values[0], mean - radius, 1e-5);
  EXPECT_NEAR(values[1], mean + radius, 1e-5);
}

TEST(Eigh, HermitianUpperTriangleIsConjugated) {
  // Upper triangle [[2, i], [., 2]] means A = [[2, i], [-i, 2]]: eigenvalues 1 and 3.
  using C = std::complex<float>;
  const std::vector<C> a = {C(2, 0), C(0, 1), C(99, 99), C(2, 0)};
  std::vector<C> vectors(4);
  std::vector<float> values(2);
  ASSERT_TRUE(Eigh(ElementType::kC64, a.data(), vectors.data(), values.data(), 1, 2, false).ok());
  EXPECT_NEAR(values[0], 1, 1e-5);
  EXPECT_NEAR(values[1], 3, 1e-5);
  // A v = w v for the first column.
  const C v0 = vectors[0], v1 = vectors[2];
  EXPECT_NEAR(std::abs(C(2, 0) * v0 + C(0, 1) * v1 - values[0] * v0), 0, 1e-5);
  EXPECT_NEAR(std::abs(C(0, -1) * v0 + C(2, 0) * v1 - values[0] * v1), 0, 1e-5);
}

TEST(Eigh, NonFiniteMatrixGivesNaNAndOthersInTheBatchAreUnaffected) {
  const std::vector<double> a = {1, 0, NAN, 1, /* second */ 4, 0, 0, 9};
  std::vector<double> vectors(8), values(4);
  ASSERT_TRUE(Eigh(ElementType::kF64, a.data(), vectors.data(), values.data(), 2, 2, true).ok());
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(std::isnan(values[i]));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(vectors[i]));
  EXPECT_DOUBLE_EQ(values[2], 4);
  EXPECT_DOUBLE_EQ(values[3], 9);
}

TEST(Eigh, OtherTypesAreUnimplementedByName) {
  const std::vector<int32_t> a = {1};
  std::vector<int32_t> out(1);
  const Status status = Eigh(ElementType::kS32, a.data(), out.data(), out.data(), 1, 1, true);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("i32"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace kiln::kernels
