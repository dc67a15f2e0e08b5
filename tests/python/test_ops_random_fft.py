"""Random bits and FFTs on Kiln, checked against JAX's CPU backend
(differential.py).

Random numbers are compared BIT-EXACTLY: jax.random with the 'rbg' and
'unsafe_rbg' implementations (which lower to stablehlo.rng_bit_generator,
DEFAULT meaning PHILOX on XLA's CPU backend) and lax.rng_bit_generator for
every algorithm, dtype and shape, new state included. Uniform floats are
compared as their bits; normals go through erf_inv, so within rounding.
FFTs (jnp.fft.*) over many lengths (powers of two, primes, odd sizes, 1,
zero-size batches) within a tolerance scaled by the transform size.
64-bit cases (u64 bits, complex128 FFTs) run in two fresh interpreters
with JAX_ENABLE_X64=1, one per backend.
"""

import math
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import differential
from differential import Case

_random = np.random.RandomState(0)
KEY = np.array([0, 42, 0x9E3779B9, 123456789], np.uint32)
KEY2 = np.array([0xFFFFFFFF, 0xFFFFFFFF, 5, 0xFFFFFFFE], np.uint32)

ALGORITHMS = {
    "default": lax.RandomAlgorithm.RNG_DEFAULT,
    "threefry": lax.RandomAlgorithm.RNG_THREE_FRY,
    "philox": lax.RandomAlgorithm.RNG_PHILOX,
}
SHAPES = [(), (0,), (3, 0), (1,), (7,), (3, 5), (4, 6), (2, 3, 5), (5, 3, 2), (1, 1, 9), (1000,)]


def _key(impl):
    return lambda data: jax.random.wrap_key_data(data, impl=impl)


def _random_cases(impl):
    key = _key(impl)
    return [
        Case(f"{impl}_bits_u32", lambda k: jax.random.bits(key(k), (3, 5)), (KEY,)),
        Case(f"{impl}_bits_u8", lambda k: jax.random.bits(key(k), (7, 3), jnp.uint8), (KEY2,)),
        Case(f"{impl}_bits_u16", lambda k: jax.random.bits(key(k), (9,), jnp.uint16), (KEY,)),
        Case(f"{impl}_uniform_bits",
             lambda k: lax.bitcast_convert_type(jax.random.uniform(key(k), (1000,)), jnp.uint32),
             (KEY,)),
        Case(f"{impl}_normal", lambda k: jax.random.normal(key(k), (257,)), (KEY2,),
             rtol=1e-6, atol=1e-6),
        Case(f"{impl}_split", lambda k: jax.random.key_data(jax.random.split(key(k), 3)), (KEY,)),
        Case(f"{impl}_fold_in", lambda k: jax.random.key_data(jax.random.fold_in(key(k), 7)),
             (KEY2,)),
        Case(f"{impl}_split_then_bits",
             lambda k: jax.random.bits(jax.random.split(key(k))[1], (4, 4)), (KEY,)),
        Case(f"{impl}_randint", lambda k: jax.random.randint(key(k), (50,), -5, 10), (KEY,)),
    ]


def _generator_cases():
    cases = []
    for name, algorithm in ALGORITHMS.items():
        for dtype in (np.uint8, np.uint16, np.uint32):
            # Every shape for u32; the narrow types share its layout.
            for shape in SHAPES if dtype == np.uint32 else [(), (0,), (3, 5), (2, 3, 5)]:
                label = "x".join(map(str, shape)) or "scalar"
                cases.append(Case(
                    f"rbg_{name}_{np.dtype(dtype).name}_{label}",
                    lambda k, shape=shape, dtype=dtype, algorithm=algorithm:
                        lax.rng_bit_generator(k, shape, dtype, algorithm=algorithm),
                    (KEY2 if len(shape) % 2 else KEY,)))
    return cases


def _complex(*shape, dtype=np.complex64):
    return (_random.randn(*shape) + 1j * _random.randn(*shape)).astype(dtype)


def _real(*shape, dtype=np.float32):
    return _random.randn(*shape).astype(dtype)


def _fft_case(name, fn, arg, size, inverse=False, precision=1e-5):
    """Tolerance: rounding grows like log2(size); forward outputs of unit
    normal inputs have magnitude sqrt(size), inverse ones 1/sqrt(size)."""
    scale = 1 / math.sqrt(size) if inverse else math.sqrt(size)
    atol = precision * scale * max(1.0, math.log2(size + 1))
    return Case(name, fn, (arg,), rtol=precision, atol=atol)


def _fft_cases(complex_dtype=np.complex64, real_dtype=np.float32, precision=2e-6, prefix=""):
    cases = []
    for n in (1, 2, 3, 5, 7, 12, 15, 60, 97, 1009, 1024):
        cases += [
            _fft_case(f"{prefix}fft_{n}", jnp.fft.fft, _complex(3, n, dtype=complex_dtype), n,
                      precision=precision),
            _fft_case(f"{prefix}ifft_{n}", jnp.fft.ifft, _complex(3, n, dtype=complex_dtype), n,
                      inverse=True, precision=precision),
            _fft_case(f"{prefix}rfft_{n}", jnp.fft.rfft, _real(2, n, dtype=real_dtype), n,
                      precision=precision),
            # A random (not Hermitian) spectrum: the imaginary parts of the DC
            # and Nyquist terms must be ignored as XLA's CPU backend does.
            _fft_case(f"{prefix}irfft_{n}", lambda x, n=n: jnp.fft.irfft(x, n=n),
                      _complex(2, n // 2 + 1, dtype=complex_dtype), n, inverse=True,
                      precision=precision),
        ]
    shapes_2d = [(4, 6), (5, 7), (1, 9), (16, 17), (2, 3, 8, 10)]
    for shape in shapes_2d:
        size = shape[-1] * shape[-2]
        label = "x".join(map(str, shape))
        cases += [
            _fft_case(f"{prefix}fft2_{label}", jnp.fft.fft2, _complex(*shape, dtype=complex_dtype),
                      size, precision=precision),
            _fft_case(f"{prefix}ifft2_{label}", jnp.fft.ifft2,
                      _complex(*shape, dtype=complex_dtype), size, inverse=True,
                      precision=precision),
            _fft_case(f"{prefix}rfft2_{label}", jnp.fft.rfft2, _real(*shape, dtype=real_dtype),
                      size, precision=precision),
            _fft_case(f"{prefix}irfft2_{label}",
                      lambda x, s=shape[-2:]: jnp.fft.irfft2(x, s=s),
                      _complex(*shape[:-1], shape[-1] // 2 + 1, dtype=complex_dtype), size,
                      inverse=True, precision=precision),
        ]
    for shape in [(3, 5, 7), (2, 4, 6, 8), (1, 1, 13)]:
        size = math.prod(shape[-3:])
        label = "x".join(map(str, shape))
        cases += [
            _fft_case(f"{prefix}fftn_{label}", lambda x: jnp.fft.fftn(x, axes=(-3, -2, -1)),
                      _complex(*shape, dtype=complex_dtype), size, precision=precision),
            _fft_case(f"{prefix}ifftn_{label}", lambda x: jnp.fft.ifftn(x, axes=(-3, -2, -1)),
                      _complex(*shape, dtype=complex_dtype), size, inverse=True,
                      precision=precision),
            _fft_case(f"{prefix}rfftn_{label}", lambda x: jnp.fft.rfftn(x, axes=(-3, -2, -1)),
                      _real(*shape, dtype=real_dtype), size, precision=precision),
            _fft_case(f"{prefix}irfftn_{label}",
                      lambda x, s=shape[-3:]: jnp.fft.irfftn(x, s=s, axes=(-3, -2, -1)),
                      _complex(*shape[:-1], shape[-1] // 2 + 1, dtype=complex_dtype), size,
                      inverse=True, precision=precision),
        ]
    cases += [
        _fft_case(f"{prefix}fft_empty_batch", jnp.fft.fft, _complex(0, 8, dtype=complex_dtype), 8,
                  precision=precision),
        _fft_case(f"{prefix}rfft_empty_batch", jnp.fft.rfft, _real(2, 0, 16, dtype=real_dtype),
                  16, precision=precision),
        _fft_case(f"{prefix}fft_axis0", lambda x: jnp.fft.fft(x, axis=0),
                  _complex(12, 5, dtype=complex_dtype), 12, precision=precision),
        _fft_case(f"{prefix}fft_grad", jax.grad(lambda x: jnp.abs(jnp.fft.rfft(x)).sum()),
                  _real(30, dtype=real_dtype), 30, precision=precision),
    ]
    return cases


CASES = (_random_cases("rbg") + _random_cases("unsafe_rbg") + _generator_cases() + _fft_cases())


def _x64_cases():
    cases = [
        Case("rbg_bits_u64", lambda k: jax.random.bits(jax.random.wrap_key_data(k, impl="rbg"),
                                                         (5, 3), jnp.uint64), (KEY,)),
        Case("rbg_uniform_f64_bits",
             lambda k: lax.bitcast_convert_type(
                 jax.random.uniform(jax.random.wrap_key_data(k, impl="rbg"), (33,), jnp.float64),
                 jnp.uint64), (KEY2,)),
    ]
    for name, algorithm in ALGORITHMS.items():
        for shape in [(), (0,), (1,), (7,), (3, 5), (4, 2, 3)]:
            label = "x".join(map(str, shape)) or "scalar"
            cases.append(Case(f"rbg_{name}_uint64_{label}",
                              lambda k, shape=shape, algorithm=algorithm:
                                  lax.rng_bit_generator(k, shape, jnp.uint64,
                                                        algorithm=algorithm),
                              (KEY2,)))
    return cases + _fft_cases(np.complex128, np.float64, precision=1e-12, prefix="x64_")


X64_CASES = _x64_cases()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return differential.cpu_reference(__file__, "CASES", tmp_path_factory.mktemp("cpu"))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_matches_cpu(case, reference):
    differential.check(case, reference)


@pytest.fixture(scope="module")
def x64_references(tmp_path_factory):
    return differential.x64_runs(__file__, "X64_CASES", tmp_path_factory)


@pytest.mark.parametrize("case", X64_CASES, ids=lambda case: case.name)
def test_x64_matches_cpu(case, x64_references):
    differential.check_runs(case, *x64_references)


def test_rng_uniform_and_normal_distributions():
    """stablehlo.rng (lax.rng_uniform): implementation-defined bits, so the
    distribution is checked: range, mean, and fresh numbers on every call."""
    f = jax.jit(lambda a, b: lax.rng_uniform(a, b, (20000,)))
    first = np.asarray(f(np.float32(-1), np.float32(3)))
    second = np.asarray(f(np.float32(-1), np.float32(3)))
    assert first.shape == (20000,) and first.dtype == np.float32
    assert first.min() >= -1 and first.max() < 3
    assert abs(first.mean() - 1.0) < 0.05
    assert abs(first.std() - 4 / math.sqrt(12)) < 0.05
    assert not np.array_equal(first, second)
    ints = np.asarray(jax.jit(lambda: lax.rng_uniform(np.int32(2), np.int32(9), (5000,)))())
    assert ints.min() == 2 and ints.max() == 8
    assert abs(ints.mean() - 5.0) < 0.15


# rng_bit_generator for the output types JAX does not emit (signed, float,
# 3-word Philox states): raw StableHLO compiled by each backend's client.
_RAW_CHILD = r"""
import sys, numpy as np, jax
from jax._src import xla_bridge
from jax._src.lib import xla_client as xc
backend = xla_bridge.get_backend()
device = backend.devices()[0]
outputs = {}
for algorithm in ("DEFAULT", "THREE_FRY", "PHILOX"):
    for words in ((2, 3) if algorithm != "THREE_FRY" else (2,)):
        for etype in ("i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"):
            for shape in ((), (3, 5)):
                dims = "x".join(map(str, shape))
                out_type = f"tensor<{dims + 'x' if dims else ''}{etype}>"
                state_type = f"tensor<{words}xui64>"
                text = f'''
func.func public @main(%arg0: {state_type}) -> ({state_type}, {out_type}) {{
  %s, %o = stablehlo.rng_bit_generator %arg0, algorithm = {algorithm} : ({state_type}) -> ({state_type}, {out_type})
  return %s, %o : {state_type}, {out_type}
}}'''
                exe = backend.compile_and_load(text, xc.DeviceList((device,)), xc.CompileOptions())
                state = np.array([0x0123456789ABCDEF, 0xFFFFFFFFFFFFFFFE, 77][:words], np.uint64)
                new_state, bits = exe.execute([jax.device_put(state, device)])
                name = f"{algorithm}_{words}_{etype}_{dims or 'scalar'}"
                outputs[name + "_state"] = np.asarray(new_state)
                outputs[name] = np.frombuffer(np.asarray(bits).tobytes(), np.uint8)
np.savez(sys.argv[1], **outputs)
"""


def _run_raw(platform, path):
    env = {k: v for k, v in os.environ.items() if platform == "kiln" or not k.startswith("KILN_")}
    env.update(JAX_PLATFORMS=platform, JAX_ENABLE_X64="1")
    result = subprocess.run([sys.executable, "-c", _RAW_CHILD, str(path)], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{platform} child failed:\n{result.stderr[-3000:]}"
    return dict(np.load(path))


def test_rng_bit_generator_all_types_bit_exact(tmp_path):
    cpu = _run_raw("cpu", tmp_path / "cpu.npz")
    kiln = _run_raw("kiln", tmp_path / "kiln.npz")
    assert sorted(cpu) == sorted(kiln)
    assert len(cpu) == 2 * (2 + 1 + 2) * 8 * 2
    for name in cpu:
        np.testing.assert_array_equal(kiln[name], cpu[name], err_msg=name)
