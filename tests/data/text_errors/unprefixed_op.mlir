// expected-error: 3:8: unknown operation 'negate'; expected a name with its dialect, e.g. 'stablehlo.negate'
module {
  %0 = negate : tensor<f32>
}
