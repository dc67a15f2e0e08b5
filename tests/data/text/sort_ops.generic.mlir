"builtin.module"() <{sym_name = "jit"}> ({
  "func.func"() <{function_type = (tensor<5x3xf32>, tensor<5xi32>) -> (tensor<5x3xf32>, tensor<5xi32>, tensor<5xi32>, tensor<5xf32>, tensor<5xi32>, tensor<2xf32>, tensor<2xi32>, tensor<f32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2][0]"}, {jax.result_info = "result[2][1]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4][0]"}, {jax.result_info = "result[4][1]"}, {jax.result_info = "result[5]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg21: tensor<5x3xf32>, %arg22: tensor<5xi32>):
    %76 = "func.call"(%arg21) <{callee = @sort}> : (tensor<5x3xf32>) -> tensor<5x3xf32>
    %77 = "func.call"(%arg22) <{callee = @argsort}> : (tensor<5xi32>) -> tensor<5xi32>
    %78 = "stablehlo.slice"(%arg21) <{limit_indices = array<i64: 5, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<5x3xf32>) -> tensor<5x1xf32>
    %79 = "stablehlo.reshape"(%78) : (tensor<5x1xf32>) -> tensor<5xf32>
    %80:2 = "stablehlo.sort"(%arg22, %79) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg23: tensor<i32>, %arg24: tensor<i32>, %arg25: tensor<f32>, %arg26: tensor<f32>):
      %87 = "stablehlo.compare"(%arg23, %arg24) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%87) : (tensor<i1>) -> ()
    }) : (tensor<5xi32>, tensor<5xf32>) -> (tensor<5xi32>, tensor<5xf32>)
    %81 = "func.call"(%arg22) <{callee = @sort_0}> : (tensor<5xi32>) -> tensor<5xi32>
    %82 = "stablehlo.reverse"(%81) <{dimensions = array<i64: 0>}> : (tensor<5xi32>) -> tensor<5xi32>
    %83 = "stablehlo.slice"(%arg21) <{limit_indices = array<i64: 5, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<5x3xf32>) -> tensor<5x1xf32>
    %84 = "stablehlo.reshape"(%83) : (tensor<5x1xf32>) -> tensor<5xf32>
    %85:2 = "chlo.top_k"(%84) <{k = 2 : i64}> : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>)
    %86 = "func.call"(%arg21) <{callee = @median}> : (tensor<5x3xf32>) -> tensor<f32>
    "func.return"(%76, %77, %80#0, %80#1, %82, %85#0, %85#1, %86) : (tensor<5x3xf32>, tensor<5xi32>, tensor<5xi32>, tensor<5xf32>, tensor<5xi32>, tensor<2xf32>, tensor<2xi32>, tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5x3xf32>) -> tensor<5x3xf32>, sym_name = "sort", sym_visibility = "private"}> ({
  ^bb0(%arg18: tensor<5x3xf32>):
    %60 = "stablehlo.sort"(%arg18) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg19: tensor<f32>, %arg20: tensor<f32>):
      %61 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %62 = "stablehlo.compare"(%arg19, %61) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %63 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %64 = "stablehlo.select"(%62, %63, %arg19) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %65 = "stablehlo.compare"(%arg19, %arg19) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %66 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %67 = "stablehlo.select"(%65, %66, %64) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %68 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %69 = "stablehlo.compare"(%arg20, %68) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %70 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %71 = "stablehlo.select"(%69, %70, %arg20) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %72 = "stablehlo.compare"(%arg20, %arg20) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %73 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %74 = "stablehlo.select"(%72, %73, %71) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %75 = "stablehlo.compare"(%67, %74) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%75) : (tensor<i1>) -> ()
    }) : (tensor<5x3xf32>) -> tensor<5x3xf32>
    "func.return"(%60) : (tensor<5x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5xi32>) -> tensor<5xi32>, sym_name = "argsort", sym_visibility = "private"}> ({
  ^bb0(%arg13: tensor<5xi32>):
    %57 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<5xi32>
    %58:2 = "stablehlo.sort"(%arg13, %57) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg14: tensor<i32>, %arg15: tensor<i32>, %arg16: tensor<i32>, %arg17: tensor<i32>):
      %59 = "stablehlo.compare"(%arg14, %arg15) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%59) : (tensor<i1>) -> ()
    }) : (tensor<5xi32>, tensor<5xi32>) -> (tensor<5xi32>, tensor<5xi32>)
    "func.return"(%58#1) : (tensor<5xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5xi32>) -> tensor<5xi32>, sym_name = "sort_0", sym_visibility = "private"}> ({
  ^bb0(%arg10: tensor<5xi32>):
    %55 = "stablehlo.sort"(%arg10) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg11: tensor<i32>, %arg12: tensor<i32>):
      %56 = "stablehlo.compare"(%arg11, %arg12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%56) : (tensor<i1>) -> ()
    }) : (tensor<5xi32>) -> tensor<5xi32>
    "func.return"(%55) : (tensor<5xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5x3xf32>) -> tensor<f32>, sym_name = "median", sym_visibility = "private"}> ({
  ^bb0(%arg9: tensor<5x3xf32>):
    %53 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %54 = "func.call"(%arg9, %53) <{callee = @quantile}> : (tensor<5x3xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%54) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5x3xf32>, tensor<f32>) -> tensor<f32>, sym_name = "quantile", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<5x3xf32>, %arg4: tensor<f32>):
    %4 = "stablehlo.reshape"(%arg3) : (tensor<5x3xf32>) -> tensor<15xf32>
    %5 = "stablehlo.compare"(%4, %4) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<15xf32>, tensor<15xf32>) -> tensor<15xi1>
    %6 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
    %7 = "stablehlo.reduce"(%5, %6) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg7: tensor<i1>, %arg8: tensor<i1>):
      %52 = "stablehlo.or"(%arg7, %arg8) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%52) : (tensor<i1>) -> ()
    }) : (tensor<15xi1>, tensor<i1>) -> tensor<i1>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<1xi1>
    %9 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %10 = "func.call"(%8, %9, %4) <{callee = @_where}> : (tensor<1xi1>, tensor<f32>, tensor<15xf32>) -> tensor<15xf32>
    %11 = "stablehlo.sort"(%10) <{dimension = 0 : i64, is_stable = false}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %37 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %38 = "stablehlo.compare"(%arg5, %37) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %39 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %40 = "stablehlo.select"(%38, %39, %arg5) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %41 = "stablehlo.compare"(%arg5, %arg5) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %42 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %43 = "stablehlo.select"(%41, %42, %40) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %44 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %45 = "stablehlo.compare"(%arg6, %44) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %46 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %47 = "stablehlo.select"(%45, %46, %arg6) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %48 = "stablehlo.compare"(%arg6, %arg6) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %49 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %50 = "stablehlo.select"(%48, %49, %47) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %51 = "stablehlo.compare"(%43, %50) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%51) : (tensor<i1>) -> ()
    }) : (tensor<15xf32>) -> tensor<15xf32>
    %12 = "stablehlo.constant"() <{value = dense<1.500000e+01> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.subtract"(%12, %13) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %15 = "stablehlo.multiply"(%arg4, %14) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %16 = "stablehlo.floor"(%15) : (tensor<f32>) -> tensor<f32>
    %17 = "stablehlo.ceil"(%15) : (tensor<f32>) -> tensor<f32>
    %18 = "stablehlo.constant"() <{value = dense<1.500000e+01> : tensor<f32>}> : () -> tensor<f32>
    %19 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.subtract"(%18, %19) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %21 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %22 = "stablehlo.clamp"(%21, %16, %20) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %23 = "stablehlo.constant"() <{value = dense<1.500000e+01> : tensor<f32>}> : () -> tensor<f32>
    %24 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %25 = "stablehlo.subtract"(%23, %24) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %26 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %27 = "stablehlo.clamp"(%26, %17, %25) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %28 = "stablehlo.convert"(%22) : (tensor<f32>) -> tensor<i32>
    %29 = "stablehlo.convert"(%27) : (tensor<f32>) -> tensor<i32>
    %30 = "stablehlo.broadcast_in_dim"(%28) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<1xi32>
    %31 = "stablehlo.gather"(%11, %30) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0]>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<15xf32>, tensor<1xi32>) -> tensor<f32>
    %32 = "stablehlo.broadcast_in_dim"(%29) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<1xi32>
    %33 = "stablehlo.gather"(%11, %32) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0]>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<15xf32>, tensor<1xi32>) -> tensor<f32>
    %34 = "stablehlo.add"(%31, %33) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %35 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %36 = "stablehlo.multiply"(%34, %35) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "func.return"(%36) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<1xi1>, tensor<f32>, tensor<15xf32>) -> tensor<15xf32>, sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<1xi1>, %arg1: tensor<f32>, %arg2: tensor<15xf32>):
    %0 = "stablehlo.convert"(%arg1) : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xi1>) -> tensor<15xi1>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<15xf32>
    %3 = "stablehlo.select"(%1, %2, %arg2) : (tensor<15xi1>, tensor<15xf32>, tensor<15xf32>) -> tensor<15xf32>
    "func.return"(%3) : (tensor<15xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
