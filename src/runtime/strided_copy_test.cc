#include "runtime/strided_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "base/element_type.h"

namespace kiln::runtime {
namespace {

// Reference: element-by-element copy through explicit index arithmetic.
std::vector<int32_t> Gather(const int32_t* base, std::vector<int64_t> dims,
                            std::vector<int64_t> byte_strides) {
  std::vector<int32_t> out;
  std::vector<int64_t> index(dims.size(), 0);
  int64_t total = 1;
  for (int64_t dim : dims) total *= dim;
  for (int64_t n = 0; n < total; ++n) {
    int64_t offset = 0;
    for (size_t k = 0; k < dims.size(); ++k) offset += index[k] * byte_strides[k];
    out.push_back(*reinterpret_cast<const int32_t*>(reinterpret_cast<const char*>(base) + offset));
    for (size_t k = dims.size(); k-- > 0;) {
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

TEST(StridedCopyTest, TransposedNegativeAndBroadcastStrides) {
  std::vector<int32_t> source(24);
  std::iota(source.begin(), source.end(), 0);
  struct Case {
    std::vector<int64_t> dims;
    std::vector<int64_t> strides;
    int64_t start;  // element offset of the array's origin
  };
  const Case cases[] = {
      {{4, 6}, {24, 4}, 0},         // dense
      {{6, 4}, {4, 24}, 0},         // transposed
      {{2, 3}, {48, -8}, 5},        // every other row, reversed every other column
      {{3, 5}, {0, 4}, 2},          // broadcast along the first dimension
      {{2, 3, 4}, {48, 16, 4}, 0},  // coalescable
      {{}, {}, 7},                  // scalar
  };
  for (const Case& c : cases) {
    const int32_t* origin = source.data() + c.start;
    std::vector<int32_t> expected = Gather(origin, c.dims, c.strides);
    std::vector<int32_t> actual(expected.size(), -1);
    CopyStrided(actual.data(), DenseByteStrides(c.dims, 4), origin, c.strides, c.dims, 4);
    EXPECT_EQ(actual, expected);
  }
}

TEST(StridedCopyTest, ZeroSizeCopiesNothing) {
  int32_t sentinel = 42;
  std::vector<int64_t> dims = {3, 0};
  CopyStrided(&sentinel, DenseByteStrides(dims, 4), nullptr, DenseByteStrides(dims, 4), dims, 4);
  EXPECT_EQ(sentinel, 42);
}

TEST(StridedCopyTest, ExtentAndDensity) {
  std::vector<int64_t> dims = {2, 3};
  ByteExtent dense = StridedExtent(dims, DenseByteStrides(dims, 4), 4);
  EXPECT_EQ(dense.lowest, 0);
  EXPECT_EQ(dense.highest, 24);
  ByteExtent reversed = StridedExtent(dims, std::vector<int64_t>{12, -4}, 4);
  EXPECT_EQ(reversed.lowest, -8);
  EXPECT_EQ(reversed.highest, 16);
  EXPECT_TRUE(StridedExtent(dims, std::vector<int64_t>{INT64_MAX / 2, 4}, 4).overflow);
  EXPECT_TRUE(IsDenseRowMajor(dims, DenseByteStrides(dims, 4), 4));
  EXPECT_FALSE(IsDenseRowMajor(dims, std::vector<int64_t>{4, 8}, 4));
}

}  // namespace
}  // namespace kiln::runtime
