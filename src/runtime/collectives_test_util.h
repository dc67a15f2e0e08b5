// Programs with collectives that the runtime's tests run on 4 replicas.
#pragma once

#include <string_view>

namespace kiln::runtime {

// Sums a 3-element f32 operand over replicas 0..3.
constexpr std::string_view kAllReduce = R"mlir(
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}
)mlir";

// A serialized CompileOptionsProto: executable_build_options (field 3) with
// num_replicas = 4, num_partitions = 1.
constexpr std::string_view kFourReplicas = "\x1a\x04\x20\x04\x28\x01";

}  // namespace kiln::runtime
