// expected-error: 3:35: expected ':' before the type, found 'tensor'
func.func @f(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %arg0, %arg0 tensor<f32>
  return %0 : tensor<f32>
}
