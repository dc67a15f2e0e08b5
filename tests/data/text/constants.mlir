module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}, tensor<2x2xi32> {jax.result_info = "result[2]"}, tensor<10x20xf32> {jax.result_info = "result[3]"}, tensor<2x2xi32> {jax.result_info = "result[4]"}, tensor<3xi1> {jax.result_info = "result[5]"}, tensor<150xi8> {jax.result_info = "result[6]"}, tensor<f32> {jax.result_info = "result[7]"}, tensor<3xf32> {jax.result_info = "result[8]"}, tensor<0x3xf32> {jax.result_info = "result[9]"}) {
    %cst = stablehlo.constant dense<[1.000000e-01, -2.500000e-08, 3.400000e+38]> : tensor<3xf32>
    %cst_0 = stablehlo.constant dense<[0x7FC00000, 0x7F800000, 0xFF800000]> : tensor<3xf32>
    %c = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
    %c_1 = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>
    %cst_2 = stablehlo.constant dense<[0x4CEB79A3, 1.401300e-45, 0x4B800000]> : tensor<3xf32>
    %0 = stablehlo.iota dim = 0 : tensor<200xf32>
    %1 = stablehlo.reshape %0 : (tensor<200xf32>) -> tensor<10x20xf32>
    %2 = stablehlo.add %arg0, %cst : tensor<3xf32>
    %c_3 = stablehlo.constant dense<7> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<2x2xi32>
    %cst_4 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<10x20xf32>
    %5 = stablehlo.multiply %1, %4 : tensor<10x20xf32>
    %6 = stablehlo.iota dim = 0 : tensor<150xi8>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<0x3xf32>
    %cst_6 = stablehlo.constant dense<-0.000000e+00> : tensor<f32>
    return %2, %cst_0, %3, %5, %c, %c_1, %6, %cst_6, %cst_2, %7 : tensor<3xf32>, tensor<3xf32>, tensor<2x2xi32>, tensor<10x20xf32>, tensor<2x2xi32>, tensor<3xi1>, tensor<150xi8>, tensor<f32>, tensor<3xf32>, tensor<0x3xf32>
  }
}
