"""Conversions to and from the 8-, 6- and 4-bit float types on Kiln, bit for
bit against ml_dtypes (numpy's astype), which XLA's CPU backend matches for the
f8 types. docs/framework-notes.md says where XLA differs (f6, NaN to f4)."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

TYPES = [jnp.float8_e5m2, jnp.float8_e4m3fn, jnp.float8_e4m3b11fnuz, jnp.float8_e5m2fnuz,
         jnp.float8_e4m3fnuz, jnp.float8_e4m3, jnp.float8_e3m4, jnp.float8_e8m0fnu,
         jnp.float4_e2m1fn, ml_dtypes.float6_e2m3fn, ml_dtypes.float6_e3m2fn]
BITS = {jnp.float4_e2m1fn: 4, ml_dtypes.float6_e2m3fn: 6, ml_dtypes.float6_e3m2fn: 6}


def _samples():
    rng = np.random.default_rng(0)
    scales = (1e-6, 1e-3, 1, 10, 1000, 1e5)
    values = [rng.standard_normal(500).astype(np.float32) * s for s in scales]
    values.append(np.array([0, -0.0, np.inf, -np.inf, 1e30, -1e30, 1e-30], np.float32))
    return np.concatenate(values)


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
def test_encode_matches_ml_dtypes(dtype):
    x = _samples()
    got = np.asarray(jax.jit(lambda v: v.astype(dtype))(x)).view(np.uint8)
    want = x.astype(dtype).view(np.uint8)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
def test_decode_of_every_code_matches_ml_dtypes(dtype):
    codes = np.arange(1 << BITS.get(dtype, 8), dtype=np.uint8).view(dtype)
    got = np.asarray(jax.jit(lambda v: v.astype(jnp.float32))(codes))
    want = codes.astype(np.float32)
    np.testing.assert_array_equal(got, want)


def test_nan_to_float4_is_the_negative_zero_pattern_as_on_xla():
    x = np.array([np.nan, -np.nan], np.float32)
    got = np.asarray(jax.jit(lambda v: v.astype(jnp.float4_e2m1fn))(x)).view(np.uint8)
    np.testing.assert_array_equal(got, [8, 8])


def test_arithmetic_rounds_through_f32():
    x = np.array([0.5, 1.5, -3.0, 448.0], jnp.float8_e4m3fn)
    got = np.asarray(jax.jit(lambda a: a * a + a)(x)).view(np.uint8)
    want = (x.astype(np.float32) * x.astype(np.float32)).astype(jnp.float8_e4m3fn)
    want = (want.astype(np.float32) + x.astype(np.float32)).astype(jnp.float8_e4m3fn)
    np.testing.assert_array_equal(got, want.view(np.uint8))
