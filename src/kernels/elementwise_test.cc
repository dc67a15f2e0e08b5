// Elementwise kernels where Kiln follows XLA's CPU backend rather than the
// C++ library: complex multiply and divide with infinities and NaN.
#include "kernels/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

namespace kiln::kernels {
namespace {

using c64 = std::complex<float>;
constexpr float kInf = std::numeric_limits<float>::infinity();

c64 Apply(BinaryOp op, c64 x, c64 y) {
  c64 out;
  EXPECT_TRUE(Binary(op, ElementType::kC64, &x, &y, &out, 1).ok());
  return out;
}

TEST(ElementwiseComplex, MultiplyIsTheTextbookFormula) {
  EXPECT_EQ(Apply(BinaryOp::kMultiply, c64(1, 2), c64(3, -4)), c64(11, 2));
  // std::complex would recover an infinity here (C99 Annex G); XLA gives
  // (nan, -inf): re = inf * 0 - 1 * -inf = nan, im = inf * -inf + 1 * 0.
  const c64 product = Apply(BinaryOp::kMultiply, c64(kInf, 1), c64(0, -kInf));
  EXPECT_TRUE(std::isnan(product.real()));
  EXPECT_EQ(product.imag(), -kInf);
  // The real part contracts into an FMA, as LLVM does for XLA: 1e60 - 1e60
  // is fma(1e30, 1e30, -inf) = -inf, not inf - inf = NaN.
  EXPECT_EQ(Apply(BinaryOp::kMultiply, c64(1e30f, -1e30f), c64(1e30f, -1e30f)),
            c64(-kInf, -kInf));
  const c64 with_nan = Apply(BinaryOp::kMultiply, c64(NAN, -3e38f), c64(3e38f, 0));
  EXPECT_TRUE(std::isnan(with_nan.real()) && std::isnan(with_nan.imag()));
}

TEST(ElementwiseComplex, DivideFollowsSmithAndXlaCornerCases) {
  const c64 quotient = Apply(BinaryOp::kDivide, c64(11, 2), c64(3, -4));
  EXPECT_NEAR(quotient.real(), 1.0f, 1e-6f);
  EXPECT_NEAR(quotient.imag(), 2.0f, 1e-6f);
  // |b|^2 overflows here, Smith's algorithm does not: (1 + i) / (3 + i) = 0.4 + 0.2i.
  const c64 big = Apply(BinaryOp::kDivide, c64(1e38f, 1e38f), c64(3e38f, 1e38f));
  EXPECT_NEAR(big.real(), 0.4f, 1e-6f);
  EXPECT_NEAR(big.imag(), 0.2f, 1e-6f);
  // Zero denominator: infinities with the numerator's signs (times sign of b_r).
  EXPECT_EQ(Apply(BinaryOp::kDivide, c64(1, -2), c64(0, 0)), c64(kInf, -kInf));
  // Infinite numerator, finite denominator: (inf + 1i) / (-1 + 0i).
  const c64 inf_num = Apply(BinaryOp::kDivide, c64(kInf, 1), c64(-1, 0));
  EXPECT_EQ(inf_num.real(), -kInf);
  // Finite numerator, infinite denominator: zeros.
  const c64 inf_den = Apply(BinaryOp::kDivide, c64(1, 1), c64(kInf, kInf));
  EXPECT_EQ(inf_den, c64(0, 0));
  // A large finite denominator against an infinite numerator stays NaN in
  // one part, as XLA computes: (inf + 1i) / (3e38 - 0i) -> (inf, nan).
  const c64 mixed = Apply(BinaryOp::kDivide, c64(kInf, 1), c64(3e38f, -0.0f));
  EXPECT_EQ(mixed.real(), kInf);
  EXPECT_TRUE(std::isnan(mixed.imag()));
}

}  // namespace
}  // namespace kiln::kernels
