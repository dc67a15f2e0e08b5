// expected-error: 3:3: expected 1 result names for 'stablehlo.negate' (as its type gives), found 2
func.func @f(%arg0: tensor<f32>) {
  %0, %1 = stablehlo.negate %arg0 : tensor<f32>
  return
}
