// GSPMD arguments at the edges: shardings that do not divide an argument
// take padded tiles, as XLA lays them out; shardings no device layout fits
// are errors that say why.
#include <gtest/gtest.h>

#include <string>

#include "compiler/compile.h"
#include "frontend/text/parser.h"
#include "ir/verifier.h"

namespace kiln::compiler {
namespace {

StatusOr<std::shared_ptr<const Program>> CompileOn4(const std::string& text) {
  StatusOr<ir::Module> module = frontend::text::ParseModule(text);
  if (!module.ok()) return module.status();
  KILN_RETURN_IF_ERROR(ir::Verify(*module));
  frontend::CompileOptions options;
  options.num_partitions = 4;
  options.use_spmd_partitioning = true;
  return Compile(*module, options);
}

TEST(SpmdErrorsTest, AnArgumentShardingThatDoesNotDivideItTakesPaddedTiles) {
  // 10 rows over 4 devices (PyTorch/XLA sends such shards zero-padded to 3
  // rows; JAX refuses them): each device takes and returns 3 rows.
  StatusOr<std::shared_ptr<const Program>> program = CompileOn4(R"(
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%a: tensor<10x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"})
      -> (tensor<10x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}, tensor<8xf32>) {
    %0 = stablehlo.sine %a : tensor<10x8xf32>
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0]
        : (tensor<10x8xf32>, tensor<f32>) -> tensor<8xf32>
    return %0, %1 : tensor<10x8xf32>, tensor<8xf32>
  }
}
)");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ((*program)->parameter_shapes[0].dims, (std::vector<int64_t>{3, 8}));
  EXPECT_EQ((*program)->result_shapes[0].dims, (std::vector<int64_t>{3, 8}));
  EXPECT_EQ((*program)->result_shapes[1].dims, (std::vector<int64_t>{8}));
  // What each device runs says the shardings as XLA's partitioner leaves
  // them on its module (PyTorch/XLA reads the results' there).
  const std::string& listing = (*program)->listing;
  EXPECT_NE(listing.find("mhlo.spmd_output_sharding = \"{{devices=[4,1]0,1,2,3}, {replicated}}\""),
            std::string::npos)
      << listing;
  EXPECT_NE(listing.find("mhlo.spmd_parameters_shardings = [\"{devices=[4,1]0,1,2,3}\"]"),
            std::string::npos)
      << listing;
}

TEST(SpmdErrorsTest, AShardingForMoreDevicesThanThePartitionsIsRefused) {
  StatusOr<std::shared_ptr<const Program>> program = CompileOn4(R"(
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%a: tensor<16x8xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"})
      -> tensor<16x8xf32> {
    %0 = stablehlo.sine %a : tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}
)");
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("tiles for more devices than the program's 4"),
            std::string::npos)
      << program.status().ToString();
}

}  // namespace
}  // namespace kiln::compiler
