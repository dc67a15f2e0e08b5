module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>, %arg1: tensor<4x5xf32>, %arg2: tensor<7x3x4xf32>, %arg3: tensor<7x4x2xf32>) -> (tensor<3x5xf32> {jax.result_info = "result[0]"}, tensor<7x3x2xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}, tensor<3x5xf32> {jax.result_info = "result[3]"}, tensor<7x3x2xf32> {jax.result_info = "result[4]"}, tensor<f32> {jax.result_info = "result[5]"}, tensor<4x5xf32> {jax.result_info = "result[6]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
    %1 = stablehlo.dot_general %arg2, %arg3, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<7x3x4xf32>, tensor<7x4x2xf32>) -> tensor<7x3x2xf32>
    %2 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<3x4xf32>) -> tensor<1x4xf32>
    %3 = stablehlo.reshape %2 : (tensor<1x4xf32>) -> tensor<4xf32>
    %4 = stablehlo.slice %arg1 [0:4, 0:1] : (tensor<4x5xf32>) -> tensor<4x1xf32>
    %5 = stablehlo.reshape %4 : (tensor<4x1xf32>) -> tensor<4xf32>
    %6 = stablehlo.dot_general %3, %5, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %7 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
    %8 = stablehlo.dot_general %arg2, %arg3, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<7x3x4xf32>, tensor<7x4x2xf32>) -> tensor<7x3x2xf32>
    %9 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<f32>
    %10 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<3x4xf32>) -> tensor<1x4xf32>
    %11 = stablehlo.reshape %10 : (tensor<1x4xf32>) -> tensor<4xf32>
    %12 = stablehlo.slice %arg1 [0:1, 0:5] : (tensor<4x5xf32>) -> tensor<1x5xf32>
    %13 = stablehlo.reshape %12 : (tensor<1x5xf32>) -> tensor<5xf32>
    %14 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %15 = stablehlo.broadcast_in_dim %13, dims = [1] : (tensor<5xf32>) -> tensor<1x5xf32>
    %16 = stablehlo.broadcast_in_dim %14, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x5xf32>
    %17 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<1x5xf32>) -> tensor<4x5xf32>
    %18 = stablehlo.multiply %16, %17 : tensor<4x5xf32>
    return %0, %1, %6, %7, %8, %9, %18 : tensor<3x5xf32>, tensor<7x3x2xf32>, tensor<f32>, tensor<3x5xf32>, tensor<7x3x2xf32>, tensor<f32>, tensor<4x5xf32>
  }
}
