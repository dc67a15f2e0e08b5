// A vector of trivially copyable elements that keeps up to N of them inline
// and goes to the heap only beyond that: kernels hold per-dimension indices
// and strides in it, so that running a program allocates nothing for arrays
// of ordinary rank.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>

namespace kiln {

template <typename T, size_t N = 8>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds plain values");

 public:
  SmallVector() = default;
  explicit SmallVector(size_t size, T value = T()) { assign(size, value); }
  SmallVector(std::span<const T> values) {  // NOLINT: implicit, as std::vector's range use
    reserve(values.size());
    if (!values.empty()) std::memcpy(data_, values.data(), values.size() * sizeof(T));
    size_ = values.size();
  }
  template <typename It, typename = decltype(*std::declval<It>())>
  SmallVector(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }
  SmallVector(const SmallVector& other) : SmallVector(std::span<const T>(other)) {}
  // Moving takes the heap block when there is one, else copies the inline
  // elements; noexcept, so that containers of structs holding one move them.
  SmallVector(SmallVector&& other) noexcept { *this = std::move(other); }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this == &other) return *this;
    if (other.heap_ != nullptr) {
      heap_ = std::move(other.heap_);
      data_ = heap_.get();
      capacity_ = other.capacity_;
    } else {
      heap_.reset();
      data_ = inline_;
      capacity_ = N;
      if (other.size_ > 0) std::memcpy(inline_, other.inline_, other.size_ * sizeof(T));
    }
    size_ = other.size_;
    other.data_ = other.inline_;
    other.capacity_ = N;
    other.size_ = 0;
    return *this;
  }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) {
      size_ = 0;
      reserve(other.size_);
      if (other.size_ > 0) std::memcpy(data_, other.data_, other.size_ * sizeof(T));
      size_ = other.size_;
    }
    return *this;
  }

  void assign(size_t size, T value) {
    size_ = 0;
    reserve(size);
    std::fill_n(data_, size, value);
    size_ = size;
  }
  void resize(size_t size, T value = T()) {
    reserve(size);
    if (size > size_) std::fill_n(data_ + size_, size - size_, value);
    size_ = size;
  }
  void push_back(T value) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data_[size_++] = value;
  }
  void reserve(size_t capacity) {
    if (capacity <= capacity_) return;
    auto grown = std::make_unique<T[]>(capacity);
    if (size_ > 0) std::memcpy(grown.get(), data_, size_ * sizeof(T));
    heap_ = std::move(grown);
    data_ = heap_.get();
    capacity_ = capacity;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  operator std::span<T>() { return {data_, size_}; }              // NOLINT
  operator std::span<const T>() const { return {data_, size_}; }  // NOLINT

 private:
  T inline_[N];
  std::unique_ptr<T[]> heap_;
  T* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = N;
};

}  // namespace kiln
