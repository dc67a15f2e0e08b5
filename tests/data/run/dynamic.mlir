// Dynamic-shape ops whose result types are static lower as their static
// forms (tests/python/test_kiln_run.py expects every case to pass).
func.func @dynamic_iota() {
  %shape = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %result = stablehlo.dynamic_iota %shape, dim = 1 : (tensor<2xi64>) -> tensor<2x3xi32>
  check.expect_eq_const %result, dense<[[0, 1, 2], [0, 1, 2]]> : tensor<2x3xi32>
  func.return
}

// -----

func.func @dynamic_broadcast_in_dim() {
  %operand = stablehlo.constant dense<[[1, 2, 3]]> : tensor<1x3xi64>
  %shape = stablehlo.constant dense<[2, 3, 2]> : tensor<3xi64>
  %result = stablehlo.dynamic_broadcast_in_dim %operand, %shape, dims = [2, 1] : (tensor<1x3xi64>, tensor<3xi64>) -> tensor<2x3x2xi64>
  check.expect_eq_const %result, dense<[[[1, 1], [2, 2], [3, 3]], [[1, 1], [2, 2], [3, 3]]]> : tensor<2x3x2xi64>
  func.return
}

// -----

func.func @dynamic_reshape() {
  %operand = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %shape = stablehlo.constant dense<[3, 2]> : tensor<2xi64>
  %result = stablehlo.dynamic_reshape %operand, %shape : (tensor<2x3xi64>, tensor<2xi64>) -> tensor<3x2xi64>
  check.expect_eq_const %result, dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  func.return
}

// -----

// dynamic_pad: the padding operands are constants, so it runs as pad.
func.func @dynamic_pad() {
  %operand = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %value = stablehlo.constant dense<0> : tensor<i32>
  %low = stablehlo.constant dense<[1, 0]> : tensor<2xi64>
  %high = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
  %interior = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
  %result = stablehlo.dynamic_pad %operand, %value, %low, %high, %interior : (tensor<2x2xi32>, tensor<i32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x4xi32>
  check.expect_eq_const %result, dense<[[0, 0, 0, 0], [1, 0, 2, 0], [3, 0, 4, 0]]> : tensor<3x4xi32>
  func.return
}

// -----

func.func @real_dynamic_slice() {
  %operand = stablehlo.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]> : tensor<3x4xi32>
  %start = stablehlo.constant dense<[0, 1]> : tensor<2xi32>
  %limit = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %strides = stablehlo.constant dense<[2, 2]> : tensor<2xi32>
  %result = stablehlo.real_dynamic_slice %operand, %start, %limit, %strides : (tensor<3x4xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x2xi32>
  check.expect_eq_const %result, dense<[[1, 3], [9, 11]]> : tensor<2x2xi32>
  func.return
}

// -----

func.func @dynamic_gather() {
  %operand = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9]]> : tensor<3x3xi32>
  %indices = stablehlo.constant dense<[[1], [0]]> : tensor<2x1xi32>
  %sizes = stablehlo.constant dense<[1, 3]> : tensor<2xi64>
  %result = "stablehlo.dynamic_gather"(%operand, %indices, %sizes) {
    dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
                                          start_index_map = [0], index_vector_dim = 1>,
    indices_are_sorted = false
  } : (tensor<3x3xi32>, tensor<2x1xi32>, tensor<2xi64>) -> tensor<2x3xi32>
  check.expect_eq_const %result, dense<[[4, 5, 6], [1, 2, 3]]> : tensor<2x3xi32>
  func.return
}

// -----

func.func @dynamic_conv() {
  %lhs = stablehlo.constant dense<[[[1.0], [2.0], [3.0]]]> : tensor<1x3x1xf32>
  %rhs = stablehlo.constant dense<[[[1.0]], [[1.0]]]> : tensor<2x1x1xf32>
  %padding = stablehlo.constant dense<[[1, 1]]> : tensor<1x2xi64>
  %result = "stablehlo.dynamic_conv"(%lhs, %rhs, %padding) {
    window_strides = array<i64: 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>,
    batch_group_count = 1 : i64,
    feature_group_count = 1 : i64
  } : (tensor<1x3x1xf32>, tensor<2x1x1xf32>, tensor<1x2xi64>) -> tensor<1x4x1xf32>
  check.expect_almost_eq_const %result, dense<[[[1.0], [3.0], [5.0], [3.0]]]> : tensor<1x4x1xf32>
  func.return
}
