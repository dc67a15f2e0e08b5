module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3x3xf32> {jax.result_info = "result[0]"}, tensor<3x3xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.iota dim = 0 : tensor<3x3xi32>
    %1 = stablehlo.iota dim = 1 : tensor<3x3xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3x3xi32>
    %3 = stablehlo.add %0, %2 : tensor<3x3xi32>
    %4 = stablehlo.compare EQ, %3, %1, SIGNED : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi1>
    %5 = stablehlo.convert %4 : (tensor<3x3xi1>) -> tensor<3x3xf32>
    %6 = stablehlo.slice %5 [0:3, 0:3] : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %7 = stablehlo.negate %arg0 : tensor<3xf32>
    %8 = stablehlo.exponential %7 : tensor<3xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %10 = stablehlo.add %9, %8 : tensor<3xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %12 = stablehlo.divide %11, %10 : tensor<3xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<3x3xf32>
    %15 = stablehlo.multiply %6, %14 : tensor<3x3xf32>
    %16 = stablehlo.transpose %15, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %17 = stablehlo.slice %16 [0:3, 0:3] : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %18 = stablehlo.iota dim = 0 : tensor<3x3xi32>
    %19 = stablehlo.iota dim = 1 : tensor<3x3xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %20 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<3x3xi32>
    %21 = stablehlo.add %18, %20 : tensor<3x3xi32>
    %22 = stablehlo.compare EQ, %21, %19, SIGNED : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi1>
    %23 = stablehlo.convert %22 : (tensor<3x3xi1>) -> tensor<3x3xf32>
    %24 = stablehlo.slice %23 [0:3, 0:3] : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %25 = stablehlo.cosine %arg0 : tensor<3xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<3x3xf32>
    %28 = stablehlo.multiply %24, %27 : tensor<3x3xf32>
    %29 = stablehlo.cosine %arg0 : tensor<3xf32>
    %30 = stablehlo.sine %arg0 : tensor<3xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %32 = stablehlo.broadcast_in_dim %31, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<3x3xf32>
    %33 = stablehlo.multiply %24, %32 : tensor<3x3xf32>
    %34 = stablehlo.negate %33 : tensor<3x3xf32>
    %35 = stablehlo.iota dim = 0 : tensor<1x1xi32>
    %36 = stablehlo.iota dim = 1 : tensor<1x1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %37 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<1x1xi32>
    %38 = stablehlo.add %35, %37 : tensor<1x1xi32>
    %39 = stablehlo.compare EQ, %38, %36, SIGNED : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1>
    %40 = stablehlo.convert %39 : (tensor<1x1xi1>) -> tensor<1x1xf32>
    %41 = stablehlo.slice %40 [0:1, 0:1] : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %42 = stablehlo.reshape %41 : (tensor<1x1xf32>) -> tensor<1xf32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [0] : (tensor<1xf32>) -> tensor<1x3xf32>
    %44 = stablehlo.broadcast_in_dim %28, dims = [0, 2] : (tensor<3x3xf32>) -> tensor<3x1x3xf32>
    %45 = stablehlo.broadcast_in_dim %43, dims = [1, 2] : (tensor<1x3xf32>) -> tensor<1x1x3xf32>
    %46 = stablehlo.broadcast_in_dim %45, dims = [0, 1, 2] : (tensor<1x1x3xf32>) -> tensor<3x1x3xf32>
    %47 = stablehlo.multiply %44, %46 : tensor<3x1x3xf32>
    %48 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %49 = stablehlo.broadcast_in_dim %24, dims = [0, 2] : (tensor<3x3xf32>) -> tensor<3x1x3xf32>
    %50 = stablehlo.multiply %43, %48 : tensor<1x3xf32>
    %51 = stablehlo.broadcast_in_dim %43, dims = [1, 2] : (tensor<1x3xf32>) -> tensor<1x1x3xf32>
    %52 = stablehlo.broadcast_in_dim %51, dims = [0, 1, 2] : (tensor<1x1x3xf32>) -> tensor<3x1x3xf32>
    %53 = stablehlo.multiply %52, %49 : tensor<3x1x3xf32>
    %54 = stablehlo.broadcast_in_dim %29, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %55 = stablehlo.broadcast_in_dim %34, dims = [0, 2] : (tensor<3x3xf32>) -> tensor<3x1x3xf32>
    %56 = stablehlo.broadcast_in_dim %54, dims = [1, 2] : (tensor<1x3xf32>) -> tensor<1x1x3xf32>
    %57 = stablehlo.broadcast_in_dim %56, dims = [0, 1, 2] : (tensor<1x1x3xf32>) -> tensor<3x1x3xf32>
    %58 = stablehlo.multiply %53, %57 : tensor<3x1x3xf32>
    %59 = stablehlo.broadcast_in_dim %50, dims = [1, 2] : (tensor<1x3xf32>) -> tensor<1x1x3xf32>
    %60 = stablehlo.broadcast_in_dim %59, dims = [0, 1, 2] : (tensor<1x1x3xf32>) -> tensor<3x1x3xf32>
    %61 = stablehlo.multiply %60, %55 : tensor<3x1x3xf32>
    %62 = stablehlo.add %58, %61 : tensor<3x1x3xf32>
    %63 = stablehlo.add %47, %62 : tensor<3x1x3xf32>
    %64 = stablehlo.slice %63 [0:3, 0:1, 0:3] : (tensor<3x1x3xf32>) -> tensor<3x1x3xf32>
    %65 = stablehlo.reshape %64 : (tensor<3x1x3xf32>) -> tensor<3x3xf32>
    %66 = stablehlo.transpose %65, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %67 = stablehlo.slice %66 [0:3, 0:3] : (tensor<3x3xf32>) -> tensor<3x3xf32>
    return %17, %67 : tensor<3x3xf32>, tensor<3x3xf32>
  }
}
