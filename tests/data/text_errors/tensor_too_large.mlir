// expected-error: 2:21: tensor type: the array is too large (dimension 0 of size 9223372036854775807 overflows the addressable size)
func.func @f(%arg0: tensor<9223372036854775807x9223372036854775807xf32>) {
  return
}
