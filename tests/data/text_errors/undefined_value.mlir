// expected-error: 3:29: use of undefined value '%x'
func.func @f(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %arg0, %x : tensor<f32>
  return %0 : tensor<f32>
}
