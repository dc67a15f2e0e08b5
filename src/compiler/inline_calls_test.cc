// The optimized program Kiln reports: calls inlined as XLA's CPU pipeline
// inlines them (JAX's api_test checks compiled.as_text()), the copy
// verified and printed, and the bound on a call tree that multiplies.
#include "compiler/inline_calls.h"

#include <gtest/gtest.h>

#include <string>

#include "frontend/text/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace kiln::compiler {
namespace {

ir::Module Parse(const std::string& text) {
  auto module = frontend::text::ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(*module) : ir::Module();
}

// The inlined module, verified and printed ("" when none).
std::string Inlined(const std::string& text) {
  ir::Module module = Parse(text);
  std::optional<ir::Module> inlined = InlineCalls(module);
  if (!inlined) return "";
  Status verified = ir::Verify(*inlined);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  return ir::PrintModule(*inlined);
}

TEST(InlineCallsTest, CallsBecomeTheCalleesBodies) {
  // main calls twice (once in a while body) @twice, which calls @add_one:
  // every call goes, and so do the private functions.
  const std::string text = R"(
module {
  func.func public @main(%x: tensor<f32>) -> tensor<f32> {
    %0 = func.call @twice(%x) : (tensor<f32>) -> tensor<f32>
    %1:2 = stablehlo.while(%i = %0, %n = %x) : tensor<f32>, tensor<f32>
     cond {
      %c = stablehlo.compare LT, %i, %n : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %2 = func.call @twice(%i) : (tensor<f32>) -> tensor<f32>
      stablehlo.return %2, %n : tensor<f32>, tensor<f32>
    }
    return %1#0 : tensor<f32>
  }
  func.func private @twice(%a: tensor<f32>) -> tensor<f32> {
    %0 = func.call @add_one(%a) : (tensor<f32>) -> tensor<f32>
    %1 = stablehlo.add %0, %0 : tensor<f32>
    return %1 : tensor<f32>
  }
  func.func private @add_one(%a: tensor<f32>) -> tensor<f32> {
    %c = stablehlo.constant dense<1.0> : tensor<f32>
    %0 = stablehlo.add %a, %c : tensor<f32>
    return %0 : tensor<f32>
  }
}
)";
  const std::string printed = Inlined(text);
  ASSERT_FALSE(printed.empty());
  EXPECT_EQ(printed.find("call"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("@twice"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("@add_one"), std::string::npos) << printed;
  // Two copies of each body: one at each call.
  size_t adds = 0;
  for (size_t at = printed.find("stablehlo.add"); at != std::string::npos;
       at = printed.find("stablehlo.add", at + 1)) {
    ++adds;
  }
  EXPECT_EQ(adds, 4u) << printed;
}

TEST(InlineCallsTest, CallsJaxAsksToKeepStay) {
  const std::string text = R"(
module {
  func.func public @main(%x: tensor<f32>) -> tensor<f32> {
    %0 = func.call @late(%x) {mhlo.frontend_attributes = {inlineable = "xla_late"}} : (tensor<f32>) -> tensor<f32>
    %1 = func.call @early(%0) {mhlo.frontend_attributes = {inlineable = "xla_early"}} : (tensor<f32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
  func.func private @late(%a: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.negate %a : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @early(%a: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.abs %a : tensor<f32>
    return %0 : tensor<f32>
  }
}
)";
  const std::string printed = Inlined(text);
  EXPECT_NE(printed.find("call @late"), std::string::npos) << printed;
  EXPECT_NE(printed.find("func.func private @late"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("@early"), std::string::npos) << printed;
  // Nothing to inline: the module is reported as it is.
  EXPECT_EQ(Inlined(R"(
module {
  func.func public @main(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}
)"),
            "");
}

TEST(InlineCallsTest, ACallTreeThatMultipliesIsLeftAsItIs) {
  // @f0 calls @f1 twice, ... 24 levels: inlined it would be 2^24 copies.
  std::string text = "module {\n";
  text += "  func.func public @main(%x: tensor<f32>) -> tensor<f32> {\n"
          "    %0 = func.call @f0(%x) : (tensor<f32>) -> tensor<f32>\n"
          "    return %0 : tensor<f32>\n  }\n";
  for (int level = 0; level < 24; ++level) {
    const std::string next = "@f" + std::to_string(level + 1);
    text += "  func.func private @f" + std::to_string(level) +
            "(%a: tensor<f32>) -> tensor<f32> {\n";
    if (level < 23) {
      text += "    %0 = func.call " + next + "(%a) : (tensor<f32>) -> tensor<f32>\n";
      text += "    %1 = func.call " + next + "(%0) : (tensor<f32>) -> tensor<f32>\n";
      text += "    return %1 : tensor<f32>\n  }\n";
    } else {
      text += "    %0 = stablehlo.negate %a : tensor<f32>\n    return %0 : tensor<f32>\n  }\n";
    }
  }
  text += "}\n";
  ir::Module module = Parse(text);
  EXPECT_FALSE(InlineCalls(module).has_value());
}

TEST(InlineCallsTest, ShardyOpsGoAsXlaRemovesThem) {
  // What JAX lowers for a shard_map (psum of doubled shards) followed by a
  // sharding constraint: the reported program has no sdy op left (JAX's
  // conversion to HLO, compiled.as_text(), rejects them), the manual
  // computation's body sits between the casts XLA's export writes.
  const std::string text = R"(
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<2x2xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"x"} (%arg1: tensor<2x2xf32>) {
      %6 = stablehlo.multiply %arg1, %arg1 : tensor<2x2xf32>
      %7 = "stablehlo.all_reduce"(%6) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %8 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %8 : tensor<f32>
      }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
      sdy.return %7 : tensor<2x2xf32>
    } : (tensor<4x2xf32>) -> tensor<2x2xf32>
    %1 = sdy.named_computation<"inner">(%0) (%a: tensor<2x2xf32>) {
      %n = stablehlo.negate %a : tensor<2x2xf32>
      sdy.return %n : tensor<2x2xf32>
    } : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %2 = stablehlo.add %1, %0 : tensor<2x2xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{}, {"x"}]> : tensor<2x2xf32>
    %4 = sdy.reshard %3 <@mesh, [{"x"}, {}]> : tensor<2x2xf32>
    return %4 : tensor<2x2xf32>
  }
}
)";
  const std::string printed = Inlined(text);
  ASSERT_FALSE(printed.empty());
  for (const char* gone : {"sdy.manual_computation", "sdy.named_computation",
                           "sdy.sharding_constraint", "sdy.reshard", "sdy.return"}) {
    EXPECT_EQ(printed.find(gone), std::string::npos) << gone << " in\n" << printed;
  }
  const size_t to_shard = printed.find("@SPMDFullToShardShape");
  const size_t body = printed.find("stablehlo.all_reduce");
  const size_t to_full = printed.find("@SPMDShardToFullShape");
  ASSERT_NE(to_shard, std::string::npos) << printed;
  ASSERT_NE(to_full, std::string::npos) << printed;
  EXPECT_LT(to_shard, body);
  EXPECT_LT(body, to_full);
  EXPECT_NE(printed.find("(tensor<4x2xf32>) -> tensor<2x2xf32>"), std::string::npos) << printed;
  EXPECT_NE(printed.find("stablehlo.negate"), std::string::npos) << printed;
  // The function returns the add, the constraint and reshard forwarded.
  EXPECT_NE(printed.find("return %"), std::string::npos) << printed;
}

}  // namespace
}  // namespace kiln::compiler
