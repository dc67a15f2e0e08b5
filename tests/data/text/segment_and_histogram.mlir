module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf32>, %arg1: tensor<10xi32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<5xi32> {jax.result_info = "result[2]"}, tensor<i32> {jax.result_info = "result[3]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<10xi32>) -> tensor<10x1xi32>
    %2 = "stablehlo.scatter"(%0, %1, %arg0) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %18 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %18 : tensor<f32>
    }) : (tensor<4xf32>, tensor<10x1xi32>, tensor<10xf32>) -> tensor<4xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %4 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<10xi32>) -> tensor<10x1xi32>
    %5 = "stablehlo.scatter"(%3, %4, %arg0) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %18 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
      stablehlo.return %18 : tensor<f32>
    }) : (tensor<4xf32>, tensor<10x1xi32>, tensor<10xf32>) -> tensor<4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %7 = call @clip(%arg1, %c_1) : (tensor<10xi32>, tensor<i32>) -> tensor<10xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %9 = stablehlo.compare LT, %7, %8, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %c_3 = stablehlo.constant dense<5> : tensor<i32>
    %10 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %11 = stablehlo.add %7, %10 : tensor<10xi32>
    %12 = stablehlo.select %9, %11, %7 : tensor<10xi1>, tensor<10xi32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0] : (tensor<10xi32>) -> tensor<10x1xi32>
    %c_4 = stablehlo.constant dense<1> : tensor<i32>
    %14 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %15 = "stablehlo.scatter"(%6, %13, %14) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<i32>):
      %18 = stablehlo.add %arg2, %arg3 : tensor<i32>
      stablehlo.return %18 : tensor<i32>
    }) : (tensor<5xi32>, tensor<10x1xi32>, tensor<10xi32>) -> tensor<5xi32>
    %16 = call @sort(%arg0) : (tensor<10xf32>) -> tensor<10xf32>
    %cst_5 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %17 = call @searchsorted(%16, %cst_5) : (tensor<10xf32>, tensor<f32>) -> tensor<i32>
    return %2, %5, %15, %17 : tensor<4xf32>, tensor<4xf32>, tensor<5xi32>, tensor<i32>
  }
  func.func private @clip(%arg0: tensor<10xi32>, %arg1: tensor<i32>) -> tensor<10xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<10xi32>
    return %2 : tensor<10xi32>
  }
  func.func private @sort(%arg0: tensor<10xf32>) -> tensor<10xf32> {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %1 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.select %1, %cst_0, %arg1 : tensor<i1>, tensor<f32>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %4 = stablehlo.select %3, %cst_1, %2 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %5 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.select %5, %cst_3, %arg2 : tensor<i1>, tensor<f32>
      %7 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %8 = stablehlo.select %7, %cst_4, %6 : tensor<i1>, tensor<f32>
      %9 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %9 : tensor<i1>
    }) : (tensor<10xf32>) -> tensor<10xf32>
    return %0 : tensor<10xf32>
  }
  func.func private @searchsorted(%arg0: tensor<10xf32>, %arg1: tensor<f32>) -> tensor<i32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = call @_searchsorted_scan_impl(%arg0, %0) : (tensor<10xf32>, tensor<f32>) -> tensor<i32>
    return %1 : tensor<i32>
  }
  func.func private @_searchsorted_scan_impl(%arg0: tensor<10xf32>, %arg1: tensor<f32>) -> tensor<i32> {
    %c = stablehlo.constant dense<0> : tensor<ui32>
    %c_0 = stablehlo.constant dense<10> : tensor<ui32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %0:5 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %arg1, %iterArg_3 = %c_1, %iterArg_4 = %c, %iterArg_5 = %c_0) : tensor<10xf32>, tensor<f32>, tensor<i32>, tensor<ui32>, tensor<ui32>
    cond {
      %c_6 = stablehlo.constant dense<4> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg_3, %c_6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %2 = stablehlo.subtract %iterArg_5, %iterArg_4 : tensor<ui32>
      %c_6 = stablehlo.constant dense<2> : tensor<i32>
      %3 = func.call @floor_divide(%2, %c_6) : (tensor<ui32>, tensor<i32>) -> tensor<ui32>
      %4 = stablehlo.add %iterArg_4, %3 : tensor<ui32>
      %5 = stablehlo.dynamic_slice %iterArg, %4, sizes = [1] : (tensor<10xf32>, tensor<ui32>) -> tensor<1xf32>
      %6 = stablehlo.reshape %5 : (tensor<1xf32>) -> tensor<f32>
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %7 = stablehlo.compare EQ, %iterArg_2, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %8 = stablehlo.select %7, %cst_7, %iterArg_2 : tensor<i1>, tensor<f32>
      %9 = stablehlo.compare NE, %iterArg_2, %iterArg_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_8 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %10 = stablehlo.select %9, %cst_8, %8 : tensor<i1>, tensor<f32>
      %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %11 = stablehlo.compare EQ, %6, %cst_9, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %12 = stablehlo.select %11, %cst_10, %6 : tensor<i1>, tensor<f32>
      %13 = stablehlo.compare NE, %6, %6, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_11 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %14 = stablehlo.select %13, %cst_11, %12 : tensor<i1>, tensor<f32>
      %15 = stablehlo.compare LE, %10, %14, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %16 = stablehlo.select %15, %iterArg_4, %4 : tensor<i1>, tensor<ui32>
      %17 = stablehlo.select %15, %4, %iterArg_5 : tensor<i1>, tensor<ui32>
      %c_12 = stablehlo.constant dense<1> : tensor<i32>
      %18 = stablehlo.add %iterArg_3, %c_12 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_2, %18, %16, %17 : tensor<10xf32>, tensor<f32>, tensor<i32>, tensor<ui32>, tensor<ui32>
    }
    %1 = stablehlo.convert %0#4 : (tensor<ui32>) -> tensor<i32>
    return %1 : tensor<i32>
  }
  func.func private @floor_divide(%arg0: tensor<ui32>, %arg1: tensor<i32>) -> tensor<ui32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<ui32>
    %1 = stablehlo.divide %arg0, %0 : tensor<ui32>
    return %1 : tensor<ui32>
  }
}
