"""Sharded jit programs compute on their tiles (src/compiler/lower_on_tiles.cc).

Each program runs on 4 Kiln devices twice, in fresh interpreters: as Kiln
lowers it by default, and with KILN_SPMD=gather (every op on whole arrays,
the way Kiln ran sharded programs before). The values must agree, and the
per-device scratch memory (memory_analysis) shows whether the devices
computed on tiles: a whole 4096 x 256 intermediate is 4 MiB, a tile 1 MiB.
Values against XLA's CPU backend: test_multidevice.py (jit_ops_on_tiles_*).
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

PROGRAMS = r'''
import json, sys
import jax, numpy as np, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("x",))
rows = NamedSharding(mesh, P("x"))
out = {}

x = jax.device_put(np.linspace(-3, 3, 4096 * 256, dtype=np.float32).reshape(4096, 256), rows)
f = jax.jit(lambda a: (jnp.sin(a) * 2 + 1).sum(axis=1))
out["rowsum"] = np.asarray(f(x)).tolist()[:64]
out["rowsum_temp"] = f.lower(x).compile().memory_analysis().temp_size_in_bytes

rng = np.random.default_rng(0)
params = [rng.normal(size=(64, 32)).astype(np.float32) * 0.2, np.zeros(32, np.float32),
          rng.normal(size=(32, 4)).astype(np.float32) * 0.2]
params = jax.device_put(params, NamedSharding(mesh, P()))
xs = jax.device_put(rng.normal(size=(256, 64)).astype(np.float32), rows)
ys = jax.device_put(rng.normal(size=(256, 4)).astype(np.float32), rows)

def loss(p, a, b):
    h = jax.nn.relu(a @ p[0] + p[1])
    return jnp.mean((h @ p[2] - b) ** 2)

@jax.jit
def step(p, a, b):
    value, grads = jax.value_and_grad(loss)(p, a, b)
    return value, [w - 0.1 * g for w, g in zip(p, grads)]

losses = []
for _ in range(5):
    value, params = step(params, xs, ys)
    losses.append(float(value))
out["losses"] = losses
out["w0"] = np.asarray(params[0]).ravel().tolist()[:64]
print(json.dumps(out))
'''


def _run(mode, program=PROGRAMS):
    """`program`'s JSON line on 4 Kiln devices; `mode` "gather": every op on
    whole arrays (KILN_SPMD)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    env.update(JAX_PLATFORMS="kiln", KILN_NUM_DEVICES="4")
    if mode:
        env["KILN_SPMD"] = mode
    result = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_sharded_programs_compute_on_tiles_with_the_values_of_whole_arrays():
    tiles = _run(None)
    whole = _run("gather")
    np.testing.assert_allclose(tiles["rowsum"], whole["rowsum"], rtol=1e-6, atol=1e-4)
    np.testing.assert_allclose(tiles["losses"], whole["losses"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tiles["w0"], whole["w0"], rtol=1e-5, atol=1e-6)
    # On whole arrays a device holds the 4 MiB intermediate; on tiles the
    # elementwise chain and the row sum need no whole array at all.
    assert whole["rowsum_temp"] >= 4 << 20, whole["rowsum_temp"]
    assert tiles["rowsum_temp"] < 1 << 20, tiles["rowsum_temp"]


LISTING = r'''
import json
import jax, numpy as np, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("x", "y"))
out = {}
x = jax.device_put(np.arange(64.0, dtype=np.float32).reshape(8, 8),
                   NamedSharding(mesh, P("x", "y")))
out["sum"] = jax.jit(lambda a: jnp.sin(a).sum()).lower(x).compile().as_text()
rows = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("x", None)))
w = jax.device_put(np.ones((4, 8), np.float32), NamedSharding(mesh, P("x", None)))
out["fsdp"] = jax.jit(lambda a, b: a @ b).lower(rows, w).compile().as_text()

def loop(a):
    return jax.lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c) + c.sum(), a)
out["loop"] = jax.jit(loop).lower(x).compile().as_text()

def accumulate(ws, xs):
    def body(acc, rows):
        grads = jax.grad(lambda ws: sum(jnp.sum(rows @ w) for w in ws))(ws)
        return [a + g for a, g in zip(acc, grads)], None
    acc = [jax.lax.with_sharding_constraint(jnp.zeros_like(w), NamedSharding(mesh, P()))
           for w in ws]
    acc, _ = jax.lax.scan(body, acc, xs)
    return acc
ws = [jax.device_put(np.full((4, 4), s, np.float32), NamedSharding(mesh, P())) for s in (1, 2, 3)]
xs = jax.device_put(np.ones((2, 8, 4), np.float32), NamedSharding(mesh, P(None, ("x", "y"))))
out["grads"] = jax.jit(accumulate).lower(ws, xs).compile().as_text()

# A shard_map over "x" whose operand is split over "y" too: its body
# computes on the "y" tiles; JAX writes constraints into the psum's body.
def body(v, u):
    h = jnp.sin(v) @ u
    return jax.lax.psum(h.sum(0, keepdims=True), "x") + h
u = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P(None, "y")))
out["partial_auto"] = jax.jit(jax.shard_map(
    body, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"), axis_names={"x"})).lower(
        x, u).compile().as_text()
print(json.dumps(out))
'''


def test_a_partitioned_program_reports_what_each_device_runs():
    """compiled.as_text() of a sharded program: the per-device program with
    the collectives Kiln inserted (src/compiler/plan_listing.cc)."""
    text = _run(None, LISTING)
    # Each device sums its 4 x 4 tile, then the tiles' sums are all-reduced.
    assert "f32[4,4]" in text["sum"] and "f32[8,8]" not in text["sum"], text["sum"]
    assert text["sum"].count("all-reduce(") == 1, text["sum"]
    assert "replica_groups={{0,1,2,3}}" in text["sum"], text["sum"]
    # The weight split on its contracted rows is gathered along them.
    assert "all-gather(" in text["fsdp"] and "dimensions={0}" in text["fsdp"], text["fsdp"]
    # A loop's body and condition are listed as computations it calls.
    assert 'custom_call_target="stablehlo.while"' in text["loop"], text["loop"]
    assert "all-reduce(" in text["loop"], text["loop"]
    # The three gradients' partial sums are summed by one all-reduce each
    # iteration (XLA's all-reduce combiner does the same).
    assert text["grads"].count("all-reduce(") == 1, text["grads"]
    # The body's sine runs on the device's 4 x 4 tile (of its 4 x 8 rows);
    # the psum over "x" is listed with its body.
    assert "f32[4,4]" in text["partial_auto"], text["partial_auto"]
    assert "replica_groups=mesh['x'=2,'y'=2] {'x'}" in text["partial_auto"], text["partial_auto"]
    # The psum over "x" sums each device's "y" tile of the column sums
    # (those devices hold the same tile); nothing gathers them first.
    assert "f32[1,4]{1,0} all-reduce(" in text["partial_auto"], text["partial_auto"]
    assert "f32[1,8]" not in text["partial_auto"], text["partial_auto"]


EARLY = r'''
import json
import jax, numpy as np, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("x",))
rows = NamedSharding(mesh, P("x", None))
out = {}
# A sharded initialisation: every op of the threefry bits and the normal
# transform under an output sharding.
init = jax.jit(lambda key: jax.random.normal(key, (1024, 512)) * 0.02, out_shardings=rows)
out["init"] = np.asarray(init(jax.random.key(0))).ravel()[::997].tolist()
compiled = init.lower(jax.random.key(0)).compile()
out["init_text"] = compiled.as_text()
out["init_temp"] = compiled.memory_analysis().temp_size_in_bytes
# The same through a reshape: (2048, 512) normals reshaped to (8, 256, 512)
# under a batch out_sharding; each device makes its 512 rows.
init3 = jax.jit(lambda key: (jax.random.normal(key, (8 * 256, 512)) * 0.02).reshape(8, 256, 512),
                out_shardings=NamedSharding(mesh, P("x")))
out["init3"] = np.asarray(init3(jax.random.key(0))).ravel()[::997].tolist()
compiled = init3.lower(jax.random.key(0)).compile()
out["init3_text"] = compiled.as_text()
out["init3_temp"] = compiled.memory_analysis().temp_size_in_bytes
# Through ops that leave the split rows alone: a slice and a concatenate
# of columns under a row out_sharding.
cat = jax.jit(lambda key: jnp.concatenate([jax.random.normal(key, (1024, 1024))[:, :300],
                                           jnp.ones((1024, 8))], axis=1),
              out_shardings=rows)
out["cat"] = np.asarray(cat(jax.random.key(1))).ravel()[::997].tolist()
out["cat_temp"] = cat.lower(jax.random.key(1)).compile().memory_analysis().temp_size_in_bytes
# A causal mask from iotas beside a row-split operand.
x = jax.device_put(np.arange(256 * 256, dtype=np.float32).reshape(256, 256), rows)
def mask(a):
    keep = jnp.arange(256)[:, None] >= jnp.arange(256)[None, :]
    return jnp.where(keep, a, -1e9)
out["mask"] = np.asarray(jax.jit(mask)(x)).ravel()[::251].tolist()
out["mask_text"] = jax.jit(mask).lower(x).compile().as_text()
# A replicated operand's elementwise chain beside a row-split one.
w = jax.device_put(np.linspace(0, 1, 256 * 256, dtype=np.float32).reshape(256, 256),
                   NamedSharding(mesh, P()))
chain = jax.jit(lambda a, b: a + jnp.exp(jnp.sin(b) * 2))
out["chain"] = np.asarray(chain(x, w)).ravel()[::251].tolist()
out["chain_text"] = chain.lower(x, w).compile().as_text()
# A product and a row reduction of replicated operands under a row
# output sharding: each device multiplies and sums its rows only.
rowsum = jax.jit(lambda a, b: jnp.tanh(a @ b).sum(1), out_shardings=NamedSharding(mesh, P("x")))
out["matmul"] = np.asarray(rowsum(w, w)).tolist()[::7]
out["matmul_text"] = rowsum.lower(w, w).compile().as_text()
# A scale split over the feature dimension (FSDP's layernorm weight)
# broadcast against rows split over the same axis: the 256 scales are
# gathered, not the broadcast rows.
scale = jax.device_put(np.linspace(1, 2, 256, dtype=np.float32), NamedSharding(mesh, P("x")))
norm = jax.jit(lambda a, s: jnp.tanh(a) * s)
out["norm"] = np.asarray(norm(x, scale)).ravel()[::251].tolist()
out["norm_text"] = norm.lower(x, scale).compile().as_text()
# A matrix split on its columns times a vector carried as row tiles: the
# product's whole sum is at hand each iteration (an all-reduce) and is cut;
# making it again on rows would gather the whole matrix.
cols = jax.device_put(np.linspace(-1, 1, 256 * 256, dtype=np.float32).reshape(256, 256) / 16,
                      NamedSharding(mesh, P(None, "x")))
v = jax.device_put(np.ones(256, np.float32), NamedSharding(mesh, P("x")))
matvec = jax.jit(lambda m, c: jax.lax.fori_loop(0, 3, lambda i, c: jnp.tanh(m @ c), c))
out["matvec"] = np.asarray(matvec(cols, v)).tolist()[::7]
out["matvec_text"] = matvec.lower(cols, v).compile().as_text()
print(json.dumps(out))
'''


def test_a_value_a_tiled_use_wants_is_made_on_tiles_from_the_start():
    """Kiln's backward propagation (src/compiler/lower_on_tiles_early.cc):
    a value its operands leave whole is made on each device's tile when a
    use wants it as tiles, instead of made whole and cut."""
    tiles, whole = _run(None, EARLY), _run("gather", EARLY)
    for key in ("init", "init3", "cat", "mask", "chain", "norm", "matmul", "matvec"):
        np.testing.assert_allclose(tiles[key], whole[key], rtol=1e-5, atol=1e-6)
    # No device makes the whole 1024 x 512 array (2 MiB) or any of the
    # threefry chain's whole u32 arrays; its scratch is a few tiles.
    assert "[1024,512]" not in tiles["init_text"], tiles["init_text"]
    assert tiles["init_temp"] < 2 << 20, tiles["init_temp"]
    assert whole["init_temp"] >= 2 << 20, whole["init_temp"]
    # Through the reshape: the device's 512 x 512 rows only (XLA: 3 MiB of
    # scratch too); made whole and cut, the whole 2048 x 512 normals (4 MiB)
    # are made first (20 MiB of scratch before reshapes joined fused loops).
    assert "[2048,512]" not in tiles["init3_text"], tiles["init3_text"]
    assert tiles["init3_temp"] < 4 << 20, tiles["init3_temp"]
    assert whole["init3_temp"] >= 4 << 20, whole["init3_temp"]
    # The normals' 256 rows per device (1 MiB), not the 4 MiB whole.
    assert tiles["cat_temp"] < 4 << 20, tiles["cat_temp"]
    assert whole["cat_temp"] >= 4 << 20, whole["cat_temp"]
    # The mask and the chain are made at the tile's size.
    for key in ("mask_text", "chain_text", "matmul_text"):
        assert "[64,256]" in tiles[key], tiles[key]
        made_whole = [line for line in tiles[key].splitlines() if "[256,256]" in line
                      and not any(word in line for word in ("parameter(", "ENTRY", "HloModule"))]
        assert not made_whole, tiles[key]
    gathers = [line for line in tiles["norm_text"].splitlines() if "all-gather(" in line]
    assert gathers and all(re.search(r"= f32\[(1,)?256\]", line) for line in gathers), \
        tiles["norm_text"]
    assert "all-gather(" not in tiles["matvec_text"], tiles["matvec_text"]
    assert tiles["matvec_text"].count("all-reduce(") == 1, tiles["matvec_text"]


UNEVEN = r'''
import json
import jax, numpy as np, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("x",))
rows, cols = NamedSharding(mesh, P("x")), NamedSharding(mesh, P(None, "x"))
wsc = jax.lax.with_sharding_constraint
out = {}
# 4098 rows over 4 devices: padded tiles of 1025 rows (the last holds 1023).
a = np.linspace(-1, 1, 4098 * 256, dtype=np.float32).reshape(4098, 256)
w = np.linspace(-1, 1, 256 * 256, dtype=np.float32).reshape(256, 256)
f = jax.jit(lambda a, w: jnp.tanh(wsc(a, rows) @ w).sum(axis=1))
out["rows"] = np.asarray(f(a, w)).tolist()[::64]
out["rows_temp"] = f.lower(a, w).compile().memory_analysis().temp_size_in_bytes
out["rows_text"] = f.lower(a, w).compile().as_text()
# 255 contracted columns: the padding of the tanh is masked (the cut of w
# is padded with zeros), the products all-reduced.
g = jax.jit(lambda a, w: jnp.tanh(wsc(a[:, :255], cols)) @ w[:255])
out["contract"] = np.asarray(g(a, w)).ravel().tolist()[::997]
out["contract_text"] = g.lower(a, w).compile().as_text()
# A value made from a broadcast and an iota, wanted as uneven row tiles:
# made on each device's padded tile of 1025 rows, never whole.
b = np.linspace(-1, 1, 256, dtype=np.float32)
h = jax.jit(lambda b, w: jnp.tanh(wsc(jnp.broadcast_to(b, (4098, 256)) *
                                     jnp.arange(4098.0, dtype=jnp.float32)[:, None], rows) @ w)
            .sum(1))
out["made"] = np.asarray(h(b, w)).tolist()[::64]
out["made_temp"] = h.lower(b, w).compile().memory_analysis().temp_size_in_bytes
print(json.dumps(out))
'''


def test_a_sharding_that_does_not_divide_a_value_computes_on_padded_tiles():
    """Uneven tiles (src/compiler/lower_on_tiles_padded.cc): a constraint
    splitting 4098 rows over 4 devices gives each a padded tile of 1025
    rows, and the product runs on it; a contraction over a padded dimension
    masks the padding and all-reduces the partial products."""
    tiles, whole = _run(None, UNEVEN), _run("gather", UNEVEN)
    np.testing.assert_allclose(tiles["rows"], whole["rows"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tiles["contract"], whole["contract"], rtol=1e-5, atol=1e-4)
    assert "f32[1025,256]" in tiles["rows_text"], tiles["rows_text"]
    assert "f32[4098,256]{1,0} custom-call" not in tiles["rows_text"].split("dot_general")[0]
    # A whole 4098 x 256 product is 4 MiB; a padded tile of it 1 MiB (and
    # the device's cut of the argument another).
    assert whole["rows_temp"] >= 4 << 20, whole["rows_temp"]
    assert tiles["rows_temp"] <= 2.1 * (1 << 20), tiles["rows_temp"]
    assert "f32[4098,64]" in tiles["contract_text"], tiles["contract_text"]
    assert tiles["contract_text"].count("kiln.spmd_mask_padding") == 1, tiles["contract_text"]
    assert "all-reduce(" in tiles["contract_text"], tiles["contract_text"]
    # Made on padded tiles (Lowering::TilePaddedEarly): the operand's and
    # the product's 1025 x 256 tiles, 1 MiB each (made whole and cut:
    # 5.0 MiB; everything whole: 8.0 MiB).
    np.testing.assert_allclose(tiles["made"], whole["made"], rtol=1e-5, atol=1e-3)
    assert whole["made_temp"] >= 8 << 20, whole["made_temp"]
    assert tiles["made_temp"] <= 2.1 * (1 << 20), tiles["made_temp"]


GSPMD_UNEVEN = r'''
import json
import jax, numpy as np
from jax._src import compiler, xla_bridge
from jax._src.lib import xla_client as xc
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
text = """
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%a: tensor<10x4xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"},
                         %w: tensor<4x6xf32> {mhlo.sharding = "{replicated}"})
      -> (tensor<10x6xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"},
          tensor<6xf32> {mhlo.sharding = "{replicated}"},
          tensor<10x4xf32> {mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.sine %a : tensor<10x4xf32>
    %1 = stablehlo.dot_general %0, %w, contracting_dims = [1] x [0]
        : (tensor<10x4xf32>, tensor<4x6xf32>) -> tensor<10x6xf32>
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0]
        : (tensor<10x6xf32>, tensor<f32>) -> tensor<6xf32>
    return %1, %2, %0 : tensor<10x6xf32>, tensor<6xf32>, tensor<10x4xf32>
  }
}
"""
backend = xla_bridge.get_backend()
devices = backend.devices()[:4]
options = compiler.get_compile_options(num_replicas=1, num_partitions=4,
                                       device_assignment=np.arange(4).reshape(1, 4))
options.executable_build_options.use_spmd_partitioning = True
exe = backend.compile_and_load(text, xc.DeviceList(tuple(devices)), options)
a = np.arange(40, dtype=np.float32).reshape(10, 4) / 7
w = (np.arange(24, dtype=np.float32).reshape(4, 6) - 10) / 9
padded = np.full((12, 4), 99.0, np.float32)  # what the padding holds must not matter
padded[:10] = a
mesh = Mesh(np.array(devices), ("x",))
results = exe.execute_sharded([jax.device_put(padded, NamedSharding(mesh, P("x"))),
                               jax.device_put(w, NamedSharding(mesh, P()))])
per_device = [[np.asarray(x) for x in result]
              for result in results.disassemble_into_single_device_arrays()]
print(json.dumps({
    "shapes": [[list(x.shape) for x in result] for result in per_device],
    "rows": np.concatenate(per_device[0])[:10].ravel().tolist(),
    "sums": [x.tolist() for x in per_device[1]],
    "whole": [x.ravel().tolist() for x in per_device[2]],
}))
'''


def test_gspmd_arguments_that_do_not_divide_take_padded_tiles(run_on_kiln_and_cpu):
    """A GSPMD program whose argument sharding does not divide it (10 rows
    over 4 devices, as PyTorch/XLA's SPMD mode sends them) takes each
    device's tile padded to 3 rows and returns its results as XLA's CPU
    backend does: a split result as padded tiles, a `{replicated}` one whole
    on every device, though the program holds it as tiles."""
    kiln, cpu = run_on_kiln_and_cpu(GSPMD_UNEVEN, 4)
    assert kiln["shapes"] == cpu["shapes"] == [[[3, 6]] * 4, [[6]] * 4, [[10, 4]] * 4]
    for key in ("rows", "sums", "whole"):
        np.testing.assert_allclose(kiln[key], cpu[key], rtol=1e-5, atol=1e-5)


PROPAGATION_FLAG = r'''
import json
import jax, numpy as np
from jax._src import compiler, xla_bridge
from jax._src.lib import xla_client as xc
from jax._src.sharding_impls import GSPMDSharding
SHARDY = """
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> (tensor<16x8xf32>, tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.sine %a : tensor<16x8xf32>
    return %0, %0 : tensor<16x8xf32>, tensor<16x8xf32>
  }
}
"""
GSPMD = """
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%a: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"})
      -> (tensor<16x8xf32>, tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) {
    %0 = stablehlo.sine %a : tensor<16x8xf32>
    return %0, %0 : tensor<16x8xf32>, tensor<16x8xf32>
  }
}
"""
backend = xla_bridge.get_backend()
devices = backend.devices()[:4]
a = np.arange(128, dtype=np.float32).reshape(16, 8) / 9
out = {}
for name, text in (("shardy", SHARDY), ("gspmd", GSPMD)):
    for flags in ([True], [False], [False, True], [True, False]):
        options = compiler.get_compile_options(num_replicas=1, num_partitions=4,
                                               device_assignment=np.arange(4).reshape(1, 4))
        options.executable_build_options.use_spmd_partitioning = True
        options.executable_build_options.allow_spmd_sharding_propagation_to_output = flags
        exe = backend.compile_and_load(text, xc.DeviceList(tuple(devices)), options)
        arg = jax.device_put(a, GSPMDSharding(tuple(devices), exe.get_parameter_shardings()[0]))
        results = exe.execute_sharded([arg]).disassemble_into_single_device_arrays()
        out[f"{name} {flags}"] = {
            "shapes": [[list(np.asarray(x).shape) for x in r] for r in results],
            "first": [np.asarray(r[0]).ravel().tolist() for r in results],
            "whole": [GSPMDSharding(tuple(devices), s).is_fully_replicated
                      for s in exe.get_output_shardings()]}
print(json.dumps(out))
'''


def test_results_without_a_sharding_follow_the_propagation_flag(run_on_kiln_and_cpu):
    """allow_spmd_sharding_propagation_to_output (one flag for all results,
    or one per result) decides whether a result a GSPMD program gives no
    sharding takes the tiles the program holds it in or comes back whole,
    as on XLA's CPU backend; a result with a sharding keeps it either way,
    and XLA's Shardy pipeline propagates to results whatever the flag says.
    JAX sends true for results without out_shardings, false for the rest."""
    kiln, cpu = run_on_kiln_and_cpu(PROPAGATION_FLAG, 4)
    assert kiln.keys() == cpu.keys()
    for case in cpu:
        assert kiln[case]["shapes"] == cpu[case]["shapes"], case
        assert kiln[case]["whole"] == cpu[case]["whole"], case
        np.testing.assert_allclose(kiln[case]["first"][0], cpu[case]["first"][0], rtol=1e-6)
    assert cpu["gspmd [False]"]["whole"] == [True, False]
    assert cpu["gspmd [True, False]"]["whole"] == [False, False]
    assert cpu["shardy [False]"]["whole"] == [False, False]


RESHARD = r'''
import json, re
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("x", "y"))
whole = np.arange(1024 * 512, dtype=np.float32).reshape(1024, 512) / 1e5
a = jax.device_put(whole, NamedSharding(mesh, P(("x", "y"))))
rows_x = NamedSharding(mesh, P("x"))
def groups(line):  # listed ({{0,1},{2,3}}) or as an iota ([2,2]<=[4])
    listed = re.search(r"replica_groups=(\{\{.*?\}\})", line)
    return listed.group(1) if listed else line.split("replica_groups=")[1].split(", ")[0]
out = {}
cols_xy = NamedSharding(mesh, P(None, ("x", "y")))
programs = {
    "result": jax.jit(lambda v: jnp.sin(v) * 2, out_shardings=rows_x),
    # rows over "y", columns over "x", wanted as columns over ("x", "y"):
    # "y" moves from the rows to the columns
    "moved": jax.jit(
        lambda v: jnp.cumsum(jax.lax.with_sharding_constraint(jnp.sin(v), cols_xy), axis=0),
        out_shardings=cols_xy),
    "constraint": jax.jit(
        lambda v: jnp.cumsum(jax.lax.with_sharding_constraint(jnp.sin(v), rows_x), axis=1),
        out_shardings=rows_x),
}
for name, f in programs.items():
    arg = jax.device_put(whole, NamedSharding(mesh, P("y", "x"))) if name == "moved" else a
    compiled = f.lower(arg).compile()
    got = f(arg)
    out[name] = {
        "temp": compiled.memory_analysis().temp_size_in_bytes,
        "tile": list(got.addressable_shards[0].data.shape),
        "values": np.asarray(got).ravel()[::997].tolist(),
        "gathers": [groups(line) for line in compiled.as_text().splitlines()
                    if "all-gather(" in line],
        "exchanges": [groups(line) for line in compiled.as_text().splitlines()
                      if "all-to-all(" in line],
    }
print(json.dumps(out))
'''


def test_tiles_wanted_in_another_tiling_move_only_what_differs(run_on_kiln_and_cpu):
    """Rows held over ("x", "y") and wanted over "x" (an out_sharding, a
    sharding constraint) are gathered along "y" alone: each group of 4
    devices that share an "x" coordinate meets, and no device holds the
    whole array, as on XLA's CPU backend (before: all 8 gathered the whole
    2 MiB array and cut their half). An axis moving between dimensions is
    an all_to_all."""
    kiln, cpu = run_on_kiln_and_cpu(RESHARD, 8)
    for name in ("result", "constraint"):
        assert kiln[name]["tile"] == cpu[name]["tile"] == [512, 512], name
        np.testing.assert_allclose(kiln[name]["values"], cpu[name]["values"], rtol=1e-4, atol=1e-3)
        # Groups of the 4 devices along "y" ({{0,1,2,3},{4,5,6,7}}), never all 8.
        assert kiln[name]["gathers"] == ["{{0,1,2,3},{4,5,6,7}}"], (name, kiln[name]["gathers"])
        assert kiln[name]["temp"] < 2 << 20, (name, kiln[name]["temp"])
    # An axis that moves from one dimension to another is exchanged by one
    # all_to_all among the devices along it, as XLA does: each device ends
    # with its 1024 x 64 columns and never holds the whole array (2 MiB).
    assert kiln["moved"]["tile"] == cpu["moved"]["tile"] == [1024, 64]
    np.testing.assert_allclose(kiln["moved"]["values"], cpu["moved"]["values"], rtol=1e-4, atol=1e-3)
    assert kiln["moved"]["gathers"] == [], kiln["moved"]["gathers"]
    assert kiln["moved"]["exchanges"] == ["{{0,1,2,3},{4,5,6,7}}"], kiln["moved"]["exchanges"]
    assert cpu["moved"]["exchanges"] and not cpu["moved"]["gathers"]
    assert kiln["moved"]["temp"] < 1 << 20, kiln["moved"]["temp"]


GATHER_EARLY = r'''
import json
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:4]), ("x",))
rows = NamedSharding(mesh, P("x"))
whole = NamedSharding(mesh, P())
table = jax.device_put(
    np.random.default_rng(0).standard_normal((1000, 256)).astype(np.float32), whole)
idx = jax.device_put((np.arange(4096) * 7919 % 1000).astype(np.int32), whole)
programs = {
    "take": jax.jit(lambda t, i: jnp.take(t, i, axis=0) * 2, out_shardings=rows),
    "along": jax.jit(lambda t, i: jnp.take_along_axis(
        t, (i[:1000, None] + jnp.arange(256)[None, :]) % 256, axis=1), out_shardings=rows),
}
out = {}
for name, f in programs.items():
    got = f(table, idx)
    out[name] = {"temp": f.lower(table, idx).compile().memory_analysis().temp_size_in_bytes,
                 "tile": list(got.addressable_shards[0].data.shape),
                 "values": np.asarray(got).ravel()[::331].tolist()}
print(json.dumps(out))
'''


def test_a_gather_a_tiled_use_wants_is_made_on_the_tile(run_on_kiln_and_cpu):
    """A gather of whole operands whose result is wanted split over its
    batch rows (an embedding lookup under a row out_sharding) gathers each
    device's rows only, with the indices' tile, instead of all 4096 rows
    (4 MiB) cut afterwards."""
    kiln, cpu = run_on_kiln_and_cpu(GATHER_EARLY, 4)
    for name in ("take", "along"):
        assert kiln[name]["tile"] == cpu[name]["tile"], name
        np.testing.assert_allclose(kiln[name]["values"], cpu[name]["values"], rtol=1e-6)
    assert kiln["take"]["temp"] <= 64 << 10, kiln["take"]["temp"]  # 4 MiB made whole
    assert kiln["along"]["temp"] <= 1 << 20, kiln["along"]["temp"]  # 2 MiB made whole
