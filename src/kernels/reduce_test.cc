// The reduction kernels against plain reference loops, over many shapes,
// sets of reduced dimensions and windows (integers, so results are exact).
#include "kernels/reduce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/float_env.h"
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "kernels/reduce_avx2.h"
#define KILN_TEST_REDUCE_AVX2 1
#endif

namespace kiln::kernels {
namespace {

// Reference: every input element folded into its output, in input order.
std::vector<int32_t> ReferenceReduce(ReduceOp op, const std::vector<int32_t>& in,
                                     const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& reduced, int32_t init) {
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) == reduced.end()) {
      out_dims.push_back(dims[d]);
    }
  }
  int64_t out_count = 1;
  for (int64_t d : out_dims) out_count *= d;
  std::vector<int32_t> out(static_cast<size_t>(out_count), init);
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t linear = 0; linear < in.size(); ++linear) {
    int64_t rest = static_cast<int64_t>(linear);
    for (size_t d = dims.size(); d-- > 0;) {
      index[d] = rest % dims[d];
      rest /= dims[d];
    }
    int64_t o = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) == reduced.end()) {
        o = o * dims[d] + index[d];
      }
    }
    int32_t& acc = out[static_cast<size_t>(o)];
    const int32_t x = in[linear];
    switch (op) {
      case ReduceOp::kAdd:
        acc = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(x));
        break;
      case ReduceOp::kMaximum: acc = std::max(acc, x); break;
      case ReduceOp::kMinimum: acc = std::min(acc, x); break;
      case ReduceOp::kXor: acc ^= x; break;
      default: break;
    }
  }
  return out;
}

TEST(ReduceKernelTest, MatchesTheReferenceOnManyShapes) {
  std::mt19937 random(7);
  const std::vector<std::vector<int64_t>> shapes = {
      {7},       {3, 5},          {1, 9}, {9, 1}, {4, 1, 6}, {2, 3, 4, 5}, {70000}, {3, 5000},
      {5000, 3}, {2, 1, 3, 1, 2}, {0, 3}, {3, 0}, {}};
  for (const auto& dims : shapes) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    std::vector<int32_t> in(static_cast<size_t>(count));
    for (int32_t& x : in) x = static_cast<int32_t>(random() % 2001) - 1000;
    // Every subset of dimensions.
    for (uint32_t mask = 0; mask < (1u << dims.size()); ++mask) {
      std::vector<int64_t> reduced;
      for (size_t d = 0; d < dims.size(); ++d) {
        if ((mask >> d) & 1) reduced.push_back(static_cast<int64_t>(d));
      }
      for (ReduceOp op : {ReduceOp::kAdd, ReduceOp::kMaximum, ReduceOp::kMinimum, ReduceOp::kXor}) {
        const int32_t init = op == ReduceOp::kMaximum ? -5 : (op == ReduceOp::kMinimum ? 5 : 3);
        std::vector<int32_t> expected = ReferenceReduce(op, in, dims, reduced, init);
        std::vector<int32_t> out(std::max<size_t>(expected.size(), 1), 12345);
        ASSERT_TRUE(
            Reduce(op, ElementType::kS32, in.data(), dims, reduced, &init, out.data()).ok());
        out.resize(expected.size());
        EXPECT_EQ(out, expected) << "shape rank " << dims.size() << " mask " << mask << " op "
                                 << static_cast<int>(op);
      }
    }
  }
}

TEST(ReduceKernelTest, SubByteIntegersWrapToTheirWidth) {
  const std::vector<int8_t> in = {7, 7, 1};  // s4: 7 + 7 + 1 = 15 -> -1
  const int8_t init = 0;
  int8_t out = 0;
  const int64_t dims[] = {3};
  const int64_t reduced[] = {0};
  ASSERT_TRUE(Reduce(ReduceOp::kAdd, ElementType::kS4, in.data(), dims, reduced, &init, &out).ok());
  EXPECT_EQ(out, -1);
}

TEST(ReduceKernelTest, FloatSumOfManyElementsIsAccurate) {
  std::vector<float> in(1 << 20, 0.1f);
  const float init = 0;
  float out = 0;
  const int64_t dims[] = {static_cast<int64_t>(in.size())};
  const int64_t reduced[] = {0};
  ASSERT_TRUE(
      Reduce(ReduceOp::kAdd, ElementType::kF32, in.data(), dims, reduced, &init, &out).ok());
  EXPECT_NEAR(out, 0.1 * static_cast<double>(in.size()), 1.0);
}

// A row's float sum is a fixed order of additions, the same on every
// machine: 256-element blocks, each folded in sixteen lanes and a tree,
// combined as a binary counter read from its highest level. Rows of many
// widths (one block, several, a partial last one, a counter with gaps)
// against that order written out here, to the bit.
TEST(ReduceKernelTest, RowSumsFollowTheirBlockOrderToTheBit) {
  ScopedFlushDenormals flush;
  const auto lanes = [](const float* x, int64_t n) {
    if (n < 32) {
      float acc = x[0];
      for (int64_t i = 1; i < n; ++i) acc += x[i];
      return acc;
    }
    float lane[16];
    for (int l = 0; l < 16; ++l) lane[l] = x[l];
    int64_t i = 16;
    for (; i + 16 <= n; i += 16) {
      for (int l = 0; l < 16; ++l) lane[l] += x[i + l];
    }
    for (int l = 0; i < n; ++i, ++l) lane[l] += x[i];
    for (int width = 8; width > 0; width /= 2) {
      for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
    }
    return lane[0];
  };
  std::mt19937 random(14);
  std::uniform_real_distribution<float> uniform(-1000.0f, 1000.0f);
  for (int64_t width : {20, 256, 257, 300, 768, 1024, 1300, 1792, 2816, 3000, 3840}) {
    const int64_t rows = 8;
    std::vector<float> x(static_cast<size_t>(rows * width));
    for (float& value : x) value = uniform(random);
    std::vector<float> sums(rows, 0.0f);
    ASSERT_TRUE(
        FoldRowsInto(ReduceOp::kAdd, ElementType::kF32, x.data(), rows, width, sums.data()).ok());
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x.data() + r * width;
      std::vector<std::pair<int, float>> counter;  // (level, value), highest level first
      for (int64_t start = 0; start < width; start += 256) {
        float value = lanes(row + start, std::min<int64_t>(256, width - start));
        int level = 0;
        while (!counter.empty() && counter.back().first == level) {
          value = counter.back().second + value;
          counter.pop_back();
          ++level;
        }
        counter.emplace_back(level, value);
      }
      float sum = counter.front().second;
      for (size_t k = 1; k < counter.size(); ++k) sum += counter[k].second;
      sum = 0.0f + sum;
      EXPECT_EQ(std::bit_cast<uint32_t>(sums[static_cast<size_t>(r)]), std::bit_cast<uint32_t>(sum))
          << "width " << width << " row " << r << ": " << sums[static_cast<size_t>(r)] << " vs "
          << sum;
    }
  }
}

// Columns of many rows fold in segments of rows on several threads; each
// column's float sum stays as accurate as a tree fold, whatever the count.
TEST(ReduceKernelTest, FloatColumnSumsOfManyRowsAreAccurate) {
  std::mt19937 random(11);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (const int64_t rows : {256, 300, 4096, 5001}) {
    for (const int64_t width : {1, 7, 2048}) {
      std::vector<float> in(static_cast<size_t>(rows * width));
      for (float& x : in) x = uniform(random) + 0.1f;
      std::vector<double> expected(static_cast<size_t>(width), 2.0);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < width; ++c) expected[c] += in[r * width + c];
      }
      const float init = 2.0f;
      std::vector<float> out(static_cast<size_t>(width));
      const int64_t dims[] = {rows, width};
      const int64_t reduced[] = {0};
      ASSERT_TRUE(Reduce(ReduceOp::kAdd, ElementType::kF32, in.data(), dims, reduced, &init,
                         out.data())
                      .ok());
      for (int64_t c = 0; c < width; ++c) {
        EXPECT_NEAR(out[c], expected[c], 1e-6 * static_cast<double>(rows))
            << rows << "x" << width << " column " << c;
      }
    }
  }
}

#ifdef KILN_TEST_REDUCE_AVX2
// The AVX2 lane folds against the sixteen-lane loop they replace, bit for
// bit: NaNs with payloads and signs, infinities, signed zeros, ties.
TEST(ReduceKernelTest, Avx2LaneFoldsMatchTheScalarLanesToTheBit) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "this CPU has no AVX2";
  ScopedFlushDenormals flush;
  const auto apply = [](ReduceOp op, float lane, float x) {
    if (op == ReduceOp::kAdd) return lane + x;
    if (std::isnan(lane)) return lane;
    if (std::isnan(x)) return x;
    return (op == ReduceOp::kMaximum ? lane >= x : lane <= x) ? lane : x;
  };
  const float specials[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::bit_cast<float>(0x7fc00001u),
                            std::bit_cast<float>(0xffc00002u),
                            1.0f,
                            -1.0f};
  std::mt19937 random(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t n = 32 + static_cast<int64_t>(random() % 400);
    std::vector<float> x(static_cast<size_t>(n));
    // Odd trials have no NaN or infinity, so that sums stay finite.
    for (float& value : x) {
      value = random() % 8 == 0
                  ? specials[random() % 8]
                  : static_cast<float>(static_cast<int>(random() % 2001) - 1000) / 64.0f;
      if (trial % 2 == 1 && !std::isfinite(value)) value = 0.5f;
      // Every fourth trial: no positive values and zeros of both signs, so
      // max is a zero and which one the lanes keep shows.
      if (trial % 4 == 3)
        value = random() % 4 == 0 ? (random() % 2 ? 0.0f : -0.0f) : -std::abs(value);
    }
    for (ReduceOp op : {ReduceOp::kAdd, ReduceOp::kMaximum, ReduceOp::kMinimum}) {
      float lanes[16];
      for (int l = 0; l < 16; ++l) lanes[l] = x[static_cast<size_t>(l)];
      int64_t i = 16;
      for (; i + 16 <= n; i += 16) {
        for (int l = 0; l < 16; ++l) lanes[l] = apply(op, lanes[l], x[static_cast<size_t>(i + l)]);
      }
      for (int l = 0; i < n; ++i, ++l) lanes[l] = apply(op, lanes[l], x[static_cast<size_t>(i)]);
      for (int width = 8; width > 0; width /= 2) {
        for (int l = 0; l < width; ++l) lanes[l] = apply(op, lanes[l], lanes[l + width]);
      }
      const float expected = lanes[0];
      const float folded = reduce_internal::FoldLanesF32Avx2(op, x.data(), n);
      // Which NaN a sum of two NaNs keeps is the compiler's choice of
      // operand order (addition commutes), so sums compare NaN for NaN.
      if (op == ReduceOp::kAdd && std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(folded)) << "trial " << trial;
      } else {
        EXPECT_EQ(std::bit_cast<uint32_t>(folded), std::bit_cast<uint32_t>(expected))
            << "trial " << trial << " op " << static_cast<int>(op) << " n " << n;
      }
      if (HasFailure()) return;
    }
  }
}
#endif

TEST(ReduceKernelTest, RejectsOpsATypeDoesNotHave) {
  EXPECT_FALSE(ReduceOpAccepts(ReduceOp::kAnd, ElementType::kF32));
  EXPECT_FALSE(ReduceOpAccepts(ReduceOp::kAdd, ElementType::kF8E4M3FN));
  EXPECT_TRUE(ReduceOpAccepts(ReduceOp::kMaximum, ElementType::kBF16));
  EXPECT_TRUE(ReduceOpAccepts(ReduceOp::kXor, ElementType::kPred));
}

// Reference reduce_window: every window position folds its in-bounds,
// non-hole elements in window order.
TEST(ReduceKernelTest, WindowsMatchTheReferenceAndScansAreExact) {
  std::mt19937 random(3);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t n = 1 + static_cast<int64_t>(random() % 9);
    WindowDim w;
    w.size = 1 + static_cast<int64_t>(random() % 4);
    w.stride = 1 + static_cast<int64_t>(random() % 3);
    w.padding_low = static_cast<int64_t>(random() % 3);
    w.padding_high = static_cast<int64_t>(random() % 3);
    w.base_dilation = 1 + static_cast<int64_t>(random() % 2);
    w.window_dilation = 1 + static_cast<int64_t>(random() % 2);
    if (trial % 5 == 0) w = {n + 1, 1, n, 0, 1, 1};  // a cumulative window
    const int64_t padded = (n - 1) * w.base_dilation + 1 + w.padding_low + w.padding_high;
    const int64_t extent = (w.size - 1) * w.window_dilation + 1;
    if (padded < extent) continue;
    const int64_t outputs = (padded - extent) / w.stride + 1;
    std::vector<int32_t> in(static_cast<size_t>(2 * n));  // shape [n, 2], window trivial on dim 1
    for (int32_t& x : in) x = static_cast<int32_t>(random() % 100);
    std::vector<int32_t> expected(static_cast<size_t>(2 * outputs), 1);
    for (int64_t o = 0; o < outputs; ++o) {
      for (int64_t k = 0; k < w.size; ++k) {
        const int64_t at = o * w.stride + k * w.window_dilation - w.padding_low;
        if (at < 0 || at > (n - 1) * w.base_dilation || at % w.base_dilation != 0) continue;
        for (int64_t c = 0; c < 2; ++c) {
          const auto from = static_cast<size_t>(2 * (at / w.base_dilation) + c);
          expected[static_cast<size_t>(2 * o + c)] += in[from];
        }
      }
    }
    const WindowDim window[] = {w, WindowDim{}};
    const int64_t dims[] = {n, 2};
    const int64_t out_dims[] = {outputs, 2};
    const int32_t init = 1;
    std::vector<int32_t> out(expected.size());
    ASSERT_TRUE(ReduceWindow(ReduceOp::kAdd, ElementType::kS32, in.data(), dims, window, out_dims,
                             &init, out.data())
                    .ok());
    EXPECT_EQ(out, expected) << "trial " << trial;
  }
}

}  // namespace
}  // namespace kiln::kernels

namespace kiln::kernels {
namespace {

// select_and_scatter against the plain loop it replaced: each window's
// elements through WindowGeometry::Offsets in order, the first selected and
// replaced by each later one the select rejects it for; windows in order.
// Random geometries with padding, both dilations, overlapping windows (run
// in order) and disjoint ones (split among threads), and many ties.
TEST(ReduceKernelTest, SelectAndScatterMatchesThePlainLoop) {
  std::mt19937 random(17);
  const auto pick = [&](int64_t low, int64_t high) {
    return low + static_cast<int64_t>(random() % static_cast<uint32_t>(high - low + 1));
  };
  for (int trial = 0; trial < 400; ++trial) {
    // Every fifth trial has large windows before the last dimension (more
    // positions than the kernel lists once per run of windows).
    const bool large = trial % 5 == 4;
    const auto rank = static_cast<size_t>(pick(large ? 3 : 1, 4));
    std::vector<int64_t> dims(rank), out_dims(rank);
    std::vector<WindowDim> window(rank);
    bool empty = false;
    for (size_t d = 0; d < rank; ++d) {
      const bool wide = large && d + 1 < rank;
      dims[d] = pick(1, wide ? 14 : trial < 20 ? 40 : 7);
      WindowDim& w = window[d];
      w.size = wide ? pick(5, 9) : pick(1, 3);
      w.stride = pick(1, 3);
      w.padding_low = pick(0, 1);
      w.padding_high = pick(0, 1);
      w.base_dilation = pick(1, 2);
      w.window_dilation = pick(1, 2);
      const int64_t padded = (dims[d] - 1) * w.base_dilation + 1 + w.padding_low + w.padding_high;
      const int64_t extent = (w.size - 1) * w.window_dilation + 1;
      out_dims[d] = padded < extent ? 0 : (padded - extent) / w.stride + 1;
      empty = empty || out_dims[d] == 0;
    }
    if (empty) continue;
    int64_t count = 1, windows = 1;
    for (size_t d = 0; d < rank; ++d) {
      count *= dims[d];
      windows *= out_dims[d];
    }
    std::vector<int32_t> x(static_cast<size_t>(count)), source(static_cast<size_t>(windows));
    for (int32_t& v : x) v = static_cast<int32_t>(random() % 4);  // ties
    for (int32_t& v : source) v = static_cast<int32_t>(random() % 100) + 1;
    const int32_t init = 5;
    for (CompareDirection select : {CompareDirection::kGe, CompareDirection::kLt}) {
      std::vector<int32_t> expected(x.size(), init);
      const WindowGeometry geometry(dims, window, out_dims);
      std::vector<int64_t> offsets, scratch;
      for (int64_t w = 0; w < windows; ++w) {
        geometry.Offsets(w, offsets, scratch);
        if (offsets.empty()) continue;
        int64_t selected = offsets[0];
        for (size_t i = 1; i < offsets.size(); ++i) {
          const int32_t a = x[static_cast<size_t>(selected)];
          const int32_t b = x[static_cast<size_t>(offsets[i])];
          const bool keeps = select == CompareDirection::kGe ? a >= b : a < b;
          if (!keeps) selected = offsets[i];
        }
        expected[static_cast<size_t>(selected)] += source[static_cast<size_t>(w)];
      }
      std::vector<int32_t> actual(x.size(), -1);
      ASSERT_TRUE(SelectAndScatter(ElementType::kS32, select, ReduceOp::kAdd, x.data(), dims,
                                   window, source.data(), out_dims, &init, actual.data())
                      .ok());
      ASSERT_EQ(actual, expected) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace kiln::kernels
