// reduce, reduce_window and select_and_scatter compiled from StableHLO text
// and run through compiler::Execute: recognized bodies (kernels), batched
// scalar bodies, bodies run as regions, and their edge cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/lowering_test_util.h"

namespace kiln::compiler {
namespace {

using testing::Array;
using testing::Run;

// Runs and expects success; every result.
std::vector<Array> MustRun(const std::string& text, const std::vector<Array>& args) {
  StatusOr<std::vector<Array>> results = Run(text, args);
  EXPECT_TRUE(results.ok()) << results.status().ToString() << "\n" << text;
  return results.ok() ? *results : std::vector<Array>{};
}

// A module whose main takes `signature` and returns `results`.
std::string Main(const std::string& signature, const std::string& results,
                 const std::string& body) {
  return testing::Main(signature, "(" + results + ")", body);
}

// A reduce of %arg0 (type `in`) over `dims` with the one-op body `op`.
std::string SimpleReduce(const std::string& op, const std::string& in, const std::string& out,
                         const std::string& element, const std::string& dims) {
  return Main("%arg0: " + in + ", %init: tensor<" + element + ">", out,
              "  %0 = stablehlo.reduce(%arg0 init: %init) applies " + op +
                  " across dimensions = [" + dims + "] : (" + in + ", tensor<" + element +
                  ">) -> " + out + "\n  return %0 : " + out);
}

TEST(LowerReduceTest, SumsRowsColumnsAndAll) {
  const Array x = Array::Of<float>({1, 2, 3, 4, 5, 6});
  const Array zero = Array::Of<float>({0});
  auto rows = MustRun(SimpleReduce("stablehlo.add", "tensor<2x3xf32>", "tensor<2xf32>", "f32", "1"),
                      {x, zero});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].As<float>(), (std::vector<float>{6, 15}));
  auto columns = MustRun(
      SimpleReduce("stablehlo.add", "tensor<2x3xf32>", "tensor<3xf32>", "f32", "0"), {x, zero});
  EXPECT_EQ(columns[0].As<float>(), (std::vector<float>{5, 7, 9}));
  auto all = MustRun(SimpleReduce("stablehlo.add", "tensor<2x3xf32>", "tensor<f32>", "f32", "0, 1"),
                     {x, zero});
  EXPECT_EQ(all[0].As<float>(), (std::vector<float>{21}));
  // The init value is applied once, also when nothing is reduced.
  auto none = MustRun(SimpleReduce("stablehlo.add", "tensor<2x3xf32>", "tensor<2x3xf32>", "f32",
                                   ""),
                      {x, Array::Of<float>({10})});
  EXPECT_EQ(none[0].As<float>(), (std::vector<float>{11, 12, 13, 14, 15, 16}));
}

TEST(LowerReduceTest, MiddleAndOuterDimensionsOfIntegers) {
  std::vector<int32_t> values(2 * 3 * 4);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i * 7 % 11) - 5;
  const std::string in = "tensor<2x3x4xi32>";
  auto middle = MustRun(SimpleReduce("stablehlo.maximum", in, "tensor<2x4xi32>", "i32", "1"),
                        {Array::Of(values), Array::Of<int32_t>({-100})});
  auto outer = MustRun(SimpleReduce("stablehlo.add", in, "tensor<3xi32>", "i32", "0, 2"),
                       {Array::Of(values), Array::Of<int32_t>({1})});
  std::vector<int32_t> expect_middle(8, -100);
  std::vector<int32_t> expect_outer(3, 1);
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 3; ++b) {
      for (int c = 0; c < 4; ++c) {
        const int32_t v = values[static_cast<size_t>((a * 3 + b) * 4 + c)];
        int32_t& m = expect_middle[static_cast<size_t>(a * 4 + c)];
        m = std::max(m, v);
        expect_outer[static_cast<size_t>(b)] += v;
      }
    }
  }
  EXPECT_EQ(middle[0].As<int32_t>(), expect_middle);
  EXPECT_EQ(outer[0].As<int32_t>(), expect_outer);
}

TEST(LowerReduceTest, MaxPropagatesNaNAndWrapsIntegers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto max = MustRun(SimpleReduce("stablehlo.maximum", "tensor<4xf32>", "tensor<f32>", "f32", "0"),
                     {Array::Of<float>({1, nan, 3, 2}), Array::Of<float>({-INFINITY})});
  EXPECT_TRUE(std::isnan(max[0].As<float>()[0]));
  auto sum = MustRun(SimpleReduce("stablehlo.add", "tensor<3xi8>", "tensor<i8>", "i8", "0"),
                     {Array::Of<int8_t>({100, 100, 100}), Array::Of<int8_t>({0})});
  EXPECT_EQ(sum[0].As<int8_t>()[0], static_cast<int8_t>(300 - 256));
}

TEST(LowerReduceTest, PredAndOr) {
  const Array x = Array::Of<uint8_t>({1, 0, 1, 1, 1, 1});
  auto all = MustRun(SimpleReduce("stablehlo.and", "tensor<2x3xi1>", "tensor<2xi1>", "i1", "1"),
                     {x, Array::Of<uint8_t>({1})});
  EXPECT_EQ(all[0].As<uint8_t>(), (std::vector<uint8_t>{0, 1}));
  auto any = MustRun(SimpleReduce("stablehlo.or", "tensor<2x3xi1>", "tensor<2xi1>", "i1", "1"),
                     {x, Array::Of<uint8_t>({0})});
  EXPECT_EQ(any[0].As<uint8_t>(), (std::vector<uint8_t>{1, 1}));
}

// A reduce over dimensions of size 1 from its op's identity (JAX's `all`
// over a gather's index vector) is its operand seen with fewer dimensions:
// no node. From any other init it still combines init with each element
// (a float sum from +0 turns -0 into +0).
TEST(LowerReduceTest, OverSizeOneDimensionsFromTheIdentityIsAView) {
  const auto reduce = [](const std::string& op, const std::string& type, const std::string& init) {
    return testing::Main("%x: tensor<2x1x3x" + type + ">", "tensor<2x3x" + type + ">",
                         "  %init = stablehlo.constant dense<" + init + "> : tensor<" + type +
                             ">\n"
                             "  %r = stablehlo.reduce(%x init: %init) applies " +
                             op + " across dimensions = [1] : (tensor<2x1x3x" + type +
                             ">, tensor<" + type + ">) -> tensor<2x3x" + type +
                             ">\n"
                             "  return %r : tensor<2x3x" +
                             type + ">");
  };
  const auto reduces = [](const std::string& text) {
    auto program = testing::CompileText(text);
    EXPECT_TRUE(program.ok()) << program.status().ToString();
    size_t count = 0;
    for (const Node& node : program.ok() ? (*program)->graph->nodes : std::vector<Node>{}) {
      const bool read = node.pointwise && node.pointwise->kind == Pointwise::Kind::kRead;
      count += node.op == "stablehlo.reduce" && !read ? 1 : 0;
    }
    return count;
  };
  const std::string all = reduce("stablehlo.and", "i1", "true");
  EXPECT_EQ(reduces(all), 0u);
  EXPECT_EQ(MustRun(all, {Array::Of<uint8_t>({1, 0, 1, 0, 0, 1})})[0].As<uint8_t>(),
            (std::vector<uint8_t>{1, 0, 1, 0, 0, 1}));
  const std::string sum = reduce("stablehlo.add", "f32", "-0.0");
  EXPECT_EQ(reduces(sum), 0u);
  const std::vector<float> x = {1.5f, -0.0f, 3, -4, 0, NAN};
  const std::vector<float> same = MustRun(sum, {Array::Of(x)})[0].As<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(std::signbit(same[i]), std::signbit(x[i]));
    if (!std::isnan(x[i])) {
      EXPECT_EQ(same[i], x[i]);
    }
  }
  EXPECT_EQ(reduces(reduce("stablehlo.maximum", "i32", "-2147483648")), 0u);
  // +0 is not a float sum's identity: -0 + +0 is +0.
  const std::string from_zero = reduce("stablehlo.add", "f32", "0.0");
  EXPECT_EQ(reduces(from_zero), 1u);
  EXPECT_FALSE(std::signbit(MustRun(from_zero, {Array::Of(x)})[0].As<float>()[1]));
  const std::string plus_one = reduce("stablehlo.add", "i32", "1");
  EXPECT_EQ(reduces(plus_one), 1u);
  EXPECT_EQ(MustRun(plus_one, {Array::Of<int32_t>({1, 2, 3, 4, 5, 6})})[0].As<int32_t>(),
            (std::vector<int32_t>{2, 3, 4, 5, 6, 7}));
}

TEST(LowerReduceTest, ZeroSizedInputsGiveTheInitValue) {
  auto empty = MustRun(SimpleReduce("stablehlo.add", "tensor<0x3xf32>", "tensor<3xf32>", "f32",
                                    "0"),
                       {Array{}, Array::Of<float>({10})});
  EXPECT_EQ(empty[0].As<float>(), (std::vector<float>{10, 10, 10}));
  auto no_outputs = MustRun(SimpleReduce("stablehlo.add", "tensor<3x0xf32>", "tensor<0xf32>", "f32",
                                         "0"),
                            {Array{}, Array::Of<float>({10})});
  EXPECT_TRUE(no_outputs[0].bytes.empty());
}

// JAX's argmax: a two-operand body with compare/select, run per element.
constexpr char kArgmax[] = R"(
func.func @main(%arg0: tensor<3x4xf32>) -> tensor<4xi32> {
  %0 = stablehlo.iota dim = 0 : tensor<3x4xi32>
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [0] : (tensor<3x4xf32>, tensor<3x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
   reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
    %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %4 = stablehlo.or %2, %3 : tensor<i1>
    %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %7 = stablehlo.and %5, %6 : tensor<i1>
    %8 = stablehlo.or %4, %7 : tensor<i1>
    %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
    %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
    stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
  }
  return %1#1 : tensor<4xi32>
}
)";

TEST(LowerReduceTest, ArgmaxRunsTheBodyPerElement) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto argmax = MustRun(kArgmax, {Array::Of<float>({1, 5, 2, 0,    //
                                                    3, 5, nan, 0,  //
                                                    2, 4, 9, 0})});
  EXPECT_EQ(argmax[0].As<int32_t>(), (std::vector<int32_t>{1, 0, 1, 0}));
}

// kArgmax over other shapes: (rows x columns), reduced over `dimension`.
std::string Argmax(int64_t rows, int64_t columns, int dimension) {
  std::string text = kArgmax;
  const std::string in = "tensor<" + std::to_string(rows) + "x" + std::to_string(columns);
  const std::string out = "tensor<" + std::to_string(dimension == 0 ? columns : rows) + "x";
  auto replace_all = [&text](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  };
  replace_all("tensor<3x4", in);
  replace_all("tensor<4x", out);
  replace_all("iota dim = 0", "iota dim = " + std::to_string(dimension));
  replace_all("dimensions = [0]", "dimensions = [" + std::to_string(dimension) + "]");
  return text;
}

TEST(LowerReduceTest, BatchedArgmaxOverLongAndManyReductions) {
  // Long reductions fold as trees, many short ones lane by lane; both must
  // give the first index of the maximum.
  for (const auto& [rows, columns, dimension] : std::vector<std::tuple<int64_t, int64_t, int>>{
           {1000, 3, 0}, {3, 1000, 1}, {700, 5, 1}, {1, 1, 0}, {300, 300, 0}}) {
    std::vector<float> values(static_cast<size_t>(rows * columns));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 7919) % 613);
    auto results = MustRun(Argmax(rows, columns, dimension), {Array::Of(values)});
    ASSERT_EQ(results.size(), 1u);
    const int64_t outputs = dimension == 0 ? columns : rows;
    const int64_t length = dimension == 0 ? rows : columns;
    std::vector<int32_t> expected;
    for (int64_t o = 0; o < outputs; ++o) {
      int32_t best = 0;
      for (int64_t k = 0; k < length; ++k) {
        auto at = [&](int64_t index) {
          const int64_t flat = dimension == 0 ? index * columns + o : o * columns + index;
          return values[static_cast<size_t>(flat)];
        };
        if (at(k) > at(best)) best = static_cast<int32_t>(k);
      }
      expected.push_back(best);
    }
    EXPECT_EQ(results[0].As<int32_t>(), expected)
        << rows << "x" << columns << " over " << dimension;
  }
}

TEST(LowerReduceTest, BodiesUsingOuterValuesRunAsRegions) {
  const std::string text = R"(
func.func @main(%x: tensor<4xf32>, %scale: tensor<f32>) -> tensor<f32> {
  %init = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %init) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
   reducer(%a: tensor<f32>, %b: tensor<f32>)  {
    %1 = stablehlo.multiply %b, %scale : tensor<f32>
    %2 = stablehlo.add %a, %1 : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }
  return %0 : tensor<f32>
}
)";
  auto results = MustRun(text, {Array::Of<float>({1, 2, 3, 4}), Array::Of<float>({10})});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].As<float>()[0], 101);
}

std::string ReduceWindow(const std::string& body_op, const std::string& in, const std::string& out,
                         const std::string& attributes) {
  return Main("%arg0: " + in + ", %init: tensor<f32>", out,
              "  %0 = \"stablehlo.reduce_window\"(%arg0, %init) <{" + attributes +
                  "}> ({\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n    %s = " + body_op +
                  " %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>\n  }) : (" + in +
                  ", tensor<f32>) -> " + out + "\n  return %0 : " + out);
}

TEST(LowerReduceWindowTest, PaddingAndHolesAreSkippedAsOnXlaCpu) {
  const Array x = Array::Of<float>({0, 1, 2, 3});
  const Array ten = Array::Of<float>({10});
  auto padded = MustRun(ReduceWindow("stablehlo.add", "tensor<4xf32>", "tensor<4xf32>",
                                     "padding = dense<[[1, 1]]> : tensor<1x2xi64>, "
                                     "window_dimensions = array<i64: 3>"),
                        {x, ten});
  EXPECT_EQ(padded[0].As<float>(), (std::vector<float>{11, 13, 16, 15}));
  auto dilated = MustRun(ReduceWindow("stablehlo.add", "tensor<4xf32>", "tensor<6xf32>",
                                      "base_dilations = array<i64: 2>, "
                                      "window_dimensions = array<i64: 2>"),
                         {x, ten});
  EXPECT_EQ(dilated[0].As<float>(), (std::vector<float>{10, 11, 11, 12, 12, 13}));
}

TEST(LowerReduceWindowTest, CumulativeSumAndMaxPool) {
  auto cumsum = MustRun(ReduceWindow("stablehlo.add", "tensor<2x4xf32>", "tensor<2x4xf32>",
                                     "padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, "
                                     "window_dimensions = array<i64: 1, 4>"),
                        {Array::Of<float>({1, 2, 3, 4, 5, 6, 7, 8}), Array::Of<float>({0})});
  EXPECT_EQ(cumsum[0].As<float>(), (std::vector<float>{1, 3, 6, 10, 5, 11, 18, 26}));
  // 2x2 max pool, stride 2, over a 1x4x4x1 image (NHWC).
  std::vector<float> image(16);
  for (size_t i = 0; i < 16; ++i) image[i] = static_cast<float>((i * 5) % 16);
  auto pooled = MustRun(ReduceWindow("stablehlo.maximum", "tensor<1x4x4x1xf32>",
                                     "tensor<1x2x2x1xf32>",
                                     "window_dimensions = array<i64: 1, 2, 2, 1>, "
                                     "window_strides = array<i64: 1, 2, 2, 1>"),
                        {Array::Of(image), Array::Of<float>({-INFINITY})});
  std::vector<float> expected;
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 2; ++c) {
      float m = -INFINITY;
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
          m = std::max(m, image[static_cast<size_t>((2 * r + i) * 4 + 2 * c + j)]);
        }
      }
      expected.push_back(m);
    }
  }
  EXPECT_EQ(pooled[0].As<float>(), expected);
}

TEST(LowerReduceWindowTest, GenericBodyMatchesTheKernel) {
  // add(a, b) * 1 is not recognized: it runs as a region, and must agree.
  const std::string attributes =
      "padding = dense<[[1, 2], [0, 1]]> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 3>, "
      "window_strides = array<i64: 2, 1>, window_dilations = array<i64: 1, 2>";
  std::vector<float> values(5 * 6);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7);
  const std::string in = "tensor<5x6xf32>";
  const std::string out = "tensor<4x3xf32>";
  auto fast = MustRun(ReduceWindow("stablehlo.add", in, out, attributes),
                      {Array::Of(values), Array::Of<float>({0.5f})});
  const std::string generic = Main("%arg0: " + in + ", %init: tensor<f32>", out,
                                   "  %0 = \"stablehlo.reduce_window\"(%arg0, %init) <{" +
                                       attributes +
                                       "}> ({\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
                                       "    %one = stablehlo.constant dense<1.0> : tensor<f32>\n"
                                       "    %s = stablehlo.add %a, %b : tensor<f32>\n"
                                       "    %t = stablehlo.multiply %s, %one : tensor<f32>\n"
                                       "    stablehlo.return %t : tensor<f32>\n  }) : (" +
                                       in + ", tensor<f32>) -> " + out + "\n  return %0 : " + out);
  auto slow = MustRun(generic, {Array::Of(values), Array::Of<float>({0.5f})});
  ASSERT_FALSE(fast.empty());
  ASSERT_FALSE(slow.empty());
  EXPECT_EQ(fast[0].As<float>(), slow[0].As<float>());
}

std::string SelectAndScatter(const std::string& compare_type) {
  return Main("%arg0: tensor<6xf32>, %src: tensor<3xf32>", "tensor<6xf32>",
              "  %init = stablehlo.constant dense<0.0> : tensor<f32>\n"
              "  %0 = \"stablehlo.select_and_scatter\"(%arg0, %src, %init) <{"
              "padding = dense<[[1, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 3>, "
              "window_strides = array<i64: 2>}> ({\n"
              "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
              "    %p = stablehlo.compare GE, %a, %b, " +
                  compare_type +
                  " : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
                  "    stablehlo.return %p : tensor<i1>\n"
                  "  }, {\n"
                  "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
                  "    %s = stablehlo.add %a, %b : tensor<f32>\n"
                  "    stablehlo.return %s : tensor<f32>\n"
                  "  }) : (tensor<6xf32>, tensor<3xf32>, tensor<f32>) -> tensor<6xf32>\n"
                  "  return %0 : tensor<6xf32>");
}

TEST(LowerSelectAndScatterTest, ScattersToTheFirstMaximumOfEachWindow) {
  // Windows (padding 1 low, size 3, stride 2): {pad,0,1}, {1,2,3}, {3,4,5}.
  const Array x = Array::Of<float>({4, 1, 7, 7, 2, 2});
  const Array source = Array::Of<float>({10, 20, 30});
  const std::vector<float> expected = {10, 0, 20, 30, 0, 0};
  auto fast = MustRun(SelectAndScatter("FLOAT"), {x, source});
  EXPECT_EQ(fast[0].As<float>(), expected);
  auto generic = MustRun(SelectAndScatter("TOTALORDER"), {x, source});
  EXPECT_EQ(generic[0].As<float>(), expected);
}

}  // namespace
}  // namespace kiln::compiler
