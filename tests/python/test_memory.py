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
