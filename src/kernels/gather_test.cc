// Box copies of 1-byte elements (pred, s8, u8): the byte dimension of such
// an element merges away, so a strided innermost dimension must still be
// copied element by element (found by tests/python/test_differential.py:
// pad and 2-d gathers of pred/s8/u8 wrote runs over their strides).
#include "kernels/gather.h"

#include <gtest/gtest.h>

#include <cstdint>
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

}  // namespace
}  // namespace kiln::kernels
