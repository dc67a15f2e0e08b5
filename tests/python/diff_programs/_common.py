"""Shared pieces of the generated differential programs (test_differential.py):
the dtypes under test and deterministic inputs full of special values.

Every module in this folder builds a list `CASES` of differential.Case at
import time. Inputs must be deterministic: each module seeds its own
RandomState, and the CPU reference child imports the module again.
"""

import os
import sys

# The CPU child puts only this folder on sys.path; differential.py is one up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

from differential import Case  # noqa: E402,F401

BOOL = np.dtype(np.bool_)
SIGNED = [np.dtype(t) for t in (np.int8, np.int16, np.int32)]
UNSIGNED = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32)]
INTS = SIGNED + UNSIGNED
FLOATS = [np.dtype(np.float16), np.dtype(jnp.bfloat16), np.dtype(np.float32)]
COMPLEX = [np.dtype(np.complex64)]
ALL = [BOOL] + INTS + FLOATS + COMPLEX
NUMERIC = INTS + FLOATS + COMPLEX


def kind(dtype) -> str:
    """numpy's dtype kind, but "f" for bfloat16 (numpy says "V")."""
    dtype = np.dtype(dtype)
    return "f" if dtype == np.dtype(jnp.bfloat16) else dtype.kind


def short(dtype) -> str:
    """A short dtype tag for case names: f32, bf16, s8, u16, c64, pred."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return "pred"
    if dtype == np.dtype(jnp.bfloat16):
        return "bf16"
    kind = {"f": "f", "i": "s", "u": "u", "c": "c"}[dtype.kind]
    return f"{kind}{dtype.itemsize * 8}"


def float_specials(dtype) -> list[float]:
    """NaN, infinities, signed zeros, denormals, extremes and ordinary values."""
    info = ml_dtypes.finfo(dtype) if dtype == np.dtype(jnp.bfloat16) else np.finfo(dtype)
    tiny, big, sub = float(info.tiny), float(info.max), float(info.smallest_subnormal)
    return [np.nan, np.inf, -np.inf, 0.0, -0.0, sub, -sub, tiny, -tiny, big, -big,
            1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -3.0, 0.1, 100.0, -100.0, np.pi]


def int_specials(dtype) -> list[int]:
    """Extremes, zero, ±1 and small values, all representable in `dtype`."""
    info = np.iinfo(dtype)
    values = [info.min, info.max, 0, 1, 2, 3, 7, info.min + 1, info.max - 1, 100, 127, 128]
    if info.min < 0:
        values += [-1, -2, -3, -7, -100]
    return [v for v in values if info.min <= v <= info.max]


class Inputs:
    """Deterministic inputs for one module (its own seed)."""

    def __init__(self, seed: int):
        self.random = np.random.RandomState(seed)

    def random_values(self, dtype, shape, scale: float = 3.0) -> np.ndarray:
        """Random values spread over the dtype's range (floats: normal * scale)."""
        return np.asarray(self._random_values(np.dtype(dtype), tuple(shape), scale))

    def _random_values(self, dtype, shape, scale):
        if dtype == BOOL:
            return np.asarray(self.random.rand(*shape)) > 0.5
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            wide = self.random.randint(-2**31, 2**31, size=shape, dtype=np.int64)
            if info.bits < 32 or dtype.kind == "u":
                wide = wide % (int(info.max) - int(info.min) + 1) + int(info.min)
            return wide.astype(dtype)
        if dtype.kind == "c":
            return np.asarray(self.random.randn(*shape) * scale
                              + 1j * self.random.randn(*shape) * scale).astype(dtype)
        return np.asarray(self.random.randn(*shape) * scale).astype(dtype)

    def small_ints(self, dtype, shape, low=-9, high=10) -> np.ndarray:
        """Small values: integers in [low, high) (floats too, so sums stay exact)."""
        dtype = np.dtype(dtype)
        if dtype == BOOL:
            return self.random.rand(*shape) > 0.5
        if dtype.kind == "u":
            low = max(low, 0)
        values = self.random.randint(low, high, size=shape)
        if dtype.kind == "c":
            return (values + 1j * self.random.randint(low, high, size=shape)).astype(dtype)
        return values.astype(dtype)

    def specials(self, dtype, count: int = 48) -> np.ndarray:
        """A 1-d array: every special value of `dtype`, then random ones, `count` long."""
        dtype = np.dtype(dtype)
        if dtype == BOOL:
            return self.random_values(dtype, (count,))
        if dtype.kind in "iu":
            head = np.array(int_specials(dtype), dtype)
        elif dtype.kind == "c":
            parts = float_specials(np.float32)[:11] + [1.0, -2.0]
            reals = np.array(parts, np.float32)
            imags = np.roll(reals, 3)
            head = np.empty(reals.size + 2, dtype)
            head.real[:reals.size], head.imag[:reals.size] = reals, imags
            head.real[reals.size:], head.imag[reals.size:] = [1.0, np.nan], [np.inf, 0.0]
        else:
            head = np.array(float_specials(dtype), dtype)
        tail = self.random_values(dtype, (max(count - head.size, 0),))
        return np.concatenate([head, tail])[:max(count, head.size)]

    def pairs(self, dtype) -> tuple[np.ndarray, np.ndarray]:
        """Two 2-d arrays holding every (special, special) pair, plus random pairs."""
        a = np.array([False, True]) if np.dtype(dtype) == BOOL else self.specials(dtype, 0)
        x = np.repeat(a[:, None], a.size, 1)
        y = np.repeat(a[None, :], a.size, 0)
        extra_x = self.random_values(dtype, (4, a.size))
        extra_y = self.random_values(dtype, (4, a.size))
        return np.concatenate([x, extra_x]), np.concatenate([y, extra_y])
