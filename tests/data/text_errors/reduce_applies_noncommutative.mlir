// expected-error: 3:52: expected a commutative binary stablehlo op after 'applies' (add, multiply, maximum, minimum, and, or, xor), found 'stablehlo.subtract'
func.func @f(%arg0: tensor<4xf32>, %arg1: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.reduce(%arg0 init: %arg1) applies stablehlo.subtract across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
