// dot_general, dot and convolution compiled from StableHLO text and run
// through compiler::Execute, against naive loops written from the spec.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "compiler/lowering_test_util.h"
#include "kernels/types.h"

namespace kiln::compiler {
namespace {

using testing::Array;
using testing::Main;
using testing::MustRun;
using testing::Ramp;

std::string Join(const std::vector<int64_t>& values, const std::string& separator = ", ") {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    text += (i ? separator : "") + std::to_string(values[i]);
  }
  return text;
}

std::string Tensor(const std::vector<int64_t>& dims, const std::string& element) {
  std::string text = "tensor<";
  for (int64_t d : dims) text += std::to_string(d) + "x";
  return text + element + ">";
}

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

// Row-major offset of `index` in `dims`.
int64_t Offset(const std::vector<int64_t>& dims, const std::vector<int64_t>& index) {
  int64_t offset = 0;
  for (size_t k = 0; k < dims.size(); ++k) offset = offset * dims[k] + index[k];
  return offset;
}

// Advances `index` over `dims` row-major; false after the last.
bool Next(const std::vector<int64_t>& dims, std::vector<int64_t>& index) {
  for (size_t k = dims.size(); k-- > 0;) {
    if (++index[k] < dims[k]) return true;
    index[k] = 0;
  }
  return false;
}

bool Has(const std::vector<int64_t>& dims, int64_t d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

// dot_general from the spec, accumulating in Acc.
template <typename T, typename Acc = T>
std::vector<T> NaiveDotGeneral(const std::vector<int64_t>& lhs_dims, const std::vector<T>& lhs,
                               const std::vector<int64_t>& rhs_dims, const std::vector<T>& rhs,
                               const std::vector<int64_t>& lb, const std::vector<int64_t>& lc,
                               const std::vector<int64_t>& rb, const std::vector<int64_t>& rc,
                               std::vector<int64_t>* out_dims) {
  std::vector<int64_t> lfree, rfree, contract_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(lhs_dims.size()); ++d) {
    if (!Has(lb, d) && !Has(lc, d)) lfree.push_back(d);
  }
  for (int64_t d = 0; d < static_cast<int64_t>(rhs_dims.size()); ++d) {
    if (!Has(rb, d) && !Has(rc, d)) rfree.push_back(d);
  }
  out_dims->clear();
  for (int64_t d : lb) out_dims->push_back(lhs_dims[static_cast<size_t>(d)]);
  for (int64_t d : lfree) out_dims->push_back(lhs_dims[static_cast<size_t>(d)]);
  for (int64_t d : rfree) out_dims->push_back(rhs_dims[static_cast<size_t>(d)]);
  for (int64_t d : lc) contract_dims.push_back(lhs_dims[static_cast<size_t>(d)]);
  std::vector<T> out(static_cast<size_t>(Count(*out_dims)));
  if (out.empty()) return out;
  std::vector<int64_t> index(out_dims->size(), 0);
  do {
    std::vector<int64_t> li(lhs_dims.size()), ri(rhs_dims.size());
    size_t next = 0;
    for (size_t i = 0; i < lb.size(); ++i, ++next) {
      li[static_cast<size_t>(lb[i])] = index[next];
      ri[static_cast<size_t>(rb[i])] = index[next];
    }
    for (int64_t d : lfree) li[static_cast<size_t>(d)] = index[next++];
    for (int64_t d : rfree) ri[static_cast<size_t>(d)] = index[next++];
    Acc acc{};
    std::vector<int64_t> k(lc.size(), 0);
    if (Count(contract_dims) > 0) {
      do {
        for (size_t i = 0; i < lc.size(); ++i) {
          li[static_cast<size_t>(lc[i])] = k[i];
          ri[static_cast<size_t>(rc[i])] = k[i];
        }
        acc += static_cast<Acc>(lhs[static_cast<size_t>(Offset(lhs_dims, li))]) *
               static_cast<Acc>(rhs[static_cast<size_t>(Offset(rhs_dims, ri))]);
      } while (Next(contract_dims, k));
    }
    out[static_cast<size_t>(Offset(*out_dims, index))] = static_cast<T>(acc);
  } while (Next(*out_dims, index));
  return out;
}

struct DotCase {
  std::string name;
  std::vector<int64_t> lhs, rhs, lb, lc, rb, rc;
};

class DotGeneralTest : public ::testing::TestWithParam<DotCase> {};

TEST_P(DotGeneralTest, MatchesTheSpecInF32AndS32) {
  const DotCase& c = GetParam();
  for (const std::string element : {"f32", "i32"}) {
    std::vector<int64_t> out_dims;
    const bool is_float = element == "f32";
    // The result type comes from the naive reference's shape.
    std::vector<float> lhs_f(static_cast<size_t>(Count(c.lhs)));
    std::vector<float> rhs_f(static_cast<size_t>(Count(c.rhs)));
    for (size_t i = 0; i < lhs_f.size(); ++i) lhs_f[i] = static_cast<float>((i * 7) % 11) / 4 - 1;
    for (size_t i = 0; i < rhs_f.size(); ++i)
      rhs_f[i] = static_cast<float>((i * 5) % 13) / 8 - 0.5f;
    auto want_f = NaiveDotGeneral<float, double>(c.lhs, lhs_f, c.rhs, rhs_f, c.lb, c.lc, c.rb, c.rc,
                                                 &out_dims);
    const std::string out = Tensor(out_dims, element);
    const std::string program = Main(
        "%a: " + Tensor(c.lhs, element) + ", %b: " + Tensor(c.rhs, element), out,
        "  %0 = stablehlo.dot_general %a, %b, batching_dims = [" + Join(c.lb) + "] x [" +
            Join(c.rb) + "], contracting_dims = [" + Join(c.lc) + "] x [" + Join(c.rc) + "] : (" +
            Tensor(c.lhs, element) + ", " + Tensor(c.rhs, element) + ") -> " + out +
            "\n  return %0 : " + out);
    if (is_float) {
      const std::vector<float> got =
          MustRun(program, {Array::Of(lhs_f), Array::Of(rhs_f)}).As<float>();
      ASSERT_EQ(got.size(), want_f.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want_f[i], 1e-3) << i;
    } else {
      // Large values, so products and sums wrap.
      auto lhs_i = Ramp<int32_t>(static_cast<size_t>(Count(c.lhs)), 40503, -7);
      auto rhs_i = Ramp<int32_t>(static_cast<size_t>(Count(c.rhs)), 65537, 3);
      std::vector<uint32_t> lhs_u(lhs_i.begin(), lhs_i.end()), rhs_u(rhs_i.begin(), rhs_i.end());
      const auto want = NaiveDotGeneral<uint32_t>(c.lhs, lhs_u, c.rhs, rhs_u, c.lb, c.lc, c.rb,
                                                  c.rc, &out_dims);
      const std::vector<uint32_t> got =
          MustRun(program, {Array::Of(lhs_i), Array::Of(rhs_i)}).As<uint32_t>();
      EXPECT_EQ(got, want);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DotGeneralTest,
    ::testing::Values(DotCase{"matmul", {3, 4}, {4, 5}, {}, {1}, {}, {0}},
                      DotCase{"lhs_transposed", {4, 3}, {4, 5}, {}, {0}, {}, {0}},
                      DotCase{"rhs_transposed", {3, 4}, {5, 4}, {}, {1}, {}, {1}},
                      DotCase{"both_transposed", {4, 3}, {5, 4}, {}, {0}, {}, {1}},
                      DotCase{"batched", {2, 3, 4}, {2, 4, 5}, {0}, {2}, {0}, {1}},
                      DotCase{"batch_in_the_middle", {3, 2, 4}, {5, 2, 3}, {1}, {0}, {1}, {2}},
                      DotCase{"two_contracting", {2, 3, 4}, {4, 5, 3}, {}, {1, 2}, {}, {2, 0}},
                      DotCase{
                          "two_batch_dims", {2, 3, 4, 5}, {3, 2, 5, 2}, {0, 1}, {3}, {1, 0}, {2}},
                      DotCase{"vector_dot", {7}, {7}, {}, {0}, {}, {0}},
                      DotCase{"matrix_vector", {6, 7}, {7}, {}, {1}, {}, {0}},
                      DotCase{"outer_product", {3}, {4}, {}, {}, {}, {}},
                      DotCase{"size_one_dims", {1, 3, 1}, {3, 1, 4}, {}, {1}, {}, {0}},
                      DotCase{"empty_contraction", {3, 0}, {0, 2}, {}, {1}, {}, {0}},
                      DotCase{"large", {70, 130}, {130, 90}, {}, {1}, {}, {0}},
                      DotCase{"large_batched", {3, 40, 70}, {3, 90, 70}, {0}, {2}, {0}, {2}}),
    [](const ::testing::TestParamInfo<DotCase>& param) { return param.param.name; });

TEST(DotGeneral, Int8TimesInt8GivesInt32) {
  const std::string program = Main(
      "%a: tensor<2x3xi8>, %b: tensor<3x2xi8>", "tensor<2x2xi32>",
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
      "(tensor<2x3xi8>, tensor<3x2xi8>) -> tensor<2x2xi32>\n  return %0 : tensor<2x2xi32>");
  const std::vector<int8_t> a{127, 127, 127, -128, -128, -128};
  const std::vector<int8_t> b{127, -128, 127, -128, 127, -128};
  EXPECT_EQ(MustRun(program, {Array::Of(a), Array::Of(b)}).As<int32_t>(),
            (std::vector<int32_t>{48387, -48768, -48768, 49152}));
}

TEST(DotGeneral, Bf16ProductsAccumulateInF32) {
  using kernels::bfloat16;
  for (const std::string out : {"bf16", "f32"}) {
    const std::string type = "tensor<1x1x" + out + ">";
    const std::string program = Main(
        "%a: tensor<1x300xbf16>, %b: tensor<300x1xbf16>", type,
        "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
        "(tensor<1x300xbf16>, tensor<300x1xbf16>) -> " +
            type + "\n  return %0 : " + type);
    // 300 x (1 x 1.0078125): a bf16 accumulator would stall at 256.
    std::vector<bfloat16> a(300, bfloat16(1.0f)), b(300, bfloat16(1.0078125f));
    const Array result = MustRun(program, {Array::Of(a), Array::Of(b)});
    const float got = out == "f32" ? result.As<float>()[0]
                                   : static_cast<float>(result.As<bfloat16>()[0]);
    EXPECT_NEAR(got, 302.34375f, out == "f32" ? 1e-3f : 2.0f) << out;
  }
}

TEST(DotGeneral, Complex64) {
  using C = std::complex<float>;
  const std::string program = Main(
      "%a: tensor<2x2xcomplex<f32>>, %b: tensor<2xcomplex<f32>>", "tensor<2xcomplex<f32>>",
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
      "(tensor<2x2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>\n"
      "  return %0 : tensor<2xcomplex<f32>>");
  const std::vector<C> a{{1, 1}, {0, 2}, {3, 0}, {1, -1}};
  const std::vector<C> b{{2, 0}, {0, 1}};
  const std::vector<C> got = MustRun(program, {Array::Of(a), Array::Of(b)}).As<C>();
  EXPECT_EQ(got, (std::vector<C>{C(2, 2) + C(0, 2) * C(0, 1), C(6, 0) + C(1, -1) * C(0, 1)}));
}

TEST(Dot, LegacyMatrixVector) {
  const std::string program = Main(
      "%a: tensor<2x3xf32>, %b: tensor<3xf32>", "tensor<2xf32>",
      "  %0 = \"stablehlo.dot\"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>");
  const std::vector<float> a{1, 2, 3, 4, 5, 6}, b{1, 0, -1};
  EXPECT_EQ(MustRun(program, {Array::Of(a), Array::Of(b)}).As<float>(),
            (std::vector<float>{-2, -2}));
}

TEST(DotGeneral, ConstantOperandsFold) {
  const std::string program = Main(
      "", "tensor<2x2xf32>",
      "  %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>\n"
      "  %0 = stablehlo.dot_general %a, %a, contracting_dims = [0] x [1] : "
      "(tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n  return %0 : tensor<2x2xf32>");
  // a^T a^T: out[i][j] = sum_k a[k][i] * a[j][k].
  EXPECT_EQ(MustRun(program, {}).As<float>(), (std::vector<float>{7, 15, 10, 22}));
}

// --- convolution ---

struct ConvCase {
  std::string name;
  int64_t batch, features, outputs;
  std::vector<int64_t> input, window, strides, pad_low, pad_high, lhs_dilation, rhs_dilation;
  std::vector<int64_t> reverse;  // 0/1 per spatial dimension, empty: none
  int64_t feature_groups = 1, batch_groups = 1;
};

std::vector<int64_t> OutputSpatial(const ConvCase& c) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < c.input.size(); ++d) {
    const int64_t in = c.input[d] == 0 ? 0 : (c.input[d] - 1) * c.lhs_dilation[d] + 1;
    const int64_t window = (c.window[d] - 1) * c.rhs_dilation[d] + 1;
    const int64_t padded = in + c.pad_low[d] + c.pad_high[d];
    out.push_back(padded < window ? 0 : (padded - window) / c.strides[d] + 1);
  }
  return out;
}

// The spec's convolution on NHWC input, HWIO kernel, NHWC output.
std::vector<double> NaiveConv(const ConvCase& c, const std::vector<float>& x,
                              const std::vector<float>& w) {
  const std::vector<int64_t> out_spatial = OutputSpatial(c);
  const int64_t groups = c.feature_groups * c.batch_groups;
  const int64_t group_in = c.features / c.feature_groups;
  const int64_t group_out = c.outputs / groups;
  const int64_t out_batch = c.batch / c.batch_groups;
  std::vector<int64_t> out_dims{out_batch};
  out_dims.insert(out_dims.end(), out_spatial.begin(), out_spatial.end());
  out_dims.push_back(c.outputs);
  std::vector<int64_t> x_dims{c.batch};
  x_dims.insert(x_dims.end(), c.input.begin(), c.input.end());
  x_dims.push_back(c.features);
  std::vector<int64_t> w_dims(c.window);
  w_dims.push_back(group_in);
  w_dims.push_back(c.outputs);
  std::vector<double> out(static_cast<size_t>(Count(out_dims)), 0.0);
  if (out.empty()) return out;
  const size_t rank = c.input.size();
  std::vector<int64_t> o(out_dims.size(), 0);
  do {
    const int64_t feature = o.back();
    const int64_t group = feature / group_out;
    const int64_t n = o[0] + (c.batch_groups > 1 ? group * out_batch : 0);
    double acc = 0;
    std::vector<int64_t> k(rank, 0);
    do {
      std::vector<int64_t> xi{n}, wi;
      bool inside = true;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t dilated = o[d + 1] * c.strides[d] + k[d] * c.rhs_dilation[d] - c.pad_low[d];
        if (dilated < 0 || dilated % c.lhs_dilation[d] != 0 ||
            dilated / c.lhs_dilation[d] >= c.input[d]) {
          inside = false;
        }
        xi.push_back(dilated / c.lhs_dilation[d]);
        const bool reversed = !c.reverse.empty() && c.reverse[d] != 0;
        wi.push_back(reversed ? c.window[d] - 1 - k[d] : k[d]);
      }
      if (!inside) continue;
      for (int64_t i = 0; i < group_in; ++i) {
        std::vector<int64_t> xf = xi, wf = wi;
        xf.push_back((c.feature_groups > 1 ? group * group_in : 0) + i);
        wf.push_back(i);
        wf.push_back(feature);
        acc += static_cast<double>(x[static_cast<size_t>(Offset(x_dims, xf))]) *
               static_cast<double>(w[static_cast<size_t>(Offset(w_dims, wf))]);
      }
    } while (Next(c.window, k));
    out[static_cast<size_t>(Offset(out_dims, o))] = acc;
  } while (Next(out_dims, o));
  return out;
}

std::string ConvProgram(const ConvCase& c) {
  const size_t rank = c.input.size();
  std::string spatial;
  for (size_t d = 0; d < rank; ++d) spatial += std::to_string(d) + ", ";
  std::vector<int64_t> x_dims{c.batch}, w_dims(c.window), out_dims{c.batch / c.batch_groups};
  x_dims.insert(x_dims.end(), c.input.begin(), c.input.end());
  x_dims.push_back(c.features);
  w_dims.push_back(c.features / c.feature_groups);
  w_dims.push_back(c.outputs);
  const std::vector<int64_t> out_spatial = OutputSpatial(c);
  out_dims.insert(out_dims.end(), out_spatial.begin(), out_spatial.end());
  out_dims.push_back(c.outputs);
  std::string pad;
  for (size_t d = 0; d < rank; ++d) {
    pad += std::string(d ? ", " : "") + "[" + std::to_string(c.pad_low[d]) + ", " +
           std::to_string(c.pad_high[d]) + "]";
  }
  std::string reverse;
  for (size_t d = 0; d < rank; ++d) {
    reverse += std::string(d ? ", " : "") + (!c.reverse.empty() && c.reverse[d] ? "true" : "false");
  }
  const std::string x = Tensor(x_dims, "f32"), w = Tensor(w_dims, "f32"),
                    out = Tensor(out_dims, "f32");
  const std::string window = rank == 0 ? ", window = {}"
                                       : ", window = {stride = [" + Join(c.strides) + "], pad = [" +
                                             pad + "], lhs_dilate = [" + Join(c.lhs_dilation) +
                                             "], rhs_dilate = [" + Join(c.rhs_dilation) +
                                             "], reverse = [" + reverse + "]}";
  return Main("%x: " + x + ", %w: " + w, out,
              "  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, " + spatial + "f]x[" +
                  spatial + "i, o]->[b, " + spatial + "f]" + window +
                  " {batch_group_count = " + std::to_string(c.batch_groups) +
                  " : i64, feature_group_count = " + std::to_string(c.feature_groups) +
                  " : i64} : (" + x + ", " + w + ") -> " + out + "\n  return %0 : " + out);
}

class ConvolutionTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvolutionTest, MatchesTheSpec) {
  const ConvCase& c = GetParam();
  std::vector<int64_t> x_dims{c.batch}, w_dims(c.window);
  x_dims.insert(x_dims.end(), c.input.begin(), c.input.end());
  x_dims.push_back(c.features);
  w_dims.push_back(c.features / c.feature_groups);
  w_dims.push_back(c.outputs);
  std::vector<float> x(static_cast<size_t>(Count(x_dims))), w(static_cast<size_t>(Count(w_dims)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 11) / 4.0f - 1.0f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 5) % 13) / 8.0f - 0.75f;
  const std::vector<double> want = NaiveConv(c, x, w);
  const std::vector<float> got = MustRun(ConvProgram(c), {Array::Of(x), Array::Of(w)}).As<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, ConvolutionTest,
    ::testing::Values(
        ConvCase{"plain", 2, 3, 4, {5, 6}, {3, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}},
        ConvCase{"strided_padded", 2, 3, 4, {5, 6}, {3, 2}, {1, 2}, {1, 0}, {1, 1}, {1, 1}, {1, 1}},
        ConvCase{"dilated", 1, 2, 3, {6, 5}, {2, 3}, {1, 1}, {-1, 1}, {2, 0}, {2, 1}, {1, 2}},
        ConvCase{
            "reversed", 1, 2, 2, {4, 4}, {2, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 0}},
        ConvCase{"feature_groups",
                 2,
                 6,
                 6,
                 {4, 5},
                 {2, 2},
                 {1, 1},
                 {0, 0},
                 {0, 0},
                 {1, 1},
                 {1, 1},
                 {},
                 3,
                 1},
        ConvCase{
            "depthwise", 1, 4, 4, {5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {}, 4, 1},
        ConvCase{"depthwise_multiplier_dilated_reversed",
                 2,
                 3,
                 6,
                 {5, 4},
                 {3, 2},
                 {1, 2},
                 {1, 0},
                 {1, 1},
                 {2, 1},
                 {1, 2},
                 {0, 1},
                 3,
                 1},
        // Depthwise: one input feature into sixteen (a first layer), one
        // and three spatial dimensions, none, and a window of more
        // positions before the last dimension than the kernel lists.
        ConvCase{"depthwise_one_feature",
                 2,
                 1,
                 16,
                 {6, 7},
                 {3, 3},
                 {1, 1},
                 {1, 1},
                 {1, 1},
                 {1, 1},
                 {1, 1}},
        ConvCase{"depthwise_one_d", 2, 2, 4, {9}, {3}, {2}, {1}, {0}, {1}, {1}, {}, 2, 1},
        ConvCase{"depthwise_three_d",
                 1,
                 3,
                 6,
                 {4, 3, 5},
                 {2, 2, 2},
                 {1, 2, 1},
                 {1, 0, 1},
                 {0, 1, 1},
                 {1, 1, 2},
                 {1, 1, 1},
                 {},
                 3,
                 1},
        ConvCase{"depthwise_no_spatial", 2, 3, 3, {}, {}, {}, {}, {}, {}, {}, {}, 3, 1},
        ConvCase{"depthwise_large_window",
                 1,
                 2,
                 2,
                 {10, 10, 3},
                 {9, 9, 2},
                 {1, 1, 1},
                 {1, 0, 0},
                 {0, 1, 0},
                 {1, 1, 1},
                 {1, 1, 1},
                 {},
                 2,
                 1},
        ConvCase{"batch_groups",
                 4,
                 3,
                 4,
                 {4, 4},
                 {2, 2},
                 {1, 1},
                 {0, 0},
                 {0, 0},
                 {1, 1},
                 {1, 1},
                 {},
                 1,
                 2},
        ConvCase{"one_by_one", 2, 3, 5, {3, 4}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}},
        ConvCase{"one_d", 2, 3, 2, {9}, {3}, {2}, {2}, {1}, {1}, {1}},
        ConvCase{"three_d",
                 1,
                 2,
                 3,
                 {3, 4, 3},
                 {2, 2, 2},
                 {1, 2, 1},
                 {0, 1, 0},
                 {1, 0, 0},
                 {1, 1, 1},
                 {1, 1, 2}},
        ConvCase{"no_spatial", 3, 4, 5, {}, {}, {}, {}, {}, {}, {}},
        ConvCase{"empty_output", 1, 1, 1, {2, 2}, {3, 3}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}}),
    [](const ::testing::TestParamInfo<ConvCase>& param) { return param.param.name; });

// A depthwise convolution whose window has size 0 in a dimension has no
// positions, so its output is zeros (found in review: the kernel divided by
// the last dimension's size, or overran its list for an earlier one).
TEST(Convolution, DepthwiseWindowsOfSizeZeroGiveZeros) {
  for (const std::string kernel : {"2x0x1x2", "0x2x1x2"}) {
    const std::string out = kernel[0] == '2' ? "tensor<1x2x4x2xf32>" : "tensor<1x4x2x2xf32>";
    const std::string w = "tensor<" + kernel + "xf32>";
    const std::string program = Main(
        "%x: tensor<1x3x3x2xf32>, %w: " + w, out,
        "  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->"
        "[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, "
        "feature_group_count = 2 : i64} : (tensor<1x3x3x2xf32>, " +
            w + ") -> " + out + "\n  return %0 : " + out);
    EXPECT_EQ(MustRun(program,
                      {Array::Of(std::vector<float>(18, 1.0f)), Array::Of(std::vector<float>{})})
                  .As<float>(),
              std::vector<float>(16, 0.0f))
        << kernel;
  }
}

TEST(Convolution, NchwOihwLayout) {
  // The same convolution as "plain" in NCHW / OIHW: the canonical
  // transposes around the GEMM.
  const std::string program = Main(
      "%x: tensor<1x2x3x3xf32>, %w: tensor<1x2x2x2xf32>", "tensor<1x1x2x2xf32>",
      "  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->"
      "[b, f, 0, 1], window = {stride = [1, 1]} {batch_group_count = 1 : i64, "
      "feature_group_count = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>) -> "
      "tensor<1x1x2x2xf32>\n  return %0 : tensor<1x1x2x2xf32>");
  // Channel 0 is 0..8, channel 1 all ones; the kernel sums channel 0's
  // window and subtracts channel 1's.
  std::vector<float> x = Ramp<float>(9);
  x.resize(18, 1.0f);
  const std::vector<float> w{1, 1, 1, 1, -1, -1, -1, -1};
  EXPECT_EQ(MustRun(program, {Array::Of(x), Array::Of(w)}).As<float>(),
            (std::vector<float>{8 - 4, 12 - 4, 20 - 4, 24 - 4}));
}

}  // namespace
}  // namespace kiln::compiler
