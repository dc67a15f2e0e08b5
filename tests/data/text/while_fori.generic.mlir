"builtin.module"() <{sym_name = "jit"}> ({
  "func.func"() <{function_type = (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2:3 = "stablehlo.while"(%1, %0, %arg0) ({
    ^bb0(%arg6: tensor<i32>, %arg7: tensor<i32>, %arg8: tensor<3xf32>):
      %21 = "stablehlo.constant"() <{value = dense<10> : tensor<i32>}> : () -> tensor<i32>
      %22 = "stablehlo.compare"(%arg6, %21) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%22) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg3: tensor<i32>, %arg4: tensor<i32>, %arg5: tensor<3xf32>):
      %11 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %12 = "stablehlo.add"(%arg4, %11) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %13 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
      %15 = "stablehlo.multiply"(%arg5, %14) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      %16 = "stablehlo.convert"(%arg4) : (tensor<i32>) -> tensor<f32>
      %17 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
      %18 = "stablehlo.add"(%15, %17) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      %19 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %20 = "stablehlo.add"(%arg3, %19) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%20, %12, %18) : (tensor<i32>, tensor<i32>, tensor<3xf32>) -> ()
    }) : (tensor<i32>, tensor<i32>, tensor<3xf32>) -> (tensor<i32>, tensor<i32>, tensor<3xf32>)
    %3 = "stablehlo.while"(%arg0) ({
    ^bb0(%arg2: tensor<3xf32>):
      %7 = "stablehlo.slice"(%arg2) <{limit_indices = array<i64: 1>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<3xf32>) -> tensor<1xf32>
      %8 = "stablehlo.reshape"(%7) : (tensor<1xf32>) -> tensor<f32>
      %9 = "stablehlo.constant"() <{value = dense<5.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %10 = "stablehlo.compare"(%8, %9) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%10) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg1: tensor<3xf32>):
      %4 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
      %6 = "stablehlo.add"(%arg1, %5) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      "stablehlo.return"(%6) : (tensor<3xf32>) -> ()
    }) : (tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%2#2, %3) : (tensor<3xf32>, tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
