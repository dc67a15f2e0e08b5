// Upstream's conformance-test format: cases separated by the split marker, with check
// ops. Case 3 fails on purpose (tests/python/test_kiln_run.py expects it).
func.func @add_op_test_si32() {
  %lhs = stablehlo.constant dense<[0, 1, 8, -9]> : tensor<4xi32>
  %rhs = stablehlo.constant dense<[0, -1, 8, 9]> : tensor<4xi32>
  %result = stablehlo.add %lhs, %rhs : tensor<4xi32>
  check.expect_eq_const %result, dense<[0, 0, 16, 0]> : tensor<4xi32>
  func.return
}

// -----

func.func @sine_op_test_f32() {
  %operand = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %result = stablehlo.sine %operand : tensor<2xf32>
  check.expect_almost_eq_const %result, dense<[0.0, 0.841470957]> : tensor<2xf32>
  %expected = stablehlo.constant dense<[0.0, 0.841470957]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%result, %expected) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  func.return
}

// -----

func.func @wrong_expectation() {
  %operand = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %result = stablehlo.negate %operand : tensor<2xi32>
  check.expect_eq_const %result, dense<[-1, 2]> : tensor<2xi32>
  func.return
}
