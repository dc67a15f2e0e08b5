// Sort kernels: keys are loaded per slice into 64-bit values whose C++
// order is the key's order, a permutation is sorted by them with
// std::stable_sort, and every operand is gathered through the permutation.
#include "kernels/sort.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

#include "base/small_vector.h"
#include "kernels/parallel.h"
#include "kernels/scratch.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

// How a loaded key's 64 bits compare.
enum class Rep : uint8_t { kSigned, kUnsigned, kDouble };

// A slice: `length` elements `step` apart from `base` (flat indexes).
struct Slice {
  int64_t base;
  int64_t step;
  int64_t length;
};

struct Layout {
  int64_t lines = 1;   // product of the dimensions before the sorted one
  int64_t length = 1;  // the sorted dimension
  int64_t inner = 1;   // product of the dimensions after it

  int64_t slices() const { return lines * inner; }
  Slice slice(int64_t s) const { return {(s / inner) * length * inner + s % inner, inner, length}; }
};

Layout LayoutOf(std::span<const int64_t> dims, int64_t dimension) {
  Layout layout;
  for (size_t d = 0; d < dims.size(); ++d) {
    const auto k = static_cast<int64_t>(d);
    if (k < dimension) layout.lines *= dims[d];
    if (k == dimension) layout.length = dims[d];
    if (k > dimension) layout.inner *= dims[d];
  }
  return layout;
}

// The total order of a float as a signed integer (as the compare kernel).
template <typename C>
int64_t TotalOrderKey(C x) {
  using Bits = std::conditional_t<sizeof(C) == 8, int64_t, int32_t>;
  Bits bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits < 0 ? static_cast<Bits>(bits ^ std::numeric_limits<Bits>::max()) : bits;
}

template <typename T>
uint64_t LoadOne(T value, SortKeyKind kind, SortKeyPart part) {
  if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) {
    return static_cast<uint64_t>(value);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(value));
  } else if constexpr (kIsFloat<T>) {
    using C = ComputeType<T>;
    C x = static_cast<C>(value);
    if (kind == SortKeyKind::kNative) return std::bit_cast<uint64_t>(static_cast<double>(x));
    if (kind == SortKeyKind::kCanonicalTotalOrder) {
      if (x != x) x = std::numeric_limits<C>::quiet_NaN();
      if (x == C(0)) x = C(0);
    }
    return static_cast<uint64_t>(TotalOrderKey(x));
  } else {
    // Complex: one part (Sort rejects whole complex keys).
    const auto component = part == SortKeyPart::kImag ? value.imag() : value.real();
    return LoadOne(component, kind, SortKeyPart::kWhole);
  }
}

Rep RepOf(ElementType type, SortKeyKind kind) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kU1:
    case ElementType::kU2:
    case ElementType::kU4:
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64: return Rep::kUnsigned;
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64:
    case ElementType::kC64:
    case ElementType::kC128: return kind == SortKeyKind::kNative ? Rep::kDouble : Rep::kSigned;
    default: return Rep::kSigned;
  }
}

// Loads key `key` of `slice` into keys[0..length).
Status LoadKeys(const SortOperand& operand, const SortKey& key, const Slice& slice,
                uint64_t* keys) {
  return DispatchType(SubByteStorageType(operand.type), [&]<typename T>() {
    const T* data = static_cast<const T*>(operand.in);
    for (int64_t i = 0; i < slice.length; ++i) {
      keys[i] = LoadOne(data[slice.base + i * slice.step], key.kind, key.part);
    }
  });
}

template <Rep kRep>
bool Less(uint64_t a, uint64_t b) {
  if constexpr (kRep == Rep::kSigned) return static_cast<int64_t>(a) < static_cast<int64_t>(b);
  if constexpr (kRep == Rep::kUnsigned) return a < b;
  return std::bit_cast<double>(a) < std::bit_cast<double>(b);
}

bool LessDynamic(Rep rep, uint64_t a, uint64_t b) {
  switch (rep) {
    case Rep::kSigned: return Less<Rep::kSigned>(a, b);
    case Rep::kUnsigned: return Less<Rep::kUnsigned>(a, b);
    case Rep::kDouble: return Less<Rep::kDouble>(a, b);
  }
  return false;
}

// out[slice i] = in[slice permutation[i]] for every operand.
void Gather(std::span<const SortOperand> operands, const Slice& slice,
            std::span<const int64_t> permutation) {
  for (const SortOperand& operand : operands) {
    const size_t bytes = GetElementTypeInfo(operand.type).storage_bytes;
    auto gather = [&]<typename U>() {
      const U* in = static_cast<const U*>(operand.in);
      U* out = static_cast<U*>(operand.out);
      for (int64_t i = 0; i < slice.length; ++i) {
        out[slice.base + i * slice.step] =
            in[slice.base + permutation[static_cast<size_t>(i)] * slice.step];
      }
    };
    switch (bytes) {
      case 1: gather.operator()<uint8_t>(); break;
      case 2: gather.operator()<uint16_t>(); break;
      case 4: gather.operator()<uint32_t>(); break;
      case 8: gather.operator()<uint64_t>(); break;
      default: {
        const auto* in = static_cast<const uint8_t*>(operand.in);
        auto* out = static_cast<uint8_t*>(operand.out);
        for (int64_t i = 0; i < slice.length; ++i) {
          const int64_t from = slice.base + permutation[static_cast<size_t>(i)] * slice.step;
          std::memcpy(out + (slice.base + i * slice.step) * static_cast<int64_t>(bytes),
                      in + from * static_cast<int64_t>(bytes), bytes);
        }
      }
    }
  }
}

// A stable bottom-up merge sort (insertion sort of short runs, then merges)
// that keeps every index in range whatever `less` answers, even if it is not
// a strict weak order or not deterministic, which std::stable_sort does not
// promise.
template <typename T, typename Less>
void MergeSort(T* items, T* buffer, size_t n, Less less) {
  constexpr size_t kRun = 16;
  for (size_t start = 0; start < n; start += kRun) {
    const size_t end = std::min(start + kRun, n);
    for (size_t i = start + 1; i < end; ++i) {
      const T value = items[i];
      size_t j = i;
      while (j > start && less(value, items[j - 1])) {
        items[j] = items[j - 1];
        --j;
      }
      items[j] = value;
    }
  }
  T* from = items;
  T* to = buffer;
  for (size_t width = kRun; width < n; width *= 2) {
    for (size_t low = 0; low < n; low += 2 * width) {
      const size_t middle = std::min(low + width, n);
      const size_t high = std::min(low + 2 * width, n);
      size_t i = low;
      size_t j = middle;
      size_t k = low;
      while (i < middle && j < high) {
        to[k++] = less(from[j], from[i]) ? from[j++] : from[i++];
      }
      while (i < middle) to[k++] = from[i++];
      while (j < high) to[k++] = from[j++];
    }
    std::swap(from, to);
  }
  if (from != items) std::copy(from, from + n, items);
}

// A key with the position it came from.
struct KeyIndex {
  uint64_t key;
  int64_t index;
};

// Sorts (key, index) pairs by key alone: one key, the common case.
template <Rep kRep>
void SortPairs(KeyIndex* pairs, KeyIndex* buffer, size_t n, bool descending) {
  if (descending) {
    MergeSort(pairs, buffer, n,
              [](const KeyIndex& a, const KeyIndex& b) { return Less<kRep>(b.key, a.key); });
  } else {
    MergeSort(pairs, buffer, n,
              [](const KeyIndex& a, const KeyIndex& b) { return Less<kRep>(a.key, b.key); });
  }
}

Status CheckOperands(std::span<const SortOperand> operands, std::span<const int64_t> dims,
                     int64_t dimension) {
  if (operands.empty()) return InvalidArgument("sort needs at least one operand");
  if (dimension < 0 || dimension >= static_cast<int64_t>(dims.size())) {
    return InvalidArgument("sort dimension ", dimension, " is out of range for rank ", dims.size());
  }
  return Status::Ok();
}

}  // namespace

Status Sort(std::span<const SortOperand> operands, std::span<const int64_t> dims, int64_t dimension,
            std::span<const SortKey> keys) {
  KILN_RETURN_IF_ERROR(CheckOperands(operands, dims, dimension));
  if (keys.empty()) return InvalidArgument("sort needs at least one key");
  SmallVector<Rep> reps;
  for (const SortKey& key : keys) {
    if (key.operand >= operands.size()) return InvalidArgument("sort key of a missing operand");
    const ElementType type = operands[key.operand].type;
    const bool complex = type == ElementType::kC64 || type == ElementType::kC128;
    if (complex != (key.part != SortKeyPart::kWhole)) {
      return InvalidArgument("a sort key compares the real or imaginary part of complex "
                             "operands, and the whole of others");
    }
    reps.push_back(RepOf(type, key.kind));
  }
  const Layout layout = LayoutOf(dims, dimension);
  if (layout.slices() == 0 || layout.length == 0) return Status::Ok();
  const int64_t n = layout.length;
  const int64_t cost = n * (std::bit_width(static_cast<uint64_t>(n)) + 1) * 4;
  Status status = Status::Ok();
  std::mutex mutex;
  ParallelFor(layout.slices(), cost, [&](int64_t begin, int64_t end) {
    const auto length = static_cast<size_t>(n);
    ScratchArray<uint64_t> loaded(length * keys.size());
    ScratchArray<KeyIndex> pairs(keys.size() == 1 ? 2 * length : 0);
    ScratchArray<int64_t> permutation(keys.size() == 1 ? length : 2 * length);
    for (int64_t s = begin; s < end; ++s) {
      const Slice slice = layout.slice(s);
      for (size_t k = 0; k < keys.size(); ++k) {
        Status loaded_status = LoadKeys(operands[keys[k].operand], keys[k], slice,
                                        loaded.data() + k * static_cast<size_t>(n));
        if (!loaded_status.ok()) {
          std::lock_guard lock(mutex);
          status = loaded_status;
          return;
        }
      }
      if (keys.size() == 1) {
        for (size_t i = 0; i < length; ++i) pairs[i] = {loaded[i], static_cast<int64_t>(i)};
        KeyIndex* buffer = pairs.data() + length;
        const bool descending = keys[0].descending;
        switch (reps[0]) {
          case Rep::kSigned:
            SortPairs<Rep::kSigned>(pairs.data(), buffer, length, descending);
            break;
          case Rep::kUnsigned:
            SortPairs<Rep::kUnsigned>(pairs.data(), buffer, length, descending);
            break;
          case Rep::kDouble:
            SortPairs<Rep::kDouble>(pairs.data(), buffer, length, descending);
            break;
        }
        for (size_t i = 0; i < length; ++i) permutation[i] = pairs[i].index;
      } else {
        for (int64_t i = 0; i < n; ++i) permutation[static_cast<size_t>(i)] = i;
        MergeSort(permutation.data(), permutation.data() + length, length,
                  [&](int64_t a, int64_t b) {
                    for (size_t k = 0; k < keys.size(); ++k) {
                      const uint64_t* column = loaded.data() + k * static_cast<size_t>(n);
                      uint64_t x = column[a];
                      uint64_t y = column[b];
                      if (keys[k].descending) std::swap(x, y);
                      if (LessDynamic(reps[k], x, y)) return true;
                      if (LessDynamic(reps[k], y, x)) return false;
                    }
                    return false;
                  });
      }
      Gather(operands, slice, std::span<const int64_t>(permutation.data(), length));
    }
  });
  return status;
}

Status SortWithComparator(std::span<const SortOperand> operands, std::span<const int64_t> dims,
                          int64_t dimension, const SortLess& less) {
  KILN_RETURN_IF_ERROR(CheckOperands(operands, dims, dimension));
  const Layout layout = LayoutOf(dims, dimension);
  Status status = Status::Ok();
  for (int64_t s = 0; s < layout.slices(); ++s) {
    const Slice slice = layout.slice(s);
    const auto length = static_cast<size_t>(slice.length);
    ScratchArray<int64_t> permutation(2 * length);
    for (int64_t i = 0; i < slice.length; ++i) permutation[static_cast<size_t>(i)] = i;
    // After an error every comparison is false, which ends the sort quickly.
    MergeSort(permutation.data(), permutation.data() + length, length, [&](int64_t a, int64_t b) {
      if (!status.ok()) return false;
      StatusOr<bool> result = less(slice.base + a * slice.step, slice.base + b * slice.step);
      if (!result.ok()) {
        status = result.status();
        return false;
      }
      return *result;
    });
    KILN_RETURN_IF_ERROR(status);
    Gather(operands, slice, std::span<const int64_t>(permutation.data(), length));
  }
  return Status::Ok();
}

}  // namespace kiln::kernels
