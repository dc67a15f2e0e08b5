// expected-error: 5:1: expected '}' to close the region opened at 2:49, found end of input
func.func @f(%arg0: tensor<f32>) -> tensor<f32> {
  return %arg0 : tensor<f32>

