module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4xf32>) -> (tensor<6x4xf32> {jax.result_info = "result[0]"}, tensor<4x2x3xf32> {jax.result_info = "result[1]"}, tensor<2x3x4xf32> {jax.result_info = "result[2]"}, tensor<2x2x2xf32> {jax.result_info = "result[3]"}, tensor<2x6x4xf32> {jax.result_info = "result[4]"}, tensor<3x5x6xf32> {jax.result_info = "result[5]"}, tensor<3x5x4xf32> {jax.result_info = "result[6]"}, tensor<2x5x4xf32> {jax.result_info = "result[7]"}, tensor<2x1x3x4xf32> {jax.result_info = "result[8]"}, tensor<3x4xf32> {jax.result_info = "result[9]"}, tensor<3x4xf32> {jax.result_info = "result[10]"}, tensor<7xi32> {jax.result_info = "result[11]"}, tensor<6x4xf32> {jax.result_info = "result[12]"}, tensor<12xf32> {jax.result_info = "result[13]"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
    %1 = stablehlo.transpose %arg0, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    %2 = call @_flip(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %3 = stablehlo.slice %arg0 [0:2, 1:3, 0:4:2] : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
    %4 = stablehlo.concatenate %arg0, %arg0, dim = 1 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %5 = call @_pad(%arg0, %c) : (tensor<2x3x4xf32>, tensor<i32>) -> tensor<3x5x6xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.pad %arg0, %cst, low = [0, 1, 0], high = [0, 1, 0], interior = [1, 0, 0] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3x5x4xf32>
    %7 = stablehlo.slice %arg0 [0:2, 0:1, 0:4] : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<2x1x4xf32>) -> tensor<2x5x4xf32>
    %9 = stablehlo.broadcast_in_dim %arg0, dims = [0, 2, 3] : (tensor<2x3x4xf32>) -> tensor<2x1x3x4xf32>
    %10 = stablehlo.slice %arg0 [0:1, 0:3, 0:4] : (tensor<2x3x4xf32>) -> tensor<1x3x4xf32>
    %11 = stablehlo.reshape %10 : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
    %12 = stablehlo.slice %arg0 [0:1, 0:1, 0:4] : (tensor<2x3x4xf32>) -> tensor<1x1x4xf32>
    %13 = stablehlo.reshape %12 : (tensor<1x1x4xf32>) -> tensor<4xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
    %15 = stablehlo.iota dim = 0 : tensor<7xi32>
    %16 = stablehlo.slice %arg0 [0:1, 0:3, 0:4] : (tensor<2x3x4xf32>) -> tensor<1x3x4xf32>
    %17 = stablehlo.reshape %16 : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
    %18 = stablehlo.reshape %17 : (tensor<3x4xf32>) -> tensor<1x3x1x4xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2, 3] : (tensor<1x3x1x4xf32>) -> tensor<2x3x1x4xf32>
    %20 = stablehlo.reshape %19 : (tensor<2x3x1x4xf32>) -> tensor<6x4xf32>
    %21 = stablehlo.slice %arg0 [0:1, 0:1, 0:4] : (tensor<2x3x4xf32>) -> tensor<1x1x4xf32>
    %22 = stablehlo.reshape %21 : (tensor<1x1x4xf32>) -> tensor<4xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0] : (tensor<4xf32>) -> tensor<4x3xf32>
    %24 = stablehlo.reshape %23 : (tensor<4x3xf32>) -> tensor<12xf32>
    return %0, %1, %2, %3, %4, %5, %6, %8, %9, %11, %14, %15, %20, %24 : tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>, tensor<2x2x2xf32>, tensor<2x6x4xf32>, tensor<3x5x6xf32>, tensor<3x5x4xf32>, tensor<2x5x4xf32>, tensor<2x1x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<7xi32>, tensor<6x4xf32>, tensor<12xf32>
  }
  func.func private @_flip(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0, 2] : tensor<2x3x4xf32>
    return %0 : tensor<2x3x4xf32>
  }
  func.func private @_pad(%arg0: tensor<2x3x4xf32>, %arg1: tensor<i32>) -> tensor<3x5x6xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0, 1], high = [0, 2, 1], interior = [0, 0, 0] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3x5x6xf32>
    return %1 : tensor<3x5x6xf32>
  }
}
