"""A catalogue of JAX programs, and the generator of the round-trip test's data.

tests/python/test_roundtrip.py runs

    JAX_PLATFORMS=cpu .venv/bin/python tests/data/jax_programs.py --out DIR

which, for every program in PROGRAMS and module in HANDWRITTEN, writes
DIR/<name>.mlir.bc (the portable artifact, serialized as make_artifacts.py
and PJRT do it) and what jaxlib's own deserializer prints for those bytes,
DIR/<name>.jaxlib.mlir (pretty form) and DIR/<name>.jaxlib.generic.mlir
(MLIR's generic form); or DIR/<name>.error when JAX cannot lower the
program. `--only NAME` limits it to some programs; `--list` prints the names.

The programs cover the StableHLO ops JAX emits (lax, numpy, nn, random,
control flow, autodiff, linalg, fft, collectives under shard_map, shardings,
callbacks, symbolic shapes) and every element type. Importing this module is
cheap and touches no JAX backend: programs are only traced by the generator.
"""
import os

if __name__ == "__main__":  # before jax reads them
  os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
  os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse
import contextlib
import functools
import pathlib
import sys
from typing import Any, Callable, NamedTuple

import jax
import jax.experimental.jet
import jax.experimental.ode
import jax.experimental.sparse
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax
from jax.experimental import checkify
from jax.experimental.custom_partitioning import custom_partitioning
from jax.experimental.layout import Format, Layout
from jax.experimental.xla_metadata import set_xla_metadata
from jax.sharding import PartitionSpec as P

f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i8, i32, i64, u8, u32 = jnp.int8, jnp.int32, jnp.int64, jnp.uint8, jnp.uint32
c64, c128, pred = jnp.complex64, jnp.complex128, jnp.bool_


class Program(NamedTuple):
  fn: Callable
  args: tuple
  config: Any = None  # jax.config flags set while the program is lowered
  export: Any = False  # serialized through jax.export (True, or its options) instead
  jit: Any = None  # jax.jit options, or a function returning them (called when lowering)
  target: str = None  # the VHLO version to serialize for, if not make_artifacts.TARGET


PROGRAMS: dict[str, Program] = {}


def spec(shape, dtype=f32):
  return jax.ShapeDtypeStruct(shape, dtype)


X64 = {"jax_enable_x64": True}  # 64-bit element types
GSPMD = {"jax_use_shardy_partitioner": False}  # mhlo.sharding strings instead of Shardy


def x64(*types):
  """The config for programs on these element types: X64 if one needs it."""
  wide = any(np.dtype(t) in (np.int64, np.uint64, np.float64, np.complex128) for t in types)
  return X64 if wide else None


def add(name, fn, *args, **options):
  """Registers one program; names are unique."""
  assert name not in PROGRAMS, name
  PROGRAMS[name] = Program(fn, args, **options)


def program(name, *args, **options):
  def register(fn):
    add(name, fn, *args, **options)
    return fn
  return register


M = spec((2, 3))
V = spec((5,))
S = spec(())


# ---- elementwise -------------------------------------------------------------
UNARY_FLOAT = {
    "neg": lax.neg, "abs": lax.abs, "sign": lax.sign, "floor": lax.floor, "ceil": lax.ceil,
    "round_afz": lax.round,
    "round_even": lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
    "is_finite": lax.is_finite, "exp": lax.exp, "exp2": lax.exp2, "expm1": lax.expm1,
    "log": lax.log, "log1p": lax.log1p, "sqrt": lax.sqrt, "rsqrt": lax.rsqrt, "cbrt": lax.cbrt,
    "logistic": lax.logistic, "tanh": lax.tanh, "sin": lax.sin, "cos": lax.cos, "tan": lax.tan,
    "square": lax.square, "integer_pow": lambda x: lax.integer_pow(x, 5),
    "reciprocal": jnp.reciprocal,
    # CHLO ops: the artifact has them decomposed, some inside a stablehlo.composite.
    "asin": lax.asin, "acos": lax.acos, "atan": lax.atan, "sinh": lax.sinh, "cosh": lax.cosh,
    "asinh": lax.asinh, "acosh": lax.acosh, "atanh": lax.atanh, "erf": lax.erf,
    "erfc": lax.erfc, "erf_inv": lax.erf_inv, "lgamma": lax.lgamma, "digamma": lax.digamma,
    "bessel_i0e": lax.bessel_i0e, "bessel_i1e": lax.bessel_i1e,
    "ndtri": jax.scipy.special.ndtri, "spence": jax.scipy.special.spence,
}
for _name, _fn in UNARY_FLOAT.items():
  add(f"unary_{_name}", _fn, M)

BINARY_FLOAT = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "rem": lax.rem,
    "pow": lax.pow, "max": lax.max, "min": lax.min, "atan2": lax.atan2,
    "nextafter": lax.nextafter, "igamma": lax.igamma, "igammac": lax.igammac,
    "igamma_grad_a": lax.igamma_grad_a, "random_gamma_grad": lax.random_gamma_grad,
    "polygamma": lambda x, y: lax.polygamma(jnp.floor(x), y), "zeta": lax.zeta,
    "logaddexp": jnp.logaddexp, "hypot": jnp.hypot, "copysign": jnp.copysign,
}
for _name, _fn in BINARY_FLOAT.items():
  add(f"binary_{_name}", _fn, M, M)


@program("binary_broadcasting", spec((3, 1)), spec((1, 4)), S)
def _(x, y, s):
  return x + y, x * s, jnp.maximum(y, 0.5)


@program("ternary_betainc", V, V, V)
def _(a, b, x):
  return lax.betainc(a, b, x)


UNARY_TYPED = [("exp", "bfloat16"), ("exp", "float16"), ("tanh", "bfloat16"),
               ("exp", "complex64"), ("sqrt", "complex64"), ("abs", "complex64"),
               ("sign", "complex64"), ("log", "complex128"), ("sin", "float64"),
               ("rsqrt", "float64"), ("logistic", "float16"), ("cos", "complex128")]
for _name, _type in UNARY_TYPED:
  add(f"unary_{_name}_{_type}", UNARY_FLOAT[_name], spec((4,), _type), config=x64(_type))


def _integer_ops(x, y):
  signed = jnp.issubdtype(x.dtype, jnp.signedinteger)
  shift = y & (np.iinfo(y.dtype).bits - 1)
  out = (x & y, x | y, x ^ ~y, x << shift, lax.shift_right_logical(x, shift), x >> shift,
         lax.clz(x), lax.population_count(y), lax.div(x, y | 1), lax.rem(x, y | 1),
         jnp.maximum(x, y), jnp.minimum(x, y), x * y - x)
  return out + ((-x, lax.abs(x), lax.sign(x)) if signed else ())


INTEGER_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
for _type in INTEGER_TYPES:
  add(f"integer_ops_{_type}", _integer_ops, spec((6,), _type), spec((6,), _type),
      config=x64(_type))


def _narrow_integer_ops(x, y):
  return x + y, x * y, x & y, jnp.maximum(x, y), x.astype(i32), (x == y)


for _type in ["int4", "uint4", "int2", "uint2"]:
  add(f"integer_ops_{_type}", _narrow_integer_ops, spec((8,), _type), spec((8,), _type))


@program("bool_ops", spec((6,), pred), spec((6,), pred))
def _(a, b):
  return a & b, a | b, a ^ b, ~a, lax.select(a, b, ~b), a.astype(i32), jnp.all(a), jnp.any(b)


def _compare_all(x, y):
  return x == y, x != y, x < y, x <= y, x > y, x >= y


for _type in ["float32", "int32", "uint8", "bool", "bfloat16"]:
  add(f"compare_{_type}", _compare_all, spec((4,), _type), spec((4,), _type))


@program("compare_complex", spec((4,), c64), spec((4,), c64))
def _(x, y):
  return x == y, x != y


@program("compare_total_order", spec((4,)), spec((4,)))
def _(x, y):
  return lax.sort((x, y), num_keys=2)  # sort's comparator compares floats in total order


@program("select_and_clamp", M, M, spec((2, 3), pred))
def _(x, y, p):
  return lax.select(p, x, y), lax.clamp(-1.0, x, 1.0), lax.clamp(x - 1, y, x + 1), jnp.clip(x, y)


CONVERSIONS = [("float32", "int32"), ("float32", "uint8"), ("int32", "float32"),
               ("float32", "bfloat16"), ("bfloat16", "float16"), ("float32", "float8_e4m3fn"),
               ("float8_e5m2", "float32"), ("int32", "bool"), ("bool", "float32"),
               ("float32", "complex64"), ("int4", "int32"), ("uint32", "int64"),
               ("float64", "float32"), ("complex128", "complex64")]
for _src, _dst in CONVERSIONS:
  add(f"convert_{_src}_to_{_dst}", functools.partial(lax.convert_element_type, new_dtype=_dst),
      spec((3,), _src), config=x64(_src, _dst))


@program("bitcast_same_width", spec((2, 3)))
def _(x):
  return lax.bitcast_convert_type(x, i32), lax.bitcast_convert_type(x, u32)


@program("bitcast_narrower", spec((2, 3)))
def _(x):
  return lax.bitcast_convert_type(x, u8), lax.bitcast_convert_type(x.astype(bf16), i8)


@program("bitcast_wider", spec((3, 2), u8), spec((3, 2), f16))
def _(x, h):
  return lax.bitcast_convert_type(x, f16), lax.bitcast_convert_type(h, u32)


@program("reduce_precision", spec((4,)), spec((4,), bf16))
def _(x, b):
  return (lax.reduce_precision(x, 8, 7), lax.reduce_precision(x, 5, 10),
          lax.reduce_precision(b, 4, 3), lax.reduce_precision(x, 2, 1))


# ---- constants of every element type -----------------------------------------
def _interesting_values(dtype):
  """A few values that stress the printer: extremes, tiny, negative zero, NaN."""
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return np.array([True, False, True])
  if np.issubdtype(dtype, np.integer) or dtype.name[:-1] in ("int", "uint"):
    info = ml_dtypes.iinfo(dtype)
    return np.array([info.min, info.max, 0, 1, info.max // 3], dtype)
  if np.issubdtype(dtype, np.complexfloating):
    return np.array([1 + 2j, -0.5j, np.inf - 1j, 1e-30 + 3.25j], dtype)
  info = ml_dtypes.finfo(dtype)
  values = [info.max, info.min, info.tiny, info.eps, 0.1, 1.0, 3.0, 0.0]
  if info.smallest_subnormal < info.tiny:
    values.append(info.smallest_subnormal)
  if dtype.name not in ("float8_e8m0fnu",):
    values += [-0.0, -2.5]
  if dtype.name not in ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"):
    values.append(np.nan)
  if "fn" not in dtype.name and dtype.name != "float8_e4m3b11fnuz":
    values.append(np.inf)
  return np.array(values, np.float64).astype(dtype)


def _constants_program(dtype):
  values = _interesting_values(dtype)
  many = np.resize(values, 130)  # more than 100 elements: printed as hex

  def fn(x):
    splat = jnp.full(x.shape, values[1], dtype)
    return (lax.select(jnp.arange(x.shape[0]) % 2 == 0, x, splat), jnp.asarray(values),
            jnp.asarray(many).reshape(10, 13), lax.convert_element_type(x, f32))
  return fn


CONSTANT_TYPES = ["bool", "int2", "int4", "int8", "int16", "int32", "int64", "uint2", "uint4",
                  "uint8", "uint16", "uint32", "uint64", "bfloat16", "float16", "float32",
                  "float64", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2",
                  "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e4m3",
                  "float8_e3m4", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn",
                  "float6_e3m2fn", "int1"]
for _type in CONSTANT_TYPES:
  _dtype = jnp.dtype(_type)
  add(f"constants_{_type}", _constants_program(_dtype), spec((4,), _dtype), config=x64(_dtype))


def _random_constants_program(dtype, count):
  """`count` random values spread over the type's range: decimal spellings of
  every length (printed as a list up to 100 elements, as hex above)."""
  dtype = np.dtype(dtype)
  rng = np.random.default_rng(count)
  info = ml_dtypes.finfo(dtype if dtype.kind != "c" else np.float32)
  exponents = rng.uniform(np.log2(float(info.tiny)), np.log2(float(info.max)) - 1, count)
  values = (rng.choice([-1.0, 1.0], count) * rng.uniform(1, 2, count) * 2.0 ** exponents)
  if dtype.kind == "c":
    values = values + 1j * values[::-1]
  if dtype.name == "float8_e8m0fnu":
    values = np.abs(values)
  values = values.astype(dtype)
  return lambda: jnp.asarray(values)


for _type in ["float32", "bfloat16", "float16", "float64", "complex64", "float8_e4m3fn",
              "float8_e5m2", "float8_e4m3b11fnuz", "float8_e3m4", "float8_e8m0fnu"]:
  add(f"constants_random_{_type}", _random_constants_program(_type, 97), config=x64(_type))
for _count in (100, 101):
  add(f"constants_random_{_count}_elements", _random_constants_program(f32, _count))


@program("constants_scalar_and_empty")
def _():
  return (jnp.float32(1.5), jnp.int32(-7), jnp.zeros((0, 3)), jnp.ones((2, 0), i32),
          jnp.array(-0.0), jnp.array([1e-45, 123456789.0, 16777217.0], f32))


# ---- shapes ------------------------------------------------------------------
@program("broadcast_in_dim", S, spec((3,)), spec((3, 1)))
def _(s, v, c):
  return (jnp.broadcast_to(s, (2, 3)), jnp.broadcast_to(v, (2, 3)), jnp.broadcast_to(c, (3, 4)),
          lax.broadcast_in_dim(c, (2, 3, 5), (1, 2)))


@program("reshape", spec((2, 3, 4)), spec((1,)))
def _(x, one):
  return (x.reshape(6, 4), x.reshape(-1), x.reshape(4, 1, 6), one.reshape(()),
          x[0, 0, 0].reshape(1, 1))


@program("transpose", spec((2, 3, 4, 5)))
def _(x):
  return x.transpose(3, 1, 0, 2), x.T, jnp.swapaxes(x, 1, 2), jnp.moveaxis(x, 0, -1)


@program("rev", spec((3, 4, 5)))
def _(x):
  return lax.rev(x, (0,)), jnp.flip(x, (0, 2)), x[::-1, :, ::-1]


@program("slice_strided", spec((10, 8)))
def _(x):
  return x[1:7:2, ::3], lax.slice(x, (0, 1), (10, 8), (5, 7)), x[-3:], x[:, 4:4]


@program("dynamic_slice", spec((8, 8)), spec((), i32), spec((), u8))
def _(x, i, j):
  return lax.dynamic_slice(x, (i, i + 1), (3, 4)), x[i], lax.dynamic_index_in_dim(x, j, 1)


@program("dynamic_update_slice", spec((8, 8)), spec((2, 3)), spec((), i32))
def _(x, u, i):
  return lax.dynamic_update_slice(x, u, (i, 2)), x.at[i].set(0.0), x.at[i, 1:4].add(1.0)


@program("concatenate", spec((2, 3)), spec((2, 5)), spec((4, 3)))
def _(a, b, c):
  return (jnp.concatenate([a, b, a], axis=1), jnp.concatenate([a, c]), jnp.stack([a, a]),
          jnp.hstack([a, b]))


@program("pad_interior_negative", spec((4, 5)))
def _(x):
  return (lax.pad(x, 0.0, ((1, 2, 1), (0, 0, 2))), lax.pad(x, -1.0, ((-1, 1, 0), (2, -3, 1))),
          lax.pad(x, 0.0, ((0, 0, 0), (0, 0, 0))))


@program("iota", S)
def _(s):
  return (lax.iota(i32, 7), lax.iota(f32, 3), lax.broadcasted_iota(u32, (2, 3), 1),
          jnp.arange(10, dtype=bf16), jnp.linspace(0.0, 1.0, 5), s * jnp.arange(4.0))


@program("expand_squeeze", spec((1, 3, 1, 2)))
def _(x):
  return jnp.squeeze(x), jnp.expand_dims(x, (0, 5)), x[None, :, None], lax.squeeze(x, (2,))


@program("zero_size_shapes", spec((0, 3)), spec((4, 0), i32))
def _(x, n):
  return x + 1, x.sum(0), n.T, jnp.concatenate([x, x]), n.reshape(0, 2, 2), x @ x.T


@program("scalars_only", S, spec((), i32), spec((), pred))
def _(x, n, b):
  return jnp.where(b, x * n, x - n), lax.convert_element_type(n, f32) ** 2, jnp.sin(x), ~b


# ---- reductions --------------------------------------------------------------
@program("reduce_sum_prod", spec((3, 4, 5)))
def _(x):
  return x.sum(), x.sum(1), x.prod((0, 2)), jnp.sum(x, axis=-1, keepdims=True)


@program("reduce_max_min", spec((3, 4)), spec((3, 4), i32), spec((3, 4), u8))
def _(x, n, u):
  return x.max(0), x.min(1), n.max(), u.min(0), jnp.amax(n, axis=1)


@program("reduce_bool", spec((3, 4), pred))
def _(b):
  return b.all(0), b.any(1), b.sum(), jnp.count_nonzero(b)


@program("reduce_argmax_argmin", spec((4, 6)), spec((5,), i32))
def _(x, n):
  return jnp.argmax(x, 1), jnp.argmin(x, 0), jnp.argmax(n), jnp.argmin(x, keepdims=True)


@program("reduce_multi_operand", spec((4, 6)), spec((4, 6), i32))
def _(x, n):
  return lax.reduce((x, n), (0.0, 0), lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])), (1,))


@program("reduce_non_commutative_body", spec((4, 6)))
def _(x):
  return lax.reduce(x, 1.0, lambda a, b: a * 0.5 + b, (0,))


@program("reduce_mean_var", spec((3, 8)), spec((3, 8), bf16))
def _(x, b):
  return x.mean(1), x.var(0), x.std(), b.mean(), jnp.sum(b, dtype=f32)


@program("reduce_int8_accumulate", spec((16,), i8))
def _(x):
  return jnp.sum(x, dtype=i32), jnp.prod(x), x.max()


# ---- windowed reductions -----------------------------------------------------
@program("reduce_window_avg_pool", spec((1, 8, 8, 3)))
def _(x):
  return lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4


@program("reduce_window_max_pool_same", spec((2, 7, 7, 1)))
def _(x):
  return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")


@program("reduce_window_min_int", spec((9, 9), i32))
def _(x):
  return lax.reduce_window(x, np.iinfo(np.int32).max, lax.min, (3, 3), (1, 1), "VALID")


@program("reduce_window_dilations", spec((1, 8, 8, 2)))
def _(x):
  return lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1),
                           ((0, 0), (1, 1), (0, 2), (0, 0)), base_dilation=(1, 2, 1, 1),
                           window_dilation=(1, 1, 2, 1))


@program("reduce_window_multi_operand", spec((8,)), spec((8,), i32))
def _(x, n):
  def body(a, b):
    take = a[0] >= b[0]
    return jnp.where(take, a[0], b[0]), jnp.where(take, a[1], b[1])
  return lax.reduce_window((x, n), (-jnp.inf, 0), body, (3,), (1,), "SAME")


CUMULATIVE = {"cumsum": jnp.cumsum, "cumprod": jnp.cumprod, "cummax": lax.cummax,
              "cummin": lax.cummin, "cumlogsumexp": lax.cumlogsumexp,
              "cumsum_reverse": functools.partial(lax.cumsum, reverse=True)}
for _name, _fn in CUMULATIVE.items():
  add(f"cumulative_{_name}", functools.partial(_fn, axis=1), spec((3, 7)))


@program("max_pool_grad_select_and_scatter", spec((1, 6, 6, 2)))
def _(x):
  pool = lambda y: lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                     "VALID").sum()
  return jax.grad(pool)(x)


@program("avg_pool_grad", spec((1, 6, 6, 2)))
def _(x):
  pool = lambda y: lax.reduce_window(y, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME").sum()
  return jax.grad(pool)(x)


# ---- dot_general -------------------------------------------------------------
@program("dot_matmul", spec((3, 4)), spec((4, 5)))
def _(a, b):
  return a @ b, jnp.dot(a[0], b[:, 0]), a @ b[:, 0], jnp.outer(a[0], b[0])


@program("dot_batched", spec((7, 3, 4)), spec((7, 4, 2)))
def _(a, b):
  return jnp.matmul(a, b), lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))


@program("dot_two_contracting_two_batch", spec((2, 3, 4, 5)), spec((2, 3, 5, 4, 6)))
def _(a, b):
  return lax.dot_general(a, b, (((2, 3), (3, 2)), ((0, 1), (0, 1))))


@program("dot_precision", spec((3, 4)), spec((4, 5)))
def _(a, b):
  return (jnp.matmul(a, b, precision=lax.Precision.HIGHEST),
          lax.dot(a, b, precision=(lax.Precision.HIGH, lax.Precision.DEFAULT)))


@program("dot_preferred_element_type", spec((4, 8), i8), spec((8, 2), i8), spec((4, 8), bf16))
def _(a, b, c):
  return (lax.dot(a, b, preferred_element_type=i32),
          lax.dot(c, c.T, preferred_element_type=f32), c @ c.T)


@program("dot_f16_and_complex", spec((3, 3), f16), spec((3, 3), c64))
def _(h, z):
  return h @ h, z @ z.conj().T


@program("dot_algorithm_preset", spec((4, 4)), spec((4, 4), bf16))
def _(a, b):
  return (lax.dot(a, a, precision=lax.DotAlgorithmPreset.F32_F32_F32),
          lax.dot(b, b, precision=lax.DotAlgorithmPreset.BF16_BF16_F32),
          lax.dot(a, a, precision=lax.DotAlgorithmPreset.BF16_BF16_F32_X3))


@program("einsum_variety", spec((2, 3, 4)), spec((4, 5)), spec((3,)))
def _(a, b, c):
  return (jnp.einsum("ijk,kl->ijl", a, b), jnp.einsum("ijk,j->ik", a, c),
          jnp.einsum("ijk,ijk->i", a, a), jnp.einsum("ijk,kl,j->il", a, b, c))


@program("tensordot_and_vdot", spec((3, 4, 5)), spec((4, 5, 2)), spec((6,), c64))
def _(a, b, z):
  return jnp.tensordot(a, b, 2), jnp.vdot(z, z), jnp.inner(a, a)


# ---- convolution -------------------------------------------------------------
CONVOLUTIONS = {
    "conv1d_nwc": (spec((2, 10, 3)), spec((3, 3, 4)),
                   dict(window_strides=(1,), padding="SAME",
                        dimension_numbers=("NWC", "WIO", "NWC"))),
    "conv2d_nchw_strided": (spec((1, 3, 9, 9)), spec((4, 3, 3, 3)),
                            dict(window_strides=(2, 2), padding="VALID")),
    "conv2d_nhwc_asymmetric_pad": (spec((1, 8, 8, 3)), spec((3, 3, 3, 4)),
                                   dict(window_strides=(1, 1), padding=((1, 0), (0, 2)),
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "conv2d_lhs_dilation": (spec((1, 2, 5, 5)), spec((2, 2, 3, 3)),
                            dict(window_strides=(1, 1), padding=((2, 2), (2, 2)),
                                 lhs_dilation=(2, 2))),
    "conv2d_rhs_dilation": (spec((1, 2, 9, 9)), spec((2, 2, 3, 3)),
                            dict(window_strides=(1, 1), padding="SAME", rhs_dilation=(2, 3))),
    "conv2d_depthwise": (spec((1, 4, 6, 6)), spec((8, 1, 3, 3)),
                         dict(window_strides=(1, 1), padding="SAME", feature_group_count=4)),
    "conv2d_batch_group": (spec((4, 2, 6, 6)), spec((4, 2, 3, 3)),
                           dict(window_strides=(1, 1), padding="VALID", batch_group_count=2)),
    "conv3d_ndhwc": (spec((1, 4, 6, 6, 2)), spec((2, 2, 2, 2, 3)),
                     dict(window_strides=(1, 2, 1), padding="VALID",
                          dimension_numbers=("NDHWC", "DHWIO", "NDHWC"),
                          precision=lax.Precision.HIGHEST)),
    "conv2d_int8_preferred": (spec((1, 2, 5, 5), i8), spec((3, 2, 2, 2), i8),
                              dict(window_strides=(1, 1), padding="VALID",
                                   preferred_element_type=i32)),
    "conv2d_bf16_1x1": (spec((2, 4, 4, 8), bf16), spec((1, 1, 8, 16), bf16),
                        dict(window_strides=(1, 1), padding="VALID",
                             dimension_numbers=("NHWC", "HWIO", "NHWC"))),
}
for _name, (_x, _w, _kwargs) in CONVOLUTIONS.items():
  add(_name, functools.partial(lax.conv_general_dilated, **_kwargs), _x, _w)


@program("conv_transpose", spec((1, 5, 5, 2)), spec((3, 3, 2, 4)))
def _(x, w):
  return lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


@program("conv_grads", spec((2, 3, 6, 6)), spec((4, 3, 3, 3)))
def _(x, w):
  loss = lambda x, w: (lax.conv(x, w, (1, 1), "SAME") ** 2).sum()
  return jax.grad(loss, argnums=(0, 1))(x, w)


@program("convolve_correlate", spec((10,)), spec((3,)))
def _(a, v):
  return jnp.convolve(a, v), jnp.correlate(a, v, mode="same"), jnp.convolve(a, v, mode="valid")


# ---- gather and scatter ------------------------------------------------------
IDX = spec((3,), i32)


@program("gather_rows", spec((10, 4)), IDX)
def _(x, idx):
  return x[idx], x[idx, 1:3], x[:, idx[:2]], jnp.take(x, idx, axis=1)


@program("gather_advanced_indexing", spec((5, 6, 7)), IDX, IDX)
def _(x, i, j):
  return x[i, j], x[i, :, j], x[..., i], x[i[:, None], j[None, :]]


@program("gather_modes", spec((10,)), IDX)
def _(x, idx):
  return (jnp.take(x, idx, mode="clip"), jnp.take(x, idx, mode="fill", fill_value=-1.0),
          x.at[idx].get(mode="promise_in_bounds"), x.at[idx].get(indices_are_sorted=True))


@program("gather_take_along_axis", spec((4, 6)), spec((4, 2), i32))
def _(x, idx):
  return jnp.take_along_axis(x, idx, axis=1), jnp.take_along_axis(x, idx[:, :1], axis=0)


@program("gather_batched_vmap", spec((2, 5, 3)), spec((2, 4), i32))
def _(x, idx):
  return jax.vmap(lambda a, i: a[i])(x, idx)


SCATTERS = {  # x.at[idx] -> the update with `u`
    "set": lambda at, u: at.set(u), "add": lambda at, u: at.add(u),
    "multiply": lambda at, u: at.multiply(u), "min": lambda at, u: at.min(u),
    "max": lambda at, u: at.max(u), "apply": lambda at, u: at.apply(jnp.sin),
    "add_unique_sorted": lambda at, u: at.add(u, unique_indices=True, indices_are_sorted=True),
    "set_drop": lambda at, u: at.set(u, mode="drop"),
}
for _name, _fn in SCATTERS.items():
  add(f"scatter_{_name}", lambda x, idx, u, _fn=_fn: _fn(x.at[idx], u), spec((10, 4)), IDX,
      spec((3, 4)))


@program("scatter_2d_points_int", spec((5, 5), i32), IDX, IDX)
def _(x, i, j):
  return x.at[i, j].add(7), x.at[i, 0].set(-1), x.at[:, j].max(3)


@program("scatter_batched_vmap", spec((2, 5, 3)), spec((2, 4), i32))
def _(x, idx):
  return jax.vmap(lambda a, i: a.at[i].add(1.0))(x, idx)


@program("segment_ops", spec((10,)), spec((10,), i32))
def _(x, seg):
  return (jax.ops.segment_sum(x, seg, 4), jax.ops.segment_max(x, seg, 4),
          jax.ops.segment_min(x, seg, 4, indices_are_sorted=True), jnp.bincount(seg, length=5))


# ---- sort --------------------------------------------------------------------
@program("sort_one_operand", spec((5, 3)), spec((6,), i32))
def _(x, n):
  return jnp.sort(x, axis=0), jnp.sort(x), jnp.sort(n, descending=True)


@program("sort_multi_operand_stable", spec((6,)), spec((6,), i32), spec((6,), u8))
def _(x, n, u):
  return lax.sort((n, x, u), num_keys=2, is_stable=True), jnp.argsort(x, stable=True)


@program("sort_bool_and_complex", spec((6,), pred), spec((6,), c64))
def _(b, z):
  return jnp.sort(b), jnp.sort(z)


@program("top_k", spec((3, 8)), spec((8,), i32))
def _(x, n):
  return lax.top_k(x, 3), lax.top_k(n, 1)


@program("approx_max_k", spec((4, 64)))
def _(x):
  return lax.approx_max_k(x, 4), lax.approx_min_k(x, 2, recall_target=0.9)


@program("median_partition_lexsort", spec((7,)), spec((7,), i32))
def _(x, n):
  return jnp.median(x), jnp.partition(x, 3), jnp.lexsort((x, n)), jnp.unique(n, size=7)


# ---- control flow ------------------------------------------------------------
@program("while_loop_tuple_carry", spec((3,)), spec((), i32))
def _(x, n):
  return lax.while_loop(lambda c: c[1] < n, lambda c: (c[0] * 2, c[1] + 1), (x, 0))


@program("fori_loop_static", spec((3,)))
def _(x):
  return lax.fori_loop(0, 5, lambda i, c: c * 2 + i, x)


@program("fori_loop_dynamic_bounds", spec((3,)), spec((), i32))
def _(x, n):
  return lax.fori_loop(1, n, lambda i, c: c + jnp.sin(c) * i, x)


@program("cond_two_branches", spec((), i32), spec((4,)))
def _(i, x):
  return lax.cond(i > 0, lambda y: (y + 1, y.sum()), lambda y: (y * 2, y.max()), x)


@program("cond_no_operands", spec((), pred))
def _(p):
  return lax.cond(p, lambda: jnp.float32(1), lambda: jnp.float32(2))


@program("switch_three_branches", spec((), i32), spec((4,)))
def _(i, x):
  return lax.switch(i, [jnp.sin, jnp.cos, lambda y: -y], x)


@program("scan_carry_and_outputs", spec((6, 3)))
def _(xs):
  return lax.scan(lambda c, x: (c * 0.5 + x, jnp.tanh(c)), jnp.zeros(3), xs)


@program("scan_reverse_unrolled", spec((6, 3)))
def _(xs):
  return lax.scan(lambda c, x: (c + x, c * x), jnp.ones(3), xs, reverse=True, unroll=2)


@program("scan_length_no_xs", spec((2,)))
def _(c):
  return lax.scan(lambda c, _: (c * 1.5, c.sum()), c, None, length=4)


@program("scan_nested", spec((3, 4, 2)))
def _(xs):
  inner = lambda c, row: lax.scan(lambda a, e: (a + e, a), c, row)
  return lax.scan(inner, jnp.zeros(2), xs)


@program("map_batched", spec((8, 3)))
def _(x):
  return lax.map(lambda r: jnp.dot(r, r), x), lax.map(jnp.sin, x, batch_size=4)


@program("associative_scan", spec((9,)))
def _(x):
  return lax.associative_scan(jnp.add, x), lax.associative_scan(jnp.maximum, x, reverse=True)


@program("cond_in_vmap", spec((4,)), spec((4,), i32))
def _(x, n):
  return jax.vmap(lambda a, k: lax.cond(k > 0, jnp.sin, jnp.cos, a))(x, n)


@program("while_in_vmap", spec((4,)))
def _(x):
  return jax.vmap(lambda a: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2 + 1, a))(x)


@program("fori_with_nested_cond", spec((4, 4)))
def _(x):
  def outer(i, acc):
    inner = lambda j, a: lax.cond(j % 2 == 0, lambda b: b + x[i, j], lambda b: b - x[j, i], a)
    return lax.fori_loop(0, 4, inner, acc)
  return lax.fori_loop(0, 4, outer, jnp.float32(0))


# ---- autodiff ----------------------------------------------------------------
@program("grad_simple", V)
def _(x):
  return jax.grad(lambda y: jnp.sum(jnp.sin(y) * y ** 2))(x)


@program("value_and_grad_aux", V, V)
def _(x, y):
  f = lambda a, b: (jnp.sum(a * b), a - b)
  return jax.value_and_grad(f, argnums=(0, 1), has_aux=True)(x, y)


@program("jvp_and_vjp", V)
def _(x):
  primal, tangent = jax.jvp(jnp.tanh, (x,), (jnp.ones_like(x),))
  out, pullback = jax.vjp(jnp.exp, x)
  return primal, tangent, out, pullback(x)[0]


@program("jacfwd_jacrev", spec((3,)))
def _(x):
  f = lambda y: jnp.stack([y[0] * y[1], jnp.sin(y[2]), y.sum()])
  return jax.jacfwd(f)(x), jax.jacrev(f)(x)


@program("hessian", spec((3,)))
def _(x):
  return jax.hessian(lambda y: jnp.sum(jnp.sin(y) * y) + y[0] * y[1] ** 2)(x)


@jax.custom_vjp
def _safe_log(x):
  return jnp.log(x)


_safe_log.defvjp(lambda x: (jnp.log(x), x), lambda x, g: (g / jnp.maximum(x, 1e-6),))


@program("custom_vjp_grad", spec((3,)))
def _(x):
  return jax.grad(lambda y: (_safe_log(y) * y).sum())(x), jax.vmap(jax.grad(_safe_log))(x)


@jax.custom_jvp
def _hard_clip(x):
  return jnp.clip(x, -1.0, 1.0)


_hard_clip.defjvp(lambda primals, tangents: (
    _hard_clip(primals[0]), tangents[0] * (1.0 - jnp.tanh(primals[0]) ** 2)))


@program("custom_jvp_grad", spec((3,)))
def _(x):
  return jax.grad(lambda y: _hard_clip(y * 2).sum())(x), jax.jvp(_hard_clip, (x,), (x,))


@program("remat_checkpoint", spec((4,)), spec((4,)))
def _(x, y):
  f = jax.checkpoint(lambda a, b: jnp.cos(a * b) * a)
  return jax.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(x, y)


@program("remat_policy_dots_saveable", spec((4, 4)), spec((4, 4)))
def _(x, w):
  f = jax.checkpoint(lambda a: jnp.tanh(a @ w) @ w,
                     policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
  return jax.grad(lambda a: f(a).sum())(x)


@program("stop_gradient_and_linearize", V)
def _(x):
  out, linear = jax.linearize(lambda y: jnp.sin(y) * lax.stop_gradient(y), x)
  return out, linear(x)


@program("grad_through_loops", spec((3,)))
def _(x):
  looped = lambda y: lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) * 2, y).sum()
  scanned = lambda y: lax.scan(lambda c, e: (c * e, c), 1.0, y)[0]
  return jax.grad(looped)(x), jax.grad(scanned)(x)


@program("grad_through_cond_and_gather", spec((5,)), spec((), i32))
def _(x, i):
  f = lambda y: lax.cond(i > 2, lambda z: z[i] ** 2, lambda z: jnp.sum(z[::2]), y)
  return jax.grad(f)(x)


@program("grad_integer_input_float0", V, spec((5,), i32))
def _(x, n):
  return jax.grad(lambda a, b: jnp.sum(a * b), argnums=(0, 1), allow_int=True)(x, n)


# ---- random ------------------------------------------------------------------
KEY = spec((2,), u32)


def _random(draw):
  def fn(key):
    return draw(jax.random.wrap_key_data(key))
  return fn


RANDOM = {
    "uniform": lambda k: jax.random.uniform(k, (3, 2)),
    "normal_bf16": lambda k: jax.random.normal(k, (4,), bf16),
    "randint": lambda k: jax.random.randint(k, (5,), -3, 10),
    "bernoulli": lambda k: jax.random.bernoulli(k, 0.3, (6,)),
    "categorical": lambda k: jax.random.categorical(k, jnp.array([-1.0, 0.5, 2.0]), shape=(4,)),
    "gumbel": lambda k: jax.random.gumbel(k, (3,)),
    "gamma": lambda k: jax.random.gamma(k, jnp.array([0.5, 2.0])),
    "beta_dirichlet": lambda k: (jax.random.beta(k, 2.0, 3.0, (2,)),
                                 jax.random.dirichlet(k, jnp.ones(3))),
    "poisson": lambda k: jax.random.poisson(k, 3.0, (4,)),
    "exponential_laplace": lambda k: (jax.random.exponential(k, (2,)),
                                      jax.random.laplace(k, (2,))),
    "truncated_normal": lambda k: jax.random.truncated_normal(k, -1.0, 2.0, (5,)),
    "permutation_choice": lambda k: (jax.random.permutation(k, 6),
                                     jax.random.choice(k, 6, (3,), replace=False)),
    "split_fold_in": lambda k: jax.random.key_data(
        jax.random.split(jax.random.fold_in(k, 7), 3)),
    "bits_widths": lambda k: (jax.random.bits(k, (2,), u8),
                              jax.random.bits(k, (2,), jnp.uint16)),
    "orthogonal": lambda k: jax.random.orthogonal(k, 3),
    "multivariate_normal": lambda k: jax.random.multivariate_normal(k, jnp.zeros(2), jnp.eye(2)),
}
for _name, _draw in RANDOM.items():
  add(f"random_{_name}", _random(_draw), KEY)


@program("random_rbg_impls", spec((4,), u32))
def _(key):
  rbg = jax.random.wrap_key_data(key, impl="rbg")
  unsafe = jax.random.wrap_key_data(key, impl="unsafe_rbg")
  return jax.random.uniform(rbg, (3,)), jax.random.normal(unsafe, (2,))


@program("random_key_from_seed", spec((), i32))
def _(seed):
  return jax.random.uniform(jax.random.key(seed), (2,)), jax.random.PRNGKey(seed)


@program("rng_uniform", S)
def _(x):
  return lax.rng_uniform(x, x + 1.0, (3,)), lax.rng_uniform(jnp.int32(0), jnp.int32(9), (2, 2))


@program("rng_bit_generator_algorithms", spec((2,), jnp.uint64), spec((4,), u32), config=X64)
def _(key64, key32):
  algorithm = lax.RandomAlgorithm
  return (lax.rng_bit_generator(key64, (3,), dtype=u32, algorithm=algorithm.RNG_THREE_FRY),
          lax.rng_bit_generator(key32, (2, 2), dtype=u8, algorithm=algorithm.RNG_PHILOX),
          lax.rng_bit_generator(key32, (4,), dtype=jnp.uint64))


# ---- fft ---------------------------------------------------------------------
FFTS = {
    "fft_1d": (jnp.fft.fft, spec((8,), c64)), "ifft_1d": (jnp.fft.ifft, spec((8,), c64)),
    "rfft_1d": (jnp.fft.rfft, spec((8,))), "irfft_1d": (jnp.fft.irfft, spec((5,), c64)),
    "fft2": (jnp.fft.fft2, spec((4, 8), c64)), "rfft2": (jnp.fft.rfft2, spec((2, 4, 8))),
    "ifftn_3d": (jnp.fft.ifftn, spec((2, 4, 4), c64)),
    "irfftn_3d": (lambda z: jnp.fft.irfftn(z, s=(4, 4, 6)), spec((4, 4, 4), c64)),
    "fftshift": (lambda x: jnp.fft.fftshift(jnp.fft.fftfreq(8) * x), spec((8,))),
}
for _name, (_fn, _arg) in FFTS.items():
  add(_name, _fn, _arg)
add("fft_c128", jnp.fft.fft, spec((8,), c128), config=X64)
add("rfft_f64_3d", jnp.fft.rfftn, spec((2, 4, 4), f64), config=X64)


# ---- linear algebra (LAPACK custom calls on CPU) -------------------------------
SQUARE = spec((4, 4))


def _spd(a):
  return a @ a.T + 4 * jnp.eye(a.shape[0], dtype=a.dtype)


LINALG = {
    "cholesky": lambda a: jnp.linalg.cholesky(_spd(a)),
    "cholesky_op": lambda a: lax.linalg.cholesky(_spd(a), symmetrize_input=False),
    "triangular_solve": lambda a: (
        jax.scipy.linalg.solve_triangular(a, a[:, :2], lower=True),
        jax.scipy.linalg.solve_triangular(a, a[:, :2], lower=False, trans=1, unit_diagonal=True),
        lax.linalg.triangular_solve(a, a[:2], left_side=False, transpose_a=True)),
    "qr": lambda a: (jnp.linalg.qr(a), jnp.linalg.qr(a[:, :3], mode="complete")),
    "eigh": lambda a: jnp.linalg.eigh(a + a.T),
    "eigvalsh": lambda a: jnp.linalg.eigvalsh(a + a.T, UPLO="U"),
    "svd": lambda a: jnp.linalg.svd(a),
    "svd_values": lambda a: jnp.linalg.svd(a[:3], compute_uv=False),
    "lu": lambda a: jax.scipy.linalg.lu(a),
    "lu_solve": lambda a: jax.scipy.linalg.lu_solve(jax.scipy.linalg.lu_factor(a), a[:, 0]),
    "det_slogdet": lambda a: (jnp.linalg.det(a), jnp.linalg.slogdet(a)),
    "inv_solve": lambda a: (jnp.linalg.inv(a), jnp.linalg.solve(a, a[0])),
    "eig": lambda a: jnp.linalg.eig(a),
    "schur": lambda a: jax.scipy.linalg.schur(a),
    "hessenberg": lambda a: jax.scipy.linalg.hessenberg(a),
    "tridiagonal": lambda a: lax.linalg.tridiagonal(a + a.T),
    "tridiagonal_solve": lambda a: lax.linalg.tridiagonal_solve(
        jnp.concatenate([jnp.zeros(1), a[0, 1:]]), a[1],
        jnp.concatenate([a[2, :3], jnp.zeros(1)]), a[:, 3:]),
    "pinv_lstsq": lambda a: (jnp.linalg.pinv(a), jnp.linalg.lstsq(a, a[0])[0]),
    "expm": lambda a: jax.scipy.linalg.expm(a),
    "matrix_power_norms": lambda a: (jnp.linalg.matrix_power(a, 3), jnp.linalg.norm(a),
                                     jnp.linalg.norm(a, 2), jnp.linalg.norm(a[0], jnp.inf)),
}
for _name, _fn in LINALG.items():
  add(f"linalg_{_name}", _fn, SQUARE)
add("linalg_cholesky_c64", lambda a: jnp.linalg.cholesky(_spd(a)), spec((3, 3), c64))
add("linalg_qr_c64", jnp.linalg.qr, spec((3, 3), c64))
add("linalg_svd_f64", jnp.linalg.svd, spec((3, 3), f64), config=X64)
add("linalg_eigh_c128", lambda a: jnp.linalg.eigh(a + a.conj().T), spec((3, 3), c128), config=X64)
add("linalg_batched_solve", jnp.linalg.solve, spec((2, 3, 3)), spec((2, 3, 1)))
# No LAPACK routine for f16: JAX's CPU lowering falls back to stablehlo.triangular_solve.
add("linalg_triangular_solve_f16",
    lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
    spec((3, 3), f16), spec((3, 2), f16))
# Lowered for TPU, where cholesky and triangular_solve are StableHLO ops.
add("linalg_exported_for_tpu",
    lambda a, b: (lax.linalg.cholesky(a), lax.linalg.triangular_solve(a, b, left_side=True)),
    SQUARE, spec((4, 2)), export=dict(platforms=("tpu",)))


# ---- complex numbers ---------------------------------------------------------
@program("complex_arithmetic", spec((4,), c64), spec((4,)))
def _(z, x):
  w = z * (1 + 2j) + lax.complex(x, -x)
  return w / z, w - z, jnp.conj(w), jnp.real(w), jnp.imag(w), jnp.abs(w), jnp.angle(w)


@program("complex_transcendental", spec((4,), c64))
def _(z):
  return jnp.exp(z), jnp.log(z), jnp.sqrt(z), z ** 2.5, jnp.sin(z), jnp.tanh(z), jnp.arctan(z)


add("complex128_arithmetic", lambda z, x: (z * z + x, jnp.expm1(z), z.real * 2),
    spec((3,), c128), spec((3,), f64), config=X64)


# ---- jax.nn ------------------------------------------------------------------
NN = {
    "relu_family": lambda x: (jax.nn.relu(x), jax.nn.relu6(x), jax.nn.leaky_relu(x, 0.1),
                              jax.nn.elu(x), jax.nn.celu(x), jax.nn.selu(x)),
    "gelu_exact": lambda x: jax.nn.gelu(x, approximate=False),
    "gelu_tanh": lambda x: jax.nn.gelu(x, approximate=True),
    "sigmoid_family": lambda x: (jax.nn.sigmoid(x), jax.nn.silu(x), jax.nn.log_sigmoid(x),
                                 jax.nn.hard_sigmoid(x), jax.nn.hard_tanh(x)),
    "softplus_family": lambda x: (jax.nn.softplus(x), jax.nn.soft_sign(x),
                                  jax.nn.squareplus(x), jax.nn.mish(x)),
    "softmax": lambda x: jax.nn.softmax(x, axis=-1),
    "log_softmax": lambda x: jax.nn.log_softmax(x, axis=0),
    "logsumexp": lambda x: (jax.nn.logsumexp(x), jax.nn.logsumexp(x, axis=1, b=x)),
    "standardize": lambda x: jax.nn.standardize(x, axis=-1),
    "glu": lambda x: jax.nn.glu(jnp.concatenate([x, x], -1)),
    "one_hot": lambda x: jax.nn.one_hot(jnp.argmax(x, -1), 5, dtype=bf16),
}
for _name, _fn in NN.items():
  add(f"nn_{_name}", _fn, spec((3, 4)))


@program("nn_dot_product_attention", spec((2, 6, 2, 8)), spec((2, 6, 2, 8)), spec((2, 6, 2, 8)))
def _(q, k, v):
  return (jax.nn.dot_product_attention(q, k, v, is_causal=True),
          jax.nn.dot_product_attention(q, k, v, scale=0.5, implementation="xla"))


# ---- jax.numpy -----------------------------------------------------------------
NUMPY = {
    "where": lambda x: (jnp.where(x > 0, x, -x), jnp.where(x > 0, size=4, fill_value=-1)),
    "take_argsort": lambda x: jnp.take(x, jnp.argsort(x[:, 0]), axis=0),
    "cumsum_dtype": lambda x: (jnp.cumsum(x, dtype=f32), jnp.cumsum(x.astype(i32), axis=0)),
    "linalg_norm": lambda x: (jnp.linalg.norm(x, axis=1), jnp.linalg.norm(x, "fro"),
                              jnp.linalg.norm(x, 1)),
    "roll_diff": lambda x: (jnp.roll(x, 2), jnp.roll(x, -1, axis=1), jnp.diff(x, axis=0),
                            jnp.ediff1d(x)),
    "kron_tril_triu": lambda x: (jnp.kron(x, x[:2, :2]), jnp.tril(x), jnp.triu(x, 1), jnp.diag(x)),
    "meshgrid_histogram": lambda x: (jnp.meshgrid(x[0], x[1]), jnp.histogram(x, bins=4)),
    "quantiles": lambda x: (jnp.percentile(x, 30.0),
                            jnp.quantile(x, jnp.array([0.1, 0.9]), axis=0), jnp.nanmedian(x)),
    "nan_functions": lambda x: (jnp.nanmean(x), jnp.nanmax(x, 0), jnp.nan_to_num(x / 0.0),
                                jnp.nansum(x), jnp.isnan(x)),
    "isclose_allclose": lambda x: (jnp.isclose(x, x * 1.0001), jnp.allclose(x, 1.0)),
    "cross_vander": lambda x: (jnp.cross(x[:, :3], x[:, 1:4]), jnp.vander(x[0], 3)),
    "searchsorted_digitize": lambda x: (jnp.searchsorted(jnp.sort(x[0]), x[1]),
                                        jnp.digitize(x[1], jnp.sort(x[0]))),
    "trapezoid_cov": lambda x: (jnp.trapezoid(x, axis=1), jnp.cov(x), jnp.corrcoef(x)),
    "round_decimals": lambda x: (jnp.round(x, 2), jnp.around(x, -1), jnp.trunc(x), jnp.rint(x)),
    "select_piecewise": lambda x: (jnp.select([x < 0, x > 1], [x * 2, x - 1], 0.5),
                                   jnp.piecewise(x, [x < 0, x >= 0], [jnp.sin, jnp.cos])),
    "apply_along_axis": lambda x: jnp.apply_along_axis(lambda r: r.sum() * r, 1, x),
    "polyval_interp": lambda x: (jnp.polyval(jnp.array([1.0, -2.0, 3.0]), x),
                                 jnp.interp(x, jnp.array([0.0, 1.0]), jnp.array([2.0, 4.0]))),
    "unwrap_gradient": lambda x: (jnp.unwrap(x), jnp.gradient(x, axis=1)),
    "isin_setdiff": lambda x: (jnp.isin(x, x[0]), jnp.setdiff1d(x[0], x[1], size=4),
                               jnp.union1d(x[0], x[1], size=8)),
    "average_ptp": lambda x: (jnp.average(x, axis=1, weights=x[0] ** 2), jnp.ptp(x, 1)),
    "triu_indices_fill": lambda x: (x[jnp.triu_indices(3, 1, 4)],
                                    jnp.fill_diagonal(x, 0.0, inplace=False)),
    "tile_repeat": lambda x: (jnp.tile(x, (2, 1)), jnp.repeat(x, 2, axis=0),
                              jnp.repeat(x, jnp.array([1, 0, 2]), axis=0, total_repeat_length=3)),
    "split_array": lambda x: (jnp.split(x, 2, axis=1), jnp.array_split(x, 2)),
    "logical_and_bits": lambda x: (jnp.logical_xor(x > 0, x < 1), jnp.signbit(x), jnp.frexp(x),
                                   jnp.ldexp(x, 3)),
    "gcd_lcm": lambda x: (jnp.gcd(x.astype(i32), 6), jnp.lcm(x.astype(i32), 4)),
}
for _name, _fn in NUMPY.items():
  add(f"numpy_{_name}", _fn, spec((3, 4)))

for _mode in ["constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum",
              "mean"]:
  add(f"numpy_pad_{_mode}", functools.partial(jnp.pad, pad_width=((1, 2), (2, 1)), mode=_mode),
      spec((3, 4)))


# ---- small models --------------------------------------------------------------
@program("model_mlp_train_step", spec((8, 4)), spec((4, 16)), spec((16, 3)), spec((8,), i32),
         spec(()))
def _(x, w1, w2, labels, learning_rate):
  def loss(params):
    hidden = jax.nn.gelu(x @ params["w1"])
    logits = hidden @ params["w2"]
    return -jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], 1).mean()
  params = {"w1": w1, "w2": w2}
  value, grads = jax.value_and_grad(loss)(params)
  return value, jax.tree.map(lambda p, g: p - learning_rate * g, params, grads)


@program("model_small_cnn", spec((2, 8, 8, 1)), spec((3, 3, 1, 4)), spec((64, 10)))
def _(x, k, w):
  def forward(k, w):
    h = jax.nn.relu(lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC")))
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return jax.nn.logsumexp(h.reshape(2, -1) @ w, axis=-1).sum()
  return jax.value_and_grad(forward, argnums=(0, 1))(k, w)


@program("model_attention_block", spec((2, 5, 8)), spec((8, 24)), spec((8, 8)))
def _(x, wqkv, wo):
  q, k, v = jnp.split(x @ wqkv, 3, axis=-1)
  heads = lambda t: t.reshape(2, 5, 2, 4).transpose(0, 2, 1, 3)
  att = jnp.einsum("bhqd,bhkd->bhqk", heads(q), heads(k)) / 2.0
  mask = jnp.tril(jnp.ones((5, 5), pred))
  att = jax.nn.softmax(jnp.where(mask, att, -1e9), axis=-1)
  out = jnp.einsum("bhqk,bhkd->bqhd", att, heads(v)).reshape(2, 5, 8)
  return x + out @ wo


@program("model_layer_norm", spec((4, 16)), spec((16,)), spec((16,)))
def _(x, gamma, beta):
  mu = x.mean(-1, keepdims=True)
  return (x - mu) * lax.rsqrt(x.var(-1, keepdims=True) + 1e-5) * gamma + beta


@program("model_rnn_scan", spec((7, 2, 3)), spec((3, 4)), spec((4, 4)))
def _(xs, wx, wh):
  cell = lambda h, x: (jnp.tanh(x @ wx + h @ wh),) * 2
  return lax.scan(cell, jnp.zeros((2, 4)), xs)


@program("model_batch_norm_train", spec((8, 3)), spec((3,)), spec((3,)))
def _(x, scale, bias):
  def loss(scale, bias):
    mean, var = x.mean(0), x.var(0)
    return (((x - mean) * lax.rsqrt(var + 1e-3) * scale + bias) ** 2).sum()
  return jax.grad(loss, argnums=(0, 1))(scale, bias)


# ---- sharding and collectives on 8 CPU devices ---------------------------------
@functools.cache
def mesh(axis_type="Auto"):
  kind = getattr(jax.sharding.AxisType, axis_type)
  return jax.make_mesh((2, 4), ("x", "y"), axis_types=(kind, kind))


def _named(*parts, axis_type="Auto", **options):
  return jax.sharding.NamedSharding(mesh(axis_type), P(*parts, **options))


def _shard_map(fn, in_specs, out_specs, **kwargs):
  return lambda *args: jax.shard_map(fn, mesh=mesh(), in_specs=in_specs, out_specs=out_specs,
                                     **kwargs)(*args)


COLLECTIVES = {
    "psum": lambda a: lax.psum(a, "y"),
    "psum_two_axes_pmean": lambda a: lax.psum(a, ("x", "y")) + lax.pmean(a, "x"),
    "pmax_pmin": lambda a: lax.pmax(a, "x") - lax.pmin(a, "y"),
    "all_gather_tiled": lambda a: lax.all_gather(a, "y", axis=1, tiled=True)[:, : a.shape[1]],
    "all_gather_stacked": lambda a: lax.all_gather(a, "x").sum(0),
    "ppermute_ring": lambda a: lax.ppermute(a, "y", [(i, (i + 1) % 4) for i in range(4)]),
    "all_to_all": lambda a: lax.all_to_all(a, "y", 0, 0, tiled=True),
    "psum_scatter": lambda a: jnp.tile(lax.psum_scatter(a, "y", scatter_dimension=0, tiled=True),
                                       (4, 1)),
    "axis_index": lambda a: a + lax.axis_index("y") + 10 * lax.axis_index("x"),
}
for _name, _fn in COLLECTIVES.items():
  add(f"shard_map_{_name}", _shard_map(_fn, P("x", "y"), P("x", "y")), spec((8, 16)))

add("shard_map_partial_manual",
    _shard_map(lambda a: lax.psum(a, "x"), P("x"), P("x"), axis_names=frozenset({"x"})),
    spec((8, 16)))
add("shard_map_integer_collectives",
    _shard_map(lambda a: lax.psum(a, "y") + lax.pmax(a, "x"), P("x", "y"), P("x", "y")),
    spec((8, 16), i32))


@program("sharded_jit_in_out", spec((8, 16)), spec((16, 4)),
         jit=lambda: dict(in_shardings=(_named("x", "y"), _named()),
                          out_shardings=_named("x")))
def _(x, y):
  return jnp.tanh(x @ y)


@program("sharded_constraint", spec((8, 16)), jit=lambda: dict(in_shardings=_named("x", "y")))
def _(x):
  y = lax.with_sharding_constraint(x * 2, _named("x", None))
  z = lax.with_sharding_constraint(y.T, _named(("x", "y")))
  return z.sum(axis=0)


@program("sharded_explicit_axes", spec((8, 16)),
         jit=lambda: dict(in_shardings=_named("x", "y", axis_type="Explicit")))
def _(x):
  return jax.sharding.reshard(x * 2, _named("y", None, axis_type="Explicit")).sum(0)


@program("sharded_donated", spec((8, 16)), spec((8, 16)),
         jit=lambda: dict(in_shardings=(_named("x"), _named("x")), donate_argnums=(0,)))
def _(x, y):
  return x + y, y * 2


@program("sharded_unreduced", spec((8, 16)), spec((16, 4)),
         jit=lambda: dict(in_shardings=(_named("x", "y", axis_type="Explicit"),
                                        _named("y", None, axis_type="Explicit"))))
def _(x, y):
  return jnp.einsum("ij,jk->ik", x, y,
                    out_sharding=_named("x", None, unreduced={"y"}, axis_type="Explicit"))


@program("sharded_memory_kinds", spec((8, 16)),
         jit=lambda: dict(in_shardings=_named("x"),
                          out_shardings=_named("x").with_memory_kind("pinned_host")))
def _(x):
  return jax.device_put(x * 2, _named("x").with_memory_kind("pinned_host"))


@program("sharded_unconstrained_dim", spec((8, 4)))
def _(x):
  return lax.with_sharding_constraint(x * 2, _named("x", P.UNCONSTRAINED))


@program("sharded_layouts", spec((8, 4)),
         jit=lambda: dict(in_shardings=Format(Layout(major_to_minor=(0, 1)), _named("x")),
                          out_shardings=Format(Layout.AUTO, _named("x"))))
def _(x):
  return x.T * 2


@program("shard_map_ragged_all_to_all", spec((16,)), *[spec((16,), i32)] * 4)
def _(x, input_offsets, send_sizes, output_offsets, receive_sizes):
  ragged = lambda *args: lax.ragged_all_to_all(args[0], jnp.zeros_like(args[0]), *args[1:],
                                               axis_name="y")
  return _shard_map(ragged, (P("y"),) * 5, P("y"))(x, input_offsets, send_sizes,
                                                   output_offsets, receive_sizes)


@custom_partitioning
def _doubled(x):
  return x * 2


_doubled.def_partition(
    infer_sharding_from_operands=lambda mesh, args, result: args[0].sharding,
    partition=lambda mesh, args, result: (mesh, lambda x: x * 2, args[0].sharding,
                                          (args[0].sharding,)),
    sharding_rule="i j -> i j")
add("custom_partitioning", _doubled, spec((8, 4)), jit=lambda: dict(in_shardings=_named("x")))


# The same programs through GSPMD (Shardy off): mhlo.sharding strings, @Sharding
# custom calls, dense replica groups.
for _name in ["sharded_jit_in_out", "sharded_constraint", "sharded_donated", "shard_map_psum",
              "shard_map_all_gather_tiled", "shard_map_ppermute_ring", "shard_map_all_to_all",
              "shard_map_axis_index"]:
  _prog = PROGRAMS[_name]
  add(f"gspmd_{_name.removeprefix('sharded_')}", _prog.fn, *_prog.args, config=GSPMD,
      jit=_prog.jit)


# ---- callbacks, tokens, calls, attributes --------------------------------------
@program("callback_debug_print", spec((3,)))
def _(x):
  jax.debug.print("x = {}", x)
  return x + 1


@program("callback_pure", spec((3,)))
def _(x):
  return jax.pure_callback(lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct((3,), f32), x)


@program("callback_io_ordered", spec((3,)))
def _(x):
  jax.experimental.io_callback(lambda v: None, None, x, ordered=True)
  return jax.experimental.io_callback(lambda v: np.asarray(v), spec((3,)), x * 2, ordered=True)


@program("tokens_create_after_all", spec((3,)))
def _(x):
  return x + 1, lax.after_all(lax.create_token(), lax.create_token())


@program("callback_io_in_loop", spec((3,)))
def _(x):
  def body(i, c):
    jax.experimental.io_callback(lambda v: None, None, c, ordered=True)
    return c + 1
  return lax.fori_loop(0, 3, body, x)  # the token is carried through the while


@program("callback_debug_in_cond", spec((), pred), spec((3,)))
def _(p, x):
  def loud(y):
    jax.debug.callback(lambda v: None, y)
    return y
  return lax.cond(p, loud, lambda y: -y, x)


@program("ffi_call_attributes", spec((3,)))
def _(x):
  call = jax.ffi.ffi_call("kiln_test_target", spec(x.shape, x.dtype), has_side_effect=True)
  return call(x, i=np.int32(1), f=np.float32(2.5), d=np.float64(0.1), s='hi "q"', b=True,
              array=np.array([1, 2], np.int64))


@program("xla_metadata", spec((3,)))
def _(x):
  with set_xla_metadata(my_attr="v", n=3):
    y = x * 2
  return y + 1


@program("optimization_barrier", spec((3,)), spec((), i32))
def _(x, n):
  return lax.optimization_barrier((x * 2, n + 1))


add("donate_argnums", lambda x, y: (x + y, x * y), V, V, jit=dict(donate_argnums=(0, 1)))
add("keep_unused", lambda x, y: x * 2, V, spec((2,), i32), jit=dict(keep_unused=True))


@program("nested_jit_private_calls", V)
def _(x):
  inner = jax.jit(lambda y: jnp.sin(y) * 2)
  return inner(x) + inner(x * 3), jax.jit(lambda y: y.sum(), inline=True)(x)


@program("named_call_and_scope", V)
def _(x):
  with jax.named_scope("outer"):
    return jax.named_call(lambda y: y * y, name="square")(x)


@program("lax_composite", spec((4,)))
def _(x):
  gelu = lax.composite(lambda y, approximate: jax.nn.gelu(y, approximate=approximate),
                       name="my.gelu")
  return gelu(x, approximate=True)


@program("ragged_dot", spec((6, 4)), spec((2, 4, 3)), spec((2,), i32))
def _(lhs, rhs, groups):
  return lax.ragged_dot(lhs, rhs, groups)


@program("pytree_result_names", V, spec((3,), i32))
def _(x, n):
  return {"a": x, "b c": (n, x * 2), "\u00e9\"q": [n.sum()]}


@program("no_inputs_no_outputs")
def _():
  return ()


@program("checkify_errors", spec((3,)), spec((), i32))
def _(x, i):
  return checkify.checkify(lambda a, j: a[j] / a, errors=checkify.all_checks)(x, i)


@program("sparse_bcoo", spec((4, 4)), spec((4,)))
def _(x, v):
  m = jax.experimental.sparse.BCOO.fromdense(x, nse=4)
  return m @ v, (m.T @ m).todense()


@program("odeint", spec((2,)), spec((3,)))
def _(y0, t):
  return jax.experimental.ode.odeint(lambda y, t: -y * t, y0, t)


@program("jet_taylor", spec((3,)))
def _(x):
  return jax.experimental.jet.jet(jnp.sin, (x,), ((jnp.ones_like(x), jnp.zeros_like(x)),))


def _oddly_named(x):
  return jax.named_call(lambda y: y * 2, name="weird name/\u00e9")(x) + 1


_oddly_named.__name__ = "fn with space-\u00e9"  # quoted symbols: @"jit_fn_with_space-\C3\A9"
add("symbol_names_quoted", _oddly_named, spec((3,)))


@program("image_resize", spec((1, 4, 4, 3)))
def _(x):
  return (jax.image.resize(x, (1, 8, 8, 3), "bilinear"),
          jax.image.resize(x, (1, 2, 2, 3), "nearest"),
          jax.image.resize(x, (1, 6, 6, 3), "lanczos3"))


# ---- older VHLO versions (what PJRT sends a plugin reporting an older one) -------
for _target in ["1.0.0", "1.5.0", "1.10.0"]:
  for _name in ["model_mlp_train_step", "scatter_add", "shard_map_psum", "callback_io_in_loop",
                "unary_erf", "top_k"]:
    _prog = PROGRAMS[_name]
    add(f"vhlo_{_target.replace('.', '_')}_{_name}", _prog.fn, *_prog.args, jit=_prog.jit,
        target=_target)


# ---- symbolic shapes (jax.export) ----------------------------------------------
_B, = jax.export.symbolic_shape("b")
_H, _W = jax.export.symbolic_shape("h, w")
DYNAMIC = {
    "iota_broadcast": (lambda x: jnp.arange(x.shape[0]) + x.sum(1).astype(i32),
                       spec((_B, 3))),
    "reshape_concat": (lambda x: (jnp.reshape(x, (-1,)), jnp.concatenate([x, x * 2], axis=0)),
                       spec((_B, 4))),
    "pad_slice": (lambda x: (jnp.pad(x, ((1, 1), (0, 0))), x[1:], x[::2]), spec((_B, 3))),
    "gather_dynamic": (lambda x, i: (x[i], jnp.take(x, i, axis=1)), spec((_B, 5)),
                       spec((2,), i32)),
    "conv_same": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME"),
                  spec((1, 2, _H, _W)), spec((3, 2, 3, 3))),
    "sort_cumsum_topk": (lambda x: (jnp.sort(x, 0), jnp.cumsum(x, 0), lax.top_k(x, 2)),
                         spec((_B, 3))),
    "reduce_window_dot": (lambda x: (lax.reduce_window(x, 0.0, lax.add, (2, 1), (1, 1), "SAME"),
                                     x.T @ x), spec((_B, 3))),
    "conv_strided": (lambda x, w: lax.conv_general_dilated(x, w, (2, 2), "SAME"),
                     spec((1, 2, _H, _W)), spec((3, 2, 3, 3))),
    "pad_symbolic_widths": (lambda x: lax.pad(x, 0.0, ((0, x.shape[0], 1),)), spec((_B,))),
    "random_bits": (lambda k, x: jax.random.uniform(jax.random.wrap_key_data(k), x.shape),
                    KEY, spec((_B, 2))),
}
for _name, (_fn, *_args) in DYNAMIC.items():
  add(f"dynamic_{_name}", _fn, *_args)
add("dynamic_exported", lambda x: (x.shape[0] * jnp.ones(2), jnp.argsort(x, axis=0)),
    spec((_B, 3)), export=True)
add("exported_multi_platform", lambda x: lax.platform_dependent(x, cpu=jnp.sin, cuda=jnp.cos),
    spec((4,)), export=dict(platforms=("cpu", "cuda")))  # a case on the platform index


# ---- written by hand: what JAX does not emit but an artifact may hold -----------
HANDWRITTEN = {
    # An inline mesh with device ids and sub-axes in a collective's replica groups
    # (JAX names a sdy.mesh symbol instead), sub-axes in Shardy shardings.
    "handwritten_inline_mesh_sub_axes": """
module @m attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(
      %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"y", "x":(2)2}]>})
      -> tensor<8x16xf32> {
    %0 = "stablehlo.all_reduce"(%arg0) <{
        replica_groups = #stablehlo.replica_group_mesh_axes<
            mesh = #stablehlo.mesh<axes=[<name = "x", size = 4>, <name = "y", size = 2>],
                                   device_ids=dense<[7, 6, 5, 4, 3, 2, 1, 0]> : tensor<8xi64>>,
            axes = [#stablehlo.axis_ref<name = "x", sub_axis_info = (2)2>,
                    #stablehlo.axis_ref<name = "y">]>,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}
""",
}


# ---- the generator -------------------------------------------------------------
def jaxlib_print(artifact=None, text=None, generic=False):
  """What jaxlib prints (no locations; the pretty form unless `generic`) for an
  artifact's bytes, or for a module's text."""
  from jaxlib.mlir import ir
  from jaxlib.mlir._mlir_libs import _jax_mlir_ext
  from jaxlib.mlir.dialects import chlo, sdy, stablehlo
  context = ir.Context()
  for dialect in (stablehlo, sdy, chlo):
    dialect.register_dialect(context)
  context.allow_unregistered_dialects = True
  if artifact is not None:
    module = stablehlo.deserialize_portable_artifact(context, artifact)
  else:  # text names func.func, which deserialization loads by itself
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    context.append_dialect_registry(registry)
    module = ir.Module.parse(text, context=context)
  return module.operation.get_asm(enable_debug_info=False, print_generic_op_form=generic)


@contextlib.contextmanager
def configured(flags):
  """jax.config set to `flags` inside the block."""
  saved = {name: getattr(jax.config, name) for name in flags}
  try:
    for name, value in flags.items():
      jax.config.update(name, value)
    yield
  finally:
    for name, value in saved.items():
      jax.config.update(name, value)


def serialize_program(prog):
  """The program's portable artifact, as PJRT (or jax.export) serializes it."""
  import make_artifacts
  with configured(prog.config or {}):
    jitted = jax.jit(prog.fn, **(prog.jit() if callable(prog.jit) else prog.jit or {}))
    if not prog.export:
      return make_artifacts.serialize(jitted, prog.args, prog.target or make_artifacts.TARGET)
    options = prog.export if isinstance(prog.export, dict) else {}
    exported = jax.export.export(jitted, **options)(*prog.args)
    return bytes(exported.mlir_module_serialized)


def generate(out, names):
  sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # for make_artifacts
  import make_artifacts
  from jax._src.lib import _jax
  out.mkdir(parents=True, exist_ok=True)
  for name in names:
    try:
      if name in HANDWRITTEN:
        artifact = _jax.mlir.serialize_portable_artifact(HANDWRITTEN[name],
                                                         make_artifacts.TARGET, True)
      else:
        artifact = serialize_program(PROGRAMS[name])
      printed = jaxlib_print(artifact), jaxlib_print(artifact, generic=True)
    except Exception as error:  # reported by the tests of this program
      (out / f"{name}.error").write_text(f"{type(error).__name__}: {error}\n")
      continue
    (out / f"{name}.mlir.bc").write_bytes(artifact)
    (out / f"{name}.jaxlib.mlir").write_text(printed[0])
    (out / f"{name}.jaxlib.generic.mlir").write_text(printed[1])


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--out", metavar="DIR", help="where the files go")
  parser.add_argument("--only", metavar="NAME", nargs="+", help="these programs only")
  parser.add_argument("--list", action="store_true", help="print the program names")
  args = parser.parse_args()
  names = [*PROGRAMS, *HANDWRITTEN]
  if args.list:
    print("\n".join(names))
    return
  if not args.out:
    parser.error("--out DIR is required")
  unknown = set(args.only or ()) - set(names)
  if unknown:
    parser.error(f"no programs named {', '.join(sorted(unknown))}")
  generate(pathlib.Path(args.out), args.only or names)


if __name__ == "__main__":
  main()
