"builtin.module"() <{sym_name = "jit"}> ({
  "func.func"() <{function_type = (tensor<3x4xf32>) -> tensor<3x4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<3x4xf32>):
    %1 = "stablehlo.sine"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %2 = "stablehlo.cosine"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %3 = "stablehlo.add"(%1, %2) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %4 = "stablehlo.tanh"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %5 = "stablehlo.add"(%3, %4) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %6 = "stablehlo.exponential"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %7 = "stablehlo.add"(%5, %6) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %8 = "stablehlo.log"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %9 = "stablehlo.add"(%7, %8) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %10 = "stablehlo.log_plus_one"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %11 = "stablehlo.add"(%9, %10) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %12 = "stablehlo.exponential_minus_one"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %13 = "stablehlo.add"(%11, %12) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %14 = "stablehlo.sqrt"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %15 = "stablehlo.add"(%13, %14) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %16 = "stablehlo.rsqrt"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %17 = "stablehlo.add"(%15, %16) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %18 = "stablehlo.cbrt"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %19 = "stablehlo.add"(%17, %18) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %20 = "stablehlo.abs"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %21 = "stablehlo.add"(%19, %20) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %22 = "stablehlo.subtract"(%21, %arg1) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %23 = "stablehlo.sign"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %24 = "stablehlo.add"(%22, %23) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %25 = "stablehlo.floor"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %26 = "stablehlo.add"(%24, %25) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %27 = "stablehlo.ceil"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %28 = "stablehlo.add"(%26, %27) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %29 = "func.call"(%arg1) <{callee = @round}> : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %30 = "stablehlo.add"(%28, %29) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %31 = "stablehlo.negate"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %32 = "stablehlo.exponential"(%31) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %33 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %34 = "stablehlo.broadcast_in_dim"(%33) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x4xf32>
    %35 = "stablehlo.add"(%34, %32) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %36 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %37 = "stablehlo.broadcast_in_dim"(%36) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x4xf32>
    %38 = "stablehlo.divide"(%37, %35) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %39 = "stablehlo.add"(%30, %38) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %40 = "stablehlo.tan"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %41 = "stablehlo.add"(%39, %40) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %42 = "stablehlo.round_nearest_afz"(%arg1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %43 = "stablehlo.add"(%41, %42) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    "func.return"(%43) : (tensor<3x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x4xf32>) -> tensor<3x4xf32>, sym_name = "round", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x4xf32>):
    %0 = "stablehlo.round_nearest_even"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    "func.return"(%0) : (tensor<3x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
