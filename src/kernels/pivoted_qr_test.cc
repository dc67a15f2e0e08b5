#include "kernels/pivoted_qr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "kernels/linalg_test_util.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

using testing::ExpectNear;

using C = std::complex<double>;

// The expected values are SciPy's LAPACK (scipy.linalg.lapack.dgeqp3,
// zgeqp3; dgeqp3 called directly for a jpvt with fixed columns) on the same
// inputs: what JAX's CPU backend returns.

TEST(PivotedQrTest, TallRealMatchesLapack) {
  const std::vector<double> a = {1, 2, 0, -1, 0, 3, 2, 1, 1, 0, 4, -2};
  std::vector<double> out(12), taus(3);
  std::vector<int32_t> jpvt(3, 0), pivots(3);
  ASSERT_TRUE(PivotedQr(ElementType::kF64, a.data(), jpvt.data(), out.data(), pivots.data(),
                        taus.data(), 1, 4, 3)
                  .ok());
  ExpectNear(out,
             {-4.58257569495584, 1.5275252316519468, -0.8728715609439694, 0.0, -3.4156502553198664,
              -0.09759000729485312, 0.15191621735034352, 0.19203912402770842, -2.2866069685390684,
              0.6076648694013741, -0.1670565783588651, -0.3086737260004825});
  EXPECT_EQ(pivots, (std::vector<int32_t>{2, 3, 1}));
  ExpectNear(taus, {1.4364357804719847, 1.8783100656536798, 1.8260179765821591});
}

TEST(PivotedQrTest, FixedColumnsComeFirstAsInLapack) {
  // jpvt's nonzero elements (columns 2 and 4) are factored first, in order,
  // without pivoting; the others follow by norm.
  const std::vector<double> a = {1, -2, 3, 0.5, 2, 0, 1, -1, 4, 1, 2, 2, 0, -1, 3};
  std::vector<double> out(15), taus(3);
  std::vector<int32_t> jpvt = {0, 0, 1, 0, 1};
  ASSERT_TRUE(PivotedQr(ElementType::kF64, a.data(), jpvt.data(), out.data(), jpvt.data(),
                        taus.data(), 1, 3, 5)
                  .ok());
  ExpectNear(out,
             {-3.1622776601683795, -1.58113883008419, 0.7905694150420948, -0.948683298050514,
              2.213594362117866, -0.16227766016837933, -3.3911649915626336, -0.9583727150068317,
              -1.916745430013663, -1.9167454300136626, 0.0, 0.6033420538261481, -3.9631454350213335,
              0.6527533657682194, 0.6527533657682196});
  EXPECT_EQ(jpvt, (std::vector<int32_t>{3, 5, 4, 1, 2}));
  ExpectNear(taus, {1.948683298050514, 1.466252404120157, 0.0});
}

TEST(PivotedQrTest, ComplexMatchesLapack) {
  // -0.0: numpy's -1j. beta takes alpha's sign, so R(0, 0) is +2 sqrt(3).
  const std::vector<C> a = {{1, 1}, {2, 0}, {-0.0, -1}, {0.5, 0}, {-1, 2},
                            {3, 0}, {0, 2}, {1, 0},     {1, -1}};
  std::vector<C> out(9), taus(3);
  std::vector<int32_t> jpvt(3, 0);
  ASSERT_TRUE(PivotedQr(ElementType::kC128, a.data(), jpvt.data(), out.data(), jpvt.data(),
                        taus.data(), 1, 3, 3)
                  .ok());
  ExpectNear(out, {{3.4641016151377544, 0.0},
                   {-0.4330127018922194, 0.8660254037844387},
                   {-0.5773502691896257, 2.5980762113533156},
                   {-0.7994080650317894, 0.23076923076923078},
                   {-2.3048861143232218, 0.0},
                   {0.4338609156373124, 1.0304196746386163},
                   {-0.18954627808751956, 0.3433924319336734},
                   {0.05796730910809657, 0.38837679260268027},
                   {1.2909944487358054, 0.0}});
  EXPECT_EQ(jpvt, (std::vector<int32_t>{3, 1, 2}));
  ExpectNear(taus, {{1.0, 0.2886751345948129},
                    {1.7273587685217062, -0.09700907337010053},
                    {1.0513219632905262, 0.9986821596904623}});
}

// A P = Q R with Q = H(0) ... H(k-1) from the packed reflectors, |diag(R)|
// non-increasing and the pivots a permutation, for every type, shape and a
// batch.
template <typename T>
void CheckProperties(int64_t m, int64_t n, ElementType type, double tolerance) {
  constexpr int64_t kBatch = 2;
  const int64_t k = std::min(m, n);
  std::mt19937 engine(5);
  std::normal_distribution<double> normal;
  std::vector<T> a(static_cast<size_t>(kBatch * m * n));
  for (T& x : a) {
    if constexpr (kIsComplex<T>) {
      x = T(normal(engine), normal(engine));
    } else {
      x = T(normal(engine));
    }
  }
  std::vector<T> out(a.size()), taus(static_cast<size_t>(kBatch * k));
  std::vector<int32_t> pivots(static_cast<size_t>(kBatch * n), 0);
  ASSERT_TRUE(PivotedQr(type, a.data(), pivots.data(), out.data(), pivots.data(), taus.data(),
                        kBatch, m, n)
                  .ok());
  for (int64_t item = 0; item < kBatch; ++item) {
    auto packed = [&](int64_t r, int64_t c) {
      return C(out[static_cast<size_t>((item * m + r) * n + c)]);
    };
    // Q R column by column: R's column, then the reflectors from the last.
    for (int64_t c = 0; c < n; ++c) {
      std::vector<C> column(static_cast<size_t>(m));
      for (int64_t r = 0; r <= std::min(c, m - 1); ++r)
        column[static_cast<size_t>(r)] = packed(r, c);
      for (int64_t i = k - 1; i >= 0; --i) {
        C dot = column[static_cast<size_t>(i)];
        for (int64_t r = i + 1; r < m; ++r)
          dot += std::conj(packed(r, i)) * column[static_cast<size_t>(r)];
        const C scaled = C(taus[static_cast<size_t>(item * k + i)]) * dot;
        column[static_cast<size_t>(i)] -= scaled;
        for (int64_t r = i + 1; r < m; ++r) column[static_cast<size_t>(r)] -= scaled * packed(r, i);
      }
      const int32_t source = pivots[static_cast<size_t>(item * n + c)] - 1;
      ASSERT_GE(source, 0);
      ASSERT_LT(source, n);
      for (int64_t r = 0; r < m; ++r) {
        EXPECT_NEAR(std::abs(column[static_cast<size_t>(r)] -
                             C(a[static_cast<size_t>((item * m + r) * n + source)])),
                    0, tolerance)
            << "row " << r << " of column " << c;
      }
    }
    for (int64_t i = 0; i + 1 < k; ++i) {
      EXPECT_GE(std::abs(packed(i, i)) * (1 + tolerance), std::abs(packed(i + 1, i + 1))) << i;
    }
    std::vector<int32_t> sorted(pivots.begin() + item * n, pivots.begin() + (item + 1) * n);
    std::sort(sorted.begin(), sorted.end());
    for (int64_t j = 0; j < n; ++j) EXPECT_EQ(sorted[static_cast<size_t>(j)], j + 1);
  }
}

TEST(PivotedQrTest, FactorsInEveryTypeAndShape) {
  const std::pair<int64_t, int64_t> shapes[] = {{7, 4}, {4, 7}, {6, 6}, {1, 3}, {3, 1}};
  for (const auto& [m, n] : shapes) {
    SCOPED_TRACE(::testing::Message() << m << "x" << n);
    CheckProperties<float>(m, n, ElementType::kF32, 1e-4);
    CheckProperties<double>(m, n, ElementType::kF64, 1e-12);
    CheckProperties<complex64>(m, n, ElementType::kC64, 1e-4);
    CheckProperties<complex128>(m, n, ElementType::kC128, 1e-12);
  }
}

TEST(PivotedQrTest, NaNInputGivesNaNNotACrash) {
  // As LAPACK: a NaN norm is never larger, so no column moves.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> a = {nan, 1, 1, 2, 3, 1, 1, 1, 1};
  std::vector<double> out(9), taus(3);
  std::vector<int32_t> jpvt(3, 0);
  ASSERT_TRUE(PivotedQr(ElementType::kF64, a.data(), jpvt.data(), out.data(), jpvt.data(),
                        taus.data(), 1, 3, 3)
                  .ok());
  EXPECT_EQ(jpvt, (std::vector<int32_t>{1, 2, 3}));
  for (double x : out) EXPECT_TRUE(std::isnan(x));
}

TEST(PivotedQrTest, EmptyMatricesNumberTheColumns) {
  std::vector<double> none;
  std::vector<int32_t> jpvt = {0, 5, 0};
  EXPECT_TRUE(PivotedQr(ElementType::kF64, none.data(), jpvt.data(), none.data(), jpvt.data(),
                        none.data(), 1, 0, 3)
                  .ok());
  EXPECT_EQ(jpvt, (std::vector<int32_t>{2, 1, 3}));
  EXPECT_TRUE(PivotedQr(ElementType::kF64, none.data(), jpvt.data(), none.data(), jpvt.data(),
                        none.data(), 1, 3, 0)
                  .ok());
  EXPECT_TRUE(PivotedQr(ElementType::kF64, none.data(), jpvt.data(), none.data(), jpvt.data(),
                        none.data(), 0, 3, 3)
                  .ok());
}

TEST(PivotedQrTest, OtherTypesAreUnimplemented) {
  std::vector<float> a(1);
  std::vector<int32_t> jpvt(1);
  const Status status = PivotedQr(ElementType::kBF16, a.data(), jpvt.data(), a.data(), jpvt.data(),
                                  a.data(), 1, 1, 1);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace kiln::kernels
