module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result[0]"}, tensor<5xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<[1.000000e+00, -2.000000e+00, 3.000000e+00]> : tensor<3xf32>
    %cst_0 = stablehlo.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
    %cst_1 = stablehlo.constant dense<[2.000000e+00, 4.000000e+00]> : tensor<2xf32>
    %0 = call @polyval(%cst, %arg0) : (tensor<3xf32>, tensor<5xf32>) -> tensor<5xf32>
    %1 = call @_interp(%arg0, %cst_0, %cst_1) : (tensor<5xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<5xf32>
    return %0, %1 : tensor<5xf32>, tensor<5xf32>
  }
  func.func private @polyval(%arg0: tensor<3xf32>, %arg1: tensor<5xf32>) -> tensor<5xf32> {
    %0 = stablehlo.slice %arg0 [2:3] : (tensor<3xf32>) -> tensor<1xf32>
    %1 = stablehlo.reshape %0 : (tensor<1xf32>) -> tensor<f32>
    %2 = stablehlo.slice %arg0 [1:2] : (tensor<3xf32>) -> tensor<1xf32>
    %3 = stablehlo.reshape %2 : (tensor<1xf32>) -> tensor<f32>
    %4 = stablehlo.slice %arg0 [0:1] : (tensor<3xf32>) -> tensor<1xf32>
    %5 = stablehlo.reshape %4 : (tensor<1xf32>) -> tensor<f32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %7 = stablehlo.multiply %6, %arg1 : tensor<5xf32>
    %8 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %9 = stablehlo.add %7, %8 : tensor<5xf32>
    %10 = stablehlo.multiply %9, %arg1 : tensor<5xf32>
    %11 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %12 = stablehlo.add %10, %11 : tensor<5xf32>
    return %12 : tensor<5xf32>
  }
  func.func private @_interp(%arg0: tensor<5xf32>, %arg1: tensor<2xf32>, %arg2: tensor<2xf32>) -> tensor<5xf32> {
    %0 = call @searchsorted(%arg1, %arg0) : (tensor<2xf32>, tensor<5xf32>) -> tensor<5xi32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %1 = call @clip(%0, %c, %c_0) : (tensor<5xi32>, tensor<i32>, tensor<i32>) -> tensor<5xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %3 = stablehlo.compare LT, %1, %2, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_2 = stablehlo.constant dense<2> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %5 = stablehlo.add %1, %4 : tensor<5xi32>
    %6 = stablehlo.select %3, %5, %1 : tensor<5xi1>, tensor<5xi32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %8 = "stablehlo.gather"(%arg2, %7) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<2xf32>, tensor<5x1xi32>) -> tensor<5xf32>
    %c_3 = stablehlo.constant dense<1> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %10 = stablehlo.subtract %1, %9 : tensor<5xi32>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %11 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %12 = stablehlo.compare LT, %10, %11, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_5 = stablehlo.constant dense<2> : tensor<i32>
    %13 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %14 = stablehlo.add %10, %13 : tensor<5xi32>
    %15 = stablehlo.select %12, %14, %10 : tensor<5xi1>, tensor<5xi32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %17 = "stablehlo.gather"(%arg2, %16) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<2xf32>, tensor<5x1xi32>) -> tensor<5xf32>
    %18 = stablehlo.subtract %8, %17 : tensor<5xf32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %19 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %20 = stablehlo.compare LT, %1, %19, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_7 = stablehlo.constant dense<2> : tensor<i32>
    %21 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %22 = stablehlo.add %1, %21 : tensor<5xi32>
    %23 = stablehlo.select %20, %22, %1 : tensor<5xi1>, tensor<5xi32>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %25 = "stablehlo.gather"(%arg1, %24) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<2xf32>, tensor<5x1xi32>) -> tensor<5xf32>
    %c_8 = stablehlo.constant dense<1> : tensor<i32>
    %26 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %27 = stablehlo.subtract %1, %26 : tensor<5xi32>
    %c_9 = stablehlo.constant dense<0> : tensor<i32>
    %28 = stablehlo.broadcast_in_dim %c_9, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %29 = stablehlo.compare LT, %27, %28, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_10 = stablehlo.constant dense<2> : tensor<i32>
    %30 = stablehlo.broadcast_in_dim %c_10, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %31 = stablehlo.add %27, %30 : tensor<5xi32>
    %32 = stablehlo.select %29, %31, %27 : tensor<5xi1>, tensor<5xi32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %34 = "stablehlo.gather"(%arg1, %33) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<2xf32>, tensor<5x1xi32>) -> tensor<5xf32>
    %35 = stablehlo.subtract %25, %34 : tensor<5xf32>
    %c_11 = stablehlo.constant dense<1> : tensor<i32>
    %36 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %37 = stablehlo.subtract %1, %36 : tensor<5xi32>
    %c_12 = stablehlo.constant dense<0> : tensor<i32>
    %38 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %39 = stablehlo.compare LT, %37, %38, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_13 = stablehlo.constant dense<2> : tensor<i32>
    %40 = stablehlo.broadcast_in_dim %c_13, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %41 = stablehlo.add %37, %40 : tensor<5xi32>
    %42 = stablehlo.select %39, %41, %37 : tensor<5xi1>, tensor<5xi32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %44 = "stablehlo.gather"(%arg1, %43) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<2xf32>, tensor<5x1xi32>) -> tensor<5xf32>
    %45 = stablehlo.subtract %arg0, %44 : tensor<5xf32>
    %46 = stablehlo.abs %35 : tensor<5xf32>
    %cst = stablehlo.constant dense<1.42108547E-14> : tensor<f32>
    %47 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %48 = stablehlo.compare LE, %46, %47, FLOAT : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
    %c_14 = stablehlo.constant dense<1> : tensor<i32>
    %49 = stablehlo.broadcast_in_dim %c_14, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %50 = stablehlo.subtract %1, %49 : tensor<5xi32>
    %c_15 = stablehlo.constant dense<0> : tensor<i32>
    %51 = stablehlo.broadcast_in_dim %c_15, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %52 = stablehlo.compare LT, %50, %51, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_16 = stablehlo.constant dense<2> : tensor<i32>
    %53 = stablehlo.broadcast_in_dim %c_16, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %54 = stablehlo.add %50, %53 : tensor<5xi32>
    %55 = stablehlo.select %52, %54, %50 : tensor<5xi1>, tensor<5xi32>
    %56 = stablehlo.broadcast_in_dim %55, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %57 = "stablehlo.gather"(%arg2, %56) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<2xf32>, tensor<5x1xi32>) -> tensor<5xf32>
    %c_17 = stablehlo.constant dense<1> : tensor<i32>
    %58 = stablehlo.broadcast_in_dim %c_17, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %59 = stablehlo.subtract %1, %58 : tensor<5xi32>
    %c_18 = stablehlo.constant dense<0> : tensor<i32>
    %60 = stablehlo.broadcast_in_dim %c_18, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %61 = stablehlo.compare LT, %59, %60, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_19 = stablehlo.constant dense<2> : tensor<i32>
    %62 = stablehlo.broadcast_in_dim %c_19, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %63 = stablehlo.add %59, %62 : tensor<5xi32>
    %64 = stablehlo.select %61, %63, %59 : tensor<5xi1>, tensor<5xi32>
    %65 = stablehlo.broadcast_in_dim %64, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %66 = "stablehlo.gather"(%arg2, %65) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<2xf32>, tensor<5x1xi32>) -> tensor<5xf32>
    %c_20 = stablehlo.constant dense<1> : tensor<i32>
    %67 = call @_where(%48, %c_20, %35) : (tensor<5xi1>, tensor<i32>, tensor<5xf32>) -> tensor<5xf32>
    %68 = stablehlo.divide %45, %67 : tensor<5xf32>
    %69 = stablehlo.multiply %68, %18 : tensor<5xf32>
    %70 = stablehlo.add %66, %69 : tensor<5xf32>
    %71 = call @_where_1(%48, %57, %70) : (tensor<5xi1>, tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
    %72 = stablehlo.slice %arg2 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %73 = stablehlo.reshape %72 : (tensor<1xf32>) -> tensor<f32>
    %74 = stablehlo.slice %arg1 [0:1] : (tensor<2xf32>) -> tensor<1xf32>
    %75 = stablehlo.reshape %74 : (tensor<1xf32>) -> tensor<f32>
    %76 = stablehlo.broadcast_in_dim %75, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %77 = stablehlo.compare LT, %arg0, %76, FLOAT : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
    %78 = call @_where_2(%77, %73, %71) : (tensor<5xi1>, tensor<f32>, tensor<5xf32>) -> tensor<5xf32>
    %79 = stablehlo.slice %arg2 [1:2] : (tensor<2xf32>) -> tensor<1xf32>
    %80 = stablehlo.reshape %79 : (tensor<1xf32>) -> tensor<f32>
    %81 = stablehlo.slice %arg1 [1:2] : (tensor<2xf32>) -> tensor<1xf32>
    %82 = stablehlo.reshape %81 : (tensor<1xf32>) -> tensor<f32>
    %83 = stablehlo.broadcast_in_dim %82, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %84 = stablehlo.compare GT, %arg0, %83, FLOAT : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
    %85 = call @_where_2(%84, %80, %78) : (tensor<5xi1>, tensor<f32>, tensor<5xf32>) -> tensor<5xf32>
    return %85 : tensor<5xf32>
  }
  func.func private @searchsorted(%arg0: tensor<2xf32>, %arg1: tensor<5xf32>) -> tensor<5xi32> {
    %0 = call @_searchsorted_scan_impl(%arg0, %arg1) : (tensor<2xf32>, tensor<5xf32>) -> tensor<5xi32>
    return %0 : tensor<5xi32>
  }
  func.func private @_searchsorted_scan_impl(%arg0: tensor<2xf32>, %arg1: tensor<5xf32>) -> tensor<5xi32> {
    %0 = call @_searchsorted_scan_impl_0(%arg0, %arg1) : (tensor<2xf32>, tensor<5xf32>) -> tensor<5xi32>
    return %0 : tensor<5xi32>
  }
  func.func private @_searchsorted_scan_impl_0(%arg0: tensor<2xf32>, %arg1: tensor<5xf32>) -> tensor<5xi32> {
    %c = stablehlo.constant dense<0> : tensor<ui32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui32>) -> tensor<5xui32>
    %c_0 = stablehlo.constant dense<2> : tensor<ui32>
    %1 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui32>) -> tensor<5xui32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %2:5 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %arg1, %iterArg_3 = %c_1, %iterArg_4 = %0, %iterArg_5 = %1) : tensor<2xf32>, tensor<5xf32>, tensor<i32>, tensor<5xui32>, tensor<5xui32>
    cond {
      %c_6 = stablehlo.constant dense<2> : tensor<i32>
      %4 = stablehlo.compare LT, %iterArg_3, %c_6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %4 = stablehlo.subtract %iterArg_5, %iterArg_4 : tensor<5xui32>
      %c_6 = stablehlo.constant dense<2> : tensor<i32>
      %5 = func.call @floor_divide(%4, %c_6) : (tensor<5xui32>, tensor<i32>) -> tensor<5xui32>
      %6 = stablehlo.add %iterArg_4, %5 : tensor<5xui32>
      %7 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<5xui32>) -> tensor<5x1xui32>
      %8 = "stablehlo.gather"(%iterArg, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<2xf32>, tensor<5x1xui32>) -> tensor<5x1xf32>
      %9 = stablehlo.reshape %8 : (tensor<5x1xf32>) -> tensor<5xf32>
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %10 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
      %11 = stablehlo.compare EQ, %iterArg_2, %10, FLOAT : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
      %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %12 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<5xf32>
      %13 = stablehlo.select %11, %12, %iterArg_2 : tensor<5xi1>, tensor<5xf32>
      %14 = stablehlo.compare NE, %iterArg_2, %iterArg_2, FLOAT : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
      %cst_8 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %15 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<5xf32>
      %16 = stablehlo.select %14, %15, %13 : tensor<5xi1>, tensor<5xf32>
      %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %17 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<5xf32>
      %18 = stablehlo.compare EQ, %9, %17, FLOAT : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
      %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %19 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<5xf32>
      %20 = stablehlo.select %18, %19, %9 : tensor<5xi1>, tensor<5xf32>
      %21 = stablehlo.compare NE, %9, %9, FLOAT : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
      %cst_11 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %22 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<5xf32>
      %23 = stablehlo.select %21, %22, %20 : tensor<5xi1>, tensor<5xf32>
      %24 = stablehlo.compare LT, %16, %23, TOTALORDER : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
      %25 = stablehlo.select %24, %iterArg_4, %6 : tensor<5xi1>, tensor<5xui32>
      %26 = stablehlo.select %24, %6, %iterArg_5 : tensor<5xi1>, tensor<5xui32>
      %c_12 = stablehlo.constant dense<1> : tensor<i32>
      %27 = stablehlo.add %iterArg_3, %c_12 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_2, %27, %25, %26 : tensor<2xf32>, tensor<5xf32>, tensor<i32>, tensor<5xui32>, tensor<5xui32>
    }
    %3 = stablehlo.convert %2#4 : (tensor<5xui32>) -> tensor<5xi32>
    return %3 : tensor<5xi32>
  }
  func.func private @floor_divide(%arg0: tensor<5xui32>, %arg1: tensor<i32>) -> tensor<5xui32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<ui32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<ui32>) -> tensor<5xui32>
    %2 = stablehlo.divide %arg0, %1 : tensor<5xui32>
    return %2 : tensor<5xui32>
  }
  func.func private @clip(%arg0: tensor<5xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<5xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<5xi32>
    %3 = stablehlo.convert %arg2 : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %5 = stablehlo.minimum %4, %2 : tensor<5xi32>
    return %5 : tensor<5xi32>
  }
  func.func private @_where(%arg0: tensor<5xi1>, %arg1: tensor<i32>, %arg2: tensor<5xf32>) -> tensor<5xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.select %arg0, %1, %arg2 : tensor<5xi1>, tensor<5xf32>
    return %2 : tensor<5xf32>
  }
  func.func private @_where_1(%arg0: tensor<5xi1>, %arg1: tensor<5xf32>, %arg2: tensor<5xf32>) -> tensor<5xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<5xi1>, tensor<5xf32>
    return %0 : tensor<5xf32>
  }
  func.func private @_where_2(%arg0: tensor<5xi1>, %arg1: tensor<f32>, %arg2: tensor<5xf32>) -> tensor<5xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %1 = stablehlo.select %arg0, %0, %arg2 : tensor<5xi1>, tensor<5xf32>
    return %1 : tensor<5xf32>
  }
}
