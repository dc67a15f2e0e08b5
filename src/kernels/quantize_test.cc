#include "kernels/quantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace kiln::kernels {
namespace {

TEST(Quantize, RoundsHalfToEvenAddsZeroPointAndClamps) {
  const std::vector<float> x = {0.25f, 0.75f, 1.25f, 100.0f, -100.0f, NAN, -0.25f};
  const std::vector<double> scales = {0.5};
  const std::vector<int64_t> zero_points = {3};
  std::vector<int8_t> q(x.size());
  ASSERT_TRUE(Quantize(ElementType::kF32, x.data(), ElementType::kS8, q.data(),
                       static_cast<int64_t>(x.size()), {scales, zero_points, 1, 1, -128, 127})
                  .ok());
  EXPECT_EQ(q, (std::vector<int8_t>{3, 5, 5, 127, -128, 0, 3}));
}

TEST(Quantize, PerAxisUsesEachSlicesScale) {
  // [2, 3] quantized along dimension 0: rows use scales 1 and 0.1.
  const std::vector<double> x = {1, 2, 3, 0.1, 0.2, 0.3};
  const std::vector<double> scales = {1.0, 0.1};
  const std::vector<int64_t> zero_points = {0, -100};
  std::vector<uint16_t> q(6);
  ASSERT_TRUE(Quantize(ElementType::kF64, x.data(), ElementType::kU16, q.data(), 6,
                       {scales, zero_points, 2, 3, 0, 65535})
                  .ok());
  EXPECT_EQ(q, (std::vector<uint16_t>{1, 2, 3, 0, 0, 0}));  // row 1: 1 - 100 etc. clamp to 0
  std::vector<double> back(6);
  ASSERT_TRUE(Dequantize(ElementType::kU16, q.data(), ElementType::kF64, back.data(), 6,
                         {scales, zero_points, 2, 3, 0, 65535})
                  .ok());
  EXPECT_DOUBLE_EQ(back[2], 3.0);
  EXPECT_NEAR(back[3], 10.0, 1e-12);  // (0 - (-100)) * 0.1
}

TEST(Quantize, RejectsTypesItCannotHold) {
  const float x = 1;
  int64_t q = 0;
  const std::vector<double> scales = {1.0};
  const std::vector<int64_t> zero_points = {0};
  const Status status = Quantize(ElementType::kF32, &x, ElementType::kS64, &q, 1,
                                 {scales, zero_points, 1, 1, 0, 1});
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("i64"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace kiln::kernels
