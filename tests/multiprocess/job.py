"""One process of a multi-process JAX job: `python job.py PLATFORM ID COUNT PORT [CASES]`.

Run COUNT copies (ID 0..COUNT-1) against one coordinator port; each prints
one JSON line per case ("case", "value") that the launcher
(tests/multiprocess/launch.py) compares across platforms: Kiln
(`kiln`) against XLA's CPU backend with Gloo (`cpu`). Every process has
JOB_LOCAL_DEVICES devices (default 2).
"""
import json
import os
import sys

PLATFORM, PROCESS, COUNT, PORT = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
CASES = sys.argv[5].split(",") if len(sys.argv) > 5 else None
LOCAL = int(os.environ.get("JOB_LOCAL_DEVICES", "2"))

from launch import join_job  # noqa: E402

jax = join_job(PLATFORM, PROCESS, COUNT, PORT, LOCAL)

import numpy as np  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

from jax import shard_map  # noqa: E402


def emit(case, value):
    if isinstance(value, (jax.Array, np.ndarray)):
        value = np.asarray(value).tolist()
    print(json.dumps({"case": case, "process": PROCESS, "value": value}), flush=True)


def gathered(array):
    """Every element of a global array, on every process."""
    return np.asarray(multihost_utils.process_allgather(array, tiled=True))


N = COUNT * LOCAL
DEVICES = np.array(jax.devices())


def case_topology():
    # Device ids are the platform's own (XLA's CPU client numbers process
    # p's devices from p * 2048): compare where they lie, not the numbers.
    ids = [d.id for d in jax.devices()]
    emit("topology", {
        "process_count": jax.process_count(),
        "process_index": jax.process_index(),
        "devices": [d.process_index for d in jax.devices()],
        "local": [ids.index(d.id) for d in jax.local_devices()],
        "distinct_ids": len(set(ids)) == len(ids),
    })


def case_global_array():
    mesh = Mesh(DEVICES, ("x",))
    sharding = NamedSharding(mesh, P("x"))
    local = np.arange(LOCAL * 3, dtype=np.float32).reshape(LOCAL, 3) + 100 * PROCESS
    array = jax.make_array_from_process_local_data(sharding, local)
    emit("global_array", gathered(array))
    from_callback = jax.make_array_from_callback(
        (N, 2), sharding, lambda index: np.arange(N * 2, dtype=np.int32).reshape(N, 2)[index])
    emit("from_callback", gathered(from_callback * 2))


def case_shard_map():
    mesh = Mesh(DEVICES.reshape(COUNT, LOCAL), ("proc", "dev"))
    x = jax.make_array_from_callback(
        (N, 4), NamedSharding(mesh, P(("proc", "dev"))),
        lambda index: np.arange(N * 4, dtype=np.float32).reshape(N, 4)[index])

    def body(block):
        return jnp.concatenate([
            jax.lax.psum(block, ("proc", "dev")),
            jax.lax.pmax(block, "proc"),
            jax.lax.pmean(block, "dev"),
            jax.lax.ppermute(block, ("proc", "dev"),
                             [(i, (i + 1) % N) for i in range(N)]),
            jnp.full_like(block, jax.lax.axis_index(("proc", "dev"))),
        ], axis=1)

    out = jax.jit(shard_map(body, mesh=mesh, in_specs=P(("proc", "dev")),
                            out_specs=P(("proc", "dev"))))(x)
    emit("shard_map", gathered(out))

    def gathers(block):
        everything = jax.lax.all_gather(block, ("proc", "dev"), tiled=True)
        scattered = jax.lax.psum_scatter(everything, ("proc", "dev"), tiled=True)
        swapped = jax.lax.all_to_all(everything, ("proc", "dev"), 0, 0, tiled=True)
        return jnp.concatenate([scattered, swapped[:block.shape[0]]], axis=1)

    out = jax.jit(shard_map(gathers, mesh=mesh, in_specs=P(("proc", "dev")),
                            out_specs=P(("proc", "dev"))))(x)
    emit("collectives", gathered(out))


def case_subset():
    """Collectives on a mesh of some of the job's devices: the first device
    of every process (each process takes part with one device)."""
    some = Mesh(DEVICES[::LOCAL], ("p",))
    x = jax.make_array_from_callback(
        (COUNT, 3), NamedSharding(some, P("p")),
        lambda index: (np.arange(COUNT * 3, dtype=np.float32).reshape(COUNT, 3) + 1)[index])
    body = shard_map(lambda b: jnp.concatenate([jax.lax.psum(b, "p"),
                                                jax.lax.all_gather(b, "p", tiled=True)]),
                     mesh=some, in_specs=P("p"), out_specs=P("p"))
    emit("subset", gathered(jax.jit(body)(x)))


def case_group_orders():
    """Collectives on a mesh whose axis takes the processes' devices in
    process order (a process's members consecutive: Kiln's leaders exchange
    one block per process) and in turn (process 0's first, process 1's
    first, ...: they are not), small (one round of direct exchanges) and
    512 KB per device (rings)."""
    results = {}
    for name, devices in (("in_order", DEVICES),
                          ("in_turn", DEVICES.reshape(COUNT, LOCAL).T.reshape(-1))):
        mesh = Mesh(devices, ("x",))
        for per_device in (8, 1 << 17):
            x = jax.make_array_from_callback(
                (N * per_device,), NamedSharding(mesh, P("x")),
                lambda index: (np.arange(N * per_device, dtype=np.float32) % 1000)[index])
            body = shard_map(lambda b: jnp.concatenate([
                jax.lax.psum(b, "x"),
                jax.lax.psum_scatter(b, "x", tiled=True),
                jax.lax.all_gather(b[:per_device // N], "x", tiled=True)]),
                mesh=mesh, in_specs=P("x"), out_specs=P("x"))
            out = gathered(jax.jit(body)(x))
            results[f"{name} {per_device}"] = out[::max(1, out.size // 500)].tolist()  # a sample
    emit("group_orders", results)


def case_fingerprint():
    """The same program compiles to the same fingerprint in every process
    (JAX derives launch ids from it)."""
    import hashlib

    compiled = jax.jit(lambda a: jnp.sin(a) * 3).lower(np.ones(8, np.float32)).compile()
    fingerprint = compiled.runtime_executable().fingerprint or b""
    digest = np.frombuffer(hashlib.sha256(fingerprint).digest()[:8], dtype=np.int32)
    every = np.asarray(multihost_utils.process_allgather(digest))
    emit("fingerprint", {"present": bool(fingerprint),
                         "same": bool((every == every[0]).all())})


def case_jit_sharded():
    mesh = Mesh(DEVICES.reshape(COUNT, LOCAL), ("proc", "dev"))
    a = jax.make_array_from_callback(
        (N * 2, 8), NamedSharding(mesh, P(("proc", "dev"))),
        lambda index: (np.arange(N * 16, dtype=np.float32).reshape(N * 2, 8) / 7)[index])
    w = jax.device_put(np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8),
                       NamedSharding(mesh, P()))
    out = jax.jit(lambda a, w: jnp.tanh(a @ w).sum(axis=0),
                  out_shardings=NamedSharding(mesh, P()))(a, w)
    emit("jit_sharded", np.asarray(out.addressable_data(0)))


def case_pmap():
    out = jax.pmap(lambda v: jax.lax.psum(v, "i") + v, axis_name="i")(
        np.arange(LOCAL, dtype=np.float32) + LOCAL * PROCESS)
    emit("pmap", np.asarray(out))
    multihost_utils.sync_global_devices("after pmap")


def case_elsewhere():
    """A program on the last process's devices only: the others run it with
    no devices of theirs (PJRT Execute with empty lists)."""
    theirs = Mesh(DEVICES[-LOCAL:], ("x",))
    x = jax.make_array_from_callback(
        (LOCAL * 2,), NamedSharding(theirs, P("x")),
        lambda index: np.arange(LOCAL * 2, dtype=np.float32)[index], dtype=np.float32)
    # The output sharding is given: propagating it is issue 28's.
    out = jax.jit(lambda a: a * 2 + 1, out_shardings=NamedSharding(theirs, P("x")))(x)
    emit("elsewhere", [np.asarray(shard.data).tolist() for shard in out.addressable_shards])


def train(step, params, *batch):
    """The losses of JOB_STEPS (default 10) calls of `step`."""
    losses = []
    for _ in range(int(os.environ.get("JOB_STEPS", "10"))):
        params, value = step(params, *batch)
        losses.append(float(value))
    return losses


def case_training():
    mesh = Mesh(DEVICES, ("batch",))
    rng = np.random.default_rng(0)
    params = {"w1": rng.normal(size=(16, 32)).astype(np.float32) * 0.3,
              "w2": rng.normal(size=(32, 1)).astype(np.float32) * 0.3}
    params = jax.device_put(params, NamedSharding(mesh, P()))
    xs = rng.normal(size=(N * 8, 16)).astype(np.float32)
    ys = np.sin(xs.sum(axis=1, keepdims=True))
    batch = NamedSharding(mesh, P("batch"))
    x = jax.make_array_from_callback(xs.shape, batch, lambda index: xs[index])
    y = jax.make_array_from_callback(ys.shape, batch, lambda index: ys[index])

    def loss(params, x, y):
        hidden = jnp.tanh(x @ params["w1"])
        return jnp.mean((hidden @ params["w2"] - y) ** 2)

    @jax.jit
    def step(params, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value

    emit("training", train(step, params, x, y))


def case_transformer():
    """Data-parallel training of bench/'s transformer block: the batch split
    over every device of the job, the parameters replicated."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "bench"))
    import workloads

    mesh = Mesh(DEVICES, ("batch",))
    rng = np.random.default_rng(1)
    params, xs = workloads._transformer_inputs(rng)
    targets = rng.normal(size=xs.shape).astype(np.float32)
    batch = NamedSharding(mesh, P("batch"))
    x = jax.make_array_from_callback(xs.shape, batch, lambda index: xs[index])
    target = jax.make_array_from_callback(targets.shape, batch, lambda index: targets[index])
    params = jax.device_put(params, NamedSharding(mesh, P()))
    step = jax.jit(workloads._sgd(workloads._transformer_loss, lr=0.05))
    emit("transformer", train(step, params, x, target))


def case_fault():
    """The last process dies (SIGKILL) while the others are in a psum: they
    must get an error, not hang and not abort."""
    import signal
    import time

    mesh = Mesh(DEVICES, ("x",))
    x = jax.make_array_from_callback((N,), NamedSharding(mesh, P("x")),
                                     lambda index: np.ones(N, np.float32)[index])
    total = jax.jit(shard_map(lambda b: jax.lax.psum(b, "x"), mesh=mesh, in_specs=P("x"),
                              out_specs=P("x")))
    total(x).block_until_ready()  # the communicators exist
    if PROCESS == COUNT - 1:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(1)
    start = time.monotonic()
    try:
        total(x).block_until_ready()
        emit("fault", {"error": None})
    except Exception as error:  # noqa: BLE001 - the error is the result
        emit("fault", {"error": str(error)[:600], "seconds": time.monotonic() - start})
    os._exit(0)  # the job is broken: no orderly shutdown


ALL = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
for name in CASES or [case for case in ALL if case != "fault"]:
    ALL[name]()
if COUNT > 1:
    jax.distributed.shutdown()
