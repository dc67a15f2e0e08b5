module @jit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xi8>, %arg1: tensor<8x2xi8>, %arg2: tensor<4x8xbf16>) -> (tensor<4x2xi32> {jax.result_info = "result[0]"}, tensor<4x4xbf16> {jax.result_info = "result[1]"}, tensor<4x4xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xi8>, tensor<8x2xi8>) -> tensor<4x2xi32>
    %1 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<4x8xbf16>) -> tensor<8x4xbf16>
    %2 = stablehlo.dot_general %arg2, %1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xbf16>, tensor<8x4xbf16>) -> tensor<4x4xbf16>
    %3 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<4x8xbf16>) -> tensor<8x4xbf16>
    %4 = stablehlo.dot_general %arg2, %3, contracting_dims = [1] x [0], precision = [HIGH, HIGH] : (tensor<4x8xbf16>, tensor<8x4xbf16>) -> tensor<4x4xf32>
    return %0, %2, %4 : tensor<4x2xi32>, tensor<4x4xbf16>, tensor<4x4xf32>
  }
}
