module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xi32> {jax.result_info = "result[0]"}, tensor<4xf16> {jax.result_info = "result[1]"}, tensor<4xbf16> {jax.result_info = "result[2]"}, tensor<4xf32> {jax.result_info = "result[3]"}, tensor<4xui8> {jax.result_info = "result[4]"}, tensor<4xi1> {jax.result_info = "result[5]"}, tensor<4xi32> {jax.result_info = "result[6]"}, tensor<4x2xui16> {jax.result_info = "result[7]"}, tensor<4xi16> {jax.result_info = "result[8]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xi32>
    %1 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xf16>
    %2 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xbf16>
    %3 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xui8>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %5 = stablehlo.compare NE, %arg0, %4, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %6 = stablehlo.convert %5 : tensor<4xi1>
    %7 = stablehlo.bitcast_convert %arg0 : (tensor<4xf32>) -> tensor<4xi32>
    %8 = stablehlo.bitcast_convert %arg0 : (tensor<4xf32>) -> tensor<4x2xui16>
    %9 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xi8>
    %10 = stablehlo.convert %9 : (tensor<4xi8>) -> tensor<4xi16>
    return %0, %1, %2, %arg0, %3, %6, %7, %8, %10 : tensor<4xi32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xui8>, tensor<4xi1>, tensor<4xi32>, tensor<4x2xui16>, tensor<4xi16>
  }
}
