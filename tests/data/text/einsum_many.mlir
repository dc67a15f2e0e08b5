module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4x5xf32>, %arg2: tensor<3xf32>) -> (tensor<2x3x5xf32> {jax.result_info = "result[0]"}, tensor<2x4xf32> {jax.result_info = "result[1]"}, tensor<4x3x2xf32> {jax.result_info = "result[2]"}, tensor<2xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
    %1 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
    %2 = stablehlo.transpose %arg0, dims = [2, 1, 0] : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
    %3 = stablehlo.dot_general %arg0, %arg0, batching_dims = [0] x [0], contracting_dims = [1, 2] x [1, 2], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2xf32>
    return %0, %1, %2, %3 : tensor<2x3x5xf32>, tensor<2x4xf32>, tensor<4x3x2xf32>, tensor<2xf32>
  }
}
