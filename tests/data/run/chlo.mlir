// chlo ops that compose StableHLO ops: implicitly broadcasting binary ops,
// broadcast_select and constant_like (tests/python/test_kiln_run.py expects
// every case to pass).
func.func @broadcast_add_numpy_style() {
  %a = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = stablehlo.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %c = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  check.expect_almost_eq_const %c, dense<[[11.0, 22.0, 33.0], [14.0, 25.0, 36.0]]> : tensor<2x3xf32>
  func.return
}

// -----

func.func @broadcast_subtract_with_broadcast_dimensions() {
  %a = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %b = stablehlo.constant dense<[100, 200]> : tensor<2xi32>
  %c = "chlo.broadcast_subtract"(%b, %a) {broadcast_dimensions = array<i64: 0>} : (tensor<2xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  check.expect_eq_const %c, dense<[[99, 98, 97], [196, 195, 194]]> : tensor<2x3xi32>
  func.return
}

// -----

func.func @broadcast_of_size_one_dimensions() {
  %a = stablehlo.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %b = stablehlo.constant dense<[[3.0, 4.0, 5.0]]> : tensor<1x3xf32>
  %c = chlo.broadcast_multiply %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  check.expect_almost_eq_const %c, dense<[[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]> : tensor<2x3xf32>
  func.return
}

// -----

func.func @broadcast_compare_gives_pred() {
  %a = stablehlo.constant dense<[1.0, 5.0, 3.0]> : tensor<3xf32>
  %b = stablehlo.constant dense<3.0> : tensor<f32>
  %c = chlo.broadcast_compare %a, %b {comparison_direction = #chlo<comparison_direction LT>} : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
  check.expect_eq_const %c, dense<[true, false, false]> : tensor<3xi1>
  func.return
}

// -----

func.func @broadcast_select_and_constant_like() {
  %p = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %x = stablehlo.constant dense<[[1.5, 2.5], [3.5, 4.5]]> : tensor<2x2xf32>
  %zero = "chlo.constant_like"(%x) {value = 0.0 : f32} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %s = chlo.broadcast_select %p, %x, %zero : (tensor<2xi1>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  check.expect_almost_eq_const %s, dense<[[1.5, 0.0], [3.5, 0.0]]> : tensor<2x2xf32>
  %seven = "chlo.constant_like"(%p) {value = 7 : i32} : (tensor<2xi1>) -> tensor<2xi32>
  check.expect_eq_const %seven, dense<7> : tensor<2xi32>
  func.return
}

// -----

func.func @broadcast_shift_and_remainder() {
  %a = stablehlo.constant dense<[[1, -8], [7, -7]]> : tensor<2x2xi32>
  %b = stablehlo.constant dense<[1, 3]> : tensor<2xi32>
  %l = chlo.broadcast_shift_left %a, %b : (tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x2xi32>
  check.expect_eq_const %l, dense<[[2, -64], [14, -56]]> : tensor<2x2xi32>
  %r = chlo.broadcast_remainder %a, %b : (tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x2xi32>
  check.expect_eq_const %r, dense<[[0, -2], [0, -1]]> : tensor<2x2xi32>
  func.return
}
