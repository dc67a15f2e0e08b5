// expected-error: 2:73: duplicate field 'lhs_contracting_dimensions'
module attributes {d = #stablehlo.dot<lhs_contracting_dimensions = [1], lhs_contracting_dimensions = [0]>} {
}
