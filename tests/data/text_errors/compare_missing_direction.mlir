// expected-error: 3:26: expected a comparison direction (EQ, LT, ...), found '%arg0'
func.func @f(%arg0: tensor<f32>) -> tensor<i1> {
  %0 = stablehlo.compare %arg0, %arg0 : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
