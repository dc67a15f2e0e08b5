// expected-error: 4:10: '%0' has 2 results; there is no #2
func.func @f(%arg0: tensor<f32>) -> tensor<f32> {
  %0:2 = stablehlo.optimization_barrier %arg0, %arg0 : tensor<f32>, tensor<f32>
  return %0#2 : tensor<f32>
}
