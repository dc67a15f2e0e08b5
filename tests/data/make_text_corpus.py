"""Writes tests/data/text/*.mlir: StableHLO text of ~60 varied JAX programs.

Run from anywhere with a Python that has jax (the files are checked in):

    /tmp/jv/bin/python tests/data/make_text_corpus.py

Each program is lowered with `jax.jit(f).lower(*args).as_text()`, the pretty
form upstream's printer produces; the C++ test TextCorpusTest parses each file,
checks that Kiln's pretty print equals it modulo runs of spaces, and that
Kiln's generic print reparses to the same module. A few programs are also
written with `debug_info=True` (`*.loc.mlir`) to exercise `#loc` aliases, and
in MLIR's generic form (`*.generic.mlir`) to check Kiln's generic printer.
"""
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

from functools import partial
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

OUT = pathlib.Path(__file__).resolve().parent / "text"

f32, f16, bf16, i32, u8, c64 = (jnp.float32, jnp.float16, jnp.bfloat16, jnp.int32,
                                jnp.uint8, jnp.complex64)


def spec(shape, dtype=f32):
  return jax.ShapeDtypeStruct(shape, dtype)


PROGRAMS = {}  # name -> (function, args, flags)


def program(name, *args, loc=False, generic=False):
  def register(fn):
    PROGRAMS[name] = (fn, args, dict(loc=loc, generic=generic))
    return fn
  return register


# ---- elementwise -----------------------------------------------------------
@program("unary_float", spec((3, 4)), loc=True, generic=True)
def _(x):
  return (jnp.sin(x) + jnp.cos(x) + jnp.tanh(x) + jnp.exp(x) + jnp.log(x) + jnp.log1p(x)
          + jnp.expm1(x) + jnp.sqrt(x) + lax.rsqrt(x) + jnp.cbrt(x) + jnp.abs(x) - x
          + jnp.sign(x) + jnp.floor(x) + jnp.ceil(x) + jnp.round(x) + lax.logistic(x)
          + jnp.tan(x) + lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO))


@program("binary_float", spec((5,)), spec((5,)))
def _(x, y):
  return (x + y, x - y, x * y, x / y, jnp.remainder(x, y), x ** y, jnp.maximum(x, y),
          jnp.minimum(x, y), jnp.arctan2(x, y), lax.nextafter(x, y))


@program("bitwise_int", spec((4,), i32), spec((4,), i32))
def _(x, y):
  return (x & y, x | y, x ^ y, ~x, x << 3, x >> 2, lax.shift_right_logical(x, y),
          lax.clz(x), lax.population_count(y), x // y, x % y, -x, jnp.abs(x))


@program("bool_logic", spec((6,), jnp.bool_), spec((6,), jnp.bool_))
def _(a, b):
  return a & b, a | b, a ^ b, ~a, jnp.logical_and(a, jnp.logical_not(b))


@program("compare_select", spec((2, 3)), spec((2, 3), i32), spec((2, 3), jnp.uint32))
def _(x, n, u):
  return (jnp.where(x > 0, x, -x), jnp.where(n <= 2, n, 0), u >= 3, x == x, n != 1,
          jnp.clip(x, -1.0, 1.0), jnp.isfinite(x), jnp.isnan(x))


@program("convert_types", spec((4,)))
def _(x):
  return (x.astype(i32), x.astype(f16), x.astype(bf16), x.astype(jnp.float64 if jax.config.jax_enable_x64 else f32),
          x.astype(u8), x.astype(jnp.bool_), lax.bitcast_convert_type(x, i32),
          lax.bitcast_convert_type(x, jnp.uint16), x.astype(jnp.int8).astype(jnp.int16))


@program("small_floats", spec((8,), f16), spec((8,), bf16))
def _(h, b):
  return (h * jnp.float16(0.1) + jnp.float16(65504), b * jnp.bfloat16(3.0e38),
          h.astype(jnp.float8_e4m3fn), b.astype(jnp.float8_e5m2),
          h.astype(jnp.float8_e4m3b11fnuz).astype(f32), lax.reduce_precision(h, 4, 3))


@program("int4_and_friends", spec((8,), jnp.int4), spec((8,), jnp.uint4), spec((8,), jnp.int8))
def _(a, b, c):
  return (a + a, (b * b).astype(i32), c.astype(jnp.int4),
          jnp.array([-8, -1, 0, 7], jnp.int4), jnp.array([0, 15], jnp.uint4))


@program("constants", spec((3,)))
def _(x):
  big = jnp.arange(200, dtype=f32).reshape(10, 20)
  return (x + jnp.array([0.1, -2.5e-8, 3.4e38], f32), jnp.array([jnp.nan, jnp.inf, -jnp.inf]),
          jnp.full((2, 2), 7, i32), big * 2, jnp.array([[1, 2], [3, 4]], jnp.int64 if jax.config.jax_enable_x64 else i32),
          jnp.array([True, False, True]), jnp.arange(150, dtype=jnp.int8), jnp.array(-0.0, f32),
          jnp.array([123456789.0, 1e-45, 16777217.0], f32), jnp.zeros((0, 3), f32))


@program("complex_ops", spec((4,), c64), spec((4,)))
def _(z, x):
  w = z * (1 + 2j) + lax.complex(x, x)
  return (jnp.real(w), jnp.imag(w), jnp.conj(w), jnp.abs(w), jnp.exp(w), w / z,
          jnp.array([1 + 2j, -0.5j], c64), jnp.sqrt(w))


@program("special_functions", spec((5,)))
def _(x):
  return (jax.scipy.special.erf(x), lax.erf_inv(x), lax.lgamma(x), lax.digamma(x),
          jnp.arcsin(x), jnp.arccos(x), jnp.arctan(x), jnp.sinh(x), jnp.cosh(x),
          jnp.arcsinh(x), jnp.arctanh(x), jax.nn.gelu(x))


# ---- shapes ----------------------------------------------------------------
@program("shape_ops", spec((2, 3, 4)))
def _(x):
  return (x.reshape(6, 4), x.transpose(2, 0, 1), jnp.flip(x, (0, 2)), x[:, 1:3, ::2],
          jnp.concatenate([x, x], axis=1), jnp.pad(x, ((1, 0), (0, 2), (1, 1))),
          lax.pad(x, 0.0, ((0, 0, 1), (1, 1, 0), (0, 0, 0))), jnp.broadcast_to(x[:, :1], (2, 5, 4)),
          jnp.expand_dims(x, 1), jnp.squeeze(x[:1]), lax.broadcast(x[0, 0], (3,)),
          lax.iota(i32, 7), jnp.tile(x[0], (2, 1)), jnp.repeat(x[0, 0], 3))


@program("dynamic_slice_update", spec((8, 8)), spec((), i32))
def _(x, i):
  y = lax.dynamic_slice(x, (i, 2), (3, 3))
  return y, lax.dynamic_update_slice(x, y * 2, (1, i)), x[i], x.at[i].set(0.0)


@program("gather_scatter", spec((10, 4)), spec((3,), i32), spec((3, 4)))
def _(x, idx, upd):
  return (x[idx], x[idx, 1:3], x.at[idx].add(upd), x.at[idx].max(upd), x.at[idx].multiply(2.0),
          jnp.take_along_axis(x, jnp.zeros((10, 1), i32), axis=1), x.at[idx, 0].set(1.0))


@program("gather_batched", spec((2, 5, 3)), spec((2, 4), i32))
def _(x, idx):
  return jax.vmap(lambda a, i: a[i])(x, idx), jax.vmap(lambda a, i: a.at[i].add(1.0))(x, idx)


# ---- linear algebra --------------------------------------------------------
@program("dot_matmul", spec((3, 4)), spec((4, 5)), spec((7, 3, 4)), spec((7, 4, 2)))
def _(a, b, c, d):
  return (a @ b, jnp.einsum("bij,bjk->bik", c, d), jnp.dot(a[0], b[:, 0]),
          jnp.matmul(a, b, precision=lax.Precision.HIGHEST),
          lax.dot_general(c, d, (((2,), (1,)), ((0,), (0,))), preferred_element_type=f32),
          jnp.einsum("ij,ij->", a, a), jnp.outer(a[0], b[0]))


@program("dot_int_and_bf16", spec((4, 8), jnp.int8), spec((8, 2), jnp.int8), spec((4, 8), bf16))
def _(a, b, c):
  return (lax.dot(a, b, preferred_element_type=i32), c @ c.T,
          lax.dot(c, c.T, precision=lax.Precision.HIGH, preferred_element_type=f32))


@program("conv2d", spec((1, 8, 8, 3)), spec((3, 3, 3, 4)))
def _(x, w):
  dn = ("NHWC", "HWIO", "NHWC")
  return (lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn),
          lax.conv_general_dilated(x, w, (2, 2), ((1, 0), (0, 1)), rhs_dilation=(2, 1),
                                   dimension_numbers=dn),
          lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (2, 2)), lhs_dilation=(2, 2),
                                   dimension_numbers=dn))


@program("conv_nchw_grouped", spec((2, 4, 9, 9)), spec((8, 2, 3, 3)), spec((1, 2, 10)), spec((3, 2, 3)))
def _(x, w, x1, w1):
  return (lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2),
          lax.conv(x1, w1, (1,), "VALID"),
          lax.conv_transpose(x1.transpose(0, 2, 1), w1.transpose(2, 1, 0), (2,), "SAME",
                             dimension_numbers=("NWC", "WIO", "NWC")))


@program("conv3d", spec((1, 4, 6, 6, 2)), spec((2, 2, 2, 2, 3)))
def _(x, w):
  return lax.conv_general_dilated(x, w, (1, 2, 1), "VALID",
                                  dimension_numbers=("NDHWC", "DHWIO", "NDHWC"),
                                  precision=lax.Precision.HIGHEST)


@program("linalg", spec((4, 4)), spec((4, 2)))
def _(a, b):
  s = a @ a.T + 4 * jnp.eye(4)
  l = jnp.linalg.cholesky(s)
  return (l, jax.scipy.linalg.solve_triangular(l, b, lower=True),
          jax.scipy.linalg.solve_triangular(l, b, lower=False, trans=1, unit_diagonal=True),
          jnp.linalg.det(s), jnp.linalg.inv(s))


@program("decompositions", spec((4, 4)))
def _(a):
  q, r = jnp.linalg.qr(a)
  w, v = jnp.linalg.eigh(a + a.T)
  return q, r, w, v, jnp.linalg.svd(a, compute_uv=False), jax.scipy.linalg.lu(a)[2]


@program("fft", spec((8,)), spec((4, 8), c64))
def _(x, z):
  return (jnp.fft.rfft(x), jnp.fft.fft(z), jnp.fft.ifft(z), jnp.fft.irfft(z[0]),
          jnp.fft.fft2(z))


# ---- reductions ------------------------------------------------------------
@program("reductions", spec((3, 4, 5)), spec((3, 4), i32), spec((6,), jnp.bool_), loc=True)
def _(x, n, b):
  return (x.sum(), x.max(axis=1), x.min(axis=(0, 2)), x.prod(axis=2), n.sum(axis=0),
          n.max(), b.all(), b.any(), jnp.mean(x, axis=-1), jnp.var(x), jax.nn.logsumexp(x, axis=1))


@program("argmin_argmax", spec((4, 6)), spec((5,), i32))
def _(x, n):
  return jnp.argmax(x, axis=1), jnp.argmin(x, axis=0), jnp.argmax(n), jnp.argmin(x)


@program("reduce_window", spec((1, 8, 8, 2)), spec((10,)))
def _(x, v):
  avg = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
  mx = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
  dil = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), ((0, 0), (1, 1), (0, 2), (0, 0)),
                          base_dilation=(1, 2, 1, 1), window_dilation=(1, 1, 2, 1))
  return avg, mx, dil, jnp.cumsum(v), jnp.cumprod(v), lax.cummax(v), jnp.cumsum(x, axis=1)


@program("max_pool_grad", spec((1, 4, 4, 1)))
def _(x):
  pool = lambda y: lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID").sum()
  return jax.grad(pool)(x)


@program("sort_ops", spec((5, 3)), spec((5,), i32), generic=True)
def _(x, k):
  return (jnp.sort(x, axis=0), jnp.argsort(k), lax.sort((k, x[:, 0]), num_keys=1),
          jnp.sort(k)[::-1], lax.top_k(x[:, 0], 2), jnp.median(x))


# ---- control flow ----------------------------------------------------------
@program("while_fori", spec((3,)), loc=True, generic=True)
def _(x):
  return lax.fori_loop(0, 10, lambda i, c: c * 2 + i, x), lax.while_loop(lambda c: c[0] < 5, lambda c: c + 1, x)


@program("cond_switch", spec((), i32), spec((4,)), generic=True)
def _(i, x):
  a = lax.cond(i > 0, lambda y: y + 1, lambda y: y * 2, x)
  b = lax.switch(i, [jnp.sin, jnp.cos, jnp.tan], x)
  c = lax.cond(i > 3, lambda: jnp.float32(1), lambda: jnp.float32(2))
  return a, b, c


@program("scan_cumulative", spec((6, 3)))
def _(xs):
  def body(carry, x):
    carry = carry * 0.5 + x
    return carry, jnp.tanh(carry)
  return lax.scan(body, jnp.zeros(3), xs), lax.scan(body, jnp.ones(3), xs, reverse=True, unroll=2)


@program("nested_loops", spec((4, 4)))
def _(x):
  def outer(i, acc):
    def inner(j, a):
      return lax.cond(j % 2 == 0, lambda b: b + x[i, j], lambda b: b - x[j, i], a)
    return lax.fori_loop(0, 4, inner, acc)
  return lax.fori_loop(0, 4, outer, jnp.float32(0))


@program("map_vmap", spec((5, 3)))
def _(x):
  return lax.map(lambda r: jnp.dot(r, r), x), jax.vmap(jnp.outer)(x, x)


# ---- autodiff ---------------------------------------------------------------
@jax.custom_vjp
def _clip_gradient(x):
  return x


def _clip_fwd(x):
  return x, None


def _clip_bwd(_, g):
  return (jnp.clip(g, -1.0, 1.0),)


_clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@program("custom_vjp_grad", spec((3,)))
def _(x):
  return jax.grad(lambda y: jnp.sum(_clip_gradient(y) ** 3))(x)


@jax.custom_jvp
def _softplus(x):
  return jnp.logaddexp(x, 0.0)


_softplus.defjvp(lambda primals, tangents: (_softplus(primals[0]), tangents[0] * jax.nn.sigmoid(primals[0])))


@program("custom_jvp_and_hessian", spec((3,)))
def _(x):
  return jax.jacfwd(_softplus)(x), jax.hessian(lambda y: jnp.sum(jnp.sin(y) * y))(x)


@program("mlp_train_step", spec((8, 4)), spec((4, 16)), spec((16,)), spec((16, 2)), spec((8, 2)))
def _(x, w1, b1, w2, y):
  def loss(params):
    w1, b1, w2 = params
    h = jax.nn.relu(x @ w1 + b1)
    return jnp.mean((jax.nn.log_softmax(h @ w2) - y) ** 2)
  g = jax.grad(loss)((w1, b1, w2))
  return jax.tree.map(lambda p, d: p - 0.1 * d, (w1, b1, w2), g)


@program("remat_checkpoint", spec((4,)))
def _(x):
  f = jax.checkpoint(lambda y: jnp.sin(jnp.sin(y)))
  return jax.grad(lambda y: f(y).sum())(x)


@program("layer_norm_attention", spec((2, 5, 8)), spec((8, 8)))
def _(x, w):
  mu = x.mean(-1, keepdims=True)
  h = (x - mu) * lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)
  q = h @ w
  att = jax.nn.softmax(jnp.einsum("bqd,bkd->bqk", q, h) / jnp.sqrt(8.0), axis=-1)
  return jnp.einsum("bqk,bkd->bqd", att, h)


# ---- random ----------------------------------------------------------------
@program("random_threefry", spec((2,), jnp.uint32))
def _(key):
  k = jax.random.wrap_key_data(key)
  k1, k2 = jax.random.split(k)
  return (jax.random.normal(k1, (3,)), jax.random.uniform(k2, (2, 2)),
          jax.random.randint(k1, (4,), 0, 10), jax.random.bernoulli(k2, 0.3, (5,)))


@program("random_rbg", spec((4,), jnp.uint32))
def _(key):
  k = jax.random.wrap_key_data(key, impl="rbg")
  return jax.random.uniform(k, (3,)), jax.random.bits(jax.random.wrap_key_data(key, impl="unsafe_rbg"), (2,))


@program("random_permutation", spec((2,), jnp.uint32), spec((6,)))
def _(key, x):
  k = jax.random.wrap_key_data(key)
  return jax.random.permutation(k, x), jax.random.choice(k, 6, (3,), replace=False)


# ---- misc ops --------------------------------------------------------------
@program("optimization_barrier", spec((3,)), spec((), i32))
def _(x, n):
  a, b = lax.optimization_barrier((x * 2, n + 1))
  return a, b


@program("callbacks", spec((3,)))
def _(x):
  jax.debug.print("x={}", x)
  y = jax.pure_callback(lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct((3,), f32), x)
  return y + 1


@program("iota_rng_misc", spec((3, 3)))
def _(x):
  return (jnp.eye(3) * x, jnp.tril(x), jnp.triu(x, 1), jnp.arange(12).reshape(3, 4),
          jnp.linspace(0.0, 1.0, 5), jnp.diag(x), jnp.trace(x))


@program("nan_handling", spec((4,)))
def _(x):
  return jnp.nan_to_num(x), jnp.nanmax(x), jnp.nansum(x), jnp.isinf(x), jnp.fmax(x, 0.0)


@program("integer_math", spec((5,), jnp.int64 if jax.config.jax_enable_x64 else i32), spec((5,), jnp.uint16))
def _(a, b):
  return (a * 3 - 7, jnp.floor_divide(a, 4), jnp.power(a, 2), b // 3, b % 5, b >> 1,
          jnp.sign(a), jnp.minimum(a, 2), jnp.gcd(a, a + 1))


@program("mixed_precision", spec((4, 4), bf16), spec((4,), f16))
def _(a, v):
  return ((a @ a).astype(f32), jnp.exp(v), jax.nn.softmax(a.astype(f32)), v.sum(dtype=f32),
          a.astype(jnp.float8_e4m3fn).astype(bf16))


@program("pytrees_and_tuples", spec((2,)), spec((3,), i32))
def _(x, n):
  return {"a": x, "b": (n, x * 2)}, [n.sum()]


@program("clamp_and_rounding", spec((6,)))
def _(x):
  return (lax.clamp(-1.0, x, 1.0), lax.clamp(jnp.zeros(6), x, jnp.ones(6)), jnp.round(x, 2),
          jnp.trunc(x), jnp.rint(x))


@program("image_resize", spec((1, 4, 4, 3)))
def _(x):
  return jax.image.resize(x, (1, 8, 8, 3), "bilinear"), jax.image.resize(x, (1, 2, 2, 3), "nearest")


@program("segment_and_histogram", spec((10,)), spec((10,), i32))
def _(x, seg):
  return (jax.ops.segment_sum(x, seg, num_segments=4), jax.ops.segment_max(x, seg, num_segments=4),
          jnp.bincount(seg, length=5), jnp.searchsorted(jnp.sort(x), 0.5))


@program("cumulative_logic", spec((7,), jnp.bool_), spec((7,), i32))
def _(b, n):
  return jnp.cumsum(b), lax.cummin(n), lax.cumlogsumexp(n.astype(f32)), jnp.unique(n, size=7)


@program("where_and_masking", spec((3, 4)), spec((3, 4), jnp.bool_))
def _(x, m):
  return jnp.where(m, x, 0.0).sum(axis=1), jnp.sum(x, where=m), jnp.max(x, where=m, initial=-1.0)


@program("polynomial_and_interp", spec((5,)))
def _(x):
  return jnp.polyval(jnp.array([1.0, -2.0, 3.0]), x), jnp.interp(x, jnp.array([0.0, 1.0]), jnp.array([2.0, 4.0]))


@program("convolve_correlate", spec((10,)), spec((3,)))
def _(a, v):
  return jnp.convolve(a, v), jnp.correlate(a, v, mode="same")


@program("einsum_many", spec((2, 3, 4)), spec((4, 5)), spec((3,)))
def _(a, b, c):
  return (jnp.einsum("ijk,kl->ijl", a, b), jnp.einsum("ijk,j->ik", a, c), jnp.einsum("ijk->kji", a),
          jnp.einsum("ijk,ijk->i", a, a))


# ---- multi-device (Shardy) --------------------------------------------------
def _mesh():
  return jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def _sharded_programs():
  from jax.sharding import NamedSharding, PartitionSpec as P
  mesh = _mesh()

  def constraint(x):
    y = lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("x", None)))
    return y.sum(axis=0)

  def shard_mapped(x):
    @partial(jax.shard_map, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    def g(c):
      return lax.psum(c, "y") + lax.all_gather(c, "x", tiled=True)[: c.shape[0]]
    return g(x)

  def collectives(x):
    @partial(jax.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    def g(c):
      return (lax.ppermute(c, "x", [(i, (i + 1) % 4) for i in range(4)]) + lax.pmax(c, "x")
              + lax.all_to_all(c, "x", 1, 1, tiled=True) + lax.psum_scatter(c, "x", scatter_dimension=1, tiled=True).repeat(4, axis=1)
              + lax.axis_index("x"))
    return g(x)

  sharding = NamedSharding(mesh, P("x", "y"))
  return {
      "sharding_constraint": (jax.jit(constraint, in_shardings=sharding), (spec((8, 4)),)),
      "shard_map_psum": (jax.jit(shard_mapped, in_shardings=sharding), (spec((8, 4)),)),
      "shard_map_collectives": (jax.jit(collectives), (spec((8, 8)),)),
  }


# ---- dynamic shapes (jax.export with symbolic dimensions) -------------------
def _dynamic_programs():
  from jax import export
  b, = export.symbolic_shape("b")
  def f(x):
    return jnp.concatenate([x, x * 2], axis=0).sum(axis=1), jnp.reshape(x, (-1,)), x.shape[0] * jnp.ones(3)
  def g(x):
    return jnp.argsort(x, axis=0), jnp.cumsum(x, axis=0), jnp.pad(x, ((1, 1), (0, 0)))
  return {
      "dynamic_shapes": (f, (spec((b, 4)),)),
      "dynamic_sort_pad": (g, (spec((b, 3)),)),
  }


def lowered_text(fn, args, debug_info=False):
  jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
  return jitted.lower(*args).as_text(debug_info=debug_info)


def generic_text(text):
  from jax._src.interpreters import mlir as jax_mlir
  from jax._src.lib.mlir import ir
  context = jax_mlir.make_ir_context()
  module = ir.Module.parse(text, context=context)
  return module.operation.get_asm(print_generic_op_form=True)


def exported_text(fn, args):
  from jax import export
  return export.export(jax.jit(fn))(*args).mlir_module()


def main():
  OUT.mkdir(parents=True, exist_ok=True)
  for old in OUT.glob("*.mlir"):
    old.unlink()
  count = 0
  for name, (fn, args, flags) in PROGRAMS.items():
    text = lowered_text(fn, args)
    (OUT / f"{name}.mlir").write_text(text)
    count += 1
    if flags["loc"]:
      (OUT / f"{name}.loc.mlir").write_text(lowered_text(fn, args, debug_info=True))
    if flags["generic"]:
      (OUT / f"{name}.generic.mlir").write_text(generic_text(text))
  for name, (fn, args) in _sharded_programs().items():
    text = lowered_text(fn, args)
    (OUT / f"{name}.mlir").write_text(text)
    count += 1
  (OUT / "shard_map_psum.generic.mlir").write_text(
      generic_text((OUT / "shard_map_psum.mlir").read_text()))
  for name, (fn, args) in _dynamic_programs().items():
    (OUT / f"{name}.mlir").write_text(exported_text(fn, args))
    count += 1
  print(f"wrote {count} programs to {OUT}")


if __name__ == "__main__":
  main()
