#include "kernels/tridiagonal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "kernels/linalg_test_util.h"

namespace kiln::kernels {
namespace {

using testing::ExpectNear;
using testing::kLapackTolerance;

using C = std::complex<double>;

// The expected values are SciPy's LAPACK (scipy.linalg.lapack.dsytrd,
// zhetrd, dgtsv) on the same inputs: what JAX's CPU backend returns.

// Not symmetric on purpose: the triangle not read must stay as it is.
const std::vector<double> kReal = {4, 1, -2, 7, 1, 2, 0, 1, -2, 0, 3, -2, 2, 1, -2, -1};

TEST(TridiagonalTest, RealLowerMatchesLapack) {
  std::vector<double> out(16), d(4), e(3), taus(3);
  ASSERT_TRUE(Tridiagonalize(ElementType::kF64, kReal.data(), out.data(), d.data(), e.data(),
                             taus.data(), 1, 4, /*lower=*/true)
                  .ok());
  ExpectNear(out, {4.0, 1.0, -2.0, 7.0, -3.0, 3.333333333333334, 0.0, 1.0, -0.5,
                   -1.6666666666666665, -1.3200000000000007, -2.0, 0.5, 0.5000000000000002,
                   0.9066666666666656, 1.9866666666666677});
  ExpectNear(d, {4.0, 3.333333333333334, -1.3200000000000007, 1.9866666666666677});
  ExpectNear(e, {-3.0, -1.6666666666666665, 0.9066666666666656});
  ExpectNear(taus, {1.3333333333333333, 1.5999999999999999, 0.0});
}

TEST(TridiagonalTest, RealUpperMatchesLapack) {
  std::vector<double> out(16), d(4), e(3), taus(3);
  ASSERT_TRUE(Tridiagonalize(ElementType::kF64, kReal.data(), out.data(), d.data(), e.data(),
                             taus.data(), 1, 4, /*lower=*/false)
                  .ok());
  ExpectNear(out, {2.1335423197492167, 0.4238615479674956, -0.7694863123493689, -0.7487856919689346,
                   1.0, 1.6812724950655968, -1.4791648553863574, -0.10696938456699066, -2.0, 0.0,
                   5.185185185185183, 7.348469228349535, 2.0, 1.0, -2.0, -1.0});
  ExpectNear(d, {2.1335423197492167, 1.6812724950655968, 5.185185185185183, -1.0});
  ExpectNear(e, {0.4238615479674956, -1.4791648553863574, 7.348469228349535});
  ExpectNear(taus, {0.0, 1.2561952527988052, 1.2721655269759087});
}

TEST(TridiagonalTest, ComplexHermitianMatchesLapackEitherTriangle) {
  const std::vector<C> a = {{2, 0},    {1, -1},   {0, 0.5}, {1, 1}, {3, 0},
                            {2, -0.5}, {0, -0.5}, {2, 0.5}, {-1, 0}};
  std::vector<C> out(9), taus(2);
  std::vector<double> d(3), e(2);
  ASSERT_TRUE(Tridiagonalize(ElementType::kC128, a.data(), out.data(), d.data(), e.data(),
                             taus.data(), 1, 3, /*lower=*/true)
                  .ok());
  ExpectNear(out, {{2.0, 0.0},
                   {1.0, -1.0},
                   {0.0, 0.5},
                   {-1.5, 0.0},
                   {1.4444444444444446, 0.0},
                   {2.0, -0.5},
                   {-0.06896551724137932, -0.1724137931034483},
                   {2.837687286471586, 0.0},
                   {0.5555555555555556, 0.0}});
  ExpectNear(d, {2.0, 1.4444444444444446, 0.5555555555555556});
  ExpectNear(e, {-1.5, 2.837687286471586});
  ExpectNear(taus,
             {{1.6666666666666667, 0.6666666666666666}, {1.3510494574665155, 0.936356918280879}});

  ASSERT_TRUE(Tridiagonalize(ElementType::kC128, a.data(), out.data(), d.data(), e.data(),
                             taus.data(), 1, 3, /*lower=*/false)
                  .ok());
  ExpectNear(out, {{2.6111111111111125, 0.0},
                   {1.4958791130929174, 0.0},
                   {-0.014505130178708484, 0.11956057618298435},
                   {1.0, 1.0},
                   {2.3888888888888893, 0.0},
                   {-2.1213203435596424, 0.0},
                   {0.0, -0.5},
                   {2.0, 0.5},
                   {-1.0, 0.0}});
  ExpectNear(d, {2.6111111111111125, 2.3888888888888893, -1.0});
  ExpectNear(e, {1.4958791130929174, -2.1213203435596424});
  ExpectNear(taus, {{1.4833307282173291, -0.8754378374053217},
                    {1.9428090415820631, -0.23570226039551587}});
}

TEST(TridiagonalTest, BatchesAndSinglePrecision) {
  std::vector<float> a(2 * 16), out(a.size()), d(8), e(6), taus(6);
  for (int i = 0; i < 16; ++i) a[i] = a[16 + i] = static_cast<float>(kReal[i]);
  ASSERT_TRUE(Tridiagonalize(ElementType::kF32, a.data(), out.data(), d.data(), e.data(),
                             taus.data(), 2, 4, true)
                  .ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(d[i], d[4 + i]);
  EXPECT_NEAR(d[3], 1.9866666666666677, 1e-5);
  EXPECT_FALSE(Tridiagonalize(ElementType::kF16, a.data(), out.data(), d.data(), e.data(),
                              taus.data(), 1, 1, true)
                   .ok());
}

// A pivoting system (|d[0]| < |dl[1]|) with two right-hand sides.
TEST(TridiagonalSolveTest, PivotsAsLapackGtsv) {
  const std::vector<double> dl = {9, 0.1, 3.0, 0.5};  // dl[0] is not read
  const std::vector<double> d = {0.2, 1.0, 2.0, 1.5};
  const std::vector<double> du = {4.0, 0.3, 1.0, 9};  // du[3] is not read
  const std::vector<double> b = {1.0, 2.0, 0.5, -1.0, 2.0, 0.0, 1.0, 1.0};
  std::vector<double> x(8);
  ASSERT_TRUE(TridiagonalSolve(ElementType::kF64, dl.data(), d.data(), du.data(), b.data(),
                               x.data(), 1, 4, 2)
                  .ok());
  ExpectNear(x, {1.8831168831168843, -14.415584415584414, 0.15584415584415579, 1.2207792207792207,
                 0.5194805194805195, -2.5974025974025974, 0.49350649350649356, 1.5324675324675325});
}

TEST(TridiagonalSolveTest, ASingularSystemGivesNaNForItsBatchItemOnly) {
  const std::vector<C> dl = {0, 0, 0, 1};
  const std::vector<C> d = {0, 1, 2, 1};  // first system: a zero first row
  const std::vector<C> du = {0, 0, 1, 0};
  const std::vector<C> b = {1, 1, {1, 1}, 2};
  std::vector<C> x(4);
  ASSERT_TRUE(TridiagonalSolve(ElementType::kC128, dl.data(), d.data(), du.data(), b.data(),
                               x.data(), 2, 2, 1)
                  .ok());
  EXPECT_TRUE(std::isnan(x[0].real()) && std::isnan(x[1].real()));
  // [[2, 1], [1, 1]] x = [1+i, 2]: x = [-1+i, 3-i].
  EXPECT_NEAR(std::abs(x[2] - C(-1, 1)), 0.0, kLapackTolerance);
  EXPECT_NEAR(std::abs(x[3] - C(3, -1)), 0.0, kLapackTolerance);
}

}  // namespace
}  // namespace kiln::kernels
