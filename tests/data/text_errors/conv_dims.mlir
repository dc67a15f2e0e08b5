// expected-error: 3:59: duplicate spatial dimension 0
func.func @f(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x5xf32>) -> tensor<1x4x4x5xf32> {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 0, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} : (tensor<1x4x4x2xf32>, tensor<3x3x2x5xf32>) -> tensor<1x4x4x5xf32>
  return %0 : tensor<1x4x4x5xf32>
}
