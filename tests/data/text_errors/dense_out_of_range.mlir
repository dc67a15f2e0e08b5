// expected-error: 3:37: element 300 does not fit in 8 bits
func.func @f() -> tensor<2xi8> {
  %0 = stablehlo.constant dense<[1, 300]> : tensor<2xi8>
  return %0 : tensor<2xi8>
}
