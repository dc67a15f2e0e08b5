// expected-error: 3:27: the literal's shape [4] does not match the type's shape [2, 2]
func.func @f() -> tensor<2x2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
