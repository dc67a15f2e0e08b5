module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x3xf32>) -> (tensor<3xf32> {jax.result_info = "result[0][0]"}, tensor<6x3xf32> {jax.result_info = "result[0][1]"}, tensor<3xf32> {jax.result_info = "result[1][0]"}, tensor<6x3xf32> {jax.result_info = "result[1][1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<6x3xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2:4 = stablehlo.while(%iterArg = %arg0, %iterArg_4 = %c, %iterArg_5 = %0, %iterArg_6 = %1) : tensor<6x3xf32>, tensor<i32>, tensor<3xf32>, tensor<6x3xf32>
    cond {
      %c_7 = stablehlo.constant dense<6> : tensor<i32>
      %8 = stablehlo.compare LT, %iterArg_4, %c_7, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %8 : tensor<i1>
    } do {
      %8 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_4) : (tensor<6x3xf32>, tensor<i32>) -> tensor<3xf32>
      %cst_7 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
      %9 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %10 = stablehlo.multiply %iterArg_5, %9 : tensor<3xf32>
      %11 = stablehlo.add %10, %8 : tensor<3xf32>
      %12 = stablehlo.tanh %11 : tensor<3xf32>
      %13 = func.call @dynamic_update_index_in_dim(%iterArg_6, %12, %iterArg_4) : (tensor<6x3xf32>, tensor<3xf32>, tensor<i32>) -> tensor<6x3xf32>
      %c_8 = stablehlo.constant dense<1> : tensor<i32>
      %14 = stablehlo.add %iterArg_4, %c_8 : tensor<i32>
      stablehlo.return %iterArg, %14, %11, %13 : tensor<6x3xf32>, tensor<i32>, tensor<3xf32>, tensor<6x3xf32>
    }
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %4 = stablehlo.reshape %arg0 : (tensor<6x3xf32>) -> tensor<3x2x3xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<3x2x3xf32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %6:4 = stablehlo.while(%iterArg = %4, %iterArg_4 = %c_3, %iterArg_5 = %3, %iterArg_6 = %5) : tensor<3x2x3xf32>, tensor<i32>, tensor<3xf32>, tensor<3x2x3xf32>
    cond {
      %c_7 = stablehlo.constant dense<3> : tensor<i32>
      %8 = stablehlo.compare LT, %iterArg_4, %c_7, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %8 : tensor<i1>
    } do {
      %c_7 = stablehlo.constant dense<3> : tensor<i32>
      %8 = stablehlo.subtract %c_7, %iterArg_4 : tensor<i32>
      %c_8 = stablehlo.constant dense<1> : tensor<i32>
      %9 = stablehlo.subtract %8, %c_8 : tensor<i32>
      %10 = func.call @dynamic_index_in_dim_0(%iterArg, %9) : (tensor<3x2x3xf32>, tensor<i32>) -> tensor<2x3xf32>
      %11 = stablehlo.slice %10 [1:2, 0:3] : (tensor<2x3xf32>) -> tensor<1x3xf32>
      %12 = stablehlo.reshape %11 : (tensor<1x3xf32>) -> tensor<3xf32>
      %cst_9 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
      %13 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %14 = stablehlo.multiply %iterArg_5, %13 : tensor<3xf32>
      %15 = stablehlo.add %14, %12 : tensor<3xf32>
      %16 = stablehlo.tanh %15 : tensor<3xf32>
      %17 = stablehlo.slice %10 [0:1, 0:3] : (tensor<2x3xf32>) -> tensor<1x3xf32>
      %18 = stablehlo.reshape %17 : (tensor<1x3xf32>) -> tensor<3xf32>
      %cst_10 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
      %19 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %20 = stablehlo.multiply %15, %19 : tensor<3xf32>
      %21 = stablehlo.add %20, %18 : tensor<3xf32>
      %22 = stablehlo.tanh %21 : tensor<3xf32>
      %23 = stablehlo.broadcast_in_dim %22, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
      %24 = stablehlo.broadcast_in_dim %16, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
      %25 = stablehlo.concatenate %23, %24, dim = 0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
      %26 = func.call @dynamic_update_index_in_dim_1(%iterArg_6, %25, %9) : (tensor<3x2x3xf32>, tensor<2x3xf32>, tensor<i32>) -> tensor<3x2x3xf32>
      %c_11 = stablehlo.constant dense<1> : tensor<i32>
      %27 = stablehlo.add %iterArg_4, %c_11 : tensor<i32>
      stablehlo.return %iterArg, %27, %21, %26 : tensor<3x2x3xf32>, tensor<i32>, tensor<3xf32>, tensor<3x2x3xf32>
    }
    %7 = stablehlo.reshape %6#3 : (tensor<3x2x3xf32>) -> tensor<6x3xf32>
    return %2#2, %2#3, %6#2, %7 : tensor<3xf32>, tensor<6x3xf32>, tensor<3xf32>, tensor<6x3xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<6x3xf32>, %arg1: tensor<i32>) -> tensor<3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 3] : (tensor<6x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x3xf32>) -> tensor<3xf32>
    return %1 : tensor<3xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<6x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<i32>) -> tensor<6x3xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<6x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<6x3xf32>
    return %1 : tensor<6x3xf32>
  }
  func.func private @dynamic_index_in_dim_0(%arg0: tensor<3x2x3xf32>, %arg1: tensor<i32>) -> tensor<2x3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 2, 3] : (tensor<3x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x3xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
  func.func private @dynamic_update_index_in_dim_1(%arg0: tensor<3x2x3xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<i32>) -> tensor<3x2x3xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<3x2x3xf32>, tensor<1x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<3x2x3xf32>
    return %1 : tensor<3x2x3xf32>
  }
}
