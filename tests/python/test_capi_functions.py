"""The PJRT C API functions JAX reaches beyond jit and device_put:
ahead-of-time compilation for a topology (PJRT_Compile), JAX's transfer
server (PJRT_Client_CreateBuffersForAsyncHostToDevice and the transfer
manager, PJRT_Client_DmaMap / DmaUnmap), client.dma_map, and
device.poison_execution (PJRT_Device_PoisonExecution)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import topologies, transfer
from jax.experimental.serialize_executable import deserialize_and_load, serialize


def _compile_for(topology, fn, shape):
    device = topology.devices[0]
    spec = jax.ShapeDtypeStruct(shape, jnp.float32,
                                sharding=jax.sharding.SingleDeviceSharding(device))
    return jax.jit(fn).trace(spec).lower(lowering_platforms=("kiln",)).compile()


@pytest.mark.parametrize("num_devices", [2, 3])
def test_compiled_for_a_topology_then_loaded_and_run(devices, num_devices):
    # Two devices, as this process's client has: JAX compiles through that
    # client for the topology (PJRT_Compile with a client). Three: the
    # topology matches no client, so JAX compiles without one.
    topology = topologies.get_topology_desc(platform="kiln", num_devices=num_devices)
    assert len(topology.devices) == num_devices
    compiled = _compile_for(topology, lambda x: jnp.sin(x) * 2 + 1, (5,))
    payload, in_tree, out_tree = serialize(compiled)
    loaded = deserialize_and_load(payload, in_tree, out_tree, execution_devices=devices[:1])
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(loaded(x)), np.sin(x) * 2 + 1, rtol=1e-6)


def test_transfer_server_pulls_arrays_through_async_host_to_device_buffers(devices):
    server = transfer.start_transfer_server(devices[0].client, "[::]:0", ["[::]:0"] * 2)
    connection = server.connect(server.address())
    arrays = {"big": jnp.arange(3_000_000, dtype=jnp.float32) * 0.5,
              "small": jnp.arange(35, dtype=jnp.int32).reshape(5, 7)}
    server.await_pull(11, arrays)
    target = jax.sharding.SingleDeviceSharding(devices[1])
    specs = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=target),
                         arrays)
    pulled = connection.pull(11, specs)
    for name, array in arrays.items():
        assert pulled[name].devices() == {devices[1]}
        np.testing.assert_array_equal(np.asarray(pulled[name]), np.asarray(array))


def test_dma_map_tracks_host_ranges(devices):
    client = devices[0].client
    host = np.zeros(4096, np.uint8)
    address = host.ctypes.data
    client.dma_map(address, 2048)
    with pytest.raises(Exception, match="already mapped"):
        client.dma_map(address, 2048)
    with pytest.raises(Exception, match="overlaps"):
        client.dma_map(address + 1024, 2048)
    client.dma_map(address + 2048, 2048)
    client.dma_unmap(address)
    client.dma_unmap(address + 2048)
    with pytest.raises(Exception, match="no mapped range starts at"):
        client.dma_unmap(address)


def test_poison_execution_fails_a_queued_run(run_python, tmp_path):
    # `held` occupies the device's queue until its callback returns, so
    # `queued` waits behind it; JAX numbers each executable's launches
    # consecutively, so the next launch id of `triple` is its last plus one.
    trace = tmp_path / "trace.txt"
    result = run_python("""
import os, threading
import jax, jax.numpy as jnp, numpy as np

gate = threading.Event()
def wait_for_gate(x):
    gate.wait(60)
    return np.asarray(x)

hold = jax.jit(lambda x: jax.pure_callback(
    wait_for_gate, jax.ShapeDtypeStruct(x.shape, x.dtype), x))
triple = jax.jit(lambda x: x * 3)
x = jnp.arange(4.0)
triple(x).block_until_ready()
launches = [int(line.split("launch_id=")[1].split()[0])
            for line in open(os.environ["KILN_TRACE_FILE"]) if "LoadedExecutable_Execute" in line]
device = jax.devices()[0]
held = hold(x)
queued = triple(x)
print("unknown", device.poison_execution(launches[-1] + 1000, "never launched"))
print("poisoned", device.poison_execution(launches[-1] + 1, "stopped by the test"))
gate.set()
print("held", np.asarray(held).tolist())
try:
    queued.block_until_ready()
    print("queued ran")
except Exception as error:
    print("queued failed:", "stopped by the test" in str(error))
print("after", np.asarray(triple(x)).tolist())
""", env={"KILN_TRACE": "1", "KILN_TRACE_FILE": str(trace)})
    lines = result.stdout.splitlines()
    assert lines == ["unknown False", "poisoned True", "held [0.0, 1.0, 2.0, 3.0]",
                     "queued failed: True", "after [0.0, 3.0, 6.0, 9.0]"], result.stdout
