// kiln run add.mlir 'dense<[1.0, 2.0]> : tensor<2xf32>' 'dense<[0.5, -4.0]> : tensor<2xf32>'
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}
