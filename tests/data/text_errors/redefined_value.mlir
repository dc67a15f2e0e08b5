// expected-error: 4:3: redefinition of value '%0'
func.func @f(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.negate %arg0 : tensor<f32>
  %0 = stablehlo.negate %arg0 : tensor<f32>
  return %0 : tensor<f32>
}
