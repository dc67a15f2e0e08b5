module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0:4 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %c_0, %iterArg_2 = %c, %iterArg_3 = %cst) : tensor<4x4xf32>, tensor<i32>, tensor<i32>, tensor<f32>
    cond {
      %c_4 = stablehlo.constant dense<4> : tensor<i32>
      %1 = stablehlo.compare LT, %iterArg_1, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %1 = stablehlo.add %iterArg_2, %c_4 : tensor<i32>
      %c_5 = stablehlo.constant dense<0> : tensor<i32>
      %c_6 = stablehlo.constant dense<0> : tensor<i32>
      %2:5 = stablehlo.while(%iterArg_8 = %iterArg_2, %iterArg_9 = %iterArg, %iterArg_10 = %c_6, %iterArg_11 = %c_5, %iterArg_12 = %iterArg_3) : tensor<i32>, tensor<4x4xf32>, tensor<i32>, tensor<i32>, tensor<f32>
      cond {
        %c_13 = stablehlo.constant dense<4> : tensor<i32>
        %4 = stablehlo.compare LT, %iterArg_10, %c_13, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %4 : tensor<i1>
      } do {
        %c_13 = stablehlo.constant dense<1> : tensor<i32>
        %4 = stablehlo.add %iterArg_11, %c_13 : tensor<i32>
        %c_14 = stablehlo.constant dense<2> : tensor<i32>
        %5 = func.call @remainder(%iterArg_11, %c_14) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        %c_15 = stablehlo.constant dense<0> : tensor<i32>
        %6 = stablehlo.compare EQ, %5, %c_15, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        %7 = stablehlo.convert %6 : (tensor<i1>) -> tensor<i32>
        %8 = "stablehlo.case"(%7) ({
          %10 = stablehlo.convert %iterArg_11 : tensor<i32>
          %11 = stablehlo.convert %iterArg_8 : tensor<i32>
          %c_17 = stablehlo.constant dense<0> : tensor<i32>
          %12 = stablehlo.compare LT, %10, %c_17, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          %c_18 = stablehlo.constant dense<4> : tensor<i32>
          %13 = stablehlo.add %10, %c_18 : tensor<i32>
          %14 = stablehlo.select %12, %13, %10 : tensor<i1>, tensor<i32>
          %c_19 = stablehlo.constant dense<0> : tensor<i32>
          %15 = stablehlo.compare LT, %11, %c_19, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          %c_20 = stablehlo.constant dense<4> : tensor<i32>
          %16 = stablehlo.add %11, %c_20 : tensor<i32>
          %17 = stablehlo.select %15, %16, %11 : tensor<i1>, tensor<i32>
          %18 = stablehlo.dynamic_slice %iterArg_9, %14, %17, sizes = [1, 1] : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1xf32>
          %19 = stablehlo.reshape %18 : (tensor<1x1xf32>) -> tensor<f32>
          %20 = stablehlo.subtract %iterArg_12, %19 : tensor<f32>
          stablehlo.return %20 : tensor<f32>
        }, {
          %10 = stablehlo.convert %iterArg_8 : tensor<i32>
          %11 = stablehlo.convert %iterArg_11 : tensor<i32>
          %c_17 = stablehlo.constant dense<0> : tensor<i32>
          %12 = stablehlo.compare LT, %10, %c_17, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          %c_18 = stablehlo.constant dense<4> : tensor<i32>
          %13 = stablehlo.add %10, %c_18 : tensor<i32>
          %14 = stablehlo.select %12, %13, %10 : tensor<i1>, tensor<i32>
          %c_19 = stablehlo.constant dense<0> : tensor<i32>
          %15 = stablehlo.compare LT, %11, %c_19, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          %c_20 = stablehlo.constant dense<4> : tensor<i32>
          %16 = stablehlo.add %11, %c_20 : tensor<i32>
          %17 = stablehlo.select %15, %16, %11 : tensor<i1>, tensor<i32>
          %18 = stablehlo.dynamic_slice %iterArg_9, %14, %17, sizes = [1, 1] : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1xf32>
          %19 = stablehlo.reshape %18 : (tensor<1x1xf32>) -> tensor<f32>
          %20 = stablehlo.add %iterArg_12, %19 : tensor<f32>
          stablehlo.return %20 : tensor<f32>
        }) : (tensor<i32>) -> tensor<f32>
        %c_16 = stablehlo.constant dense<1> : tensor<i32>
        %9 = stablehlo.add %iterArg_10, %c_16 : tensor<i32>
        stablehlo.return %iterArg_8, %iterArg_9, %9, %4, %8 : tensor<i32>, tensor<4x4xf32>, tensor<i32>, tensor<i32>, tensor<f32>
      }
      %c_7 = stablehlo.constant dense<1> : tensor<i32>
      %3 = stablehlo.add %iterArg_1, %c_7 : tensor<i32>
      stablehlo.return %iterArg, %3, %1, %2#4 : tensor<4x4xf32>, tensor<i32>, tensor<i32>, tensor<f32>
    }
    return %0#3 : tensor<f32>
  }
  func.func private @remainder(%arg0: tensor<i32>, %arg1: tensor<i32>) -> tensor<i32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare EQ, %arg1, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %1 = call @_where(%0, %c_0, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %2 = stablehlo.remainder %arg0, %1 : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.compare NE, %2, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.compare LT, %2, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.compare LT, %1, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %6 = stablehlo.compare NE, %4, %5, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %7 = stablehlo.and %6, %3 : tensor<i1>
    %8 = stablehlo.add %2, %1 : tensor<i32>
    %9 = stablehlo.select %7, %8, %2 : tensor<i1>, tensor<i32>
    return %9 : tensor<i32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
}
