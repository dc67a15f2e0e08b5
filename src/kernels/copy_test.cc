// CopyStrided against element-by-element index arithmetic, for the
// transposes it copies a source cache line at a time (an outer dimension
// contiguous in the source, the innermost strided) and for the rest.
#include "kernels/copy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

namespace kiln::kernels {
namespace {

// Element i of the source holds bytes derived from i, so every element of
// every width is distinct.
std::vector<uint8_t> Source(int64_t elements, size_t bytes) {
  std::vector<uint8_t> data(static_cast<size_t>(elements) * bytes);
  for (size_t b = 0; b < data.size(); ++b) data[b] = static_cast<uint8_t>(b * 7 + b / bytes);
  return data;
}

std::vector<uint8_t> Gather(const uint8_t* origin, const std::vector<int64_t>& dims,
                            const std::vector<int64_t>& strides, size_t bytes) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::vector<uint8_t> out(static_cast<size_t>(total) * bytes);
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t offset = 0;
    for (size_t k = 0; k < dims.size(); ++k) offset += index[k] * strides[k];
    std::memcpy(out.data() + n * static_cast<int64_t>(bytes),
                origin + offset * static_cast<int64_t>(bytes), bytes);
    for (size_t k = dims.size(); k-- > 0;) {
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

struct Case {
  std::vector<int64_t> source_dims;  // dense, row-major
  std::vector<size_t> permutation;   // output dimension k is source dimension permutation[k]
};

TEST(CopyStridedTest, TransposesMatchIndexArithmetic) {
  const Case cases[] = {
      {{2, 5, 7, 19}, {3, 1, 2, 0}},  // NHWC -> CHWN: C contiguous, N innermost
      {{3, 33}, {1, 0}},              // a matrix, 33 not a multiple of a block
      {{4, 6, 40}, {0, 2, 1}},        // contiguous dimension in the middle
      {{9, 2, 3}, {2, 0, 1}},         // innermost contiguous in the output too
      {{5, 7}, {1, 0}},               // shorter than a block: rows as before
      {{1, 17, 1, 3}, {3, 1, 0, 2}},  // ones around
      {{3, 300}, {1, 0}},             // several blocks (256 bytes each) of the contiguous one
      {{40, 30, 70}, {2, 0, 1}},      // output runs of 1200: several chunks
  };
  for (const size_t bytes : {1u, 2u, 4u, 8u, 16u, 3u}) {
    for (const Case& c : cases) {
      int64_t total = 1;
      for (int64_t d : c.source_dims) total *= d;
      const std::vector<uint8_t> source = Source(total, bytes);
      std::vector<int64_t> source_strides(c.source_dims.size());
      DenseStrides(c.source_dims, source_strides);
      std::vector<int64_t> dims, strides;
      for (size_t k : c.permutation) {
        dims.push_back(c.source_dims[k]);
        strides.push_back(source_strides[k]);
      }
      const std::vector<uint8_t> expected = Gather(source.data(), dims, strides, bytes);
      std::vector<uint8_t> actual(expected.size(), 0xEE);
      CopyStrided(bytes, dims, source.data(), strides, actual.data());
      EXPECT_EQ(actual, expected) << bytes << "-byte elements, source rank "
                                  << c.source_dims.size();
    }
  }
}

TEST(CopyStridedTest, ReversedAndBroadcastDimensionsBesideATranspose) {
  // Output [8 (source columns, contiguous), 3 (source rows, reversed), 2
  // (broadcast)]: the innermost is the broadcast; then [3, 2, 10] with the
  // contiguous dimension reversed (stride -1: not taken as contiguous).
  const std::vector<uint8_t> source = Source(3 * 10, 4);
  const uint8_t* origin = source.data();
  const std::vector<std::vector<int64_t>> dims = {{8, 3, 2}, {10, 2, 3}, {10, 3}};
  const std::vector<std::vector<int64_t>> strides = {{1, -10, 0}, {-1, 0, 10}, {1, -10}};
  const int64_t start[] = {20, 9, 20};
  for (size_t c = 0; c < dims.size(); ++c) {
    const uint8_t* at = origin + start[c] * 4;
    const std::vector<uint8_t> expected = Gather(at, dims[c], strides[c], 4);
    std::vector<uint8_t> actual(expected.size(), 0xEE);
    CopyStrided(4, dims[c], at, strides[c], actual.data());
    EXPECT_EQ(actual, expected) << "case " << c;
  }
}

}  // namespace
}  // namespace kiln::kernels
