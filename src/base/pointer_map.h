#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

// A map from non-null pointers to small values: open addressing with linear
// probing and backward-shift deletion, so that inserting and erasing
// allocate nothing once the table has grown. The C API's handle registry
// keeps its live handles in these: a node-based map allocated a node for
// each of the three handles of every jitted call. Not thread-safe.
template <typename V>
class PointerMap {
 public:
  // Sets `key`'s value (`key` is not null).
  void Insert(const void* key, V value) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    size_t i = Home(key);
    while (slots_[i].key != nullptr && slots_[i].key != key) i = (i + 1) & Mask();
    if (slots_[i].key == nullptr) ++size_;
    slots_[i] = Slot{key, value};
  }
  // The value of `key`, or null; valid until the next Insert or Erase.
  const V* Find(const void* key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = Home(key); slots_[i].key != nullptr; i = (i + 1) & Mask()) {
      if (slots_[i].key == key) return &slots_[i].value;
    }
    return nullptr;
  }
  size_t size() const { return size_; }
  // Removes `key` if present.
  void Erase(const void* key) {
    if (slots_.empty()) return;
    size_t hole = Home(key);
    while (slots_[hole].key != key) {
      if (slots_[hole].key == nullptr) return;
      hole = (hole + 1) & Mask();
    }
    // Pull back later entries of the run whose home is not after the hole,
    // so that every entry stays reachable from its home without gaps.
    for (size_t j = (hole + 1) & Mask(); slots_[j].key != nullptr; j = (j + 1) & Mask()) {
      const size_t home = Home(slots_[j].key);
      const bool between = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!between) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].key = nullptr;
    --size_;
  }

 private:
  struct Slot {
    const void* key = nullptr;
    V value{};
  };
  size_t Mask() const { return slots_.size() - 1; }
  size_t Home(const void* key) const {
    // Fibonacci hashing: the product's top bits, as many as the table needs.
    const uint64_t hash = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) *
                          0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(hash >> (64 - bits_));
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    bits_ = old.empty() ? 6 : bits_ + 1;
    slots_.assign(size_t{1} << bits_, Slot{});
    size_ = 0;
    for (const Slot& slot : old) {
      if (slot.key != nullptr) Insert(slot.key, slot.value);
    }
  }

  std::vector<Slot> slots_;  // empty, or a power of two of them, at most half full
  size_t size_ = 0;
  int bits_ = 0;
};

}  // namespace kiln
