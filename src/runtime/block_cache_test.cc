// BlockCache: freed blocks come back for an allocation of the same size;
// what it lets go of (too small, too large, evicted, cleared) is released
// through the backend's function, once.
#include "runtime/block_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace kiln::runtime {
namespace {

struct Released {
  std::vector<void*> blocks;
};

BlockCache MakeCache(Released& released, BlockCache::Options options) {
  return BlockCache(options, [&released](void* block) { released.blocks.push_back(block); });
}

void* Block(uintptr_t n) { return reinterpret_cast<void*>(n * 64); }

TEST(BlockCacheTest, GivesBackABlockOfTheSameSizeOnly) {
  Released released;
  {
    BlockCache cache = MakeCache(released, {.min_bytes = 0, .limit_bytes = 1000, .slots = 4});
    cache.Give(Block(1), 100);
    EXPECT_EQ(cache.cached_bytes(), 100u);
    EXPECT_EQ(cache.Take(200), nullptr);
    EXPECT_EQ(cache.Take(100), Block(1));
    EXPECT_EQ(cache.Take(100), nullptr);
    EXPECT_EQ(cache.cached_bytes(), 0u);
    cache.Give(Block(2), 100);
    EXPECT_TRUE(released.blocks.empty());
  }
  // The destructor releases what it holds.
  EXPECT_EQ(released.blocks, std::vector<void*>{Block(2)});
}

TEST(BlockCacheTest, ReleasesBlocksOutsideItsBoundsAtOnce) {
  Released released;
  BlockCache cache = MakeCache(released, {.min_bytes = 50, .limit_bytes = 1000, .slots = 4});
  cache.Give(Block(1), 10);    // below min_bytes
  cache.Give(Block(2), 2000);  // above the limit
  EXPECT_EQ(released.blocks, (std::vector<void*>{Block(1), Block(2)}));
  EXPECT_EQ(cache.Take(10), nullptr);
  EXPECT_EQ(cache.cached_bytes(), 0u);
}

TEST(BlockCacheTest, EvictsTheOldestForRoomOrASlot) {
  Released released;
  BlockCache cache = MakeCache(released, {.min_bytes = 0, .limit_bytes = 300, .slots = 2});
  cache.Give(Block(1), 100);
  cache.Give(Block(2), 100);
  cache.Give(Block(3), 100);  // no free slot: block 1 goes
  EXPECT_EQ(released.blocks, std::vector<void*>{Block(1)});
  cache.Give(Block(4), 250);  // over the byte limit: blocks 2 and 3 go
  EXPECT_EQ(released.blocks, (std::vector<void*>{Block(1), Block(2), Block(3)}));
  EXPECT_EQ(cache.cached_bytes(), 250u);
  EXPECT_EQ(cache.Clear(), 250u);
  EXPECT_EQ(released.blocks.back(), Block(4));
  EXPECT_EQ(cache.Take(250), nullptr);
}

TEST(BlockCacheTest, ALimitOfZeroTurnsItOff) {
  Released released;
  setenv("KILN_TEST_BLOCK_CACHE_MB", "0", 1);
  BlockCache cache = MakeCache(released, {.min_bytes = 0,
                                          .limit_bytes = 1000,
                                          .slots = 4,
                                          .limit_variable = "KILN_TEST_BLOCK_CACHE_MB"});
  unsetenv("KILN_TEST_BLOCK_CACHE_MB");
  cache.Give(Block(1), 100);
  EXPECT_EQ(released.blocks, std::vector<void*>{Block(1)});
}

}  // namespace
}  // namespace kiln::runtime
