// expected-error: 3:3: expected 2 operands for 'stablehlo.add' (as its type lists), found 1
func.func @f(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.add"(%arg0) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
