module @jit_collectives attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  sdy.mesh @mesh_0 = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%arg1: tensor<2x8xf32>) {
      %1 = "stablehlo.collective_permute"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 2], [2, 4], [4, 6], [6, 0], [1, 3], [3, 5], [5, 7], [7, 1]]> : tensor<8x2xi64>}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
      %2 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "x">]>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %17 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
        stablehlo.return %17 : tensor<f32>
      }) : (tensor<2x8xf32>) -> tensor<2x8xf32>
      %3 = stablehlo.add %1, %2 : tensor<2x8xf32>
      %4 = "stablehlo.all_to_all"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 1 : i64, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "x">]>, split_count = 4 : i64, split_dimension = 1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
      %5 = stablehlo.add %3, %4 : tensor<2x8xf32>
      %6 = "stablehlo.reduce_scatter"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "x">]>, scatter_dimension = 1 : i64, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %17 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %17 : tensor<f32>
      }) : (tensor<2x8xf32>) -> tensor<2x2xf32>
      %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<2x2xf32>) -> tensor<2x2x4xf32>
      %8 = stablehlo.reshape %7 : (tensor<2x2x4xf32>) -> tensor<2x8xf32>
      %9 = stablehlo.add %5, %8 : tensor<2x8xf32>
      %c = stablehlo.constant dense<2> : tensor<ui32>
      %c_0 = stablehlo.constant dense<4> : tensor<ui32>
      %10 = stablehlo.partition_id : tensor<ui32>
      %11 = stablehlo.divide %10, %c : tensor<ui32>
      %12 = stablehlo.remainder %11, %c_0 : tensor<ui32>
      %13 = stablehlo.convert %12 : (tensor<ui32>) -> tensor<i32>
      %14 = stablehlo.convert %13 : (tensor<i32>) -> tensor<f32>
      %15 = stablehlo.broadcast_in_dim %14, dims = [] : (tensor<f32>) -> tensor<2x8xf32>
      %16 = stablehlo.add %9, %15 : tensor<2x8xf32>
      sdy.return %16 : tensor<2x8xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
