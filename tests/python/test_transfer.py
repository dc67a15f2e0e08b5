"""Arrays survive jax.device_put and np.asarray bit for bit, on every device."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

# Every element type JAX may support; the ones this JAX lacks are skipped.
DTYPE_NAMES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn",
    "int4", "uint4", "int2", "uint2", "int1", "uint1",
]
DTYPES = [np.dtype(getattr(jnp, name)) for name in DTYPE_NAMES if hasattr(jnp, name)]

SHAPES = [(), (7,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (1, 2, 3, 1, 2), (2, 1, 2, 3, 1, 2),
          (0,), (3, 0), (2, 0, 4)]

VIEWS = {
    "every_other_row": lambda x: x[::2],
    "transpose": lambda x: x.T,
    "reversed": lambda x: x[::-1],
    "reversed_every_other_column": lambda x: x[::-1, ::-2],
}


def sample(dtype: np.dtype, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random values of `dtype`: every bit pattern for byte-sized floats (NaNs included)."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, shape, dtype=dtype,
                            endpoint=True)
    try:
        info = ml_dtypes.iinfo(dtype)  # int4, uint2...: stored one per byte
    except ValueError:
        info = None  # a floating-point type
    if info is not None:
        return rng.integers(int(info.min), int(info.max), shape, endpoint=True).astype(dtype)
    bits = ml_dtypes.finfo(dtype).bits
    if bits < 8:  # stored one per byte: make patterns canonical through float32
        codes = rng.integers(0, 1 << bits, shape, dtype=np.uint8)
        return codes.view(dtype).astype(np.float32).astype(dtype)
    raw = rng.integers(0, 256, int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def assert_bits_equal(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    if np.ascontiguousarray(actual).tobytes() != np.ascontiguousarray(expected).tobytes():
        pytest.fail(f"values differ:\nexpected {expected!r}\nfound    {actual!r}")


def check_round_trip(host: np.ndarray, device=None) -> jax.Array:
    """device_put then np.asarray; JAX first narrows 64-bit types when x64 is off."""
    with np.errstate(over="ignore", invalid="ignore"):  # narrowing random bits overflows
        on_device = jax.device_put(host, device)
        expected = host.astype(jax.dtypes.canonicalize_dtype(host.dtype))
    if device is not None:
        assert on_device.devices() == {device}
    assert_bits_equal(np.asarray(on_device), expected)
    return on_device


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trip(dtype, shape, x64):
    with jax.enable_x64(x64):
        check_round_trip(sample(dtype, shape))


@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS.keys())
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trip_of_view(dtype, view):
    with jax.enable_x64(True):
        host = view(sample(dtype, (6, 5)))
        assert not host.flags.c_contiguous
        check_round_trip(host)


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool", "bfloat16", "complex64"])
def test_move_between_devices(devices, dtype):
    host = sample(np.dtype(getattr(jnp, dtype)), (3, 5), seed=1)
    on_second = check_round_trip(host, devices[1])
    on_first = jax.device_put(on_second, devices[0])
    assert on_first.devices() == {devices[0]}
    assert_bits_equal(np.asarray(on_first), host)
    again = jax.device_put(on_first, devices[1])
    assert again.devices() == {devices[1]}
    assert_bits_equal(np.asarray(again), host)


def test_x64_from_environment(run_python):
    code = """
    import jax, numpy as np
    for dtype in (np.float64, np.int64, np.uint64, np.complex128):
        host = (np.arange(12) * (2**40 + 0.5)).astype(dtype).reshape(3, 4)
        array = jax.device_put(host)
        assert array.dtype == dtype, (array.dtype, dtype)
        assert np.asarray(array).tobytes() == host.tobytes(), dtype
    print("ok")
    """
    assert run_python(code, env={"JAX_ENABLE_X64": "1"}).stdout.strip() == "ok"


def test_move_through_eight_devices(run_python):
    code = """
    import jax, numpy as np
    devices = jax.devices()
    assert len(devices) == 8, devices
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    array = jax.device_put(host, devices[0])
    for device in devices[1:] + devices[:1]:
        array = jax.device_put(array, device)
        assert array.devices() == {device}, (array.devices(), device)
        assert np.array_equal(np.asarray(array), host), device
    print("ok")
    """
    assert run_python(code, env={"KILN_NUM_DEVICES": "8"}).stdout.strip() == "ok"


def test_deleted_array_raises(devices):
    array = jax.device_put(np.arange(6, dtype=np.float32), devices[0])
    array.delete()
    assert array.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(array)
    with pytest.raises(RuntimeError, match="deleted"):
        jax.device_put(array, devices[1])
