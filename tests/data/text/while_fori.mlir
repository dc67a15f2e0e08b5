module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0:3 = stablehlo.while(%iterArg = %c_0, %iterArg_1 = %c, %iterArg_2 = %arg0) : tensor<i32>, tensor<i32>, tensor<3xf32>
    cond {
      %c_3 = stablehlo.constant dense<10> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %c_3 = stablehlo.constant dense<1> : tensor<i32>
      %2 = stablehlo.add %iterArg_1, %c_3 : tensor<i32>
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %4 = stablehlo.multiply %iterArg_2, %3 : tensor<3xf32>
      %5 = stablehlo.convert %iterArg_1 : (tensor<i32>) -> tensor<f32>
      %6 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %7 = stablehlo.add %4, %6 : tensor<3xf32>
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %8 = stablehlo.add %iterArg, %c_4 : tensor<i32>
      stablehlo.return %8, %2, %7 : tensor<i32>, tensor<i32>, tensor<3xf32>
    }
    %1 = stablehlo.while(%iterArg = %arg0) : tensor<3xf32>
    cond {
      %2 = stablehlo.slice %iterArg [0:1] : (tensor<3xf32>) -> tensor<1xf32>
      %3 = stablehlo.reshape %2 : (tensor<1xf32>) -> tensor<f32>
      %cst = stablehlo.constant dense<5.000000e+00> : tensor<f32>
      %4 = stablehlo.compare LT, %3, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %3 = stablehlo.add %iterArg, %2 : tensor<3xf32>
      stablehlo.return %3 : tensor<3xf32>
    }
    return %0#2, %1 : tensor<3xf32>, tensor<3xf32>
  }
}
