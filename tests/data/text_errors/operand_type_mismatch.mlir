// expected-error: 3:22: expected '%arg0' to have type tensor<i32>, found tensor<f32>
func.func @f(%arg0: tensor<f32>) -> tensor<i32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<i32>
  return %0 : tensor<i32>
}
