module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<3x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<3x4xf32>
    %1 = stablehlo.cosine %arg0 : tensor<3x4xf32>
    %2 = stablehlo.add %0, %1 : tensor<3x4xf32>
    %3 = stablehlo.tanh %arg0 : tensor<3x4xf32>
    %4 = stablehlo.add %2, %3 : tensor<3x4xf32>
    %5 = stablehlo.exponential %arg0 : tensor<3x4xf32>
    %6 = stablehlo.add %4, %5 : tensor<3x4xf32>
    %7 = stablehlo.log %arg0 : tensor<3x4xf32>
    %8 = stablehlo.add %6, %7 : tensor<3x4xf32>
    %9 = stablehlo.log_plus_one %arg0 : tensor<3x4xf32>
    %10 = stablehlo.add %8, %9 : tensor<3x4xf32>
    %11 = stablehlo.exponential_minus_one %arg0 : tensor<3x4xf32>
    %12 = stablehlo.add %10, %11 : tensor<3x4xf32>
    %13 = stablehlo.sqrt %arg0 : tensor<3x4xf32>
    %14 = stablehlo.add %12, %13 : tensor<3x4xf32>
    %15 = stablehlo.rsqrt %arg0 : tensor<3x4xf32>
    %16 = stablehlo.add %14, %15 : tensor<3x4xf32>
    %17 = stablehlo.cbrt %arg0 : tensor<3x4xf32>
    %18 = stablehlo.add %16, %17 : tensor<3x4xf32>
    %19 = stablehlo.abs %arg0 : tensor<3x4xf32>
    %20 = stablehlo.add %18, %19 : tensor<3x4xf32>
    %21 = stablehlo.subtract %20, %arg0 : tensor<3x4xf32>
    %22 = stablehlo.sign %arg0 : tensor<3x4xf32>
    %23 = stablehlo.add %21, %22 : tensor<3x4xf32>
    %24 = stablehlo.floor %arg0 : tensor<3x4xf32>
    %25 = stablehlo.add %23, %24 : tensor<3x4xf32>
    %26 = stablehlo.ceil %arg0 : tensor<3x4xf32>
    %27 = stablehlo.add %25, %26 : tensor<3x4xf32>
    %28 = call @round(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %29 = stablehlo.add %27, %28 : tensor<3x4xf32>
    %30 = stablehlo.negate %arg0 : tensor<3x4xf32>
    %31 = stablehlo.exponential %30 : tensor<3x4xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %32 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %33 = stablehlo.add %32, %31 : tensor<3x4xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %35 = stablehlo.divide %34, %33 : tensor<3x4xf32>
    %36 = stablehlo.add %29, %35 : tensor<3x4xf32>
    %37 = stablehlo.tan %arg0 : tensor<3x4xf32>
    %38 = stablehlo.add %36, %37 : tensor<3x4xf32>
    %39 = stablehlo.round_nearest_afz %arg0 : tensor<3x4xf32>
    %40 = stablehlo.add %38, %39 : tensor<3x4xf32>
    return %40 : tensor<3x4xf32>
  }
  func.func private @round(%arg0: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}
