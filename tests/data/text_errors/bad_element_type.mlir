// expected-error: 2:30: expected an element type, found 'i10'
func.func @f(%arg0: tensor<2xi10>) {
  return
}
