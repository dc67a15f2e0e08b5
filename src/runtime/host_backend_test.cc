// The host backend's cache of freed large blocks: a block of 1 MiB or more
// comes back for the next allocation of its size (no fresh pages to fault
// in), and only for that size; small blocks go straight back to malloc.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/device_backend.h"

namespace kiln::runtime {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(HostBackendTest, FreedLargeBlockIsReusedForTheSameSize) {
  auto backend = CreateHostBackend();
  auto first = backend->Allocate(MemoryKind::kDevice, 0, 32 * kMiB);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::memset(*first, 1, 32 * kMiB);
  backend->Deallocate(MemoryKind::kDevice, 0, *first, 32 * kMiB);

  // Another size does not take the cached block.
  auto other = backend->Allocate(MemoryKind::kDevice, 0, 2 * kMiB);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *first);

  auto again = backend->Allocate(MemoryKind::kDevice, 0, 32 * kMiB);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
  // Taken: the next one of that size is a new block.
  auto third = backend->Allocate(MemoryKind::kDevice, 0, 32 * kMiB);
  ASSERT_TRUE(third.ok());
  EXPECT_NE(*third, *again);

  backend->Deallocate(MemoryKind::kDevice, 0, *other, 2 * kMiB);
  backend->Deallocate(MemoryKind::kDevice, 0, *again, 32 * kMiB);
  backend->Deallocate(MemoryKind::kDevice, 0, *third, 32 * kMiB);
}

// Blocks of 8 MiB and more start on a 2 MiB boundary and are advised as
// huge-page memory (transparent huge pages in "madvise" mode): kernels that
// stream them walk a TLB entry per 2 MiB instead of per 4 KiB.
TEST(HostBackendTest, LargeBlocksLieOnHugePageBoundaries) {
  auto backend = CreateHostBackend();
  const size_t bytes = 8 * kMiB + 100;
  auto block = backend->Allocate(MemoryKind::kDevice, 0, bytes);
  ASSERT_TRUE(block.ok()) << block.status().ToString();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*block) % (2 * kMiB), 0u);
  std::memset(*block, 7, bytes);
  // A smaller block keeps the ordinary 64-byte alignment.
  auto small = backend->Allocate(MemoryKind::kDevice, 0, 100);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*small) % 64, 0u);
  backend->Deallocate(MemoryKind::kDevice, 0, *small, 100);
  backend->Deallocate(MemoryKind::kDevice, 0, *block, bytes);
}

// More freed blocks than the cache has slots: the oldest are released (the
// leak checker of the sanitizer build sees every block freed by the end).
TEST(HostBackendTest, CacheKeepsABoundedNumberOfBlocks) {
  auto backend = CreateHostBackend();
  std::vector<void*> blocks;
  for (int k = 0; k < 40; ++k) {
    auto block = backend->Allocate(MemoryKind::kDevice, 0, kMiB + 64 * static_cast<size_t>(k));
    ASSERT_TRUE(block.ok());
    blocks.push_back(*block);
  }
  for (int k = 0; k < 40; ++k) {
    backend->Deallocate(MemoryKind::kDevice, 0, blocks[static_cast<size_t>(k)],
                        kMiB + 64 * static_cast<size_t>(k));
  }
  // The newest freed block is still cached.
  auto last = backend->Allocate(MemoryKind::kDevice, 0, kMiB + 64 * 39);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, blocks.back());
  backend->Deallocate(MemoryKind::kDevice, 0, *last, kMiB + 64 * 39);
}

// The byte limit (KILN_HOST_BLOCK_CACHE_MB): a block that would take the
// cache over it evicts older ones, and the newest stays.
TEST(HostBackendTest, CacheStaysWithinItsByteLimit) {
  ::setenv("KILN_HOST_BLOCK_CACHE_MB", "2", 1);
  auto backend = CreateHostBackend();
  ::unsetenv("KILN_HOST_BLOCK_CACHE_MB");
  const size_t size = kMiB + kMiB / 2;
  auto first = backend->Allocate(MemoryKind::kDevice, 0, size);
  auto second = backend->Allocate(MemoryKind::kDevice, 0, size);
  ASSERT_TRUE(first.ok() && second.ok());
  backend->Deallocate(MemoryKind::kDevice, 0, *first, size);
  backend->Deallocate(MemoryKind::kDevice, 0, *second, size);  // evicts `first`
  auto again = backend->Allocate(MemoryKind::kDevice, 0, size);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *second);
  backend->Deallocate(MemoryKind::kDevice, 0, *again, size);
}

}  // namespace
}  // namespace kiln::runtime
