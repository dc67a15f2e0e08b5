// Partitioned programs Kiln cannot run are errors that say why.
#include <gtest/gtest.h>

#include <string>

#include "compiler/compile.h"
#include "frontend/text/parser.h"
#include "ir/verifier.h"

namespace kiln::compiler {
namespace {

TEST(SpmdErrorsTest, AnArgumentShardingThatDoesNotDivideItIsRefusedWithItsSizes) {
  // 10 rows over 4 devices on an argument (PyTorch/XLA pads such shards;
  // JAX refuses them): Kiln splits unevenly only inside a program.
  const std::string text = R"(
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%a: tensor<10x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"})
      -> tensor<10x8xf32> {
    %0 = stablehlo.sine %a : tensor<10x8xf32>
    return %0 : tensor<10x8xf32>
  }
}
)";
  StatusOr<ir::Module> module = frontend::text::ParseModule(text);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ASSERT_TRUE(ir::Verify(*module).ok());
  frontend::CompileOptions options;
  options.num_partitions = 4;
  options.use_spmd_partitioning = true;
  StatusOr<std::shared_ptr<const Program>> program = Compile(*module, options);
  ASSERT_FALSE(program.ok());
  const std::string message = program.status().ToString();
  EXPECT_NE(message.find("parameter 0 of f32[10,8]"), std::string::npos) << message;
  EXPECT_NE(message.find("dimension 0 of size 10 does not split evenly into 4 tiles"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace kiln::compiler
