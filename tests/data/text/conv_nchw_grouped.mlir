module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x9x9xf32>, %arg1: tensor<8x2x3x3xf32>, %arg2: tensor<1x2x10xf32>, %arg3: tensor<3x2x3xf32>) -> (tensor<2x8x9x9xf32> {jax.result_info = "result[0]"}, tensor<1x3x8xf32> {jax.result_info = "result[1]"}, tensor<1x20x3xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x9x9xf32>
    %1 = stablehlo.convolution(%arg2, %arg3) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = [[0, 0]], lhs_dilate = [1], rhs_dilate = [1], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x2x10xf32>, tensor<3x2x3xf32>) -> tensor<1x3x8xf32>
    %2 = stablehlo.transpose %arg2, dims = [0, 2, 1] : (tensor<1x2x10xf32>) -> tensor<1x10x2xf32>
    %3 = stablehlo.transpose %arg3, dims = [2, 1, 0] : (tensor<3x2x3xf32>) -> tensor<3x2x3xf32>
    %4 = stablehlo.convolution(%2, %3) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1], pad = [[2, 1]], lhs_dilate = [2], rhs_dilate = [1], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x10x2xf32>, tensor<3x2x3xf32>) -> tensor<1x20x3xf32>
    return %0, %1, %4 : tensor<2x8x9x9xf32>, tensor<1x3x8xf32>, tensor<1x20x3xf32>
  }
}
