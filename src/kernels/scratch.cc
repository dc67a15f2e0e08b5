#include "kernels/scratch.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace kiln::kernels::scratch_internal {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kFirstBlock = size_t{1} << 16;

struct Block {
  std::unique_ptr<uint8_t[]> storage;
  uint8_t* base = nullptr;  // aligned
  size_t size = 0;
};

// This thread's blocks; `level` is the block being filled, `used` its top.
struct Stack {
  std::vector<Block> blocks;
  size_t level = 0;
  size_t used = 0;
};

thread_local Stack stack;

void Allocate(Block& block, size_t size) {
  block.storage.reset(new uint8_t[size + kAlignment]);
  const auto address = reinterpret_cast<uintptr_t>(block.storage.get());
  block.base = block.storage.get() + (kAlignment - address % kAlignment) % kAlignment;
  block.size = size;
}

}  // namespace

void* Push(size_t bytes, Mark& mark) {
  mark = {stack.level, stack.used};
  bytes = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (stack.blocks.empty()) {
    stack.blocks.emplace_back();
    Allocate(stack.blocks[0], std::max(kFirstBlock, bytes));
  }
  if (stack.blocks[stack.level].size - stack.used < bytes) {
    // The next block up is free (nothing above the current top is live):
    // use it, growing it when too small.
    ++stack.level;
    stack.used = 0;
    if (stack.level == stack.blocks.size()) stack.blocks.emplace_back();
    Block& next = stack.blocks[stack.level];
    if (next.size < bytes) {
      Allocate(next, std::max(bytes, stack.blocks[stack.level - 1].size * 2));
    }
  }
  void* data = stack.blocks[stack.level].base + stack.used;
  stack.used += bytes;
  return data;
}

void Pop(const Mark& mark) {
  stack.level = mark.level;
  stack.used = mark.used;
}

}  // namespace kiln::kernels::scratch_internal
