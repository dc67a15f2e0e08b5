// Quantized tensors: uniform_quantize / uniform_dequantize, and other ops run
// as dequantize -> op -> quantize (tests/python/test_kiln_run.py expects
// every case to pass).
func.func @quantize_rounds_half_to_even_and_clamps() {
  %x = stablehlo.constant dense<[0.25, 0.75, 1.25, 100.0, -100.0]> : tensor<5xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<5xf32>) -> tensor<5x!quant.uniform<i8:f32, 0.5:3>>
  %bits = stablehlo.bitcast_convert %q : (tensor<5x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<5xi8>
  check.expect_eq_const %bits, dense<[3, 5, 5, 127, -128]> : tensor<5xi8>
  func.return
}

// -----

func.func @quantize_to_a_narrow_storage_range() {
  %x = stablehlo.constant dense<[100.0, -100.0, 1.0]> : tensor<3xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<3xf32>) -> tensor<3x!quant.uniform<i8<-10:10>:f32, 0.5:3>>
  %bits = stablehlo.bitcast_convert %q : (tensor<3x!quant.uniform<i8<-10:10>:f32, 0.5:3>>) -> tensor<3xi8>
  check.expect_eq_const %bits, dense<[10, -10, 5]> : tensor<3xi8>
  func.return
}

// -----

func.func @dequantize_per_axis() {
  %bits = stablehlo.constant dense<[[2, 3], [4, 5]]> : tensor<2x2xi8>
  %q = stablehlo.bitcast_convert %bits : (tensor<2x2xi8>) -> tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 2.0:1}>>
  %x = stablehlo.uniform_dequantize %q : (tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 2.0:1}>>) -> tensor<2x2xf32>
  check.expect_almost_eq_const %x, dense<[[1.0, 4.0], [2.0, 8.0]]> : tensor<2x2xf32>
  func.return
}

// -----

func.func @quantized_dot_general() {
  %lhs_bits = stablehlo.constant dense<[[4, 6]]> : tensor<1x2xi8>
  %rhs_bits = stablehlo.constant dense<[[2], [4]]> : tensor<2x1xi8>
  %lhs = stablehlo.bitcast_convert %lhs_bits : (tensor<1x2xi8>) -> tensor<1x2x!quant.uniform<i8:f32, 0.5>>
  %rhs = stablehlo.bitcast_convert %rhs_bits : (tensor<2x1xi8>) -> tensor<2x1x!quant.uniform<i8:f32, 1.0>>
  %dot = stablehlo.dot_general %lhs, %rhs, contracting_dims = [1] x [0] : (tensor<1x2x!quant.uniform<i8:f32, 0.5>>, tensor<2x1x!quant.uniform<i8:f32, 1.0>>) -> tensor<1x1x!quant.uniform<i32:f32, 0.25:-10>>
  %bits = stablehlo.bitcast_convert %dot : (tensor<1x1x!quant.uniform<i32:f32, 0.25:-10>>) -> tensor<1x1xi32>
  check.expect_eq_const %bits, dense<[[54]]> : tensor<1x1xi32>
  func.return
}

// -----

func.func @quantized_transpose_moves_storage() {
  %bits = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi8>
  %q = stablehlo.bitcast_convert %bits : (tensor<2x3xi8>) -> tensor<2x3x!quant.uniform<i8:f32, 0.1:-5>>
  %t = stablehlo.transpose %q, dims = [1, 0] : (tensor<2x3x!quant.uniform<i8:f32, 0.1:-5>>) -> tensor<3x2x!quant.uniform<i8:f32, 0.1:-5>>
  %result = stablehlo.bitcast_convert %t : (tensor<3x2x!quant.uniform<i8:f32, 0.1:-5>>) -> tensor<3x2xi8>
  check.expect_eq_const %result, dense<[[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi8>
  func.return
}

// -----

func.func @requantize() {
  %bits = stablehlo.constant dense<[10, -4]> : tensor<2xi8>
  %q = stablehlo.bitcast_convert %bits : (tensor<2xi8>) -> tensor<2x!quant.uniform<i8:f32, 0.5:2>>
  %r = stablehlo.uniform_quantize %q : (tensor<2x!quant.uniform<i8:f32, 0.5:2>>) -> tensor<2x!quant.uniform<u8:f32, 0.25:100>>
  %result = stablehlo.bitcast_convert %r : (tensor<2x!quant.uniform<u8:f32, 0.25:100>>) -> tensor<2xui8>
  check.expect_eq_const %result, dense<[116, 88]> : tensor<2xui8>
  func.return
}

// -----

// Ops with bodies run their body on quantized scalars: each add of the sum
// dequantizes, adds and quantizes (0.5 per step, so 1 + 2 + 3 = 6 -> 12).
func.func @reduce_runs_its_body_on_quantized_scalars() {
  %bits = stablehlo.constant dense<[[2, 4, 6], [1, 1, 1]]> : tensor<2x3xi8>
  %q = stablehlo.bitcast_convert %bits : (tensor<2x3xi8>) -> tensor<2x3x!quant.uniform<i8:f32, 0.5>>
  %zero_bits = stablehlo.constant dense<0> : tensor<i8>
  %zero = stablehlo.bitcast_convert %zero_bits : (tensor<i8>) -> tensor<!quant.uniform<i8:f32, 0.5>>
  %sum = stablehlo.reduce(%q init: %zero) across dimensions = [1] : (tensor<2x3x!quant.uniform<i8:f32, 0.5>>, tensor<!quant.uniform<i8:f32, 0.5>>) -> tensor<2x!quant.uniform<i8:f32, 0.5>>
   reducer(%a: tensor<!quant.uniform<i8:f32, 0.5>>, %b: tensor<!quant.uniform<i8:f32, 0.5>>) {
    %s = stablehlo.add %a, %b : tensor<!quant.uniform<i8:f32, 0.5>>
    stablehlo.return %s : tensor<!quant.uniform<i8:f32, 0.5>>
  }
  %out = stablehlo.bitcast_convert %sum : (tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2xi8>
  check.expect_eq_const %out, dense<[12, 3]> : tensor<2xi8>
  func.return
}

// -----

// sort with a quantized key: the comparator compares dequantized values.
func.func @sort_compares_quantized_keys() {
  %bits = stablehlo.constant dense<[5, -3, 0, 2]> : tensor<4xi8>
  %q = stablehlo.bitcast_convert %bits : (tensor<4xi8>) -> tensor<4x!quant.uniform<i8:f32, 0.25:1>>
  %sorted = "stablehlo.sort"(%q) ({
  ^bb0(%a: tensor<!quant.uniform<i8:f32, 0.25:1>>, %b: tensor<!quant.uniform<i8:f32, 0.25:1>>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<!quant.uniform<i8:f32, 0.25:1>>, tensor<!quant.uniform<i8:f32, 0.25:1>>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<4x!quant.uniform<i8:f32, 0.25:1>>) -> tensor<4x!quant.uniform<i8:f32, 0.25:1>>
  %out = stablehlo.bitcast_convert %sorted : (tensor<4x!quant.uniform<i8:f32, 0.25:1>>) -> tensor<4xi8>
  check.expect_eq_const %out, dense<[-3, 0, 2, 5]> : tensor<4xi8>
  func.return
}
