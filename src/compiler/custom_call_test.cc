// custom_call targets Kiln runs: the elementwise "mhlo.*" calls XLA's
// HLO-to-StableHLO export writes (PyTorch/XLA with XLA_STABLEHLO_COMPILE=1)
// give what the CHLO ops of the same name give.
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

}  // namespace
}  // namespace kiln::compiler
