module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xi32>, %arg1: tensor<5xui16>) -> (tensor<5xi32> {jax.result_info = "result[0]"}, tensor<5xi32> {jax.result_info = "result[1]"}, tensor<5xi32> {jax.result_info = "result[2]"}, tensor<5xui16> {jax.result_info = "result[3]"}, tensor<5xui16> {jax.result_info = "result[4]"}, tensor<5xui16> {jax.result_info = "result[5]"}, tensor<5xi32> {jax.result_info = "result[6]"}, tensor<5xi32> {jax.result_info = "result[7]"}, tensor<5xi32> {jax.result_info = "result[8]"}) {
    %c = stablehlo.constant dense<3> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<5xi32>
    %c_0 = stablehlo.constant dense<7> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %3 = stablehlo.subtract %1, %2 : tensor<5xi32>
    %c_1 = stablehlo.constant dense<4> : tensor<i32>
    %4 = call @floor_divide(%arg0, %c_1) : (tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
    %5 = stablehlo.multiply %arg0, %arg0 : tensor<5xi32>
    %c_2 = stablehlo.constant dense<3> : tensor<i32>
    %6 = call @floor_divide_0(%arg1, %c_2) : (tensor<5xui16>, tensor<i32>) -> tensor<5xui16>
    %c_3 = stablehlo.constant dense<5> : tensor<i32>
    %7 = call @remainder(%arg1, %c_3) : (tensor<5xui16>, tensor<i32>) -> tensor<5xui16>
    %c_4 = stablehlo.constant dense<1> : tensor<ui16>
    %8 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<ui16>) -> tensor<5xui16>
    %9 = stablehlo.shift_right_logical %arg1, %8 : tensor<5xui16>
    %10 = stablehlo.sign %arg0 : tensor<5xi32>
    %c_5 = stablehlo.constant dense<2> : tensor<i32>
    %11 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %12 = stablehlo.minimum %arg0, %11 : tensor<5xi32>
    %c_6 = stablehlo.constant dense<1> : tensor<i32>
    %13 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %14 = stablehlo.add %arg0, %13 : tensor<5xi32>
    %15 = call @gcd(%arg0, %14) : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    return %3, %4, %5, %6, %7, %9, %10, %12, %15 : tensor<5xi32>, tensor<5xi32>, tensor<5xi32>, tensor<5xui16>, tensor<5xui16>, tensor<5xui16>, tensor<5xi32>, tensor<5xi32>, tensor<5xi32>
  }
  func.func private @floor_divide(%arg0: tensor<5xi32>, %arg1: tensor<i32>) -> tensor<5xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %2 = stablehlo.divide %arg0, %1 : tensor<5xi32>
    %3 = stablehlo.sign %arg0 : tensor<5xi32>
    %4 = stablehlo.sign %0 : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %6 = stablehlo.compare NE, %3, %5, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %7 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %8 = stablehlo.remainder %arg0, %7 : tensor<5xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %10 = stablehlo.compare NE, %8, %9, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %11 = stablehlo.and %6, %10 : tensor<5xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %13 = stablehlo.subtract %2, %12 : tensor<5xi32>
    %14 = call @_where(%11, %13, %2) : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    return %14 : tensor<5xi32>
  }
  func.func private @_where(%arg0: tensor<5xi1>, %arg1: tensor<5xi32>, %arg2: tensor<5xi32>) -> tensor<5xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<5xi1>, tensor<5xi32>
    return %0 : tensor<5xi32>
  }
  func.func private @floor_divide_0(%arg0: tensor<5xui16>, %arg1: tensor<i32>) -> tensor<5xui16> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<ui16>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<ui16>) -> tensor<5xui16>
    %2 = stablehlo.divide %arg0, %1 : tensor<5xui16>
    return %2 : tensor<5xui16>
  }
  func.func private @remainder(%arg0: tensor<5xui16>, %arg1: tensor<i32>) -> tensor<5xui16> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<ui16>
    %c = stablehlo.constant dense<0> : tensor<ui16>
    %1 = stablehlo.compare EQ, %0, %c, UNSIGNED : (tensor<ui16>, tensor<ui16>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<ui16>
    %2 = call @_where_1(%1, %c_0, %0) : (tensor<i1>, tensor<ui16>, tensor<ui16>) -> tensor<ui16>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<ui16>) -> tensor<5xui16>
    %4 = stablehlo.remainder %arg0, %3 : tensor<5xui16>
    %c_1 = stablehlo.constant dense<0> : tensor<ui16>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui16>) -> tensor<5xui16>
    %6 = stablehlo.compare NE, %4, %5, UNSIGNED : (tensor<5xui16>, tensor<5xui16>) -> tensor<5xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<ui16>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui16>) -> tensor<5xui16>
    %8 = stablehlo.compare LT, %4, %7, UNSIGNED : (tensor<5xui16>, tensor<5xui16>) -> tensor<5xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<ui16>
    %9 = stablehlo.compare LT, %2, %c_3, UNSIGNED : (tensor<ui16>, tensor<ui16>) -> tensor<i1>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<5xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>
    %12 = stablehlo.and %11, %6 : tensor<5xi1>
    %13 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<ui16>) -> tensor<5xui16>
    %14 = stablehlo.add %4, %13 : tensor<5xui16>
    %15 = stablehlo.select %12, %14, %4 : tensor<5xi1>, tensor<5xui16>
    return %15 : tensor<5xui16>
  }
  func.func private @_where_1(%arg0: tensor<i1>, %arg1: tensor<ui16>, %arg2: tensor<ui16>) -> tensor<ui16> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<ui16>
    return %0 : tensor<ui16>
  }
  func.func private @gcd(%arg0: tensor<5xi32>, %arg1: tensor<5xi32>) -> tensor<5xi32> {
    %0 = stablehlo.abs %arg0 : tensor<5xi32>
    %1 = stablehlo.abs %arg1 : tensor<5xi32>
    %2:2 = stablehlo.while(%iterArg = %0, %iterArg_0 = %1) : tensor<5xi32>, tensor<5xi32>
    cond {
      %c = stablehlo.constant dense<0> : tensor<i32>
      %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
      %4 = stablehlo.compare NE, %iterArg_0, %3, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
      %c_1 = stablehlo.constant dense<false> : tensor<i1>
      %5 = stablehlo.reduce(%4 init: %c_1) applies stablehlo.or across dimensions = [0] : (tensor<5xi1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %c = stablehlo.constant dense<0> : tensor<i32>
      %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
      %4 = stablehlo.compare NE, %iterArg_0, %3, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
      %5 = func.call @_where(%4, %iterArg_0, %iterArg) : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
      %c_1 = stablehlo.constant dense<0> : tensor<i32>
      %6 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<5xi32>
      %7 = stablehlo.compare NE, %iterArg_0, %6, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
      %8 = stablehlo.remainder %iterArg, %iterArg_0 : tensor<5xi32>
      %c_2 = stablehlo.constant dense<0> : tensor<i32>
      %9 = func.call @_where_2(%7, %8, %c_2) : (tensor<5xi1>, tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
      %10 = stablehlo.compare LT, %5, %9, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
      %11 = func.call @_where(%10, %9, %5) : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
      %12 = stablehlo.compare LT, %5, %9, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
      %13 = func.call @_where(%12, %5, %9) : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
      stablehlo.return %11, %13 : tensor<5xi32>, tensor<5xi32>
    }
    return %2#0 : tensor<5xi32>
  }
  func.func private @_where_2(%arg0: tensor<5xi1>, %arg1: tensor<5xi32>, %arg2: tensor<i32>) -> tensor<5xi32> {
    %0 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<5xi1>, tensor<5xi32>
    return %1 : tensor<5xi32>
  }
}
