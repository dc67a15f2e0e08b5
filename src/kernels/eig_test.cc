#include "kernels/eig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

namespace kiln::kernels {
namespace {

using C = std::complex<double>;

TEST(Eig, RotationHasConjugateEigenvaluesPositiveImaginaryFirst) {
  // [[0, -1], [1, 0]]: eigenvalues +i and -i.
  const std::vector<double> a = {0, -1, 1, 0};
  std::vector<C> values(2), right(4);
  ASSERT_TRUE(Eig(ElementType::kF64, a.data(), values.data(), nullptr, right.data(), 1, 2).ok());
  EXPECT_NEAR(std::abs(values[0] - C(0, 1)), 0, 1e-12);
  EXPECT_NEAR(std::abs(values[1] - C(0, -1)), 0, 1e-12);
  for (int j = 0; j < 2; ++j) {
    // A v = w v for column j, with unit norm and a real largest component.
    const C v0 = right[j], v1 = right[2 + j];
    EXPECT_NEAR(std::abs(-v1 - values[j] * v0), 0, 1e-12);
    EXPECT_NEAR(std::abs(v0 - values[j] * v1), 0, 1e-12);
    EXPECT_NEAR(std::norm(v0) + std::norm(v1), 1, 1e-12);
  }
}

TEST(Eig, LeftEigenvectorsSatisfyUHA) {
  const std::vector<std::complex<float>> a = {{1, 2}, {3, 0}, {0, -1}, {2, 1}};
  std::vector<std::complex<float>> values(2), left(4);
  ASSERT_TRUE(Eig(ElementType::kC64, a.data(), values.data(), left.data(), nullptr, 1, 2).ok());
  for (int j = 0; j < 2; ++j) {
    const std::complex<float> u0 = std::conj(left[j]), u1 = std::conj(left[2 + j]);
    // (u^H A)_k = sum_i u^H_i A_ik
    EXPECT_NEAR(std::abs(u0 * a[0] + u1 * a[2] - values[j] * u0), 0, 1e-5);
    EXPECT_NEAR(std::abs(u0 * a[1] + u1 * a[3] - values[j] * u1), 0, 1e-5);
  }
}

TEST(Eig, NonFiniteMatrixGivesNaN) {
  const std::vector<float> a = {1, INFINITY, 0, 1};
  std::vector<std::complex<float>> values(2), right(4);
  ASSERT_TRUE(Eig(ElementType::kF32, a.data(), values.data(), nullptr, right.data(), 1, 2).ok());
  for (const auto& value : values) EXPECT_TRUE(std::isnan(value.real()));
  for (const auto& value : right) EXPECT_TRUE(std::isnan(value.imag()));
}

}  // namespace
}  // namespace kiln::kernels
