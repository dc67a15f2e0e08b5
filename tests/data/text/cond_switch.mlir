module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32>, %arg1: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare GT, %arg0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %1 = stablehlo.convert %0 : (tensor<i1>) -> tensor<i32>
    %2 = "stablehlo.case"(%1) ({
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %9 = stablehlo.multiply %arg1, %8 : tensor<4xf32>
      stablehlo.return %9 : tensor<4xf32>
    }, {
      %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %9 = stablehlo.add %arg1, %8 : tensor<4xf32>
      stablehlo.return %9 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<2> : tensor<i32>
    %3 = stablehlo.clamp %c_0, %arg0, %c_1 : tensor<i32>
    %4 = "stablehlo.case"(%3) ({
      %8 = stablehlo.sine %arg1 : tensor<4xf32>
      stablehlo.return %8 : tensor<4xf32>
    }, {
      %8 = stablehlo.cosine %arg1 : tensor<4xf32>
      stablehlo.return %8 : tensor<4xf32>
    }, {
      %8 = stablehlo.tan %arg1 : tensor<4xf32>
      stablehlo.return %8 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    %c_2 = stablehlo.constant dense<3> : tensor<i32>
    %5 = stablehlo.compare GT, %arg0, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %6 = stablehlo.convert %5 : (tensor<i1>) -> tensor<i32>
    %7 = "stablehlo.case"(%6) ({
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      stablehlo.return %cst : tensor<f32>
    }, {
      %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      stablehlo.return %cst : tensor<f32>
    }) : (tensor<i32>) -> tensor<f32>
    return %2, %4, %7 : tensor<4xf32>, tensor<4xf32>, tensor<f32>
  }
}
