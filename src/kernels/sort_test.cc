// The sort kernels: stability, direction, and safety with comparators that
// are not strict weak orders.
#include "kernels/sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace kiln::kernels {
namespace {

TEST(SortKernelTest, KeysAreStableAndDescendingWorks) {
  const std::vector<int32_t> keys = {3, 1, 3, 2, 1};
  const std::vector<int32_t> payload = {0, 1, 2, 3, 4};
  std::vector<int32_t> sorted(5), moved(5);
  const SortOperand operands[] = {{ElementType::kS32, keys.data(), sorted.data()},
                                  {ElementType::kS32, payload.data(), moved.data()}};
  const int64_t dims[] = {5};
  SortKey key;
  ASSERT_TRUE(Sort(operands, dims, 0, std::span(&key, 1)).ok());
  EXPECT_EQ(sorted, (std::vector<int32_t>{1, 1, 2, 3, 3}));
  EXPECT_EQ(moved, (std::vector<int32_t>{1, 4, 3, 0, 2}));
  key.descending = true;
  ASSERT_TRUE(Sort(operands, dims, 0, std::span(&key, 1)).ok());
  EXPECT_EQ(moved, (std::vector<int32_t>{0, 2, 3, 1, 4}));
}

TEST(SortKernelTest, InconsistentComparatorsNeverCrash) {
  std::vector<int32_t> keys(1000);
  std::iota(keys.begin(), keys.end(), 0);
  std::vector<int32_t> out(keys.size());
  const SortOperand operands[] = {{ElementType::kS32, keys.data(), out.data()}};
  const int64_t dims[] = {static_cast<int64_t>(keys.size())};
  uint32_t state = 1;
  // "Less" at random, and always true for equal elements.
  auto less = [&](int64_t a, int64_t b) -> StatusOr<bool> {
    state = state * 1103515245u + 12345u;
    return a == b || ((state >> 16) & 1) != 0;
  };
  EXPECT_TRUE(SortWithComparator(operands, dims, 0, less).ok());
  std::sort(out.begin(), out.end());
  EXPECT_EQ(out, keys);  // a permutation
}

}  // namespace
}  // namespace kiln::kernels
