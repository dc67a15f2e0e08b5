// Box copies of 1-byte elements (pred, s8, u8): the byte dimension of such
// an element merges away, so a strided innermost dimension must still be
// copied element by element (found by tests/python/test_differential.py:
// pad and 2-d gathers of pred/s8/u8 wrote runs over their strides).
#include "kernels/gather.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace kiln::kernels {
namespace {

TEST(CopyBox, OneByteElementsWithStridedDestination) {
  const std::vector<uint8_t> src = {1, 2, 3};
  std::vector<uint8_t> dst(6, 0);
  const std::vector<int64_t> dims = {3}, src_strides = {1}, dst_strides = {2};
  CopyBox(1, dims, src.data(), src_strides, dst.data(), dst_strides);
  EXPECT_EQ(dst, (std::vector<uint8_t>{1, 0, 2, 0, 3, 0}));
}

TEST(CopyBox, OneByteElementsWithStridedSourceIn2d) {
  // A 2x2 box read from the even columns of a 2x4 source.
  const std::vector<uint8_t> src = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<uint8_t> dst(4, 0);
  const std::vector<int64_t> dims = {2, 2}, src_strides = {4, 2}, dst_strides = {2, 1};
  CopyBox(1, dims, src.data(), src_strides, dst.data(), dst_strides);
  EXPECT_EQ(dst, (std::vector<uint8_t>{1, 3, 5, 7}));
}

TEST(CopyBox, FourByteElementsStillCopyWholeElements) {
  const std::vector<int32_t> src = {10, -20, 30};
  std::vector<int32_t> dst(6, 0);
  const std::vector<int64_t> dims = {3}, src_strides = {1}, dst_strides = {2};
  CopyBox(4, dims, src.data(), src_strides, dst.data(), dst_strides);
  EXPECT_EQ(dst, (std::vector<int32_t>{10, 0, -20, 0, 30, 0}));
}

// Windows of two elements at odd element offsets: the window is one run of
// 2, 4 or 8 bytes, copied as one move. It was copied as a word at index
// start * bytes / run, so element 1 of an f32 array became element 0 (a
// jax.vjp of x.at[1:].add(...) read the wrong rows).
template <typename T>
void ExpectPairsGatheredFromOddStarts() {
  IndexedWindows g;
  g.big_dims = {5};
  g.big_strides = {1};
  g.window_sizes = {2};
  g.index_map = {0};
  g.index_vector_stride = 1;
  g.batch = {{3, 2, 1, -1}};  // three windows, one index each
  g.window = {{2, 1, 1}};
  const std::vector<T> operand = {10, 11, 12, 13, 14};
  const std::vector<int32_t> starts = {1, 3, 0};
  std::vector<T> out(6, 0);
  ASSERT_TRUE(
      Gather(sizeof(T), g, operand.data(), ElementType::kS32, starts.data(), out.data()).ok());
  EXPECT_EQ(out, (std::vector<T>{11, 12, 13, 14, 10, 11})) << sizeof(T) << "-byte elements";
}

TEST(Gather, RunsOfSeveralElementsStartAtAnyElement) {
  ExpectPairsGatheredFromOddStarts<uint8_t>();
  ExpectPairsGatheredFromOddStarts<uint16_t>();
  ExpectPairsGatheredFromOddStarts<float>();
}

// One-element scatters (segment_sum): the sums are the serial loop's,
// rounding for rounding, for s32 indices (read typed) and s64 ones (read
// through the switch), with indices out of range skipped.
template <typename I>
void ExpectOneElementScatterAddIsSerial() {
  const int64_t count = 200000, bins = 37;
  IndexedWindows g;
  g.big_dims = {bins};
  g.big_strides = {1};
  g.window_sizes = {1};
  g.index_map = {0};
  g.index_vector_stride = 1;
  g.batch = {{count, 1, 1, -1}};
  std::vector<I> index(static_cast<size_t>(count));
  std::vector<float> updates(static_cast<size_t>(count));
  uint32_t state = 1;
  for (int64_t i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    index[static_cast<size_t>(i)] = static_cast<I>(static_cast<int64_t>(state >> 20) % (bins + 3) -
                                                   1);
    updates[static_cast<size_t>(i)] = static_cast<float>(state >> 8) * 1e-3f;
  }
  std::vector<float> want(static_cast<size_t>(bins), 0.5f), got = want;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t at = static_cast<int64_t>(index[static_cast<size_t>(i)]);
    if (at >= 0 && at < bins) want[static_cast<size_t>(at)] += updates[static_cast<size_t>(i)];
  }
  const ElementType type = sizeof(I) == 4 ? ElementType::kS32 : ElementType::kS64;
  ASSERT_TRUE(Scatter(ElementType::kF32, ReduceOp::kAdd, g, type, index.data(), updates.data(),
                      got.data())
                  .ok());
  EXPECT_EQ(got, want);
}

// GatherRun (take_along_axis's rows in fused loops; AVX-512 gathers where
// the CPU has them): every run length from 0 to 40 (whole vectors and
// masked tails), indices below 0 and above the limit clamped, a stride
// along the run and between indexed elements, with and without a mask and
// either fill polarity, against the loop it stands for.
template <typename T>
void CheckGatherRun() {
  std::vector<T> row(4000);
  for (size_t k = 0; k < row.size(); ++k) row[k] = static_cast<T>(k * 2654435761u % 100003);
  const T fill = static_cast<T>(424242);
  for (const auto& [stride, gather_stride, limit] :
       {std::tuple<int32_t, int32_t, int32_t>{0, 1, 99}, {1, 1, 99}, {3, 7, 90}, {0, 37, 50}}) {
    for (int64_t n = 0; n <= 40; ++n) {
      std::vector<int32_t> idx(static_cast<size_t>(n));
      std::vector<uint8_t> mask_bytes(static_cast<size_t>(n) + 1);
      for (int64_t k = 0; k < n; ++k) {
        idx[static_cast<size_t>(k)] = static_cast<int32_t>(k * 37 % 130) - 15;
        mask_bytes[static_cast<size_t>(k)] = k % 3 == 0 ? 0 : 1;
      }
      bool mask[41];
      for (size_t k = 0; k < mask_bytes.size(); ++k) mask[k] = mask_bytes[k] != 0;
      for (const int masked : {0, 1, 2}) {  // none, fill where false, fill where true
        std::vector<T> out(static_cast<size_t>(n) + 1, T{7});
        GatherRun(sizeof(T), row.data(), stride, idx.data(), gather_stride, limit,
                  masked == 0 ? nullptr : mask, masked == 2, &fill, out.data(), n);
        for (int64_t k = 0; k < n; ++k) {
          const int32_t index = std::clamp(idx[static_cast<size_t>(k)], 0, limit);
          T expected = row[static_cast<size_t>(k * stride + index * gather_stride)];
          if (masked != 0 && mask[k] == (masked == 2)) expected = fill;
          ASSERT_EQ(out[static_cast<size_t>(k)], expected)
              << sizeof(T) << " bytes, n " << n << ", k " << k << ", masked " << masked;
        }
        ASSERT_EQ(out[static_cast<size_t>(n)], T{7}) << "wrote past the run, n " << n;
      }
    }
  }
}

TEST(Gather, RunsWithOneIndexPerElementMatchTheLoop) {
  CheckGatherRun<uint32_t>();
  CheckGatherRun<uint64_t>();
}

TEST(Scatter, ManyOneElementUpdatesSumAsTheSerialLoop) {
  ExpectOneElementScatterAddIsSerial<int32_t>();
  ExpectOneElementScatterAddIsSerial<int64_t>();
}

}  // namespace
}  // namespace kiln::kernels
