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
