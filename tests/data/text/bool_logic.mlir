module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xi1>, %arg1: tensor<6xi1>) -> (tensor<6xi1> {jax.result_info = "result[0]"}, tensor<6xi1> {jax.result_info = "result[1]"}, tensor<6xi1> {jax.result_info = "result[2]"}, tensor<6xi1> {jax.result_info = "result[3]"}, tensor<6xi1> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.and %arg0, %arg1 : tensor<6xi1>
    %1 = stablehlo.or %arg0, %arg1 : tensor<6xi1>
    %2 = stablehlo.xor %arg0, %arg1 : tensor<6xi1>
    %3 = stablehlo.not %arg0 : tensor<6xi1>
    %4 = stablehlo.not %arg1 : tensor<6xi1>
    %5 = stablehlo.and %arg0, %4 : tensor<6xi1>
    return %0, %1, %2, %3, %5 : tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>
  }
}
