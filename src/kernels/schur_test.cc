#include "kernels/schur.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "kernels/linalg_test_util.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

using testing::ExpectNear;
using testing::kLapackTolerance;

using C = std::complex<double>;
using Matrix = std::vector<C>;  // row-major n x n, widened to complex128

// The expected values are SciPy's LAPACK (scipy.linalg.lapack.dgehrd,
// zgehrd, dgees, zgees) on the same inputs: what JAX's CPU backend returns.

const std::vector<double> kReal = {4, 1, -2, 2, 3, 2, 0, 1, -2, 1, 3, -2, 1, 2, -1, -1};
const std::vector<C> kComplex = {{2, 0},    {1, -1},  {1, 0.5}, {1, 1}, {3, 0.5},
                                 {2, -0.5}, {0, 0.5}, {2, 0.5}, {-1, 0}};
// dgees of kReal: real eigenvalues only.
const std::vector<double> kRealT = {6.650086522199452,
                                    0.46557714419137797,
                                    -1.4020139695878546,
                                    1.0619518157085384,
                                    0.0,
                                    -1.7631434705985682,
                                    1.3792892827419378,
                                    -1.6028605451498115,
                                    0.0,
                                    0.0,
                                    0.1741188808881477,
                                    -0.4671747428058585,
                                    0.0,
                                    0.0,
                                    0.0,
                                    2.93893806751097};
const std::vector<double> kRealZ = {
    0.7056575896356982,   -0.1514566555117478,  -0.6808331570308515, -0.12479767617282198,
    0.5152582892304305,   -0.06477510120512699, 0.6501255877425808,  -0.5546618806133695,
    -0.39837483188056494, 0.3049306575855611,   -0.3345038833682969, -0.7977605777425318,
    0.2790228572948781,   0.9380204485135171,   0.04370451305411984, 0.2008825498051186};

template <typename T>
Matrix Widen(const T* x, int64_t n) {
  Matrix out(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n * n; ++i) out[static_cast<size_t>(i)] = C(x[i]);
  return out;
}

Matrix Multiply(const Matrix& a, const Matrix& b, int64_t n) {
  Matrix out(static_cast<size_t>(n * n));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t c = 0; c < n; ++c) {
        out[static_cast<size_t>(r * n + c)] += a[static_cast<size_t>(r * n + k)] *
                                               b[static_cast<size_t>(k * n + c)];
      }
    }
  }
  return out;
}

Matrix Adjoint(const Matrix& a, int64_t n) {
  Matrix out(a.size());
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      out[static_cast<size_t>(c * n + r)] = std::conj(a[static_cast<size_t>(r * n + c)]);
    }
  }
  return out;
}

Matrix Identity(int64_t n) {
  Matrix out(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i * n + i)] = 1;
  return out;
}

double MaxDifference(const Matrix& a, const Matrix& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

template <typename T>
std::vector<T> Random(int64_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<double> normal;
  std::vector<T> out(static_cast<size_t>(count));
  for (T& x : out) {
    if constexpr (kIsComplex<T>) {
      x = T(normal(engine), normal(engine));
    } else {
      x = T(normal(engine));
    }
  }
  return out;
}

template <typename T>
double ToleranceOf() {
  return std::is_same_v<T, float> || std::is_same_v<T, complex64> ? 1e-4 : 1e-11;
}

template <typename T>
ElementType TypeOf() {
  if constexpr (std::is_same_v<T, float>) return ElementType::kF32;
  if constexpr (std::is_same_v<T, double>) return ElementType::kF64;
  if constexpr (std::is_same_v<T, complex64>) return ElementType::kC64;
  return ElementType::kC128;
}

// --- Hessenberg --------------------------------------------------------------

TEST(HessenbergTest, RealMatchesLapack) {
  std::vector<double> out(16), taus(3);
  ASSERT_TRUE(Hessenberg(ElementType::kF64, kReal.data(), out.data(), taus.data(), 1, 4).ok());
  ExpectNear(out, {4.0, -2.40535117721182, -1.4746922963662532, 1.0195922446369137,
                   -3.741657386773941, 2.7142857142857144, 0.951048228190735, -0.6091120354556262,
                   -0.2966629547095766, 1.190952285752362, -1.80781089414183, 0.16343313354356903,
                   0.1483314773547883, 0.9801068654692038, -1.4401343179309773, 3.093525179856116});
  ExpectNear(taus, {1.8017837257372733, 1.020090962993023, 0.0});
}

TEST(HessenbergTest, ComplexMatchesLapackWithARealSubdiagonal) {
  std::vector<C> out(9), taus(2);
  ASSERT_TRUE(Hessenberg(ElementType::kC128, kComplex.data(), out.data(), taus.data(), 1, 3).ok());
  ExpectNear(out, {{2.0, 0.0},
                   {-1.1666666666666665, -0.33333333333333315},
                   {-0.8476096704814667, -1.0292403141560662},
                   {-1.5, 0.0},
                   {3.666666666666667, 0.4444444444444442},
                   {0.9106758662018135, -0.030271773945766578},
                   {0.06896551724137932, 0.1724137931034483},
                   {1.2234841969747356, 0.0},
                   {-1.6666666666666676, 0.05555555555555575}});
  ExpectNear(taus,
             {{1.6666666666666667, 0.6666666666666666}, {1.992705414566348, 0.12056516864607038}});
}

// A = Q H Q^H with H upper Hessenberg and Q = H(0) ... H(n-2) unitary, built
// from the packed reflectors, for every type and a batch.
template <typename T>
void CheckHessenbergProperties() {
  constexpr int64_t kBatch = 3, kN = 7;
  const std::vector<T> a = Random<T>(kBatch * kN * kN, 7);
  std::vector<T> out(a.size()), taus(kBatch * (kN - 1));
  ASSERT_TRUE(Hessenberg(TypeOf<T>(), a.data(), out.data(), taus.data(), kBatch, kN).ok());
  for (int64_t item = 0; item < kBatch; ++item) {
    const Matrix packed = Widen(out.data() + item * kN * kN, kN);
    Matrix h = packed, q = Identity(kN);
    for (int64_t i = 0; i + 1 < kN; ++i) {
      Matrix v(kN), reflector = Identity(kN);
      v[static_cast<size_t>(i + 1)] = 1;
      for (int64_t r = i + 2; r < kN; ++r) {
        v[static_cast<size_t>(r)] = packed[static_cast<size_t>(r * kN + i)];
        h[static_cast<size_t>(r * kN + i)] = 0;
      }
      const C tau(taus[static_cast<size_t>(item * (kN - 1) + i)]);
      for (int64_t r = 0; r < kN; ++r) {
        for (int64_t c = 0; c < kN; ++c) {
          reflector[static_cast<size_t>(r * kN + c)] -= tau * v[static_cast<size_t>(r)] *
                                                        std::conj(v[static_cast<size_t>(c)]);
        }
      }
      q = Multiply(q, reflector, kN);
    }
    const Matrix input = Widen(a.data() + item * kN * kN, kN);
    EXPECT_LT(MaxDifference(Multiply(Multiply(q, h, kN), Adjoint(q, kN), kN), input),
              ToleranceOf<T>());
    EXPECT_LT(MaxDifference(Multiply(Adjoint(q, kN), q, kN), Identity(kN)), ToleranceOf<T>());
  }
}

TEST(HessenbergTest, ReconstructsInEveryType) {
  CheckHessenbergProperties<float>();
  CheckHessenbergProperties<double>();
  CheckHessenbergProperties<complex64>();
  CheckHessenbergProperties<complex128>();
}

// --- Schur -------------------------------------------------------------------------

TEST(SchurTest, RealMatchesLapack) {
  std::vector<double> t(16), z(16);
  ASSERT_TRUE(Schur(ElementType::kF64, kReal.data(), t.data(), z.data(), 1, 4).ok());
  ExpectNear(t, kRealT);
  ExpectNear(z, kRealZ);
}

TEST(SchurTest, WithoutVectorsTheFormIsTheSame) {
  std::vector<double> t(16);
  ASSERT_TRUE(Schur(ElementType::kF64, kReal.data(), t.data(), nullptr, 1, 4).ok());
  ExpectNear(t, kRealT);
}

TEST(SchurTest, ConjugatePairsMakeStandardizedBlocks) {
  // Two conjugate pairs (about 1.9 +- 2.9i, 1.0 +- 1.1i) and 5.2: dlanv2's
  // blocks have equal diagonal elements and off-diagonal elements of
  // opposite signs.
  const std::vector<double> a = {2,  -3, 0.5, 0,   1, 3, 2, 0, 1, 0, 0.2, 0, 1,
                                 -1, 2,  0,   0.3, 1, 1, 0, 1, 0, 0, 0.5, 5};
  std::vector<double> t(25), z(25);
  ASSERT_TRUE(Schur(ElementType::kF64, a.data(), t.data(), z.data(), 1, 5).ok());
  int blocks = 0;
  for (int i = 0; i + 1 < 5; ++i) {
    if (t[(i + 1) * 5 + i] == 0) continue;
    ++blocks;
    EXPECT_EQ(t[i * 5 + i], t[(i + 1) * 5 + i + 1]);
    EXPECT_LT(t[i * 5 + i + 1] * t[(i + 1) * 5 + i], 0);
    ++i;
  }
  EXPECT_EQ(blocks, 2);
  const Matrix zz = Widen(z.data(), 5);
  EXPECT_LT(MaxDifference(Multiply(Multiply(zz, Widen(t.data(), 5), 5), Adjoint(zz, 5), 5),
                          Widen(a.data(), 5)),
            1e-12);
}

TEST(SchurTest, IsolatedEigenvaluesArePermutedAsLapack) {
  // gebal's permutation makes a lower triangular matrix upper triangular:
  // no QR iteration at all, Z a permutation.
  const std::vector<double> a = {1, 0, 0, 0, 2, 3, 0, 0, 4, 5, 6, 0, 7, 8, 9, 10};
  std::vector<double> t(16), z(16);
  ASSERT_TRUE(Schur(ElementType::kF64, a.data(), t.data(), z.data(), 1, 4).ok());
  ExpectNear(t, {10, 9, 8, 7, 0, 6, 5, 4, 0, 0, 3, 2, 0, 0, 0, 1});
  ExpectNear(z, {0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0});
}

TEST(SchurTest, ComplexMatchesLapackUpToColumnPhases) {
  // zgees's T off the diagonal and Z's columns carry phases that rounding
  // decides (each step makes a tiny subdiagonal element real), so LAPACK
  // itself gives others for an input one ulp away; |T|, |Z| and the
  // eigenvalues' order are what it determines.
  std::vector<C> t(9), z(9);
  ASSERT_TRUE(Schur(ElementType::kC128, kComplex.data(), t.data(), z.data(), 1, 3).ok());
  const std::vector<C> want_t = {{4.635108994993998, 0.55353171076433},
                                 {0.000175209300867913, 0.09463365153948669},
                                 {-0.2931227430578912, 0.08292354299248869},
                                 {0, 0},
                                 {1.1737936759927334, -0.2221189786325943},
                                 {1.267328479804925, 0.15431780304817472},
                                 {0, 0},
                                 {0, 0},
                                 {-1.8089026709867344, 0.16858726786826458}};
  const std::vector<C> want_z = {
      {-0.42253030972330985, -0.19534625522199411}, {0.8747757073362079, -0.09739219807470086},
      {0.06644554446180062, -0.06461570370782911},  {-0.35299917032573147, -0.7403035534700577},
      {-0.32063010309231577, -0.2468966495349634},  {-0.2634935312973114, 0.3068416120294702},
      {-0.07411956586360363, -0.3242784333886685},  {-0.21778766210360911, -0.11869767176941749},
      {0.6708441793783558, -0.6146521549147342}};
  for (int i = 0; i < 9; ++i) {
    EXPECT_NEAR(std::abs(t[i]), std::abs(want_t[i]), kLapackTolerance) << "T at " << i;
    EXPECT_NEAR(std::abs(z[i]), std::abs(want_z[i]), kLapackTolerance) << "Z at " << i;
    if (i % 4 == 0) {
      EXPECT_NEAR(std::abs(t[i] - want_t[i]), 0, kLapackTolerance) << "T at " << i;
    }
  }
}

// A = Z T Z^H, Z unitary, T upper (quasi-)triangular, for every type and a
// batch.
template <typename T>
void CheckSchurProperties(int64_t n) {
  constexpr int64_t kBatch = 2;
  const std::vector<T> a = Random<T>(kBatch * n * n, 11);
  std::vector<T> t(a.size()), z(a.size());
  ASSERT_TRUE(Schur(TypeOf<T>(), a.data(), t.data(), z.data(), kBatch, n).ok());
  for (int64_t item = 0; item < kBatch; ++item) {
    const Matrix form = Widen(t.data() + item * n * n, n);
    const Matrix vectors = Widen(z.data() + item * n * n, n);
    const Matrix input = Widen(a.data() + item * n * n, n);
    EXPECT_LT(MaxDifference(Multiply(Multiply(vectors, form, n), Adjoint(vectors, n), n), input),
              ToleranceOf<T>() * n);
    EXPECT_LT(MaxDifference(Multiply(Adjoint(vectors, n), vectors, n), Identity(n)),
              ToleranceOf<T>() * n);
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c + (kIsComplex<T> ? 0 : 1) < r; ++c) {
        EXPECT_EQ(form[static_cast<size_t>(r * n + c)], C(0)) << r << ", " << c;
      }
    }
  }
}

TEST(SchurTest, DecomposesInEveryType) {
  for (const int64_t n : {1, 2, 5, 12, 80}) {
    SCOPED_TRACE(n);
    CheckSchurProperties<float>(n);
    CheckSchurProperties<double>(n);
    CheckSchurProperties<complex64>(n);
    CheckSchurProperties<complex128>(n);
  }
}

TEST(SchurTest, TinyAndHugeMatricesAreScaledAsLapack) {
  // gees scales a matrix whose largest element is outside [sqrt(safe
  // minimum) / eps, its inverse] and scales T back.
  for (const double scale : {1e-200, 1e200}) {
    std::vector<double> a = kReal, t(16), z(16);
    for (double& x : a) x *= scale;
    ASSERT_TRUE(Schur(ElementType::kF64, a.data(), t.data(), z.data(), 1, 4).ok());
    for (double& x : t) x /= scale;
    ExpectNear(t, kRealT);
    ExpectNear(z, kRealZ);
  }
}

TEST(SchurTest, NonFiniteInputGivesWhatLapackGives) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> t(4), z(4);
  // NaN: everything NaN but the 2x2 block's subdiagonal, which is NaN or 0:
  // dlanv2 branches on the sign of a NaN there, and which operand's NaN an
  // addition or product passes on (x86 keeps the first's) changes when the
  // compiler swaps commuting operands (-O2 gives 0, the ASan build at -O0
  // NaN), as it does for LAPACK itself.
  const std::vector<double> with_nan = {nan, 1, 2, 3};
  ASSERT_TRUE(Schur(ElementType::kF64, with_nan.data(), t.data(), z.data(), 1, 2).ok());
  EXPECT_TRUE(t[2] == 0 || std::isnan(t[2])) << t[2];
  for (int i : {0, 1, 3}) EXPECT_TRUE(std::isnan(t[i])) << i;
  for (double x : z) EXPECT_TRUE(std::isnan(x));
  // Infinity: gees's scaling makes T NaN; nothing to iterate on, so Z = I.
  const std::vector<double> with_inf = {inf, 1, 2, 3};
  ASSERT_TRUE(Schur(ElementType::kF64, with_inf.data(), t.data(), z.data(), 1, 2).ok());
  for (double x : t) EXPECT_TRUE(std::isnan(x));
  ExpectNear(z, {1, 0, 0, 1});
  // Complex NaN: the iteration never converges: NaN + NaN i everywhere.
  const std::vector<C> complex_nan = {{nan, 0}, {1, 0}, {2, 0}, {3, 0}};
  std::vector<C> ct(4), cz(4);
  ASSERT_TRUE(Schur(ElementType::kC128, complex_nan.data(), ct.data(), cz.data(), 1, 2).ok());
  for (const C& x : ct) EXPECT_TRUE(std::isnan(x.real()) && std::isnan(x.imag()));
  for (const C& x : cz) EXPECT_TRUE(std::isnan(x.real()) && std::isnan(x.imag()));
}

TEST(SchurTest, EmptyMatricesAndBatches) {
  std::vector<double> none;
  EXPECT_TRUE(Schur(ElementType::kF64, none.data(), none.data(), none.data(), 3, 0).ok());
  EXPECT_TRUE(Schur(ElementType::kF64, none.data(), none.data(), none.data(), 0, 5).ok());
  EXPECT_TRUE(Hessenberg(ElementType::kF64, none.data(), none.data(), none.data(), 3, 0).ok());
  std::vector<double> one = {7}, t(1), z(1), taus;
  ASSERT_TRUE(Schur(ElementType::kF64, one.data(), t.data(), z.data(), 1, 1).ok());
  EXPECT_EQ(t[0], 7);
  EXPECT_EQ(z[0], 1);
  ASSERT_TRUE(Hessenberg(ElementType::kF64, one.data(), t.data(), taus.data(), 1, 1).ok());
  EXPECT_EQ(t[0], 7);
}

TEST(SchurTest, OtherTypesAreUnimplemented) {
  std::vector<float> a(4), t(4);
  const Status status = Schur(ElementType::kF16, a.data(), t.data(), nullptr, 1, 1);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("f16"), std::string::npos) << status.ToString();
}

}  // namespace
}  // namespace kiln::kernels
