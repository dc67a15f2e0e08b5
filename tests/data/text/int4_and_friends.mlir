module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xi4>, %arg1: tensor<8xui4>, %arg2: tensor<8xi8>) -> (tensor<8xi4> {jax.result_info = "result[0]"}, tensor<8xi32> {jax.result_info = "result[1]"}, tensor<8xi4> {jax.result_info = "result[2]"}, tensor<4xi4> {jax.result_info = "result[3]"}, tensor<2xui4> {jax.result_info = "result[4]"}) {
    %c = stablehlo.constant dense<[-8, -1, 0, 7]> : tensor<4xi4>
    %c_0 = stablehlo.constant dense<[0, 15]> : tensor<2xui4>
    %0 = stablehlo.add %arg0, %arg0 : tensor<8xi4>
    %1 = stablehlo.multiply %arg1, %arg1 : tensor<8xui4>
    %2 = stablehlo.convert %1 : (tensor<8xui4>) -> tensor<8xi32>
    %3 = stablehlo.convert %arg2 : (tensor<8xi8>) -> tensor<8xi4>
    return %0, %2, %3, %c, %c_0 : tensor<8xi4>, tensor<8xi32>, tensor<8xi4>, tensor<4xi4>, tensor<2xui4>
  }
}
