module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4x5xf32>, %arg1: tensor<3x4xi32>, %arg2: tensor<6xi1>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<3x5xf32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}, tensor<3x4xf32> {jax.result_info = "result[3]"}, tensor<4xi32> {jax.result_info = "result[4]"}, tensor<i32> {jax.result_info = "result[5]"}, tensor<i1> {jax.result_info = "result[6]"}, tensor<i1> {jax.result_info = "result[7]"}, tensor<3x4xf32> {jax.result_info = "result[8]"}, tensor<f32> {jax.result_info = "result[9]"}, tensor<3x5xf32> {jax.result_info = "result[10]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x5xf32>
    %cst_1 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %2 = stablehlo.reduce(%arg0 init: %cst_1) applies stablehlo.minimum across dimensions = [0, 2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%arg0 init: %cst_2) applies stablehlo.multiply across dimensions = [2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.reduce(%arg1 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<3x4xi32>, tensor<i32>) -> tensor<4xi32>
    %c_3 = stablehlo.constant dense<-2147483648> : tensor<i32>
    %5 = stablehlo.reduce(%arg1 init: %c_3) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<3x4xi32>, tensor<i32>) -> tensor<i32>
    %c_4 = stablehlo.constant dense<true> : tensor<i1>
    %6 = stablehlo.reduce(%arg2 init: %c_4) applies stablehlo.and across dimensions = [0] : (tensor<6xi1>, tensor<i1>) -> tensor<i1>
    %c_5 = stablehlo.constant dense<false> : tensor<i1>
    %7 = stablehlo.reduce(%arg2 init: %c_5) applies stablehlo.or across dimensions = [0] : (tensor<6xi1>, tensor<i1>) -> tensor<i1>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%arg0 init: %cst_6) applies stablehlo.add across dimensions = [2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x4xf32>
    %cst_7 = stablehlo.constant dense<5.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %10 = stablehlo.divide %8, %9 : tensor<3x4xf32>
    %c_8 = stablehlo.constant dense<0> : tensor<i32>
    %11 = call @_var(%arg0, %c_8) : (tensor<3x4x5xf32>, tensor<i32>) -> tensor<f32>
    %cst_9 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %12 = stablehlo.reduce(%arg0 init: %cst_9) applies stablehlo.maximum across dimensions = [1] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x5xf32>
    %cst_10 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %14 = stablehlo.maximum %13, %12 : tensor<3x5xf32>
    %15 = stablehlo.is_finite %14 : (tensor<3x5xf32>) -> tensor<3x5xi1>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
    %17 = stablehlo.select %15, %14, %16 : tensor<3x5xi1>, tensor<3x5xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 2] : (tensor<3x5xf32>) -> tensor<3x1x5xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2] : (tensor<3x1x5xf32>) -> tensor<3x4x5xf32>
    %20 = stablehlo.subtract %arg0, %19 : tensor<3x4x5xf32>
    %21 = stablehlo.exponential %20 : tensor<3x4x5xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %22 = stablehlo.reduce(%21 init: %cst_12) applies stablehlo.add across dimensions = [1] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x5xf32>
    %23 = stablehlo.abs %22 : tensor<3x5xf32>
    %24 = stablehlo.log %23 : tensor<3x5xf32>
    %25 = stablehlo.add %24, %17 : tensor<3x5xf32>
    return %0, %1, %2, %3, %4, %5, %6, %7, %10, %11, %25 : tensor<f32>, tensor<3x5xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<4xi32>, tensor<i32>, tensor<i1>, tensor<i1>, tensor<3x4xf32>, tensor<f32>, tensor<3x5xf32>
  }
  func.func private @_var(%arg0: tensor<3x4x5xf32>, %arg1: tensor<i32>) -> tensor<f32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<1x1x1xf32>
    %cst_0 = stablehlo.constant dense<6.000000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x1x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<1x1x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<1x1x1xf32>) -> tensor<3x4x5xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<3x4x5xf32>
    %6 = chlo.square %5 : tensor<3x4x5xf32> -> tensor<3x4x5xf32>
    %7 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<6.000000e+01> : tensor<f32>
    %8 = stablehlo.subtract %cst_1, %7 : tensor<f32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%6 init: %cst_2) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<f32>
    %10 = stablehlo.divide %9, %8 : tensor<f32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.compare GT, %8, %cst_3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %12 = call @_where(%11, %10, %cst_4) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    return %12 : tensor<f32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<i1>, tensor<f32>
    return %1 : tensor<f32>
  }
}
