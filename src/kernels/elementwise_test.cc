// Elementwise kernels where Kiln follows XLA's CPU backend rather than the
// C++ library: complex multiply and divide with infinities and NaN; iota,
// select and compare against their plain formulas.
#include "kernels/elementwise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "base/element_type.h"

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
  EXPECT_EQ(Apply(BinaryOp::kMultiply, c64(1e30f, -1e30f), c64(1e30f, -1e30f)), c64(-kInf, -kInf));
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

// Iota builds one period of runs and copies it; each element must still be
// its index along the dimension, converted as Convert converts an s64
// (wrapping in narrow integers, rounding in bf16).
TEST(Iota, EveryElementIsItsIndexAlongTheDimension) {
  struct Case {
    int64_t outer, size, inner;
  };
  const Case cases[] = {{1, 1, 1},  {1, 7, 1},    {3, 5, 1},   {1, 4, 9},   {2, 300, 3},
                        {4, 1, 17}, {1, 1000, 1}, {5, 6, 256}, {2, 513, 1}, {1, 3, 1000}};
  for (ElementType type : {ElementType::kS32, ElementType::kF32, ElementType::kBF16,
                           ElementType::kS8, ElementType::kU4, ElementType::kC64}) {
    const size_t bytes = GetElementTypeInfo(type).storage_bytes;
    for (const Case& c : cases) {
      const int64_t count = c.outer * c.size * c.inner;
      std::vector<int64_t> indices(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i) indices[static_cast<size_t>(i)] = (i / c.inner) % c.size;
      std::vector<uint8_t> expected(static_cast<size_t>(count) * bytes), actual(expected.size());
      ASSERT_TRUE(Convert(ElementType::kS64, indices.data(), type, expected.data(), count).ok());
      ASSERT_TRUE(Iota(type, c.size, c.inner, actual.data(), count).ok());
      EXPECT_EQ(std::memcmp(expected.data(), actual.data(), expected.size()), 0)
          << GetElementTypeInfo(type).name << " outer " << c.outer << " size " << c.size
          << " inner " << c.inner;
    }
  }
}

// Select picks by the predicate's byte, any nonzero byte being true (a
// buffer of pred handed in by a framework may hold other bytes than 1), for
// elements of every width.
TEST(Select, EveryWidthPicksByItsPredicateByte) {
  const int64_t n = 301;  // past every vector width, with a tail
  std::vector<uint8_t> pred(n);
  for (int64_t i = 0; i < n; ++i) {
    pred[i] = static_cast<uint8_t>(i % 3 == 0 ? 0 : i % 5 == 0 ? 255 : i % 7 == 0 ? 2 : 1);
  }
  for (ElementType type : {ElementType::kS8, ElementType::kF16, ElementType::kF32,
                           ElementType::kF64, ElementType::kC128}) {
    const size_t bytes = GetElementTypeInfo(type).storage_bytes;
    std::vector<uint8_t> a(n * bytes), b(n * bytes), out(n * bytes);
    for (size_t k = 0; k < a.size(); ++k) {
      a[k] = static_cast<uint8_t>(k * 7 + 1);
      b[k] = static_cast<uint8_t>(k * 13 + 200);
    }
    ASSERT_TRUE(Select(type, reinterpret_cast<const bool*>(pred.data()), false, a.data(), b.data(),
                       out.data(), n)
                    .ok());
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* expected = (pred[i] != 0 ? a.data() : b.data()) + i * bytes;
      EXPECT_EQ(std::memcmp(out.data() + i * bytes, expected, bytes), 0)
          << GetElementTypeInfo(type).name << " element " << i;
    }
  }
}

// Masks made of runs (rows of one predicate, of lengths on and off the
// 64-element chunks Select copies whole), random masks, bytes other than 1,
// and an output that is one of the operands: every element as picked.
TEST(Select, RunsOfOnePredicateCopyWhatTheLoopWouldPick) {
  std::mt19937 random(3);
  for (const int64_t row : {1, 7, 64, 100, 256, 1000}) {
    for (const bool in_place : {false, true}) {
      const int64_t n = 4099;
      std::vector<uint8_t> pred(n);
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t draw = random();
        pred[i] = row == 1 ? static_cast<uint8_t>(draw % 2)
                           : static_cast<uint8_t>((i / row) % 3 == 1 ? 0 : 1 + (i / row) % 2 * 200);
      }
      std::vector<float> a(n), b(n), out(n, -1.0f);
      for (int64_t i = 0; i < n; ++i) {
        a[i] = static_cast<float>(i);
        b[i] = -static_cast<float>(i) - 0.5f;
      }
      const std::vector<float> original = a;
      float* target = in_place ? a.data() : out.data();
      ASSERT_TRUE(Select(ElementType::kF32, reinterpret_cast<const bool*>(pred.data()), false,
                         a.data(), b.data(), target, n)
                      .ok());
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_EQ(target[i], pred[i] != 0 ? original[i] : b[i]) << "rows of " << row << ", " << i;
      }
    }
  }
}

// Every direction against the C++ operator, integers and floats with NaN
// and signed zeros (the direction is chosen once per call, per-element
// loops inside).
TEST(Compare, EveryDirectionIsItsOperator) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1.0f, 2.0f, nan,  -0.0f, 0.0f, -kInf, 3.0f, nan,  5.0f, 7.0f,
                                1.0f, 2.0f, 0.0f, -1.0f, kInf, 4.0f,  4.0f, 9.0f, -2.0f};
  const std::vector<float> y = {1.0f, 1.0f, 1.0f, 0.0f,  -0.0f, -kInf, nan,  nan,   6.0f, 7.0f,
                                2.0f, 2.0f, 1.0f, -1.0f, 3.0f,  4.0f,  5.0f, -9.0f, -2.0f};
  std::vector<int32_t> xi(x.size()), yi(y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    xi[i] = static_cast<int32_t>(i % 5) - 2;
    yi[i] = static_cast<int32_t>(i % 3) - 1;
  }
  const auto n = static_cast<int64_t>(x.size());
  for (CompareDirection direction :
       {CompareDirection::kEq, CompareDirection::kNe, CompareDirection::kGe, CompareDirection::kGt,
        CompareDirection::kLe, CompareDirection::kLt}) {
    const auto expect = [direction](auto a, auto b) {
      switch (direction) {
        case CompareDirection::kEq: return a == b;
        case CompareDirection::kNe: return a != b;
        case CompareDirection::kGe: return a >= b;
        case CompareDirection::kGt: return a > b;
        case CompareDirection::kLe: return a <= b;
        case CompareDirection::kLt: return a < b;
      }
      return false;
    };
    std::vector<uint8_t> out(x.size()), out_int(x.size());
    ASSERT_TRUE(Compare(direction, CompareKind::kFloat, ElementType::kF32, x.data(), y.data(),
                        reinterpret_cast<bool*>(out.data()), n)
                    .ok());
    ASSERT_TRUE(Compare(direction, CompareKind::kFloat, ElementType::kS32, xi.data(), yi.data(),
                        reinterpret_cast<bool*>(out_int.data()), n)
                    .ok());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(out[i] != 0, expect(x[i], y[i]))
          << "direction " << static_cast<int>(direction) << " f32 element " << i;
      EXPECT_EQ(out_int[i] != 0, expect(xi[i], yi[i]))
          << "direction " << static_cast<int>(direction) << " s32 element " << i;
    }
  }
}

}  // namespace
}  // namespace kiln::kernels

namespace kiln::kernels {
namespace {

// chlo.mulhi: the high half of the exact double-width product, signed or
// unsigned by the type (StableHLO's interpreter tests' cases, 64-bit ones
// included, and a sub-byte type wrapped to its width).
TEST(MulHi, HighHalfOfTheDoubleWidthProduct) {
  auto run = [](ElementType type, auto lhs, auto rhs) {
    decltype(lhs) out(lhs.size());
    EXPECT_TRUE(Binary(BinaryOp::kMulHi, type, lhs.data(), rhs.data(), out.data(),
                       static_cast<int64_t>(lhs.size()))
                    .ok());
    return out;
  };
  EXPECT_EQ(run(ElementType::kS8, std::vector<int8_t>{64, -64, -64}, std::vector<int8_t>{4, 4, -4}),
            (std::vector<int8_t>{1, -1, 1}));
  EXPECT_EQ(run(ElementType::kU8, std::vector<uint8_t>{240, 128}, std::vector<uint8_t>{16, 2}),
            (std::vector<uint8_t>{15, 1}));
  EXPECT_EQ(run(ElementType::kS64, std::vector<int64_t>{1152921504606846976, -1152921504606846976},
                std::vector<int64_t>{16, 16}),
            (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(run(ElementType::kU64,
                std::vector<uint64_t>{17293822569102704640ull, 9223372036854775808ull},
                std::vector<uint64_t>{16, 2}),
            (std::vector<uint64_t>{15, 1}));
  // s4 in its byte: 7 * 7 = 49 = 0b0011'0001, high four bits 3.
  EXPECT_EQ(run(ElementType::kS4, std::vector<int8_t>{7, -8}, std::vector<int8_t>{7, 7}),
            (std::vector<int8_t>{3, -4}));
  float f[1] = {1}, g[1];
  EXPECT_FALSE(Binary(BinaryOp::kMulHi, ElementType::kF32, f, f, g, 1).ok());
}

// The common types compare in loops of their own (built for AVX2 and
// AVX-512 too): over 1000 elements, unsigned values above the signed range
// order as unsigned, and NaN compares false but for NE.
template <typename T>
void CheckCompares(ElementType type) {
  const int64_t n = 1000;
  std::vector<T> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(i % 17) - static_cast<T>(8);
    b[i] = static_cast<T>(i % 13) - static_cast<T>(6);
    if constexpr (std::is_floating_point_v<T>) {
      if (i % 29 == 0) a[i] = std::numeric_limits<T>::quiet_NaN();
      if (i % 31 == 0) b[i] = std::numeric_limits<T>::quiet_NaN();
    } else if (i % 11 == 0) {
      a[i] = std::numeric_limits<T>::max() - static_cast<T>(i % 3);
    }
  }
  for (CompareDirection direction :
       {CompareDirection::kEq, CompareDirection::kNe, CompareDirection::kGe, CompareDirection::kGt,
        CompareDirection::kLe, CompareDirection::kLt}) {
    std::vector<uint8_t> out(n);
    ASSERT_TRUE(Compare(direction, CompareKind::kFloat, type, a.data(), b.data(),
                        reinterpret_cast<bool*>(out.data()), n)
                    .ok());
    for (int64_t i = 0; i < n; ++i) {
      bool expected = false;
      switch (direction) {
        case CompareDirection::kEq: expected = a[i] == b[i]; break;
        case CompareDirection::kNe: expected = a[i] != b[i]; break;
        case CompareDirection::kGe: expected = a[i] >= b[i]; break;
        case CompareDirection::kGt: expected = a[i] > b[i]; break;
        case CompareDirection::kLe: expected = a[i] <= b[i]; break;
        case CompareDirection::kLt: expected = a[i] < b[i]; break;
      }
      ASSERT_EQ(out[i], expected ? 1 : 0) << static_cast<int>(direction) << " " << i;
    }
  }
}

TEST(Compare, CommonTypesOverManyElements) {
  CheckCompares<int32_t>(ElementType::kS32);
  CheckCompares<uint32_t>(ElementType::kU32);
  CheckCompares<int64_t>(ElementType::kS64);
  CheckCompares<uint64_t>(ElementType::kU64);
  CheckCompares<float>(ElementType::kF32);
  CheckCompares<double>(ElementType::kF64);
}

// f32 and f64 arithmetic runs as loops of their own (built for AVX2 and
// AVX-512 too): max and min propagate NaN from either side, as XLA's do.
template <typename T>
void CheckFloatOps(ElementType type) {
  const int64_t n = 1000;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> a(n), b(n), out(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(i % 23) * static_cast<T>(0.75) - static_cast<T>(7);
    b[i] = static_cast<T>(i % 19) * static_cast<T>(-0.5) + static_cast<T>(3);
    if (i % 37 == 0) a[i] = nan;
    if (i % 41 == 0) b[i] = nan;
  }
  const auto check = [&](BinaryOp op, auto expected) {
    ASSERT_TRUE(Binary(op, type, a.data(), b.data(), out.data(), n).ok());
    for (int64_t i = 0; i < n; ++i) {
      const T want = expected(a[i], b[i]);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(out[i])) << static_cast<int>(op) << " " << i;
      } else {
        ASSERT_EQ(out[i], want) << static_cast<int>(op) << " " << i;
      }
    }
  };
  check(BinaryOp::kAdd, [](T x, T y) { return x + y; });
  check(BinaryOp::kSubtract, [](T x, T y) { return x - y; });
  check(BinaryOp::kMultiply, [](T x, T y) { return x * y; });
  check(BinaryOp::kDivide, [](T x, T y) { return x / y; });
  check(BinaryOp::kMaximum,
        [nan](T x, T y) { return std::isnan(x) || std::isnan(y) ? nan : std::max(x, y); });
  check(BinaryOp::kMinimum,
        [nan](T x, T y) { return std::isnan(x) || std::isnan(y) ? nan : std::min(x, y); });
}

TEST(ElementwiseFloat, ArithmeticOverManyElements) {
  CheckFloatOps<float>(ElementType::kF32);
  CheckFloatOps<double>(ElementType::kF64);
}

// The 32- and 64-bit integer ops run as loops of their own (built for
// AVX2 and AVX-512 too): shifts by the element width or more give 0, or
// the sign for an arithmetic shift, as XLA defines them; arithmetic wraps.
// Over 1000 elements, so that the vector loops' bodies run, not only their
// tails.
template <typename T>
void CheckIntegerOps(ElementType type) {
  using U = std::make_unsigned_t<T>;
  constexpr int kBits = sizeof(T) * 8;
  const int64_t n = 1000;
  std::vector<T> a(n), b(n), out(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(static_cast<U>(i) * static_cast<U>(0x9E3779B97F4A7C15ull) ^
                          (i % 3 == 0 ? static_cast<U>(~U{0} << (kBits - 2)) : U{0}));
    b[i] = static_cast<T>(i % 7 == 0 ? static_cast<U>(i) : static_cast<U>(i % (kBits + 6)));
  }
  b[5] = static_cast<T>(-1);  // a huge amount when unsigned
  const auto check = [&](BinaryOp op, auto expected) {
    ASSERT_TRUE(Binary(op, type, a.data(), b.data(), out.data(), n).ok());
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(out[i], static_cast<T>(expected(a[i], b[i]))) << static_cast<int>(op) << " " << i;
    }
  };
  check(BinaryOp::kAdd,
        [](T x, T y) { return static_cast<U>(static_cast<U>(x) + static_cast<U>(y)); });
  check(BinaryOp::kSubtract,
        [](T x, T y) { return static_cast<U>(static_cast<U>(x) - static_cast<U>(y)); });
  check(BinaryOp::kMultiply,
        [](T x, T y) { return static_cast<U>(static_cast<U>(x) * static_cast<U>(y)); });
  check(BinaryOp::kAnd, [](T x, T y) { return x & y; });
  check(BinaryOp::kOr, [](T x, T y) { return x | y; });
  check(BinaryOp::kXor, [](T x, T y) { return x ^ y; });
  check(BinaryOp::kShiftLeft, [](T x, T y) {
    return static_cast<U>(y) >= kBits ? U{0}
                                      : static_cast<U>(static_cast<U>(x) << static_cast<U>(y));
  });
  check(BinaryOp::kShiftRightLogical, [](T x, T y) {
    return static_cast<U>(y) >= kBits ? U{0}
                                      : static_cast<U>(static_cast<U>(x) >> static_cast<U>(y));
  });
  using S = std::make_signed_t<T>;
  check(BinaryOp::kShiftRightArithmetic, [](T x, T y) {
    const auto value = static_cast<S>(x);
    if (static_cast<U>(y) >= kBits) return static_cast<T>(value < 0 ? S(-1) : S(0));
    return static_cast<T>(value >> static_cast<U>(y));
  });
}

TEST(ElementwiseInteger, WideOpsWrapAndShiftAsXlaDoes) {
  CheckIntegerOps<int32_t>(ElementType::kS32);
  CheckIntegerOps<uint32_t>(ElementType::kU32);
  CheckIntegerOps<int64_t>(ElementType::kS64);
  CheckIntegerOps<uint64_t>(ElementType::kU64);
}

}  // namespace
}  // namespace kiln::kernels
