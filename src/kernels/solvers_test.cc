#include "kernels/solvers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <random>
#include <utility>
#include <vector>

#include "kernels/batch_norm.h"

namespace kiln::kernels {
namespace {

using Matrix = std::vector<double>;  // row-major

Matrix Multiply(const Matrix& a, const Matrix& b, int64_t m, int64_t k, int64_t n) {
  Matrix c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
    }
  }
  return c;
}

Matrix Transpose(const Matrix& a, int64_t rows, int64_t cols) {
  Matrix t(a.size());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = a[i * cols + j];
  }
  return t;
}

Matrix Random(int64_t count, unsigned seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<double> normal;
  Matrix values(static_cast<size_t>(count));
  for (double& value : values) value = normal(engine);
  return values;
}

// A A^T + n I.
Matrix PositiveDefinite(int64_t n, unsigned seed) {
  const Matrix a = Random(n * n, seed);
  Matrix spd = Multiply(a, Transpose(a, n, n), n, n, n);
  for (int64_t i = 0; i < n; ++i) spd[i * n + i] += static_cast<double>(n);
  return spd;
}

void ExpectNear(const Matrix& got, const Matrix& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << i;
}

TEST(CholeskyTest, LowerAndUpperReconstruct) {
  for (int64_t n : {1, 2, 7, 70}) {
    const Matrix a = PositiveDefinite(n, 1);
    Matrix l(a.size()), u(a.size());
    ASSERT_TRUE(Cholesky(ElementType::kF64, a.data(), l.data(), 1, n, true).ok());
    ASSERT_TRUE(Cholesky(ElementType::kF64, a.data(), u.data(), 1, n, false).ok());
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i + 1; j < n; ++j) {
        EXPECT_EQ(l[i * n + j], 0.0);
        EXPECT_EQ(u[j * n + i], 0.0);
      }
    }
    ExpectNear(Multiply(l, Transpose(l, n, n), n, n, n), a, 1e-9 * static_cast<double>(n));
    ExpectNear(Multiply(Transpose(u, n, n), u, n, n, n), a, 1e-9 * static_cast<double>(n));
  }
}

TEST(CholeskyTest, NotPositiveDefiniteGivesNaNOnlyForThatMatrix) {
  const std::vector<float> a = {4, 2, 2, 3, /**/ 1, 2, 2, 1};
  std::vector<float> out(a.size());
  ASSERT_TRUE(Cholesky(ElementType::kF32, a.data(), out.data(), 2, 2, true).ok());
  EXPECT_FLOAT_EQ(out[0], 2.0f);
  EXPECT_FLOAT_EQ(out[2], 1.0f);
  for (size_t i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(out[i])) << i;
}

TEST(CholeskyTest, ComplexHermitian) {
  using C = std::complex<float>;
  // [[4, 1-2i], [1+2i, 6]] = L L^H with L = [[2, 0], [(1+2i)/2, sqrt(6 - 5/4)]].
  const std::vector<C> a = {{4, 0}, {1, -2}, {1, 2}, {6, 0}};
  std::vector<C> out(4);
  ASSERT_TRUE(Cholesky(ElementType::kC64, a.data(), out.data(), 1, 2, true).ok());
  EXPECT_NEAR(out[2].real(), 0.5f, 1e-6);
  EXPECT_NEAR(out[2].imag(), 1.0f, 1e-6);
  EXPECT_NEAR(out[3].real(), std::sqrt(4.75f), 1e-6);
}

TEST(CholeskyTest, RejectsIntegers) {
  const std::vector<int32_t> a = {1};
  std::vector<int32_t> out(1);
  EXPECT_EQ(Cholesky(ElementType::kS32, a.data(), out.data(), 1, 1, true).code(),
            StatusCode::kUnimplemented);
}

// Every side / triangle / transpose / unit combination: op(A) X = B or
// X op(A) = B holds for the result.
TEST(TriangularSolveTest, EveryCombinationSolves) {
  const int64_t m = 5, n = 3;
  const Matrix b = Random(m * n, 2);
  for (bool left : {true, false}) {
    const int64_t k = left ? m : n;
    for (bool lower : {true, false}) {
      for (bool unit : {true, false}) {
        for (auto transpose : {TriangularTranspose::kNoTranspose, TriangularTranspose::kTranspose,
                               TriangularTranspose::kAdjoint}) {
          Matrix a = Random(k * k, 3);
          // The triangle used, with a dominant diagonal; the other is garbage.
          Matrix used(a.size(), 0.0);
          for (int64_t i = 0; i < k; ++i) {
            for (int64_t j = 0; j < k; ++j) {
              if (i == j) a[i * k + j] += 4 * static_cast<double>(k);
              if (i == j && unit) {
                used[i * k + j] = 1;
              } else if (lower ? j <= i : j >= i) {
                used[i * k + j] = a[i * k + j];
              }
            }
          }
          Matrix x(b.size());
          ASSERT_TRUE(TriangularSolve(ElementType::kF64, a.data(), b.data(), x.data(), 1, m, n,
                                      left, lower, unit, transpose)
                          .ok());
          const Matrix op = transpose == TriangularTranspose::kNoTranspose ? used
                                                                           : Transpose(used, k, k);
          const Matrix product = left ? Multiply(op, x, m, m, n) : Multiply(x, op, m, n, n);
          ExpectNear(product, b, 1e-10);
        }
      }
    }
  }
}

// Solves large enough to run in blocks of 64 rows (a partial last block:
// k = 200) and, with 150 right-hand sides, in two bands of columns; on the
// right, through the transposes. Every triangle, transpose and diagonal, in
// f64 and f32.
template <typename T>
void CheckLargeTriangularSolves(double tolerance) {
  const int64_t k = 200, rhs = 150;
  for (bool left : {true, false}) {
    const int64_t m = left ? k : rhs, n = left ? rhs : k;
    const Matrix b = Random(m * n, 5);
    for (bool lower : {true, false}) {
      for (bool unit : {true, false}) {
        for (auto transpose :
             {TriangularTranspose::kNoTranspose, TriangularTranspose::kTranspose}) {
          Matrix a = Random(k * k, 6);
          Matrix used(a.size(), 0.0);
          for (int64_t i = 0; i < k; ++i) {
            for (int64_t j = 0; j < k; ++j) {
              if (i != j) a[i * k + j] /= static_cast<double>(k);  // well conditioned
              if (i == j) a[i * k + j] += 2;
              if (i == j && unit) {
                used[i * k + j] = 1;
              } else if (lower ? j <= i : j >= i) {
                used[i * k + j] = static_cast<double>(static_cast<T>(a[i * k + j]));
              }
            }
          }
          const std::vector<T> a_t(a.begin(), a.end()), b_t(b.begin(), b.end());
          std::vector<T> x_t(b.size());
          const ElementType type = sizeof(T) == 8 ? ElementType::kF64 : ElementType::kF32;
          ASSERT_TRUE(TriangularSolve(type, a_t.data(), b_t.data(), x_t.data(), 1, m, n, left,
                                      lower, unit, transpose)
                          .ok());
          const Matrix x(x_t.begin(), x_t.end());
          const Matrix op = transpose == TriangularTranspose::kNoTranspose ? used
                                                                           : Transpose(used, k, k);
          const Matrix product = left ? Multiply(op, x, m, m, n) : Multiply(x, op, m, n, n);
          const Matrix want(b_t.begin(), b_t.end());
          for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_NEAR(product[i], want[i], tolerance)
                << "left " << left << " lower " << lower << " unit " << unit << " element " << i;
          }
        }
      }
    }
  }
}

TEST(TriangularSolveTest, LargeSolvesInBlocksAndBands) {
  CheckLargeTriangularSolves<double>(1e-10);
  CheckLargeTriangularSolves<float>(2e-4);
}

// The LU of matrices large enough to factor in panels (LuBlocked), square
// and not, with a zero column (a zero pivot, left unscaled) and a batch of
// two: the same pivots as getf2's column-by-column algorithm, written out
// here, and P A = L U.
TEST(LuTest, BlockedFactorizationPivotsAsGetf2AndReconstructs) {
  // 300 rows: the trailing update of the first panels in two slices of rows.
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{300, 300}, {230, 150}, {150, 230}}) {
    const int64_t k = std::min(m, n), batch = 2;
    Matrix a = Random(batch * m * n, 9);
    for (int64_t i = 0; i < m; ++i) a[i * n + 37] = 0;  // the first matrix's column 37
    Matrix out(a.size());
    std::vector<int32_t> pivots(static_cast<size_t>(batch * k)),
        permutation(static_cast<size_t>(batch * m));
    ASSERT_TRUE(LuDecomposition(ElementType::kF64, a.data(), out.data(), pivots.data(),
                                permutation.data(), batch, m, n)
                    .ok());
    for (int64_t item = 0; item < batch; ++item) {
      // getf2 on a copy: the first largest |pivot|, whole rows swapped.
      Matrix lu(a.begin() + item * m * n, a.begin() + (item + 1) * m * n);
      for (int64_t c = 0; c < k; ++c) {
        int64_t pivot = c;
        for (int64_t r = c + 1; r < m; ++r) {
          if (std::abs(lu[r * n + c]) > std::abs(lu[pivot * n + c])) pivot = r;
        }
        ASSERT_EQ(pivots[static_cast<size_t>(item * k + c)], pivot) << m << "x" << n << " " << c;
        for (int64_t j = 0; j < n; ++j) std::swap(lu[c * n + j], lu[pivot * n + j]);
        const double d = lu[c * n + c];
        for (int64_t r = c + 1; r < m; ++r) {
          if (d != 0) lu[r * n + c] /= d;
          for (int64_t j = c + 1; j < n; ++j) lu[r * n + j] -= lu[r * n + c] * lu[c * n + j];
        }
      }
      const double* got = out.data() + item * m * n;
      // L U against the rows of A in permutation's order.
      for (int64_t i = 0; i < m; ++i) {
        const int64_t row = permutation[static_cast<size_t>(item * m + i)];
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p <= std::min(i, j) && p < k; ++p) {
            sum += (p == i ? 1.0 : got[i * n + p]) * got[p * n + j];
          }
          ASSERT_NEAR(sum, a[item * m * n + row * n + j], 1e-9)
              << m << "x" << n << " " << i << "," << j;
        }
      }
    }
  }
}

TEST(TriangularSolveTest, ComplexAdjointConjugates) {
  using C = std::complex<double>;
  // A = [[2, 0], [i, 1]] (lower); A^H = [[2, -i], [0, 1]]; A^H x = [1, 1].
  const std::vector<C> a = {{2, 0}, {0, 0}, {0, 1}, {1, 0}};
  const std::vector<C> b = {{1, 0}, {1, 0}};
  std::vector<C> x(2);
  ASSERT_TRUE(TriangularSolve(ElementType::kC128, a.data(), b.data(), x.data(), 1, 2, 1, true, true,
                              false, TriangularTranspose::kAdjoint)
                  .ok());
  EXPECT_NEAR(std::abs(x[1] - C(1, 0)), 0, 1e-12);
  EXPECT_NEAR(std::abs(x[0] - C(0.5, 0.5)), 0, 1e-12);  // (1 + i x1) / 2
}

TEST(QrTest, ReflectorsReconstructTheMatrix) {
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{6, 4}, {4, 4}, {40, 33}}) {
    const Matrix a = Random(m * n, 4);
    Matrix packed(a.size()), taus(static_cast<size_t>(n)), q(a.size());
    ASSERT_TRUE(
        HouseholderQr(ElementType::kF64, a.data(), packed.data(), taus.data(), 1, m, n).ok());
    ASSERT_TRUE(HouseholderProduct(ElementType::kF64, packed.data(), taus.data(), q.data(), 1, m, n,
                                   n)
                    .ok());
    Matrix r(static_cast<size_t>(n * n), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i; j < n; ++j) r[i * n + j] = packed[i * n + j];
    }
    ExpectNear(Multiply(q, r, m, n, n), a, 1e-10);
    Matrix identity(static_cast<size_t>(n * n), 0.0);
    for (int64_t i = 0; i < n; ++i) identity[i * n + i] = 1;
    ExpectNear(Multiply(Transpose(q, m, n), q, n, m, n), identity, 1e-10);
  }
}

TEST(QrTest, HouseholderProductRejectsWideMatrices) {
  const Matrix a(6), taus(2);
  Matrix out(6);
  EXPECT_EQ(
      HouseholderProduct(ElementType::kF64, a.data(), taus.data(), out.data(), 1, 2, 3, 2).code(),
      StatusCode::kInvalidArgument);
}

TEST(TopKTest, LargestFirstTiesByPositionAndPayload) {
  // Two slices along the middle of [1, 5, 2].
  const std::vector<float> keys = {3, 1, 5, 1, 5, 7, NAN, 0, 1, -1};
  const std::vector<int32_t> index = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4};
  std::vector<float> top(6);
  std::vector<int32_t> positions(6);
  const void* payloads[] = {index.data()};
  void* outputs[] = {positions.data()};
  const int64_t bytes[] = {4};
  ASSERT_TRUE(TopK(ElementType::kF32, keys.data(), top.data(), 1, 5, 2, 3,
                   TopKOrder::kTotalOrderDescending, payloads, outputs, bytes, 1, nullptr)
                  .ok());
  // Slice 0: 3, 5, 5, NaN, 1 -> NaN (total order), 5 (position 1), 5 (2).
  EXPECT_TRUE(std::isnan(top[0]));
  EXPECT_EQ(positions[0], 3);
  EXPECT_EQ(positions[2], 1);
  EXPECT_EQ(positions[4], 2);
  // Slice 1: 1, 1, 7, 0, -1 -> 7, 1 (position 0), 1 (position 1).
  EXPECT_EQ(top[1], 7);
  EXPECT_EQ(positions[1], 2);
  EXPECT_EQ(positions[3], 0);
  EXPECT_EQ(positions[5], 1);
  ASSERT_TRUE(TopK(ElementType::kF32, keys.data(), top.data(), 1, 5, 2, 2, TopKOrder::kApproxMin,
                   nullptr, nullptr, nullptr, 0, nullptr)
                  .ok());
  EXPECT_EQ(top[0], 1);
  EXPECT_EQ(top[2], 3);
  EXPECT_EQ(top[1], -1);
  EXPECT_EQ(top[3], 0);
}

// Slices far longer than k take the filter (candidates beating the k-th
// best so far); it must give exactly what a stable sort of the slice
// gives: few distinct values (ties everywhere, decided by position),
// NaNs and signed zeros, ascending runs that raise the threshold at every
// step, and every order; keys of 32 and 64 bits.
template <typename T>
void ExpectTopKAsStableSort(ElementType type, TopKOrder order, int64_t size, int64_t k,
                            int64_t inner) {
  std::vector<T> keys(static_cast<size_t>(size * inner));
  uint32_t state = 12345;
  for (size_t i = 0; i < keys.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    const int pick = static_cast<int>(state >> 24);
    if (pick < 3 && std::is_floating_point_v<T>) {
      keys[i] = pick == 0 ? static_cast<T>(NAN) : pick == 1 ? static_cast<T>(-0.0) : T(0);
    } else if (pick < 128) {
      keys[i] = static_cast<T>(static_cast<int>(state >> 16) % 7 - 3);  // ties
    } else {
      keys[i] = static_cast<T>(i / static_cast<size_t>(inner));  // ascending
    }
  }
  std::vector<T> top(static_cast<size_t>(k * inner));
  std::vector<int32_t> positions(top.size());
  ASSERT_TRUE(TopK(type, keys.data(), top.data(), 1, size, inner, k, order, nullptr, nullptr,
                   nullptr, 0, positions.data())
                  .ok());
  // The reference: a stable sort by the order's comparison.
  const auto rank = [order](T x) {
    double v = static_cast<double>(x);
    if (order != TopKOrder::kTotalOrderDescending && std::isnan(v)) v = std::abs(v);
    if (order != TopKOrder::kTotalOrderDescending && v == 0) v = 0;
    const auto bits = std::bit_cast<int64_t>(v);
    const int64_t key = bits < 0 ? bits ^ std::numeric_limits<int64_t>::max() : bits;
    return order == TopKOrder::kApproxMin ? -key : key;
  };
  for (int64_t i = 0; i < inner; ++i) {
    std::vector<int32_t> order_of(static_cast<size_t>(size));
    for (int64_t j = 0; j < size; ++j) order_of[static_cast<size_t>(j)] = static_cast<int32_t>(j);
    std::stable_sort(order_of.begin(), order_of.end(), [&](int32_t a, int32_t b) {
      return rank(keys[static_cast<size_t>(a * inner + i)]) >
             rank(keys[static_cast<size_t>(b * inner + i)]);
    });
    for (int64_t j = 0; j < k; ++j) {
      ASSERT_EQ(positions[static_cast<size_t>(j * inner + i)], order_of[static_cast<size_t>(j)])
          << "slice " << i << ", rank " << j << " of " << k << " out of " << size;
    }
  }
}

TEST(TopKTest, FilteredSlicesAreExactlyTheStableSortsFirst) {
  for (TopKOrder order :
       {TopKOrder::kTotalOrderDescending, TopKOrder::kApproxMaxAll, TopKOrder::kApproxMin}) {
    ExpectTopKAsStableSort<float>(ElementType::kF32, order, 5000, 17, 1);
    ExpectTopKAsStableSort<float>(ElementType::kF32, order, 3000, 1, 3);
    ExpectTopKAsStableSort<double>(ElementType::kF64, order, 4000, 40, 2);
    ExpectTopKAsStableSort<int32_t>(ElementType::kS32, order, 6000, 64, 1);
    ExpectTopKAsStableSort<int64_t>(ElementType::kS64, order, 6000, 5, 1);
  }
  ExpectTopKAsStableSort<float>(ElementType::kF32, TopKOrder::kTotalOrderDescending, 700, 300,
                                1);  // k beside the slice: sorted whole
}

TEST(BatchNormTest, TrainingNormalizesEachFeature) {
  // [2 outer, 2 features, 2 inner]: feature 0 = {1, 3, 5, 7}, feature 1 = {2, 2, 2, 2}.
  const std::vector<float> x = {1, 3, 2, 2, 5, 7, 2, 2};
  const std::vector<float> scale = {2, 1}, offset = {0, 10};
  std::vector<float> out(8), mean(2), variance(2);
  ASSERT_TRUE(BatchNormTraining(ElementType::kF32, x.data(), scale.data(), offset.data(),
                                out.data(), mean.data(), variance.data(), {2, 2, 2}, 0.0f)
                  .ok());
  EXPECT_FLOAT_EQ(mean[0], 4);
  EXPECT_FLOAT_EQ(variance[0], 5);  // biased: (9 + 1 + 1 + 9) / 4
  EXPECT_FLOAT_EQ(variance[1], 0);
  EXPECT_NEAR(out[0], 2 * (1 - 4) / std::sqrt(5.0f), 1e-6);
  EXPECT_TRUE(std::isnan(out[2]));  // 0 / sqrt(0 + epsilon 0)
}

TEST(BatchNormTest, GradMatchesFiniteDifferences) {
  const BatchNormShape shape{3, 2, 4};
  const int64_t count = 24;
  const Matrix x = Random(count, 5), dy = Random(count, 6);
  const Matrix scale = {1.5, 0.7}, offset = {0.1, -0.2};
  const float epsilon = 1e-3f;
  // Loss(x) = sum(dy * training(x)); its gradient is batch_norm_grad's dx.
  auto loss = [&](const Matrix& input) {
    Matrix out(static_cast<size_t>(count)), mean(2), variance(2);
    EXPECT_TRUE(BatchNormTraining(ElementType::kF64, input.data(), scale.data(), offset.data(),
                                  out.data(), mean.data(), variance.data(), shape, epsilon)
                    .ok());
    double total = 0;
    for (int64_t i = 0; i < count; ++i) total += dy[i] * out[i];
    return total;
  };
  Matrix out(static_cast<size_t>(count)), mean(2), variance(2);
  ASSERT_TRUE(BatchNormTraining(ElementType::kF64, x.data(), scale.data(), offset.data(),
                                out.data(), mean.data(), variance.data(), shape, epsilon)
                  .ok());
  Matrix dx(static_cast<size_t>(count)), dscale(2), doffset(2);
  ASSERT_TRUE(BatchNormGrad(ElementType::kF64, x.data(), scale.data(), mean.data(), variance.data(),
                            dy.data(), dx.data(), dscale.data(), doffset.data(), shape, epsilon)
                  .ok());
  for (int64_t i = 0; i < count; i += 5) {
    Matrix plus = x, minus = x;
    plus[i] += 1e-6;
    minus[i] -= 1e-6;
    EXPECT_NEAR(dx[i], (loss(plus) - loss(minus)) / 2e-6, 1e-5) << i;
  }
}

}  // namespace
}  // namespace kiln::kernels
