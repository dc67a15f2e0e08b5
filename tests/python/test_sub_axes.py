"""What Shardy programs written by tools other than JAX carry (JAX names
whole axes, without priorities): sub-axes ("x":(1)2, the 2-sized major part
of axis "x"), which Kiln reads over the program's meshes refined into the
parts they cut (compiler/sharding.h, RefineMesh) and partitions over as over
whole axes, and priorities ({"x"}p1). Each program runs on Kiln and on XLA's
CPU backend; the devices' tiles, their values and the shardings reported
must agree."""

import numpy as np

PROGRAMS = r'''
import json, re, sys
import jax, numpy as np
from jax._src import compiler, xla_bridge
from jax._src.lib import xla_client as xc
from jax._src.sharding_impls import GSPMDSharding

MESH = 'sdy.mesh @mesh = <["x"=4, "y"=2]>'

def module(args, results, body):
    return f"""
module @jit_f attributes {{mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32}} {{
  {MESH}
  func.func public @main({args}) -> ({results}) {{
{body}
  }}
}}
"""

PROGRAMS = {
  # rows over a sub-axis, columns over y: pointwise, a contraction over the
  # split columns, a reduction over the split rows
  "pointwise_dot_reduce": module(
    '%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"y"}]>}, '
    '%w: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}',
    'tensor<16x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {}]>}, tensor<16x8xf32>, tensor<6xf32>',
    """    %0 = stablehlo.sine %a : tensor<16x8xf32>
    %1 = stablehlo.dot_general %0, %w, contracting_dims = [1] x [0] : (tensor<16x8xf32>, tensor<8x6xf32>) -> tensor<16x6xf32>
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<16x6xf32>, tensor<f32>) -> tensor<6xf32>
    return %1, %0, %2 : tensor<16x6xf32>, tensor<16x8xf32>, tensor<6xf32>"""),
  # one axis over both dimensions, in two parts; a transpose keeps them
  "both_dims_transpose": module(
    '%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2, "y"}]>}',
    'tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(2)2, "y"}, {"x":(1)2}]>}, tensor<16x8xf32>',
    """    %0 = stablehlo.exponential %a : tensor<16x8xf32>
    %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<16x8xf32>) -> tensor<8x16xf32>
    %2 = stablehlo.multiply %a, %0 : tensor<16x8xf32>
    return %1, %2 : tensor<8x16xf32>, tensor<16x8xf32>"""),
  # a constraint over sub-axes on a value of replicated operands, and a
  # result whose sharding names the whole axis
  "constraint": module(
    '%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}',
    'tensor<16x8xf32>, tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}',
    """    %0 = stablehlo.cosine %a : tensor<16x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"y", "x":(2)2}, {"x":(1)2}]> : tensor<16x8xf32>
    %2 = stablehlo.add %1, %1 : tensor<16x8xf32>
    %3 = stablehlo.tanh %1 : tensor<16x8xf32>
    return %2, %3 : tensor<16x8xf32>, tensor<16x8xf32>"""),
  # a shard_map over x (refined: the program also names its parts) with
  # a psum inside, its operand split over a sub-axis of x only
  "manual_over_refined_axis": module(
    '%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {}]>}',
    'tensor<16x8xf32>, tensor<4x8xf32>',
    """    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%b: tensor<4x8xf32>) {
      %1 = stablehlo.sine %b : tensor<4x8xf32>
      %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
      ^bb0(%l: tensor<f32>, %r: tensor<f32>):
        %s = stablehlo.add %l, %r : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      sdy.return %2 : tensor<4x8xf32>
    } : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %3 = stablehlo.slice %0 [0:4, 0:8] : (tensor<16x8xf32>) -> tensor<4x8xf32>
    return %0, %3 : tensor<16x8xf32>, tensor<4x8xf32>"""),
  # automatic axes inside a shard_map over y: the operand split over y and
  # a sub-axis of x enters the body as tiles of the sub-axis
  "manual_with_automatic_sub_axis": module(
    '%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x":(1)2}, {}]>}',
    'tensor<16x8xf32>',
    """    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"y", "x":(1)2}, {}]>] out_shardings=[<@mesh, [{"y", "x":(1)2}, {}]>] manual_axes={"y"} (%b: tensor<8x8xf32>) {
      %1 = stablehlo.sine %b : tensor<8x8xf32>
      %2 = stablehlo.multiply %1, %b : tensor<8x8xf32>
      sdy.return %2 : tensor<8x8xf32>
    } : (tensor<16x8xf32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>"""),
  # big enough that computing whole shows in the scratch memory: a value
  # of no operand (iota, sine) constrained to sub-axes is made on each
  # device's tile, then multiplied and summed over the split columns
  "large_on_tiles": module(
    '%a: tensor<1024x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2, "y"}]>}',
    'tensor<1024x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2, "y"}]>}, '
    'tensor<1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}]>}',
    """    %0 = stablehlo.iota dim = 1 : tensor<1024x512xf32>
    %1 = stablehlo.sine %0 : tensor<1024x512xf32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{"x":(1)2}, {"x":(2)2, "y"}]> : tensor<1024x512xf32>
    %3 = stablehlo.multiply %2, %a : tensor<1024x512xf32>
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<1024x512xf32>, tensor<f32>) -> tensor<1024xf32>
    return %3, %4 : tensor<1024x512xf32>, tensor<1024xf32>"""),
}

backend = xla_bridge.get_backend()
devices = backend.devices()[:8]
rng = np.random.default_rng(0)
report = {}
for name, text in PROGRAMS.items():
    options = compiler.get_compile_options(num_replicas=1, num_partitions=8,
                                           device_assignment=np.arange(8).reshape(1, 8))
    options.executable_build_options.use_spmd_partitioning = True
    options.executable_build_options.allow_spmd_sharding_propagation_to_output = [True]
    exe = backend.compile_and_load(text, xc.DeviceList(tuple(devices)), options)
    params = exe.get_parameter_shardings()
    shapes = [[16, 8], [8, 6]] if name != "large_on_tiles" else [[1024, 512]]
    args = [rng.standard_normal(shapes[i]).astype(np.float32) for i in range(len(params))]
    inputs = [jax.device_put(a, GSPMDSharding(tuple(devices), p)) for a, p in zip(args, params)]
    results = exe.execute_sharded(inputs)
    tiles = [[np.asarray(x) for x in r] for r in results.disassemble_into_single_device_arrays()]
    returned = text.split("return ")[-1].split(" : ")[1].split("\n")[0]
    result_shapes = [tuple(int(n) for n in t.split("x")[:-1])
                     for t in re.findall(r"tensor<([0-9x]+f32)>", returned)]
    outputs = []
    for sharding, held, shape in zip(exe.get_output_shardings(), tiles, result_shapes):
        # Which part of the result each device holds, as JAX reads the
        # reported sharding.
        where = GSPMDSharding(tuple(devices), sharding).devices_indices_map(shape)
        outputs.append({"shapes": [list(t.shape) for t in held],
                        "values": [t.ravel().tolist() for t in held],
                        "where": [str(where[d]) for d in devices]})
    report[name] = {"outputs": outputs,
                    "temp": exe.get_compiled_memory_stats().temp_size_in_bytes}
print(json.dumps(report))
'''


def test_programs_with_sub_axes_match_xla_and_compute_on_tiles(run_on_kiln_and_cpu):
    """Pointwise ops, a contraction, a reduction, a transpose, a constraint
    over sub-axes, shard_maps over an axis the program also splits into
    parts and beside a sub-axis left automatic: each device holds the tile
    XLA's CPU backend gives it, with its values, and the results left to
    propagation lose their sub-axes as XLA's do (the sine of rows split over
    "x":(1)2 and columns over "y" comes back split over "y" only)."""
    kiln, cpu = run_on_kiln_and_cpu(PROGRAMS, 8)
    assert kiln.keys() == cpu.keys()
    for name in cpu:
        assert len(kiln[name]["outputs"]) == len(cpu[name]["outputs"]), name
        for r, (k, c) in enumerate(zip(kiln[name]["outputs"], cpu[name]["outputs"])):
            assert k["shapes"] == c["shapes"], (name, r)
            assert k["where"] == c["where"], (name, r)
            for kv, cv in zip(k["values"], c["values"]):
                np.testing.assert_allclose(kv, cv, rtol=1e-5, atol=1e-5, err_msg=f"{name} {r}")
    assert cpu["pointwise_dot_reduce"]["outputs"][1]["shapes"][0] == [16, 4]
    # The iota and its sine are made on each device's 512 x 128 tile (the
    # scratch is the partial row sums: 2 KiB, as XLA's); made whole and cut,
    # as before sub-axes were partitioned, they took 4 MiB.
    assert kiln["large_on_tiles"]["temp"] <= 64 << 10, kiln["large_on_tiles"]["temp"]


PRIORITIES = r'''
import json
import jax, numpy as np
from jax._src import compiler, xla_bridge
from jax._src.lib import xla_client as xc
from jax._src.sharding_impls import GSPMDSharding

def program(s0, s1, op):
    return f"""
module @jit_f attributes {{mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32}} {{
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<16x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, {s0}>}},
                         %b: tensor<16x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, {s1}>}})
      -> tensor<16x8xf32> {{
    %0 = stablehlo.{op} %a, %b : tensor<16x8xf32>
    %1 = stablehlo.sine %0 : tensor<16x8xf32>
    return %1 : tensor<16x8xf32>
  }}
}}
"""

CASES = {}
for op in ("add", "multiply"):
    CASES[f"{op}/plain"] = program('[{"x"}, {}]', '[{}, {"x"}]', op)
    CASES[f"{op}/second_first"] = program('[{"x"}p1, {}]', '[{}, {"x"}p0]', op)
    CASES[f"{op}/first_first"] = program('[{"x"}p0, {}]', '[{}, {"x"}p1]', op)
    CASES[f"{op}/open"] = program('[{"x", ?}p1, {?}]', '[{?}, {"x", ?}p0]', op)
    CASES[f"{op}/one_open"] = program('[{"x", ?}p2, {?}]', '[{}, {"x"}p0]', op)

backend = xla_bridge.get_backend()
devices = backend.devices()[:4]
whole = np.arange(128, dtype=np.float32).reshape(16, 8) / 17
report = {}
for name, text in CASES.items():
    options = compiler.get_compile_options(num_replicas=1, num_partitions=4,
                                           device_assignment=np.arange(4).reshape(1, 4))
    options.executable_build_options.use_spmd_partitioning = True
    options.executable_build_options.allow_spmd_sharding_propagation_to_output = [True]
    exe = backend.compile_and_load(text, xc.DeviceList(tuple(devices)), options)
    params = exe.get_parameter_shardings()
    inputs = [jax.device_put(whole, GSPMDSharding(tuple(devices), p)) for p in params]
    tiles = exe.execute_sharded(inputs).disassemble_into_single_device_arrays()[0]
    where = [GSPMDSharding(tuple(devices), s).devices_indices_map((16, 8))
             for s in list(params) + list(exe.get_output_shardings())]
    report[name] = {"where": [[str(w[d]) for d in devices] for w in where],
                    "values": [np.asarray(t).ravel().tolist() for t in tiles]}
print(json.dumps(report))
'''


def test_priorities_leave_the_shardings_xla_reports(run_on_kiln_and_cpu):
    """Priorities (`{"x"}p1`) settle conflicts among shardings Shardy may
    still change; the shardings of the arguments (open or closed) are the
    caller's, and XLA reports the same parameter and result shardings
    whatever the priorities say. Kiln, which reads priorities and does not
    act on them, reports what XLA does on each of these conflicts."""
    kiln, cpu = run_on_kiln_and_cpu(PRIORITIES, 4)
    assert kiln.keys() == cpu.keys()
    for name in cpu:
        assert kiln[name]["where"] == cpu[name]["where"], name
        for k, c in zip(kiln[name]["values"], cpu[name]["values"]):
            np.testing.assert_allclose(k, c, rtol=1e-6, err_msg=name)
