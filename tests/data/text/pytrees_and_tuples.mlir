module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32>, %arg1: tensor<3xi32>) -> (tensor<2xf32> {jax.result_info = "result[0]['a']"}, tensor<3xi32> {jax.result_info = "result[0]['b'][0]"}, tensor<2xf32> {jax.result_info = "result[0]['b'][1]"}, tensor<i32> {jax.result_info = "result[1][0]"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<2xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.reduce(%arg1 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<3xi32>, tensor<i32>) -> tensor<i32>
    return %arg0, %arg1, %1, %2 : tensor<2xf32>, tensor<3xi32>, tensor<2xf32>, tensor<i32>
  }
}
