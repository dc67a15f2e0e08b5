#include "runtime/execute_context.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

TEST(ExecuteContextTest, HoldsOneDatumPerTypeIdAndFreesThem) {
  static int freed = 0;
  freed = 0;
  {
    ExecuteContext context;
    int* value = new int(5);
    ASSERT_TRUE(context
                    .InsertUserData(42, value,
                                    [](void* data) {
                                      delete static_cast<int*>(data);
                                      ++freed;
                                    })
                    .ok());
    int borrowed = 9;
    ASSERT_TRUE(context.InsertUserData(7, &borrowed, nullptr).ok());
    EXPECT_EQ(context.LookupUserData(42), value);
    EXPECT_EQ(context.LookupUserData(3), nullptr);
    EXPECT_EQ(context.InsertUserData(42, &borrowed, nullptr).code(), StatusCode::kAlreadyExists);
    EXPECT_EQ(context.user_data_count(), 2u);
  }
  EXPECT_EQ(freed, 1);
}

}  // namespace
}  // namespace kiln::runtime
