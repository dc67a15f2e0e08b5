module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>, %arg1: tensor<3x4xi1>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<f32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = call @_where(%arg1, %arg0, %cst) : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = call @_where_0(%arg1, %arg0, %cst_1) : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst_2) applies stablehlo.add across dimensions = [0, 1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<f32>
    %cst_3 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %4 = call @_where_0(%arg1, %arg0, %cst_3) : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
    %cst_4 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_4) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<f32>
    %cst_5 = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %6 = stablehlo.maximum %cst_5, %5 : tensor<f32>
    return %1, %3, %6 : tensor<3xf32>, tensor<f32>, tensor<f32>
  }
  func.func private @_where(%arg0: tensor<3x4xi1>, %arg1: tensor<3x4xf32>, %arg2: tensor<f32>) -> tensor<3x4xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<3x4xi1>, tensor<3x4xf32>
    return %2 : tensor<3x4xf32>
  }
  func.func private @_where_0(%arg0: tensor<3x4xi1>, %arg1: tensor<3x4xf32>, %arg2: tensor<f32>) -> tensor<3x4xf32> {
    %0 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<3x4xi1>, tensor<3x4xf32>
    return %1 : tensor<3x4xf32>
  }
}
