module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xi32>, %arg2: tensor<2x3xui32>) -> (tensor<2x3xf32> {jax.result_info = "result[0]"}, tensor<2x3xi32> {jax.result_info = "result[1]"}, tensor<2x3xi1> {jax.result_info = "result[2]"}, tensor<2x3xi1> {jax.result_info = "result[3]"}, tensor<2x3xi1> {jax.result_info = "result[4]"}, tensor<2x3xf32> {jax.result_info = "result[5]"}, tensor<2x3xi1> {jax.result_info = "result[6]"}, tensor<2x3xi1> {jax.result_info = "result[7]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %1 = stablehlo.compare GT, %arg0, %0, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    %2 = stablehlo.negate %arg0 : tensor<2x3xf32>
    %3 = call @_where(%1, %arg0, %2) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %c = stablehlo.constant dense<2> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2x3xi32>
    %5 = stablehlo.compare LE, %arg1, %4, SIGNED : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %6 = call @_where_0(%5, %arg1, %c_0) : (tensor<2x3xi1>, tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
    %c_1 = stablehlo.constant dense<3> : tensor<ui32>
    %7 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui32>) -> tensor<2x3xui32>
    %8 = stablehlo.compare GE, %arg2, %7, UNSIGNED : (tensor<2x3xui32>, tensor<2x3xui32>) -> tensor<2x3xi1>
    %9 = stablehlo.compare EQ, %arg0, %arg0, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    %c_2 = stablehlo.constant dense<1> : tensor<i32>
    %10 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<2x3xi32>
    %11 = stablehlo.compare NE, %arg1, %10, SIGNED : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
    %cst_3 = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = call @clip(%arg0, %cst_3, %cst_4) : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
    %13 = stablehlo.is_finite %arg0 : (tensor<2x3xf32>) -> tensor<2x3xi1>
    %14 = stablehlo.compare NE, %arg0, %arg0, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    return %3, %6, %8, %9, %11, %12, %13, %14 : tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>
  }
  func.func private @_where(%arg0: tensor<2x3xi1>, %arg1: tensor<2x3xf32>, %arg2: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<2x3xi1>, tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
  func.func private @_where_0(%arg0: tensor<2x3xi1>, %arg1: tensor<2x3xi32>, %arg2: tensor<i32>) -> tensor<2x3xi32> {
    %0 = stablehlo.convert %arg2 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<2x3xi32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<2x3xi1>, tensor<2x3xi32>
    return %2 : tensor<2x3xi32>
  }
  func.func private @clip(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<2x3xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<2x3xf32>
    %3 = stablehlo.convert %arg2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %5 = stablehlo.minimum %4, %2 : tensor<2x3xf32>
    return %5 : tensor<2x3xf32>
  }
}
