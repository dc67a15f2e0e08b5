// infeed, outfeed, and send / recv between devices on one device's queues
// (`kiln run --infeed ...`, tests/python/test_kiln_run.py).
func.func @main(%x: tensor<2xi32>) -> (tensor<2xi32>, tensor<f32>, tensor<2x2xf32>) {
  %token = stablehlo.after_all : !stablehlo.token
  // One entry of one array, then one entry of two arrays.
  %a:2 = "stablehlo.infeed"(%token) {infeed_config = ""} : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  %b:3 = "stablehlo.infeed"(%a#1) {infeed_config = ""} : (!stablehlo.token) -> (tensor<f32>, tensor<2x2xf32>, !stablehlo.token)
  %sum = stablehlo.add %x, %a#0 : tensor<2xi32>
  %t1 = "stablehlo.outfeed"(%sum, %b#0, %b#2) {outfeed_config = ""} : (tensor<2xi32>, tensor<f32>, !stablehlo.token) -> !stablehlo.token
  // A channel between devices: what is sent on it is received in order.
  %t2 = "stablehlo.send"(%b#1, %t1) {channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>, is_host_transfer = false} : (tensor<2x2xf32>, !stablehlo.token) -> !stablehlo.token
  %r:2 = "stablehlo.recv"(%t2) {channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>, is_host_transfer = false} : (!stablehlo.token) -> (tensor<2x2xf32>, !stablehlo.token)
  %twice = stablehlo.add %r#0, %r#0 : tensor<2x2xf32>
  func.return %sum, %b#0, %twice : tensor<2xi32>, tensor<f32>, tensor<2x2xf32>
}
