// expected-error: 3:50: dense literal has lists of different sizes (2 and 1) at depth 1
func.func @f() -> tensor<2x2xf32> {
  %0 = stablehlo.constant dense<[[1.0, 2.0], [3.0]]> : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
