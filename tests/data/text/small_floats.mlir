module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf16>, %arg1: tensor<8xbf16>) -> (tensor<8xf16> {jax.result_info = "result[0]"}, tensor<8xbf16> {jax.result_info = "result[1]"}, tensor<8xf8E4M3FN> {jax.result_info = "result[2]"}, tensor<8xf8E5M2> {jax.result_info = "result[3]"}, tensor<8xf32> {jax.result_info = "result[4]"}, tensor<8xf16> {jax.result_info = "result[5]"}) {
    %cst = stablehlo.constant dense<9.997550e-02> : tensor<f16>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f16>) -> tensor<8xf16>
    %1 = stablehlo.multiply %arg0, %0 : tensor<8xf16>
    %cst_0 = stablehlo.constant dense<6.550400e+04> : tensor<f16>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f16>) -> tensor<8xf16>
    %3 = stablehlo.add %1, %2 : tensor<8xf16>
    %cst_1 = stablehlo.constant dense<3.004060e+38> : tensor<bf16>
    %4 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<bf16>) -> tensor<8xbf16>
    %5 = stablehlo.multiply %arg1, %4 : tensor<8xbf16>
    %6 = stablehlo.convert %arg0 : (tensor<8xf16>) -> tensor<8xf8E4M3FN>
    %7 = stablehlo.convert %arg1 : (tensor<8xbf16>) -> tensor<8xf8E5M2>
    %8 = stablehlo.convert %arg0 : (tensor<8xf16>) -> tensor<8xf8E4M3B11FNUZ>
    %9 = stablehlo.convert %8 : (tensor<8xf8E4M3B11FNUZ>) -> tensor<8xf32>
    %10 = stablehlo.reduce_precision %arg0, format = e4m3 : tensor<8xf16>
    return %3, %5, %6, %7, %9, %10 : tensor<8xf16>, tensor<8xbf16>, tensor<8xf8E4M3FN>, tensor<8xf8E5M2>, tensor<8xf32>, tensor<8xf16>
  }
}
