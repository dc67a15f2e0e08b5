// Collectives between the processes of interpreter.run_parallel grids
// (tests/python/test_kiln_run.py expects every case to pass). Values are
// worked out by hand from the spec's process groups.
func.func @all_reduce_max(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}
func.func @main() {
  %a = stablehlo.constant dense<[1.0, 8.0, -1.0]> : tensor<3xf32>
  %b = stablehlo.constant dense<[2.0, 7.0, -2.0]> : tensor<3xf32>
  %c = stablehlo.constant dense<[3.0, 6.0, -3.0]> : tensor<3xf32>
  %d = stablehlo.constant dense<[4.0, 5.0, -4.0]> : tensor<3xf32>
  %r:4 = "interpreter.run_parallel"(%a, %b, %c, %d) {
    programs = [[@all_reduce_max], [@all_reduce_max], [@all_reduce_max], [@all_reduce_max]]
  } : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  check.expect_almost_eq_const %r#0, dense<[3.0, 8.0, -1.0]> : tensor<3xf32>
  check.expect_almost_eq_const %r#1, dense<[4.0, 7.0, -2.0]> : tensor<3xf32>
  check.expect_almost_eq_const %r#2, dense<[3.0, 8.0, -1.0]> : tensor<3xf32>
  check.expect_almost_eq_const %r#3, dense<[4.0, 7.0, -2.0]> : tensor<3xf32>
  func.return
}

// -----

// A body Kiln does not recognize runs per element: a + 2b, folded in group order.
func.func @all_reduce_by_body(%x: tensor<2xi32>) -> tensor<2xi32> {
  %r = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %t = stablehlo.add %b, %b : tensor<i32>
    %s = stablehlo.add %a, %t : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<2xi32>) -> tensor<2xi32>
  func.return %r : tensor<2xi32>
}
func.func @main() {
  %a = stablehlo.constant dense<[1, 10]> : tensor<2xi32>
  %b = stablehlo.constant dense<[2, 20]> : tensor<2xi32>
  %c = stablehlo.constant dense<[3, 30]> : tensor<2xi32>
  %r:3 = "interpreter.run_parallel"(%a, %b, %c) {
    programs = [[@all_reduce_by_body], [@all_reduce_by_body], [@all_reduce_by_body]]
  } : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>)
  // (1 + 2*2) + 2*3 = 11; (10 + 40) + 60 = 110
  check.expect_eq_const %r#0, dense<[11, 110]> : tensor<2xi32>
  check.expect_eq_const %r#2, dense<[11, 110]> : tensor<2xi32>
  func.return
}

// -----

// Two partitions of two replicas; flattened ids group (0,0) with (1,1).
func.func @gather_flattened(%x: tensor<1x2xi32>) -> tensor<2x2xi32> {
  %g = "stablehlo.all_gather"(%x) {
    all_gather_dim = 0 : i64,
    replica_groups = dense<[[0, 3], [1, 2]]> : tensor<2x2xi64>,
    channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>,
    use_global_device_ids
  } : (tensor<1x2xi32>) -> tensor<2x2xi32>
  func.return %g : tensor<2x2xi32>
}
func.func @main() {
  %p0 = stablehlo.constant dense<[[0, 0]]> : tensor<1x2xi32>
  %p1 = stablehlo.constant dense<[[1, 1]]> : tensor<1x2xi32>
  %p2 = stablehlo.constant dense<[[2, 2]]> : tensor<1x2xi32>
  %p3 = stablehlo.constant dense<[[3, 3]]> : tensor<1x2xi32>
  %r:4 = "interpreter.run_parallel"(%p0, %p1, %p2, %p3) {
    programs = [[@gather_flattened, @gather_flattened], [@gather_flattened, @gather_flattened]]
  } : (tensor<1x2xi32>, tensor<1x2xi32>, tensor<1x2xi32>, tensor<1x2xi32>) -> (tensor<2x2xi32>, tensor<2x2xi32>, tensor<2x2xi32>, tensor<2x2xi32>)
  check.expect_eq_const %r#0, dense<[[0, 0], [3, 3]]> : tensor<2x2xi32>
  check.expect_eq_const %r#1, dense<[[1, 1], [2, 2]]> : tensor<2x2xi32>
  check.expect_eq_const %r#2, dense<[[1, 1], [2, 2]]> : tensor<2x2xi32>
  check.expect_eq_const %r#3, dense<[[0, 0], [3, 3]]> : tensor<2x2xi32>
  func.return
}

// -----

func.func @scatter_sum(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %r = "stablehlo.reduce_scatter"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}
func.func @main() {
  %a = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %b = stablehlo.constant dense<[[10.0, 20.0, 30.0, 40.0], [50.0, 60.0, 70.0, 80.0]]> : tensor<2x4xf32>
  %r:2 = "interpreter.run_parallel"(%a, %b) {
    programs = [[@scatter_sum], [@scatter_sum]]
  } : (tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  // Group order [1, 0]: replica 1 keeps block 0, replica 0 block 1.
  check.expect_almost_eq_const %r#0, dense<[[33.0, 44.0], [77.0, 88.0]]> : tensor<2x2xf32>
  check.expect_almost_eq_const %r#1, dense<[[11.0, 22.0], [55.0, 66.0]]> : tensor<2x2xf32>
  func.return
}

// -----

func.func @transpose_blocks(%x: tensor<2x2xi32>) -> tensor<4x1xi32> {
  %r = "stablehlo.all_to_all"(%x) {
    split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
    replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
  } : (tensor<2x2xi32>) -> tensor<4x1xi32>
  func.return %r : tensor<4x1xi32>
}
func.func @main() {
  %a = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %b = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi32>
  %r:2 = "interpreter.run_parallel"(%a, %b) {
    programs = [[@transpose_blocks], [@transpose_blocks]]
  } : (tensor<2x2xi32>, tensor<2x2xi32>) -> (tensor<4x1xi32>, tensor<4x1xi32>)
  check.expect_eq_const %r#0, dense<[[1], [3], [5], [7]]> : tensor<4x1xi32>
  check.expect_eq_const %r#1, dense<[[2], [4], [6], [8]]> : tensor<4x1xi32>
  func.return
}

// -----

// A ring over partitions; partition 2 sends nowhere, partition 0 receives nothing.
func.func @shift(%x: tensor<2xi32>) -> tensor<2xi32> {
  %r = "stablehlo.collective_permute"(%x) {
    source_target_pairs = dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>,
    channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>
  } : (tensor<2xi32>) -> tensor<2xi32>
  func.return %r : tensor<2xi32>
}
func.func @main() {
  %a = stablehlo.constant dense<[1, 1]> : tensor<2xi32>
  %b = stablehlo.constant dense<[2, 2]> : tensor<2xi32>
  %c = stablehlo.constant dense<[3, 3]> : tensor<2xi32>
  %r:3 = "interpreter.run_parallel"(%a, %b, %c) {
    programs = [[@shift, @shift, @shift]]
  } : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>)
  check.expect_eq_const %r#0, dense<[0, 0]> : tensor<2xi32>
  check.expect_eq_const %r#1, dense<[1, 1]> : tensor<2xi32>
  check.expect_eq_const %r#2, dense<[2, 2]> : tensor<2xi32>
  func.return
}

// -----

// Collectives inside a loop meet once per iteration: 3 doublings of the sum.
func.func @loop(%x: tensor<i32>) -> tensor<i32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<i32>
    cond {
      %c = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %s = "stablehlo.all_reduce"(%v) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %t = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %t : tensor<i32>
      }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<i32>) -> tensor<i32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n, %s : tensor<i32>, tensor<i32>
    }
  func.return %r#1 : tensor<i32>
}
func.func @main() {
  %a = stablehlo.constant dense<1> : tensor<i32>
  %b = stablehlo.constant dense<2> : tensor<i32>
  %r:2 = "interpreter.run_parallel"(%a, %b) {
    programs = [[@loop], [@loop]]
  } : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
  check.expect_eq_const %r#0, dense<12> : tensor<i32>
  check.expect_eq_const %r#1, dense<12> : tensor<i32>
  func.return
}
