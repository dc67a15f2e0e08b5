"""Device.memory_stats() follows the arrays that live on the device."""

import gc

import jax
import numpy as np

ARRAY_BYTES = 4 << 20


def bytes_in_use(device) -> int:
    stats = device.memory_stats()
    assert isinstance(stats, dict), f"memory_stats() returned {stats!r}"
    value = stats["bytes_in_use"]
    assert isinstance(value, int) and value >= 0, stats
    return value


def test_memory_stats_follow_an_array(devices):
    device = devices[0]
    gc.collect()  # arrays other tests dropped must not be freed mid-measurement
    before = bytes_in_use(device)
    array = jax.device_put(np.ones(ARRAY_BYTES // 4, dtype=np.float32), device)
    array.block_until_ready()
    with_array = bytes_in_use(device)
    assert with_array - before >= ARRAY_BYTES, (before, with_array)
    array.delete()
    after_delete = bytes_in_use(device)
    assert with_array - after_delete >= ARRAY_BYTES, (with_array, after_delete)


def test_memory_stats_are_per_device(devices):
    gc.collect()
    other_before = bytes_in_use(devices[1])
    array = jax.device_put(np.ones(ARRAY_BYTES, dtype=np.uint8), devices[0])
    array.block_until_ready()
    assert bytes_in_use(devices[1]) == other_before
    array.delete()


def test_peak_is_at_least_in_use(devices):
    stats = devices[0].memory_stats()
    if "peak_bytes_in_use" in stats:
        assert stats["peak_bytes_in_use"] >= stats["bytes_in_use"], stats


# --- memory kinds (host offload) --------------------------------------------

def _kind(array):
    return array.sharding.memory_kind


def test_every_device_has_xlas_three_memory_kinds(devices):
    for device in devices:
        kinds = sorted(memory.kind for memory in device.addressable_memories())
        assert kinds == ["device", "pinned_host", "unpinned_host"], kinds
        assert device.default_memory().kind == "device"


def test_results_land_in_the_memory_kind_asked_for(devices):
    import jax
    import jax.numpy as jnp
    from jax.sharding import SingleDeviceSharding

    device = devices[0]
    host = SingleDeviceSharding(device, memory_kind="pinned_host")
    unpinned = SingleDeviceSharding(device, memory_kind="unpinned_host")
    on_device = SingleDeviceSharding(device, memory_kind="device")
    x = jnp.arange(4.0)
    y = jax.jit(lambda v: v * 2, out_shardings=host)(x)
    assert _kind(y) == "pinned_host" and y.tolist() == [0, 2, 4, 6]
    assert _kind(jax.jit(lambda v: v * 2, out_shardings=unpinned)(x)) == "unpinned_host"
    # An argument in host memory, a result back on the device, and JAX's
    # default for the result (as on the CPU backend: the kind of an argument
    # put there by device_put, "device" for one a program left there).
    assert _kind(jax.jit(lambda v: v + 1, out_shardings=on_device)(y)) == "device"
    assert _kind(jax.jit(lambda v: v + 1)(y)) == "device"
    assert _kind(jax.jit(lambda v: v + 1)(jax.device_put(x, host))) == "pinned_host"
    # jax.device_put(..., memory_kind) inside jit: annotate_device_placement.
    z = jax.jit(lambda v: jax.device_put(v * 3, host))(x)
    assert _kind(z) == "pinned_host" and z.tolist() == [0, 3, 6, 9]
    back = jax.jit(lambda v: jax.device_put(jax.device_put(v, host), on_device) + 1)(x)
    assert _kind(back) == "device" and back.tolist() == [1, 2, 3, 4]
    compiled = jax.jit(lambda v: (v, v * 2), out_shardings=(host, on_device)).lower(x).compile()
    assert [s.memory_kind for s in compiled.output_shardings] == ["pinned_host", "device"]


def test_compute_on_the_host_and_sharded_results_in_host_memory(run_python):
    result = run_python("""
        from functools import partial
        import jax, jax.numpy as jnp, numpy as np
        from jax._src import core
        from jax.experimental.compute_on import compute_on
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

        @partial(compute_on, compute_type="device_host", out_memory_spaces=core.MemorySpace.Host)
        @jax.jit
        def g(v):
            return v * 5
        y = jax.jit(lambda v: g(v))(jnp.arange(4.0))
        print(y.tolist(), y.sharding.memory_kind)
        mesh = Mesh(np.array(jax.devices()), ("x",))
        x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
        z = jax.jit(lambda v: v * 2,
                    out_shardings=NamedSharding(mesh, P("x"), memory_kind="pinned_host"))(x)
        print(z.tolist()[:3], [s.data.sharding.memory_kind for s in z.addressable_shards])
    """, env={"KILN_NUM_DEVICES": "2"})
    assert result.stdout.splitlines() == [
        "[0.0, 5.0, 10.0, 15.0] pinned_host",
        "[0.0, 2.0, 4.0] ['pinned_host', 'pinned_host']"], result.stdout
