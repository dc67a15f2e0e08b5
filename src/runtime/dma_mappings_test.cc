#include "runtime/dma_mappings.h"

#include <gtest/gtest.h>

#include <vector>

namespace kiln::runtime {
namespace {

TEST(DmaMappingsTest, RangesMapOnceAndUnmapByTheirStart) {
  std::vector<char> host(4096);
  DmaMappings mappings;
  ASSERT_TRUE(mappings.Map(host.data(), 1024).ok());
  EXPECT_TRUE(mappings.IsMapped(host.data() + 100, 900));
  EXPECT_FALSE(mappings.IsMapped(host.data() + 100, 1000));
  EXPECT_EQ(mappings.Map(host.data(), 1024).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(mappings.Map(host.data() + 1023, 8).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(mappings.Map(host.data() + 1000, 8).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(mappings.Map(host.data() + 1024, 1024).ok());  // adjacent ranges are separate
  EXPECT_EQ(mappings.count(), 2u);
  EXPECT_EQ(mappings.Unmap(host.data() + 1).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(mappings.Unmap(host.data()).ok());
  EXPECT_FALSE(mappings.IsMapped(host.data(), 1));
  EXPECT_EQ(mappings.Unmap(host.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mappings.count(), 1u);
}

TEST(DmaMappingsTest, NullEmptyAndWrappingRangesAreInvalid) {
  DmaMappings mappings;
  char byte = 0;
  EXPECT_EQ(mappings.Map(nullptr, 8).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mappings.Map(&byte, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mappings.Map(&byte, SIZE_MAX).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mappings.count(), 0u);
}

}  // namespace
}  // namespace kiln::runtime
