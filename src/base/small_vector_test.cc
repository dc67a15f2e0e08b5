#include "base/small_vector.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace kiln {
namespace {

// Moving keeps the elements, inline or on the heap, and leaves the source
// empty and usable; containers move structs holding one (noexcept), rather
// than copying them.
TEST(SmallVectorTest, MovesInlineAndHeapElements) {
  static_assert(std::is_nothrow_move_constructible_v<SmallVector<int, 4>>);
  SmallVector<int, 4> small;
  for (int i = 0; i < 3; ++i) small.push_back(i);
  SmallVector<int, 4> large;
  for (int i = 0; i < 9; ++i) large.push_back(i);
  const int* heap = large.data();

  SmallVector<int, 4> moved_small(std::move(small));
  SmallVector<int, 4> moved_large(std::move(large));
  EXPECT_EQ(std::vector<int>(moved_small.begin(), moved_small.end()), (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(moved_large.size(), 9u);
  EXPECT_EQ(moved_large.data(), heap);  // the heap block changed hands
  EXPECT_EQ(moved_large[8], 8);
  EXPECT_TRUE(small.empty());  // NOLINT: a moved-from vector is empty
  EXPECT_TRUE(large.empty());  // NOLINT
  large.push_back(5);
  EXPECT_EQ(large[0], 5);

  moved_small = std::move(moved_large);
  EXPECT_EQ(moved_small.size(), 9u);
  EXPECT_EQ(moved_small.data(), heap);
}

}  // namespace
}  // namespace kiln
