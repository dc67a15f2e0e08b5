// Temporary memory for kernels that is allocated once per thread and reused:
// a per-thread stack of blocks that grows to the largest demand it has seen
// and is then never freed, so a steady-state run allocates nothing. Arrays
// are released in reverse order of creation (they are scoped objects).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace kiln::kernels {

namespace scratch_internal {
struct Mark {
  size_t level;
  size_t used;
};
// Reserves `bytes` (64-byte aligned) on this thread's stack; `mark`
// receives the position to return to.
void* Push(size_t bytes, Mark& mark);
void Pop(const Mark& mark);
}  // namespace scratch_internal

// `count` uninitialized elements of a trivially copyable T, valid until the
// array goes out of scope; create and destroy on one thread.
template <typename T>
class ScratchArray {
  static_assert(std::is_trivially_copyable_v<T>, "scratch holds plain values");

 public:
  explicit ScratchArray(size_t count)
      : data_(static_cast<T*>(scratch_internal::Push(count * sizeof(T), mark_))), size_(count) {}
  ScratchArray(size_t count, T value) : ScratchArray(count) {
    for (size_t i = 0; i < count; ++i) data_[i] = value;
  }
  ~ScratchArray() { scratch_internal::Pop(mark_); }
  ScratchArray(const ScratchArray&) = delete;
  ScratchArray& operator=(const ScratchArray&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  operator std::span<T>() { return {data_, size_}; }              // NOLINT
  operator std::span<const T>() const { return {data_, size_}; }  // NOLINT

 private:
  scratch_internal::Mark mark_{};
  T* data_;
  size_t size_;
};

}  // namespace kiln::kernels
