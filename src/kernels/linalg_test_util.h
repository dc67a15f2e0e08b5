// Helpers for the linear-algebra kernels' tests (tridiagonal_test.cc,
// schur_test.cc, pivoted_qr_test.cc), whose expected values are SciPy's
// LAPACK on the same inputs.
#pragma once

#include <gtest/gtest.h>

#include <complex>
#include <vector>

namespace kiln::kernels::testing {

// The tolerance for f64 and c128 results beside LAPACK's.
constexpr double kLapackTolerance = 1e-12;

// Element by element |got - want| <= tolerance, naming the first indices
// that differ.
template <typename T>
void ExpectNear(const std::vector<T>& got, const std::vector<T>& want,
                double tolerance = kLapackTolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(std::abs(got[i] - want[i]), 0.0, tolerance) << "at " << i;
  }
}

}  // namespace kiln::kernels::testing
