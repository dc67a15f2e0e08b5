"""One process of `make bench-multiprocess` (bench/multiprocess.py launches it):
`python multiprocess_worker.py PLATFORM ID COUNT PORT`.

Times all-reduce (psum), all-gather and reduce-scatter (psum_scatter) over
every device of the job through shard_map, for each size in BENCH_SIZES
(bytes of the full f32 array: the all-reduce operand, the all-gather
result, the reduce-scatter operand), and one step of data-parallel MLP
training (as jit over sharded arrays, and as shard_map with pmean). Process 0 prints one JSON line per measurement (median seconds).
"""
import json
import os
import sys
import time

PLATFORM, PROCESS, COUNT, PORT = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
LOCAL = int(os.environ.get("JOB_LOCAL_DEVICES", "2"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "multiprocess"))
from launch import join_job  # noqa: E402

jax = join_job(PLATFORM, PROCESS, COUNT, PORT, LOCAL)

import numpy as np  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import shard_map  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

SIZES = [int(s) for s in os.environ.get("BENCH_SIZES", "1024,65536,1048576,16777216,67108864")
         .split(",")]
SECONDS = float(os.environ.get("BENCH_SECONDS", "1.0"))
DEVICES = np.array(jax.devices())
N = len(DEVICES)
MESH = Mesh(DEVICES, ("x",))
SPLIT = NamedSharding(MESH, P("x"))


def barrier(name):
    if COUNT > 1:
        multihost_utils.sync_global_devices(name)


def timed(name, fn, *args):
    """Median seconds of one call. Every process makes the same number of
    calls (collectives pair up call by call): three to calibrate, then as
    many as fit in BENCH_SECONDS by process 0's estimate (at most 2000)."""
    fn(*args).block_until_ready()  # compile and connect
    barrier(name + " start")

    def run(calls):
        samples = []
        for _ in range(calls):
            start = time.perf_counter()
            fn(*args).block_until_ready()
            samples.append(time.perf_counter() - start)
        return samples

    samples = run(3)
    calls = np.int32(min(2000, max(3, SECONDS / max(np.median(samples), 1e-6))))
    if COUNT > 1:
        calls = multihost_utils.broadcast_one_to_all(calls)
    samples += run(int(calls))
    return float(np.median(samples))


def array(elements):
    return jax.make_array_from_callback((elements,), SPLIT,
                                        lambda index: np.ones(elements, np.float32)[index])


def collectives():
    for size in SIZES:
        elements = max(N, size // 4 // N * N)  # per device: the op's full array
        per_device = array(elements * N)  # each device holds `elements`
        spread = array(elements)  # each device holds elements / N
        ops = {
            "all_reduce": (shard_map(lambda b: jax.lax.psum(b, "x"), mesh=MESH,
                                     in_specs=P("x"), out_specs=P(), check_vma=False), per_device),
            "all_gather": (shard_map(lambda b: jax.lax.all_gather(b, "x", tiled=True),
                                     mesh=MESH, in_specs=P("x"), out_specs=P(), check_vma=False), spread),
            "reduce_scatter": (shard_map(lambda b: jax.lax.psum_scatter(b, "x", tiled=True),
                                         mesh=MESH, in_specs=P("x"), out_specs=P("x"), check_vma=False),
                               per_device),
        }
        for name, (op, operand) in ops.items():
            seconds = timed(f"{name} {size}", jax.jit(op), operand)
            if PROCESS == 0:
                print(json.dumps({"what": name, "bytes": elements * 4, "seconds": seconds}),
                      flush=True)


def mlp_step():
    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    params = [(rng.normal(size=(a, b)).astype(np.float32) * a ** -0.5,
               np.zeros(b, np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]
    params = jax.device_put(params, NamedSharding(MESH, P()))
    batch = 32 * N
    xs = rng.normal(size=(batch, 784)).astype(np.float32)
    ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    x = jax.make_array_from_callback(xs.shape, NamedSharding(MESH, P("x")), lambda i: xs[i])
    y = jax.make_array_from_callback(ys.shape, NamedSharding(MESH, P("x")), lambda i: ys[i])

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jax.nn.relu(h @ w + b)
        logits = h @ params[-1][0] + params[-1][1]
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))

    # The step as jit over sharded arrays (the compiler partitions it: on
    # Kiln that is issue 28's partitioner, which it lacks so far, so each
    # device computes the whole batch) and as explicit data parallelism
    # (shard_map: each device its rows, gradients averaged by pmean).
    @jax.jit
    def step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

    def local_step(params, x, y):
        grads = jax.lax.pmean(jax.grad(loss)(params, x, y), "x")
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

    data_parallel = jax.jit(shard_map(local_step, mesh=MESH, in_specs=(P(), P("x"), P("x")),
                                      out_specs=P(), check_vma=False))
    for name, fn in (("mlp_step_jit", step), ("mlp_step_shard_map", data_parallel)):
        seconds = timed(name, lambda p, a, b: jax.tree.leaves(fn(p, a, b))[0], params, x, y)
        if PROCESS == 0:
            print(json.dumps({"what": name, "bytes": batch, "seconds": seconds}), flush=True)


collectives()
mlp_step()
barrier("done")
if COUNT > 1:
    jax.distributed.shutdown()
