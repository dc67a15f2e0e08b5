module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xf32>) -> (tensor<6xf32> {jax.result_info = "result[0]"}, tensor<6xf32> {jax.result_info = "result[1]"}, tensor<6xf32> {jax.result_info = "result[2]"}, tensor<6xf32> {jax.result_info = "result[3]"}, tensor<6xf32> {jax.result_info = "result[4]"}) {
    %cst = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %2 = stablehlo.clamp %0, %arg0, %1 : tensor<6xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %5 = stablehlo.clamp %3, %arg0, %4 : tensor<6xf32>
    %6 = call @round(%arg0) : (tensor<6xf32>) -> tensor<6xf32>
    %7 = call @trunc(%arg0) : (tensor<6xf32>) -> tensor<6xf32>
    %8 = call @rint(%arg0) : (tensor<6xf32>) -> tensor<6xf32>
    return %2, %5, %6, %7, %8 : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
  }
  func.func private @round(%arg0: tensor<6xf32>) -> tensor<6xf32> {
    %cst = stablehlo.constant dense<1.000000e+02> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<6xf32>
    %2 = stablehlo.round_nearest_even %1 : tensor<6xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+02> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %4 = stablehlo.divide %2, %3 : tensor<6xf32>
    return %4 : tensor<6xf32>
  }
  func.func private @trunc(%arg0: tensor<6xf32>) -> tensor<6xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %1 = stablehlo.compare LT, %arg0, %0, FLOAT : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>
    %2 = stablehlo.ceil %arg0 : tensor<6xf32>
    %3 = stablehlo.floor %arg0 : tensor<6xf32>
    %4 = call @_where(%1, %2, %3) : (tensor<6xi1>, tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    return %4 : tensor<6xf32>
  }
  func.func private @_where(%arg0: tensor<6xi1>, %arg1: tensor<6xf32>, %arg2: tensor<6xf32>) -> tensor<6xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<6xi1>, tensor<6xf32>
    return %0 : tensor<6xf32>
  }
  func.func private @rint(%arg0: tensor<6xf32>) -> tensor<6xf32> {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<6xf32>
    return %0 : tensor<6xf32>
  }
}
