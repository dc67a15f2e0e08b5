// expected-error: 3:8: 'mydialect.frob' has no custom form Kiln reads; write it in the generic form "mydialect.frob"(...) : (...) -> ...
func.func @f(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = mydialect.frob %arg0 : tensor<f32>
  return %0 : tensor<f32>
}
