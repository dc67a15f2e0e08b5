#include "base/pointer_map.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace kiln {
namespace {

const void* Key(uintptr_t n) { return reinterpret_cast<const void*>(n); }

TEST(PointerMapTest, InsertFindOverwriteErase) {
  PointerMap<int> map;
  EXPECT_EQ(map.Find(Key(16)), nullptr);
  map.Erase(Key(16));  // absent: nothing happens
  map.Insert(Key(16), 1);
  map.Insert(Key(32), 2);
  map.Insert(Key(16), 3);
  ASSERT_NE(map.Find(Key(16)), nullptr);
  EXPECT_EQ(*map.Find(Key(16)), 3);
  EXPECT_EQ(*map.Find(Key(32)), 2);
  EXPECT_EQ(map.size(), 2u);
  map.Erase(Key(16));
  EXPECT_EQ(map.Find(Key(16)), nullptr);
  EXPECT_EQ(*map.Find(Key(32)), 2);
  EXPECT_EQ(map.size(), 1u);
}

// Random inserts and erases of allocator-like addresses (clustered, 16-byte
// aligned), checked against std::unordered_map after every step: erasing
// from the middle of a probe run must leave every other key reachable.
TEST(PointerMapTest, AgreesWithUnorderedMapUnderChurn) {
  std::mt19937_64 random(7);
  PointerMap<int> map;
  std::unordered_map<const void*, int> reference;
  std::vector<const void*> keys;
  for (uintptr_t i = 1; i <= 3000; ++i) keys.push_back(Key(0x7f0000000000 + 16 * i));
  for (int step = 0; step < 60000; ++step) {
    const void* key = keys[random() % keys.size()];
    if (random() % 3 == 0) {
      map.Erase(key);
      reference.erase(key);
    } else {
      const int value = static_cast<int>(random() % 1000);
      map.Insert(key, value);
      reference[key] = value;
    }
    if (step % 997 == 0 || step > 59000) {
      ASSERT_EQ(map.size(), reference.size()) << "step " << step;
      for (const void* probe : keys) {
        auto it = reference.find(probe);
        const int* found = map.Find(probe);
        if (it == reference.end()) {
          ASSERT_EQ(found, nullptr) << "step " << step;
        } else {
          ASSERT_NE(found, nullptr) << "step " << step;
          ASSERT_EQ(*found, it->second) << "step " << step;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln
