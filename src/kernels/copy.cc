#include "kernels/copy.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/small_vector.h"
#include "kernels/gather.h"
#include "kernels/parallel.h"

namespace kiln::kernels {
namespace {

struct Bytes16 {
  uint64_t low, high;
};

// Copies the rows [begin, end) of the array viewed as rows of its last
// dimension; each row is a strided gather.
template <typename T>
void CopyRows(std::span<const int64_t> dims, const uint8_t* src, std::span<const int64_t> strides,
              uint8_t* dst, int64_t begin, int64_t end) {
  const size_t rank = dims.size();
  const int64_t inner = dims[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  SmallVector<int64_t> index(rank - 1, 0);
  // Position of row `begin`.
  int64_t row = begin;
  int64_t offset = 0;
  for (size_t k = rank - 1; k-- > 0;) {
    index[k] = row % dims[k];
    row /= dims[k];
    offset += index[k] * strides[k];
  }
  T* out = reinterpret_cast<T*>(dst) + begin * inner;
  const T* base = reinterpret_cast<const T*>(src);
  for (int64_t r = begin; r < end; ++r) {
    const T* in = base + offset;
    if (inner_stride == 1) {
      std::memcpy(out, in, sizeof(T) * static_cast<size_t>(inner));
    } else if (inner_stride == 0) {
      for (int64_t i = 0; i < inner; ++i) out[i] = in[0];
    } else {
      for (int64_t i = 0; i < inner; ++i) out[i] = in[i * inner_stride];
    }
    out += inner;
    // Advance the outer index like an odometer.
    for (size_t k = rank - 1; k-- > 0;) {
      offset += strides[k];
      if (++index[k] < dims[k]) break;
      offset -= strides[k] * dims[k];
      index[k] = 0;
    }
  }
}

// A transpose whose innermost output dimension is strided in the source
// while another dimension, `j`, is contiguous there. Copied row by row,
// each source cache line would be loaded once per element read from it (a
// 8x56x56x64 -> 64x56x56x8 transpose moved about 100 MB between the
// caches). Instead an item takes a block of consecutive j (256 bytes of
// the source: four cache lines per position) and a chunk of the positions
// after j in the output, which are consecutive there: per position it
// reads the block and writes one element of each of the block's output
// runs, so every source line is read once and every output run written in
// order. With one line per position rather than four, the reads missed
// the caches: the hardware prefetchers did not follow them. Items are (the
// dimensions before j, the chunk, the block), the block fastest.
constexpr int64_t kChunk = 1024;
constexpr int64_t kSpan = 64;

template <typename T>
constexpr int64_t BlockOf() {
  return std::max<int64_t>(4, 256 / static_cast<int64_t>(sizeof(T)));
}

template <typename T>
void CopyBlocksAlong(std::span<const int64_t> dims, const uint8_t* src,
                     std::span<const int64_t> strides, uint8_t* dst, size_t j, int64_t begin,
                     int64_t end) {
  constexpr int64_t kBlock = BlockOf<T>();
  const size_t rank = dims.size();
  int64_t after = 1;  // positions after j: the output runs' length
  for (size_t k = j + 1; k < rank; ++k) after *= dims[k];
  const int64_t blocks = (dims[j] + kBlock - 1) / kBlock;
  const int64_t chunks = (after + kChunk - 1) / kChunk;
  const T* base = reinterpret_cast<const T*>(src);
  T* out_base = reinterpret_cast<T*>(dst);
  SmallVector<int64_t> index(rank, 0);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t j0 = item % blocks * kBlock;
    const int64_t t0 = item / blocks % chunks * kChunk, t1 = std::min(after, t0 + kChunk);
    const int64_t count = std::min(kBlock, dims[j] - j0);
    // Positions before j (`outer`, in the output's order), then after it.
    const int64_t outer = item / blocks / chunks;
    int64_t rest = outer, in_offset = j0;
    for (size_t k = j; k-- > 0;) {
      in_offset += rest % dims[k] * strides[k];
      rest /= dims[k];
    }
    rest = t0;
    for (size_t k = rank; k-- > j + 1;) {
      index[k] = rest % dims[k];
      rest /= dims[k];
      in_offset += index[k] * strides[k];
    }
    // kSpan positions at a time through `tile` (block-major), whose rows
    // are then copied out whole: stores straight into the output runs,
    // `after` elements apart, fell into a few cache sets and evicted each
    // other.
    T tile[kBlock * kSpan];
    T* out = out_base + (outer * dims[j] + j0) * after;
    for (int64_t t = t0; t < t1; t += kSpan) {
      const int64_t span = std::min(kSpan, t1 - t);
      for (int64_t u = 0; u < span; ++u) {
        const T* in = base + in_offset;
        for (int64_t b = 0; b < count; ++b) tile[b * kSpan + u] = in[b];
        for (size_t k = rank; k-- > j + 1;) {
          in_offset += strides[k];
          if (++index[k] < dims[k]) break;
          in_offset -= strides[k] * dims[k];
          index[k] = 0;
        }
      }
      for (int64_t b = 0; b < count; ++b) {
        std::memcpy(out + b * after + t, tile + b * kSpan, sizeof(T) * static_cast<size_t>(span));
      }
    }
  }
}

// The dimension CopyBlocksAlong takes: one other than the innermost that is
// contiguous in the source and at least a cache line long, when the
// innermost is strided; else -1.
int64_t ContiguousOuterDimension(std::span<const int64_t> dims, std::span<const int64_t> strides,
                                 size_t element_bytes) {
  const size_t last = dims.size() - 1;
  if (dims.size() < 2 || strides[last] == 1 || strides[last] == 0) return -1;
  for (size_t k = 0; k < last; ++k) {
    if (strides[k] == 1 && dims[k] * static_cast<int64_t>(element_bytes) >= 64) {
      return static_cast<int64_t>(k);
    }
  }
  return -1;
}

}  // namespace

void DenseStrides(std::span<const int64_t> dims, std::span<int64_t> strides) {
  int64_t stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    strides[k] = stride;
    stride *= dims[k];
  }
}

void CopyBytes(void* dst, const void* src, size_t bytes) {
  // Blocks of 64 KiB, a unit of cost per 32 bytes (as CopyStrided counts
  // in-order rows): below a few hundred KiB one thread does it all.
  constexpr size_t kBlock = 64 * 1024;
  const auto blocks = static_cast<int64_t>((bytes + kBlock - 1) / kBlock);
  if (blocks <= 1) {
    if (bytes > 0) std::memcpy(dst, src, bytes);
    return;
  }
  ParallelFor(blocks, kBlock / 32, [&](int64_t begin, int64_t end) {
    const size_t from = static_cast<size_t>(begin) * kBlock;
    const size_t to = std::min(bytes, static_cast<size_t>(end) * kBlock);
    std::memcpy(static_cast<uint8_t*>(dst) + from, static_cast<const uint8_t*>(src) + from,
                to - from);
  });
}

void CopyStrided(size_t element_bytes, std::span<const int64_t> dims, const void* src,
                 std::span<const int64_t> src_strides, void* dst) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (count == 0) return;
  if (dims.empty()) {
    std::memcpy(dst, src, element_bytes);
    return;
  }
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  // One element everywhere (a broadcast of a scalar): memset or doubling
  // copies, in blocks of 64 KB, counted as the copies below count.
  if (std::all_of(src_strides.begin(), src_strides.end(), [](int64_t s) { return s == 0; })) {
    const auto bytes = static_cast<int64_t>(element_bytes);
    const int64_t block = std::max<int64_t>((int64_t{64} << 10) / bytes, 1);
    ParallelFor((count + block - 1) / block, block * bytes / 32, [&](int64_t begin, int64_t end) {
      const int64_t first = begin * block;
      Fill(element_bytes, in, out + first * bytes, std::min(end * block, count) - first);
    });
    return;
  }
  const int64_t rows = count / dims.back();
  const int64_t along = ContiguousOuterDimension(dims, src_strides, element_bytes);
  auto run = [&]<typename T>() {
    if (along >= 0) {
      constexpr int64_t kBlock = BlockOf<T>();
      const auto j = static_cast<size_t>(along);
      int64_t after = 1;
      for (size_t k = j + 1; k < dims.size(); ++k) after *= dims[k];
      const int64_t items = count / dims[j] / after * ((dims[j] + kBlock - 1) / kBlock) *
                            ((after + kChunk - 1) / kChunk);
      ParallelFor(items, kBlock * std::min(after, kChunk), [&](int64_t begin, int64_t end) {
        CopyBlocksAlong<T>(dims, in, src_strides, out, j, begin, end);
      });
      return;
    }
    // Rows read in order or repeating one element move at memory speed:
    // about 0.05 ns an element on a Zen 5 against the unit ParallelFor's
    // cost counts (a few elementwise ops), so they count a unit per 32
    // bytes. Splitting a 512 KB fill over 2 cores took 17 us against 6.7
    // on one: the workers' wake-up and the consumer's reads of lines the
    // other core wrote cost more than the copy.
    const int64_t inner = src_strides.back();
    const int64_t row_cost = inner == 0 || inner == 1
                                 ? std::max<int64_t>(dims.back() * static_cast<int64_t>(sizeof(T)) /
                                                         32,
                                                     1)
                                 : dims.back();
    ParallelFor(rows, row_cost, [&](int64_t begin, int64_t end) {
      CopyRows<T>(dims, in, src_strides, out, begin, end);
    });
  };
  switch (element_bytes) {
    case 1: run.operator()<uint8_t>(); return;
    case 2: run.operator()<uint16_t>(); return;
    case 4: run.operator()<uint32_t>(); return;
    case 8: run.operator()<uint64_t>(); return;
    case 16: run.operator()<Bytes16>(); return;
    default: break;
  }
  // Other sizes: treat each element as `element_bytes` bytes with an extra
  // innermost dimension.
  SmallVector<int64_t> byte_dims(dims.begin(), dims.end());
  SmallVector<int64_t> byte_strides;
  for (int64_t s : src_strides) byte_strides.push_back(s * static_cast<int64_t>(element_bytes));
  byte_dims.push_back(static_cast<int64_t>(element_bytes));
  byte_strides.push_back(1);
  CopyStrided(1, byte_dims, src, byte_strides, dst);
}

// PackBits/UnpackBits copy a wide element's low bytes: its value on a
// little-endian host, the only kind Kiln builds for.
static_assert(std::endian::native == std::endian::little);

namespace {

uint64_t LowBits(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

// A field of `bits` bits as its one-byte storage.
uint8_t StoreByte(uint64_t field, BitField type) {
  auto value = static_cast<uint8_t>(field & LowBits(type.bits));
  if (type.sign_extended && ((value >> (type.bits - 1)) & 1) != 0) {
    value |= static_cast<uint8_t>(~LowBits(type.bits));
  }
  return value;
}

}  // namespace

void PackBits(BitField narrow, const uint8_t* src, BitField wide, void* dst, int64_t count) {
  const int ratio = wide.bits / narrow.bits;
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t j = 0; j < count; ++j) {
    uint64_t value = 0;
    for (int i = 0; i < ratio; ++i) {
      value |= (uint64_t{src[j * ratio + i]} & LowBits(narrow.bits)) << (i * narrow.bits);
    }
    if (wide.bits < 8) {
      out[j] = StoreByte(value, wide);
    } else {
      std::memcpy(out + j * static_cast<int64_t>(wide.storage_bytes), &value, wide.storage_bytes);
    }
  }
}

void UnpackBits(BitField wide, const void* src, BitField narrow, uint8_t* dst, int64_t count) {
  const int ratio = wide.bits / narrow.bits;
  const auto* in = static_cast<const uint8_t*>(src);
  for (int64_t j = 0; j < count; ++j) {
    uint64_t value = 0;
    std::memcpy(&value, in + j * static_cast<int64_t>(wide.storage_bytes), wide.storage_bytes);
    value &= LowBits(wide.bits);
    for (int i = 0; i < ratio; ++i) {
      dst[j * ratio + i] = StoreByte(value >> (i * narrow.bits), narrow);
    }
  }
}

}  // namespace kiln::kernels
