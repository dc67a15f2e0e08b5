// The random bit generators: Random123's known-answer vectors for the two
// block functions, and the state updates and layouts of XLA's expansion.
#include "kernels/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace kiln::kernels {
namespace {

TEST(RngKernelTest, ThreeFryKnownAnswers) {
  uint32_t out[2];
  ThreeFry2x32(0, 0, 0, 0, out);
  EXPECT_EQ(out[0], 0x6b200159u);
  EXPECT_EQ(out[1], 0x99ba4efeu);
  ThreeFry2x32(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, out);
  EXPECT_EQ(out[0], 0x1cb996fcu);
  EXPECT_EQ(out[1], 0xbb002be7u);
  ThreeFry2x32(0x13198a2eu, 0x03707344u, 0x243f6a88u, 0x85a308d3u, out);
  EXPECT_EQ(out[0], 0xc4923a9cu);
  EXPECT_EQ(out[1], 0x483df7a0u);
}

TEST(RngKernelTest, PhiloxKnownAnswers) {
  uint32_t out[4];
  const uint32_t zeros[4] = {0, 0, 0, 0};
  Philox4x32(0, 0, zeros, out);
  EXPECT_EQ(out[0], 0x6627e8d5u);
  EXPECT_EQ(out[1], 0xe169c58du);
  EXPECT_EQ(out[2], 0xbc57ac4cu);
  EXPECT_EQ(out[3], 0x9b00dbd8u);
  const uint32_t pi[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u};
  Philox4x32(0xa4093822u, 0x299f31d0u, pi, out);
  EXPECT_EQ(out[0], 0xd16cfe09u);
  EXPECT_EQ(out[1], 0x94fdccebu);
  EXPECT_EQ(out[2], 0x5001e420u);
  EXPECT_EQ(out[3], 0x24126ea1u);
}

TEST(RngKernelTest, ThreeFryStateAndPairing) {
  const uint64_t state[2] = {0x1234567890abcdefull, 100};
  uint64_t next[2];
  // [3, 5]: no even dimension, so the split is the larger one (5 -> 3 pairs).
  std::vector<uint32_t> bits(15);
  const int64_t dims[] = {3, 5};
  RngBitGenerator(RngAlgorithm::kThreeFry, state, 2, ElementType::kU32, dims, bits.data(), next);
  EXPECT_EQ(next[0], state[0]);
  EXPECT_EQ(next[1], 100u + 9u);
  // Element [1, 2] is word 0 of counter 100 + (1 * 3 + 1); [1, 3] is word 1.
  uint32_t words[2];
  ThreeFry2x32(0x90abcdefu, 0x12345678u, 104, 0, words);
  EXPECT_EQ(bits[1 * 5 + 2], words[0]);
  EXPECT_EQ(bits[1 * 5 + 3], words[1]);
  // 8-bit outputs are the low bytes of the 32-bit ones.
  std::vector<uint8_t> bytes(15);
  RngBitGenerator(RngAlgorithm::kThreeFry, state, 2, ElementType::kU8, dims, bytes.data(), next);
  for (size_t i = 0; i < bytes.size(); ++i) EXPECT_EQ(bytes[i], static_cast<uint8_t>(bits[i]));
  // 64-bit outputs: one counter per element, words joined low first.
  std::vector<uint64_t> wide(2);
  const int64_t two[] = {2};
  RngBitGenerator(RngAlgorithm::kThreeFry, state, 2, ElementType::kU64, two, wide.data(), next);
  ThreeFry2x32(0x90abcdefu, 0x12345678u, 101, 0, words);
  EXPECT_EQ(wide[1], static_cast<uint64_t>(words[0]) | (static_cast<uint64_t>(words[1]) << 32));
  EXPECT_EQ(next[1], 102u);
}

TEST(RngKernelTest, PhiloxCountersAndCarry) {
  // A 3-word state carries into the high word; a 2-word one keeps only the low.
  const uint64_t state3[3] = {7, ~uint64_t{0}, 5};
  uint64_t next[3];
  std::vector<uint32_t> bits(5);
  const int64_t dims[] = {5};
  RngBitGenerator(RngAlgorithm::kPhilox, state3, 3, ElementType::kU32, dims, bits.data(), next);
  EXPECT_EQ(next[0], 7u);
  EXPECT_EQ(next[1], 1u);  // two counters used: ~0 + 2 wraps to 1
  EXPECT_EQ(next[2], 6u);
  uint32_t words[4];
  const uint32_t second[4] = {0, 0, 6, 0};  // counter (~0 + 1) = high 6, low 0
  Philox4x32(7, 0, second, words);
  EXPECT_EQ(bits[4], words[0]);
  const uint64_t state2[2] = {7, 9};
  RngBitGenerator(RngAlgorithm::kPhilox, state2, 2, ElementType::kU32, dims, bits.data(), next);
  EXPECT_EQ(next[1], 11u);
  const uint32_t first[4] = {9, 0, 7, 0};  // low = state[1], high = the key
  Philox4x32(7, 0, first, words);
  EXPECT_EQ(bits[0], words[0]);
  EXPECT_EQ(bits[3], words[3]);
}

TEST(RngKernelTest, ChecksTypesAndStates) {
  EXPECT_TRUE(CheckRngBitGenerator(RngAlgorithm::kPhilox, 3, ElementType::kF32).ok());
  EXPECT_TRUE(CheckRngBitGenerator(RngAlgorithm::kThreeFry, 2, ElementType::kBF16).ok());
  EXPECT_FALSE(CheckRngBitGenerator(RngAlgorithm::kThreeFry, 3, ElementType::kU32).ok());
  EXPECT_FALSE(CheckRngBitGenerator(RngAlgorithm::kPhilox, 2, ElementType::kPred).ok());
  EXPECT_FALSE(CheckRngBitGenerator(RngAlgorithm::kPhilox, 2, ElementType::kS4).ok());
}

TEST(RngKernelTest, DistributionsHaveTheirMoments) {
  const int64_t dims[] = {20001};
  const uint64_t counter[2] = {0, 0};
  std::vector<float> values(20001);
  const float a = 2.0f, b = 5.0f;
  ASSERT_TRUE(RngDistributionKernel(RngDistribution::kUniform, ElementType::kF32, &a, &b, dims, 42,
                                    counter, values.data())
                  .ok());
  double sum = 0;
  for (float v : values) {
    ASSERT_GE(v, 2.0f);
    ASSERT_LT(v, 5.0f);
    sum += v;
  }
  EXPECT_NEAR(sum / 20001, 3.5, 0.05);
  const float mean = 1.0f, sigma = 3.0f;
  ASSERT_TRUE(RngDistributionKernel(RngDistribution::kNormal, ElementType::kF32, &mean, &sigma,
                                    dims, 42, counter, values.data())
                  .ok());
  double total = 0, squares = 0;
  for (float v : values) {
    total += v;
    squares += static_cast<double>(v) * v;
  }
  const double average = total / 20001;
  EXPECT_NEAR(average, 1.0, 0.1);
  EXPECT_NEAR(std::sqrt(squares / 20001 - average * average), 3.0, 0.1);
  std::vector<int32_t> integers(20001);
  const int32_t low = -3, high = 4;
  ASSERT_TRUE(RngDistributionKernel(RngDistribution::kUniform, ElementType::kS32, &low, &high, dims,
                                    42, counter, integers.data())
                  .ok());
  for (int32_t v : integers) {
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 4);
  }
}

}  // namespace
}  // namespace kiln::kernels
