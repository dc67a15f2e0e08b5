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


def _run(mode):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    env.update(JAX_PLATFORMS="kiln", KILN_NUM_DEVICES="4")
    if mode:
        env["KILN_SPMD"] = mode
    result = subprocess.run([sys.executable, "-c", PROGRAMS], env=env, capture_output=True,
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
