// expected-error: 3:34: expected an integer element, found a float
func.func @f() -> tensor<2xi32> {
  %0 = stablehlo.constant dense<[1.5, 2.0]> : tensor<2xi32>
  return %0 : tensor<2xi32>
}
