module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xbf16>, %arg1: tensor<4xf16>) -> (tensor<4x4xf32> {jax.result_info = "result[0]"}, tensor<4xf16> {jax.result_info = "result[1]"}, tensor<4x4xf32> {jax.result_info = "result[2]"}, tensor<f32> {jax.result_info = "result[3]"}, tensor<4x4xbf16> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
    %1 = stablehlo.convert %0 : (tensor<4x4xbf16>) -> tensor<4x4xf32>
    %2 = stablehlo.exponential %arg1 : tensor<4xf16>
    %3 = stablehlo.convert %arg0 : (tensor<4x4xbf16>) -> tensor<4x4xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %6 = stablehlo.maximum %5, %4 : tensor<4xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x4xf32>
    %9 = stablehlo.subtract %3, %8 : tensor<4x4xf32>
    %10 = stablehlo.exponential %9 : tensor<4x4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.reduce(%10 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x4xf32>
    %14 = stablehlo.divide %10, %13 : tensor<4x4xf32>
    %15 = stablehlo.convert %arg1 : (tensor<4xf16>) -> tensor<4xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.reduce(%15 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %17 = stablehlo.convert %arg0 : (tensor<4x4xbf16>) -> tensor<4x4xf8E4M3FN>
    %18 = stablehlo.convert %17 : (tensor<4x4xf8E4M3FN>) -> tensor<4x4xbf16>
    return %1, %2, %14, %16, %18 : tensor<4x4xf32>, tensor<4xf16>, tensor<4x4xf32>, tensor<f32>, tensor<4x4xbf16>
  }
}
