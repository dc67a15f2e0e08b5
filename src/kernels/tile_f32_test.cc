// The fused loops' f32 tile kernels compute what Unary / Binary compute,
// bit for bit (the transcendental ops to a few ulp), special values included.
#include "kernels/tile_f32.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include "kernels/float_env.h"

namespace kiln::kernels {
namespace {

// Random values mixed with NaN, infinities, signed zeros, denormals and
// ties, at every position so that vector bodies and scalar tails see them.
std::vector<float> Values(uint32_t seed, size_t n) {
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            0.0f,
                            -0.0f,
                            1e-40f,
                            -1e-40f,
                            1.0f,
                            -1.0f,
                            88.5f,
                            -104.0f};
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-10.0f, 10.0f);
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) {
    values[i] = random() % 5 == 0 ? specials[random() % std::size(specials)] : uniform(random);
  }
  return values;
}

// Equal bits (any NaN matching any NaN), or within `ulps` units in the
// last place of each other.
void ExpectSameBits(const std::vector<float>& expected, const std::vector<float>& actual,
                    const char* what, int ulps = 0) {
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::isnan(expected[i]) && std::isnan(actual[i])) continue;
    // A denormal and a zero are the same value where denormals flush.
    const auto tiny = [](float x) { return (std::bit_cast<uint32_t>(x) & 0x7f800000u) == 0; };
    if (ulps > 0 && tiny(expected[i]) && tiny(actual[i])) continue;
    const auto a = static_cast<int64_t>(std::bit_cast<int32_t>(expected[i]));
    const auto b = static_cast<int64_t>(std::bit_cast<int32_t>(actual[i]));
    ASSERT_LE(std::abs(a - b), ulps)
        << what << " element " << i << ": bits " << std::hex << a << " vs " << b;
  }
}

// The transcendental ops run Eigen's packet math, which folds the elements
// before the first aligned packet with the scalar form: an element's last
// bit can depend on the array's address, in Unary as in the tile kernels.
bool Transcendental(UnaryOp op) {
  return op == UnaryOp::kExponential || op == UnaryOp::kLog || op == UnaryOp::kTanh ||
         op == UnaryOp::kLogistic || op == UnaryOp::kLogPlusOne ||
         op == UnaryOp::kExponentialMinusOne || op == UnaryOp::kSine || op == UnaryOp::kCosine;
}

TEST(TileF32Test, BinaryKernelsMatchBinary) {
  ScopedFlushDenormals flush;  // as programs run (float_env.h)
  for (int op = 0; op <= static_cast<int>(BinaryOp::kZeta); ++op) {
    const TileKernel kernel = TileBinaryF32(static_cast<BinaryOp>(op));
    if (kernel == nullptr) continue;
    for (size_t n : {1u, 7u, 8u, 33u, 512u, 515u}) {
      const std::vector<float> a = Values(1 + op, n), b = Values(100 + op, n);
      std::vector<float> expected(n), actual(n);
      ASSERT_TRUE(Binary(static_cast<BinaryOp>(op), ElementType::kF32, a.data(), b.data(),
                         expected.data(), static_cast<int64_t>(n))
                      .ok());
      const float* in[] = {a.data(), b.data()};
      kernel(in, actual.data(), static_cast<int64_t>(n));
      ExpectSameBits(expected, actual, "binary");
    }
  }
  EXPECT_NE(TileBinaryF32(BinaryOp::kAdd), nullptr);
  EXPECT_EQ(TileBinaryF32(BinaryOp::kAtan2), nullptr);
}

TEST(TileF32Test, UnaryKernelsMatchUnary) {
  ScopedFlushDenormals flush;  // as programs run (float_env.h)
  int covered = 0;
  for (int op = 0; op < 64; ++op) {
    const TileKernel kernel = TileUnaryF32(static_cast<UnaryOp>(op));
    if (kernel == nullptr) continue;
    ++covered;
    for (size_t n : {1u, 7u, 8u, 33u, 512u, 515u}) {
      const std::vector<float> x = Values(7 + op, n);
      std::vector<float> expected(n), actual(n);
      ASSERT_TRUE(Unary(static_cast<UnaryOp>(op), ElementType::kF32, x.data(), expected.data(),
                        static_cast<int64_t>(n))
                      .ok());
      const float* in[] = {x.data()};
      kernel(in, actual.data(), static_cast<int64_t>(n));
      SCOPED_TRACE(op);
      ExpectSameBits(expected, actual, "unary", Transcendental(static_cast<UnaryOp>(op)) ? 4 : 0);
    }
  }
  EXPECT_GE(covered, 10);
}

}  // namespace
}  // namespace kiln::kernels
