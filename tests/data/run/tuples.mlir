// Tuples live between stablehlo.tuple and get_tuple_element (nested too);
// tests/python/test_kiln_run.py runs every case and expects all to pass but
// the last, which returns a tuple from a block argument.
func.func @tuple_elements() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = stablehlo.constant dense<3.5> : tensor<f32>
  %t = stablehlo.tuple %a, %b : tuple<tensor<2xi32>, tensor<f32>>
  %x = stablehlo.get_tuple_element %t[0] : (tuple<tensor<2xi32>, tensor<f32>>) -> tensor<2xi32>
  %y = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xi32>, tensor<f32>>) -> tensor<f32>
  %z = stablehlo.add %x, %x : tensor<2xi32>
  check.expect_eq_const %z, dense<[2, 4]> : tensor<2xi32>
  check.expect_eq_const %y, dense<3.5> : tensor<f32>
  func.return
}

// -----

func.func @nested_tuples() {
  %a = stablehlo.constant dense<7> : tensor<i64>
  %b = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %inner = stablehlo.tuple %a, %b : tuple<tensor<i64>, tensor<2xi1>>
  %outer = stablehlo.tuple %inner, %a : tuple<tuple<tensor<i64>, tensor<2xi1>>, tensor<i64>>
  %t = stablehlo.get_tuple_element %outer[0] : (tuple<tuple<tensor<i64>, tensor<2xi1>>, tensor<i64>>) -> tuple<tensor<i64>, tensor<2xi1>>
  %r = stablehlo.get_tuple_element %t[1] : (tuple<tensor<i64>, tensor<2xi1>>) -> tensor<2xi1>
  check.expect_eq_const %r, dense<[true, false]> : tensor<2xi1>
  func.return
}
