// custom_call targets Kiln runs: the elementwise "mhlo.*" calls XLA's
// HLO-to-StableHLO export writes (PyTorch/XLA with XLA_STABLEHLO_COMPILE=1)
// give what the CHLO ops of the same name give; Kiln's own linear-algebra
// calls (Schur, Hessenberg, PivotedQr) run, and refuse bad operands with
// errors that say what they expected.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/lowering_test_util.h"

namespace kiln::compiler {
namespace {

using testing::Array;
using testing::Main;
using testing::MustRun;
using testing::Ramp;

TEST(CustomCall, MhloElementwiseCallsMatchTheirChloOps) {
  const std::vector<float> x = Ramp<float>(8, 0.2, -0.7);  // inside (-1, 1) for acos/atanh
  for (const std::string name : {"erf", "acos", "asinh", "atanh", "cosh", "tan"}) {
    SCOPED_TRACE(name);
    const std::string call = Main(
        "%x: tensor<8xf32>", "tensor<8xf32>",
        "  %0 = stablehlo.custom_call @mhlo." + name +
            "(%x) {mhlo.attributes = {}} : (tensor<8xf32>) -> tensor<8xf32>\n"
            "  return %0 : tensor<8xf32>");
    const std::string chlo = Main("%x: tensor<8xf32>", "tensor<8xf32>",
                                  "  %0 = chlo." + name +
                                      " %x : tensor<8xf32> -> tensor<8xf32>\n"
                                      "  return %0 : tensor<8xf32>");
    EXPECT_EQ(MustRun(call, {Array::Of(x)}).As<float>(), MustRun(chlo, {Array::Of(x)}).As<float>());
  }
}

TEST(CustomCall, UnknownTargetIsUnimplementedNamingIt) {
  const std::string text = Main("%x: tensor<2xf32>", "tensor<2xf32>",
                                "  %0 = stablehlo.custom_call @mhlo.frobnicate(%x) : "
                                "(tensor<2xf32>) -> tensor<2xf32>\n"
                                "  return %0 : tensor<2xf32>");
  StatusOr<std::vector<Array>> results = testing::Run(text, {Array::Of(std::vector<float>{1, 2})});
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(results.status().message().find("\"mhlo.frobnicate\""), std::string::npos)
      << results.status().ToString();
}

// Compiles a module whose main makes the call `call` (its results named
// `results`, of `result_types`) and returns its first result; the status.
Status CompileCall(const std::string& signature, const std::string& results,
                   const std::string& result_types, const std::string& call) {
  const bool several = results.find(':') != std::string::npos;
  const std::string first = result_types.substr(0, result_types.find(", "));
  return testing::CompileText(Main(signature, first,
                                   "  " + results + " = stablehlo.custom_call " + call +
                                       "\n  return " + results.substr(0, results.find(':')) +
                                       (several ? "#0" : "") + " : " + first))
      .status();
}

// Svd runs on the gesdd the host lends (kernels/lapack.h): where none was
// lent (as in these tests), the program is refused when compiled, saying
// why; bad configs and result types are refused either way.
TEST(CustomCall, SvdWithoutLapackIsRefusedAtCompile) {
  Status status = CompileCall("%x: tensor<4x3xf32>", "%0:3", "tensor<3xf32>, tensor<4x4xf32>",
                              "@Svd(%x) {backend_config = \"A\"} : (tensor<4x3xf32>) -> "
                              "(tensor<3xf32>, tensor<4x4xf32>, tensor<3x3xf32>)");
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented) << status.ToString();
  EXPECT_NE(status.message().find("gesdd"), std::string::npos) << status.ToString();
  status = CompileCall("%x: tensor<4x3xf32>", "%0", "tensor<3xf32>",
                       "@Svd(%x) {backend_config = \"Q\"} : (tensor<4x3xf32>) -> tensor<3xf32>");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
}

TEST(CustomCall, SchurHessenbergAndPivotedQrRun) {
  // An upper triangular matrix is its own Schur form (Z = I); its
  // Hessenberg reduction changes nothing (taus 0); pivoted QR of the
  // identity keeps the columns in order.
  const std::vector<double> a = {1, 2, 0, 3};
  const std::string schur = Main(
      "%a: tensor<2x2xf64>", "(tensor<2x2xf64>, tensor<2x2xf64>)",
      "  %0:2 = stablehlo.custom_call @Schur(%a) {backend_config = \"1\"} : "
      "(tensor<2x2xf64>) -> (tensor<2x2xf64>, tensor<2x2xf64>)\n"
      "  return %0#0, %0#1 : tensor<2x2xf64>, tensor<2x2xf64>");
  StatusOr<std::vector<Array>> results = testing::Run(schur, {Array::Of(a)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<double>(), a);
  EXPECT_EQ((*results)[1].As<double>(), (std::vector<double>{1, 0, 0, 1}));

  const std::string hessenberg = Main("%a: tensor<2x2xf64>", "(tensor<2x2xf64>, tensor<1xf64>)",
                                      "  %0:2 = stablehlo.custom_call @Hessenberg(%a) : "
                                      "(tensor<2x2xf64>) -> (tensor<2x2xf64>, tensor<1xf64>)\n"
                                      "  return %0#0, %0#1 : tensor<2x2xf64>, tensor<1xf64>");
  results = testing::Run(hessenberg, {Array::Of(a)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<double>(), a);
  EXPECT_EQ((*results)[1].As<double>(), (std::vector<double>{0}));

  const std::string qr = Main(
      "%a: tensor<2x2xf32>, %p: tensor<2xi32>", "tensor<2xi32>",
      "  %0:3 = stablehlo.custom_call @PivotedQr(%a, %p) : (tensor<2x2xf32>, tensor<2xi32>) -> "
      "(tensor<2x2xf32>, tensor<2xi32>, tensor<2xf32>)\n"
      "  return %0#1 : tensor<2xi32>");
  EXPECT_EQ(MustRun(qr, {Array::Of(std::vector<float>{1, 0, 0, 1}),
                         Array::Of(std::vector<int32_t>{0, 0})})
                .As<int32_t>(),
            (std::vector<int32_t>{1, 2}));
}

TEST(CustomCall, LuDecompositionPivotsAsLapack) {
  // |3| > |1|: the rows swap, l = 1/3, u22 = 2 - 4/3.
  const std::string lu = Main(
      "%a: tensor<2x2xf64>", "(tensor<2x2xf64>, tensor<2xi32>, tensor<2xi32>)",
      "  %0:3 = stablehlo.custom_call @LuDecomposition(%a) : (tensor<2x2xf64>) -> "
      "(tensor<2x2xf64>, tensor<2xi32>, tensor<2xi32>)\n"
      "  return %0#0, %0#1, %0#2 : tensor<2x2xf64>, tensor<2xi32>, tensor<2xi32>");
  StatusOr<std::vector<Array>> results = testing::Run(lu,
                                                      {Array::Of(std::vector<double>{1, 2, 3, 4})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  const std::vector<double> factors = (*results)[0].As<double>();
  EXPECT_EQ(factors[0], 3);
  EXPECT_EQ(factors[1], 4);
  EXPECT_DOUBLE_EQ(factors[2], 1.0 / 3);
  EXPECT_DOUBLE_EQ(factors[3], 2 - 4.0 / 3);
  EXPECT_EQ((*results)[1].As<int32_t>(), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ((*results)[2].As<int32_t>(), (std::vector<int32_t>{1, 0}));
}

TEST(CustomCall, LinalgCallsRefuseBadOperandsSayingWhatTheyExpect) {
  struct BadCall {
    std::string signature, results, result_types, call, code_and_words;
  };
  const std::string square = "tensor<3x3xf32>";
  const BadCall cases[] = {
      {"%a: tensor<3xf32>", "%0:2", "tensor<3xf32>, tensor<3xf32>",
       "@Schur(%a) {backend_config = \"1\"} : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)",
       "rank >= 2"},
      {"%a: tensor<3x3xi32>", "%0:2", "tensor<3x3xi32>, tensor<3x3xi32>",
       "@Schur(%a) {backend_config = \"1\"} : (tensor<3x3xi32>) -> (tensor<3x3xi32>, "
       "tensor<3x3xi32>)",
       "Unsupported dtype si32"},
      {"%a: tensor<3x3xf16>", "%0:2", "tensor<3x3xf16>, tensor<2xf16>",
       "@Hessenberg(%a) : (tensor<3x3xf16>) -> (tensor<3x3xf16>, tensor<2xf16>)",
       "Unsupported dtype f16"},
      {"%a: tensor<2x3xf32>", "%0:2", "tensor<2x3xf32>, tensor<2x3xf32>",
       "@Schur(%a) {backend_config = \"1\"} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, "
       "tensor<2x3xf32>)",
       "square matrices"},
      {"%a: " + square, "%0:2", square + ", " + square,
       "@Schur(%a) {backend_config = \"yes\"} : (" + square + ") -> (" + square + ", " + square +
           ")",
       "backend_config must be"},
      {"%a: " + square, "%0", square,
       "@Schur(%a) {backend_config = \"1\"} : (" + square + ") -> " + square,
       "gives 2 results, found 1 and 1"},
      {"%a: " + square, "%0:2", square + ", tensor<3xf32>",
       "@Hessenberg(%a) : (" + square + ") -> (" + square + ", tensor<3xf32>)",
       "result 1 must be f32[2]"},
      {"%a: " + square + ", %p: tensor<3xi64>", "%0:3", square + ", tensor<3xi64>, tensor<3xf32>",
       "@PivotedQr(%a, %p) : (" + square + ", tensor<3xi64>) -> (" + square +
           ", tensor<3xi64>, tensor<3xf32>)",
       "jpvt must be si32[3]"},
      {"%a: tensor<3x4xf32>, %p: tensor<4xi32>", "%0:3",
       "tensor<3x4xf32>, tensor<4xi32>, tensor<4xf32>",
       "@PivotedQr(%a, %p) : (tensor<3x4xf32>, tensor<4xi32>) -> (tensor<3x4xf32>, "
       "tensor<4xi32>, tensor<4xf32>)",
       "result 2 must be f32[3]"},
      {"%a: tensor<3x4xf32>", "%0:3", "tensor<3x4xf32>, tensor<4xi32>, tensor<3xi32>",
       "@LuDecomposition(%a) : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<4xi32>, "
       "tensor<3xi32>)",
       "result 1 must be si32[3]"},
  };
  for (const BadCall& bad : cases) {
    SCOPED_TRACE(bad.call);
    const Status status = CompileCall(bad.signature, bad.results, bad.result_types, bad.call);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find(bad.code_and_words), std::string::npos) << status.ToString();
  }
}

}  // namespace
}  // namespace kiln::compiler
