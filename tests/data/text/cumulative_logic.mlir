module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<7xi1>, %arg1: tensor<7xi32>) -> (tensor<7xi32> {jax.result_info = "result[0]"}, tensor<7xi32> {jax.result_info = "result[1]"}, tensor<7xf32> {jax.result_info = "result[2]"}, tensor<7xi32> {jax.result_info = "result[3]"}) {
    %0 = call @cumsum(%arg0) : (tensor<7xi1>) -> tensor<7xi32>
    %1 = call @cummin(%arg1) : (tensor<7xi32>) -> tensor<7xi32>
    %2 = stablehlo.convert %arg1 : (tensor<7xi32>) -> tensor<7xf32>
    %3 = call @cumlogsumexp(%2) : (tensor<7xf32>) -> tensor<7xf32>
    %4:2 = call @_unique_sorted_mask(%arg1) : (tensor<7xi32>) -> (tensor<7xi32>, tensor<7xi1>)
    %5 = call @cumsum_1(%4#1) : (tensor<7xi1>) -> tensor<7xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %8 = stablehlo.compare LT, %5, %7, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %c_1 = stablehlo.constant dense<7> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %10 = stablehlo.add %5, %9 : tensor<7xi32>
    %11 = stablehlo.select %8, %10, %5 : tensor<7xi1>, tensor<7xi32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<7xi32>) -> tensor<7x1xi32>
    %c_2 = stablehlo.constant dense<1> : tensor<i32>
    %13 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %14 = "stablehlo.scatter"(%6, %12, %13) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<i32>):
      %32 = stablehlo.add %arg2, %arg3 : tensor<i32>
      stablehlo.return %32 : tensor<i32>
    }) : (tensor<7xi32>, tensor<7x1xi32>, tensor<7xi32>) -> tensor<7xi32>
    %15 = call @cumsum_2(%14) : (tensor<7xi32>) -> tensor<7xi32>
    %c_3 = stablehlo.constant dense<1> : tensor<i32>
    %16 = call @floor_divide(%15, %c_3) : (tensor<7xi32>, tensor<i32>) -> tensor<7xi32>
    %c_4 = stablehlo.constant dense<7> : tensor<i32>
    %17 = call @remainder(%16, %c_4) : (tensor<7xi32>, tensor<i32>) -> tensor<7xi32>
    %18 = stablehlo.convert %4#1 : (tensor<7xi1>) -> tensor<7xi32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %19 = stablehlo.reduce(%18 init: %c_5) applies stablehlo.add across dimensions = [0] : (tensor<7xi32>, tensor<i32>) -> tensor<i32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %21 = stablehlo.iota dim = 0 : tensor<7xi32>
    %22 = stablehlo.broadcast_in_dim %20, dims = [0] : (tensor<1xi32>) -> tensor<7xi32>
    %23 = stablehlo.compare GE, %21, %22, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %24 = call @_where_4(%23, %c_6, %17) : (tensor<7xi1>, tensor<i32>, tensor<7xi32>) -> tensor<7xi32>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %25 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %26 = stablehlo.compare LT, %24, %25, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %c_8 = stablehlo.constant dense<7> : tensor<i32>
    %27 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %28 = stablehlo.add %24, %27 : tensor<7xi32>
    %29 = stablehlo.select %26, %28, %24 : tensor<7xi1>, tensor<7xi32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0] : (tensor<7xi32>) -> tensor<7x1xi32>
    %31 = "stablehlo.gather"(%4#0, %30) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<7xi32>, tensor<7x1xi32>) -> tensor<7xi32>
    return %0, %1, %3, %31 : tensor<7xi32>, tensor<7xi32>, tensor<7xf32>, tensor<7xi32>
  }
  func.func private @cumsum(%arg0: tensor<7xi1>) -> tensor<7xi32> {
    %0 = stablehlo.convert %arg0 : (tensor<7xi1>) -> tensor<7xi32>
    %1 = call @cumsum_0(%0) : (tensor<7xi32>) -> tensor<7xi32>
    return %1 : tensor<7xi32>
  }
  func.func private @cumsum_0(%arg0: tensor<7xi32>) -> tensor<7xi32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1>, padding = dense<[[6, 0]]> : tensor<1x2xi64>, window_dilations = array<i64: 1>, window_dimensions = array<i64: 7>, window_strides = array<i64: 1>}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<i32>
      stablehlo.return %2 : tensor<i32>
    }) : (tensor<7xi32>, tensor<i32>) -> tensor<7xi32>
    return %1 : tensor<7xi32>
  }
  func.func private @cummin(%arg0: tensor<7xi32>) -> tensor<7xi32> {
    %c = stablehlo.constant dense<2147483647> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1>, padding = dense<[[6, 0]]> : tensor<1x2xi64>, window_dilations = array<i64: 1>, window_dimensions = array<i64: 7>, window_strides = array<i64: 1>}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %2 = stablehlo.minimum %arg1, %arg2 : tensor<i32>
      stablehlo.return %2 : tensor<i32>
    }) : (tensor<7xi32>, tensor<i32>) -> tensor<7xi32>
    return %1 : tensor<7xi32>
  }
  func.func private @cumlogsumexp(%arg0: tensor<7xf32>) -> tensor<7xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = "stablehlo.reduce_window"(%arg0, %cst) <{base_dilations = array<i64: 1>, padding = dense<[[6, 0]]> : tensor<1x2xi64>, window_dilations = array<i64: 1>, window_dimensions = array<i64: 7>, window_strides = array<i64: 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %1 = stablehlo.maximum %arg1, %arg2 : tensor<f32>
      %2 = stablehlo.subtract %arg1, %arg2 : tensor<f32>
      %3 = stablehlo.compare NE, %2, %2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.add %arg1, %arg2 : tensor<f32>
      %5 = stablehlo.abs %2 : tensor<f32>
      %6 = stablehlo.negate %5 : tensor<f32>
      %7 = stablehlo.exponential %6 : tensor<f32>
      %8 = stablehlo.log_plus_one %7 : tensor<f32>
      %9 = stablehlo.add %1, %8 : tensor<f32>
      %10 = stablehlo.select %3, %4, %9 : tensor<i1>, tensor<f32>
      stablehlo.return %10 : tensor<f32>
    }) : (tensor<7xf32>, tensor<f32>) -> tensor<7xf32>
    return %0 : tensor<7xf32>
  }
  func.func private @_unique_sorted_mask(%arg0: tensor<7xi32>) -> (tensor<7xi32>, tensor<7xi1>) {
    %0 = stablehlo.reshape %arg0 : (tensor<7xi32>) -> tensor<7x1xi32>
    %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<7x1xi32>) -> tensor<1x7xi32>
    %2 = stablehlo.reverse %1, dims = [0] : tensor<1x7xi32>
    %3 = call @lexsort(%2) : (tensor<1x7xi32>) -> tensor<7xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %5 = stablehlo.compare LT, %3, %4, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %c_0 = stablehlo.constant dense<7> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %7 = stablehlo.add %3, %6 : tensor<7xi32>
    %8 = stablehlo.select %5, %7, %3 : tensor<7xi1>, tensor<7xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0] : (tensor<7xi32>) -> tensor<7x1xi32>
    %10 = "stablehlo.gather"(%arg0, %9) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<7xi32>, tensor<7x1xi32>) -> tensor<7xi32>
    %c_1 = stablehlo.constant dense<true> : tensor<i1>
    %11 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i1>) -> tensor<7xi1>
    %12 = stablehlo.slice %10 [1:7] : (tensor<7xi32>) -> tensor<6xi32>
    %13 = stablehlo.slice %10 [0:6] : (tensor<7xi32>) -> tensor<6xi32>
    %14 = stablehlo.compare NE, %12, %13, SIGNED : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
    %c_2 = stablehlo.constant dense<false> : tensor<i1>
    %15 = stablehlo.reduce(%14 init: %c_2) applies stablehlo.or across dimensions = [] : (tensor<6xi1>, tensor<i1>) -> tensor<6xi1>
    %c_3 = stablehlo.constant dense<1> : tensor<i32>
    %16 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %17 = "stablehlo.scatter"(%11, %16, %15) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<i1>, %arg2: tensor<i1>):
      stablehlo.return %arg2 : tensor<i1>
    }) : (tensor<7xi1>, tensor<1xi32>, tensor<6xi1>) -> tensor<7xi1>
    return %10, %17 : tensor<7xi32>, tensor<7xi1>
  }
  func.func private @lexsort(%arg0: tensor<1x7xi32>) -> tensor<7xi32> {
    %0 = stablehlo.iota dim = 0 : tensor<7xi32>
    %1 = stablehlo.slice %arg0 [0:1, 0:7] : (tensor<1x7xi32>) -> tensor<1x7xi32>
    %2 = stablehlo.reshape %1 : (tensor<1x7xi32>) -> tensor<7xi32>
    %3:2 = "stablehlo.sort"(%2, %0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %4 = stablehlo.compare LT, %arg1, %arg2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    }) : (tensor<7xi32>, tensor<7xi32>) -> (tensor<7xi32>, tensor<7xi32>)
    return %3#1 : tensor<7xi32>
  }
  func.func private @cumsum_1(%arg0: tensor<7xi1>) -> tensor<7xi32> {
    %0 = stablehlo.convert %arg0 : (tensor<7xi1>) -> tensor<7xi32>
    %1 = call @cumsum_0(%0) : (tensor<7xi32>) -> tensor<7xi32>
    return %1 : tensor<7xi32>
  }
  func.func private @cumsum_2(%arg0: tensor<7xi32>) -> tensor<7xi32> {
    %0 = call @cumsum_0(%arg0) : (tensor<7xi32>) -> tensor<7xi32>
    return %0 : tensor<7xi32>
  }
  func.func private @floor_divide(%arg0: tensor<7xi32>, %arg1: tensor<i32>) -> tensor<7xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %2 = stablehlo.divide %arg0, %1 : tensor<7xi32>
    %3 = stablehlo.sign %arg0 : tensor<7xi32>
    %4 = stablehlo.sign %0 : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %6 = stablehlo.compare NE, %3, %5, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %7 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %8 = stablehlo.remainder %arg0, %7 : tensor<7xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %10 = stablehlo.compare NE, %8, %9, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %11 = stablehlo.and %6, %10 : tensor<7xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %13 = stablehlo.subtract %2, %12 : tensor<7xi32>
    %14 = call @_where(%11, %13, %2) : (tensor<7xi1>, tensor<7xi32>, tensor<7xi32>) -> tensor<7xi32>
    return %14 : tensor<7xi32>
  }
  func.func private @_where(%arg0: tensor<7xi1>, %arg1: tensor<7xi32>, %arg2: tensor<7xi32>) -> tensor<7xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<7xi1>, tensor<7xi32>
    return %0 : tensor<7xi32>
  }
  func.func private @remainder(%arg0: tensor<7xi32>, %arg1: tensor<i32>) -> tensor<7xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where_3(%1, %c_0, %0) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %4 = stablehlo.remainder %arg0, %3 : tensor<7xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %8 = stablehlo.compare LT, %4, %7, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.compare LT, %2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<7xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<7xi1>, tensor<7xi1>) -> tensor<7xi1>
    %12 = stablehlo.and %11, %6 : tensor<7xi1>
    %13 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %14 = stablehlo.add %4, %13 : tensor<7xi32>
    %15 = stablehlo.select %12, %14, %4 : tensor<7xi1>, tensor<7xi32>
    return %15 : tensor<7xi32>
  }
  func.func private @_where_3(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
  func.func private @_where_4(%arg0: tensor<7xi1>, %arg1: tensor<i32>, %arg2: tensor<7xi32>) -> tensor<7xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %2 = stablehlo.select %arg0, %1, %arg2 : tensor<7xi1>, tensor<7xi32>
    return %2 : tensor<7xi32>
  }
}
