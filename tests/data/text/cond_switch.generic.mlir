"builtin.module"() <{sym_name = "jit"}> ({
  "func.func"() <{function_type = (tensor<i32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<f32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<i32>, %arg1: tensor<4xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.compare"(%arg0, %0) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = "stablehlo.convert"(%1) : (tensor<i1>) -> tensor<i32>
    %3 = "stablehlo.case"(%2) ({
      %20 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
      %22 = "stablehlo.multiply"(%arg1, %21) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%22) : (tensor<4xf32>) -> ()
    }, {
      %17 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
      %19 = "stablehlo.add"(%arg1, %18) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%19) : (tensor<4xf32>) -> ()
    }) : (tensor<i32>) -> tensor<4xf32>
    %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %5 = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
    %6 = "stablehlo.clamp"(%4, %arg0, %5) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %7 = "stablehlo.case"(%6) ({
      %16 = "stablehlo.sine"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%16) : (tensor<4xf32>) -> ()
    }, {
      %15 = "stablehlo.cosine"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%15) : (tensor<4xf32>) -> ()
    }, {
      %14 = "stablehlo.tan"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%14) : (tensor<4xf32>) -> ()
    }) : (tensor<i32>) -> tensor<4xf32>
    %8 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %9 = "stablehlo.compare"(%arg0, %8) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %10 = "stablehlo.convert"(%9) : (tensor<i1>) -> tensor<i32>
    %11 = "stablehlo.case"(%10) ({
      %13 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      "stablehlo.return"(%13) : (tensor<f32>) -> ()
    }, {
      %12 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      "stablehlo.return"(%12) : (tensor<f32>) -> ()
    }) : (tensor<i32>) -> tensor<f32>
    "func.return"(%3, %7, %11) : (tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
