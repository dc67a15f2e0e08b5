// bitcast_convert between bit widths: a narrow element i holds bits
// [i * width, (i + 1) * width) of its wide element, least significant first
// (tests/python/test_kiln_run.py expects every case to pass).
func.func @i1_to_ui16() {
  %bits = stablehlo.constant dense<[true, true, false, false, false, false, false, false,
                                    false, false, false, false, false, false, false, true]> : tensor<16xi1>
  %result = stablehlo.bitcast_convert %bits : (tensor<16xi1>) -> tensor<ui16>
  check.expect_eq_const %result, dense<32771> : tensor<ui16>
  func.return
}

// -----

func.func @ui8_to_i1() {
  %byte = stablehlo.constant dense<[129, 6]> : tensor<2xui8>
  %result = stablehlo.bitcast_convert %byte : (tensor<2xui8>) -> tensor<2x8xi1>
  check.expect_eq_const %result, dense<[[true, false, false, false, false, false, false, true],
                                        [false, true, true, false, false, false, false, false]]> : tensor<2x8xi1>
  func.return
}

// -----

func.func @si4_pairs_to_i8_and_back() {
  %nibbles = stablehlo.constant dense<[[1, -1], [-8, 7]]> : tensor<2x2xi4>
  %bytes = stablehlo.bitcast_convert %nibbles : (tensor<2x2xi4>) -> tensor<2xi8>
  check.expect_eq_const %bytes, dense<[-15, 120]> : tensor<2xi8>
  %back = stablehlo.bitcast_convert %bytes : (tensor<2xi8>) -> tensor<2x2xi4>
  check.expect_eq_const %back, dense<[[1, -1], [-8, 7]]> : tensor<2x2xi4>
  func.return
}

// -----

func.func @si2_pair_to_si4() {
  %pair = stablehlo.constant dense<[1, -2]> : tensor<2xi2>
  %result = stablehlo.bitcast_convert %pair : (tensor<2xi2>) -> tensor<i4>
  check.expect_eq_const %result, dense<-7> : tensor<i4>
  func.return
}

// -----

func.func @f32_to_ui8_bytes() {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %result = stablehlo.bitcast_convert %one : (tensor<f32>) -> tensor<4xui8>
  check.expect_eq_const %result, dense<[0, 0, 128, 63]> : tensor<4xui8>
  func.return
}

// -----

// Complex atan2, as the StableHLO interpreter defines it.
func.func @complex_atan2() {
  %y = stablehlo.constant dense<[(1.0, 0.0), (0.0, 0.0), (1.0, 0.0)]> : tensor<3xcomplex<f64>>
  %x = stablehlo.constant dense<[(0.0, 0.0), (1.0, 0.0), (1.0, 0.0)]> : tensor<3xcomplex<f64>>
  %result = stablehlo.atan2 %y, %x : tensor<3xcomplex<f64>>
  check.expect_almost_eq_const %result, dense<[(1.5707963267948966, 0.0), (0.0, 0.0),
                                               (0.7853981633974483, 0.0)]> : tensor<3xcomplex<f64>>
  func.return
}
