module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xcomplex<f32>>, %arg1: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<4xcomplex<f32>> {jax.result_info = "result[2]"}, tensor<4xf32> {jax.result_info = "result[3]"}, tensor<4xcomplex<f32>> {jax.result_info = "result[4]"}, tensor<4xcomplex<f32>> {jax.result_info = "result[5]"}, tensor<2xcomplex<f32>> {jax.result_info = "result[6]"}, tensor<4xcomplex<f32>> {jax.result_info = "result[7]"}) {
    %cst = stablehlo.constant dense<[(1.000000e+00,2.000000e+00), (-0.000000e+00,-5.000000e-01)]> : tensor<2xcomplex<f32>>
    %cst_0 = stablehlo.constant dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f32>>
    %0 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f32>>) -> tensor<4xcomplex<f32>>
    %1 = stablehlo.multiply %arg0, %0 : tensor<4xcomplex<f32>>
    %2 = stablehlo.complex %arg1, %arg1 : tensor<4xcomplex<f32>>
    %3 = stablehlo.add %1, %2 : tensor<4xcomplex<f32>>
    %4 = stablehlo.real %3 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %5 = stablehlo.imag %3 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %6 = stablehlo.real %3 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %7 = stablehlo.imag %3 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %8 = stablehlo.negate %7 : tensor<4xf32>
    %9 = stablehlo.complex %6, %8 : tensor<4xcomplex<f32>>
    %10 = stablehlo.real %3 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %11 = stablehlo.imag %3 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %12 = stablehlo.abs %10 : tensor<4xf32>
    %13 = stablehlo.abs %11 : tensor<4xf32>
    %14 = stablehlo.maximum %12, %13 : tensor<4xf32>
    %cst_1 = stablehlo.constant dense<9.22337203E+18> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %16 = stablehlo.compare GE, %14, %15, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %cst_2 = stablehlo.constant dense<2.44140625E-4> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %18 = stablehlo.compare LE, %14, %17, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %cst_3 = stablehlo.constant dense<2.64697796E-23> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %cst_4 = stablehlo.constant dense<3.77789319E+22> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %22 = stablehlo.multiply %10, %19 : tensor<4xf32>
    %23 = stablehlo.multiply %10, %20 : tensor<4xf32>
    %24 = stablehlo.select %18, %23, %10 : tensor<4xi1>, tensor<4xf32>
    %25 = stablehlo.select %16, %22, %24 : tensor<4xi1>, tensor<4xf32>
    %26 = stablehlo.multiply %11, %19 : tensor<4xf32>
    %27 = stablehlo.multiply %11, %20 : tensor<4xf32>
    %28 = stablehlo.select %18, %27, %11 : tensor<4xi1>, tensor<4xf32>
    %29 = stablehlo.select %16, %26, %28 : tensor<4xi1>, tensor<4xf32>
    %30 = stablehlo.select %18, %19, %21 : tensor<4xi1>, tensor<4xf32>
    %31 = stablehlo.select %16, %20, %30 : tensor<4xi1>, tensor<4xf32>
    %32 = chlo.square %25 : tensor<4xf32> -> tensor<4xf32>
    %33 = chlo.square %29 : tensor<4xf32> -> tensor<4xf32>
    %34 = stablehlo.add %32, %33 : tensor<4xf32>
    %35 = stablehlo.sqrt %34 : tensor<4xf32>
    %36 = stablehlo.multiply %35, %31 : tensor<4xf32>
    %cst_6 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %37 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %38 = stablehlo.compare EQ, %12, %37, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %39 = stablehlo.compare EQ, %13, %37, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %40 = stablehlo.or %38, %39 : tensor<4xi1>
    %41 = stablehlo.select %40, %37, %36 : tensor<4xi1>, tensor<4xf32>
    %42 = stablehlo.divide %25, %35 : tensor<4xf32>
    %43 = stablehlo.divide %29, %35 : tensor<4xf32>
    %44 = stablehlo.exponential %3 : tensor<4xcomplex<f32>>
    %45 = stablehlo.divide %3, %arg0 : tensor<4xcomplex<f32>>
    %46 = stablehlo.sqrt %3 : tensor<4xcomplex<f32>>
    return %4, %5, %9, %41, %44, %45, %cst, %46 : tensor<4xf32>, tensor<4xf32>, tensor<4xcomplex<f32>>, tensor<4xf32>, tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<2xcomplex<f32>>, tensor<4xcomplex<f32>>
  }
}
