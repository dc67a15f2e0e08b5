// expected-error: 3:27: hex data has 5 bytes; the type needs 8 (2 elements of 4 bytes)
func.func @f() -> tensor<2xi32> {
  %0 = stablehlo.constant dense<"0x0100000002"> : tensor<2xi32>
  return %0 : tensor<2xi32>
}
