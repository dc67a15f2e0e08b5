"""The programs `bench/run.py` times on Kiln and on JAX's CPU backend.

Each workload is a jittable function and a maker of its host inputs. The
inputs are made once with numpy (seeded) and copied to each backend's device,
so both backends run the same program on the same bytes.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    group: str
    fn: Callable
    make_inputs: Callable[[np.random.Generator], tuple]
    # How many calls one timed sample runs (small programs need several for a
    # sample well above the clock's resolution).
    calls_per_sample: int = 1
    # Traced, compiled and run with jax_enable_x64 (f64 workloads).
    x64: bool = False
    # Applied to each backend's outputs before they are compared: removes
    # what the results may rightly differ in (eigenvector signs).
    canonical: Callable | None = None


def _normal(rng, shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


# ---- dispatch and elementwise -------------------------------------------------------

def _chain10(x):
    # Ten elementwise ops, as a user writes them: XLA fuses them into one loop.
    y = x * 1.5 + 0.25
    y = jnp.tanh(y)
    y = y * y - 0.5
    y = jnp.exp(-jnp.abs(y))
    y = jnp.maximum(y, 0.1)
    return jnp.sqrt(y)


def _softmax(x):
    return jax.nn.softmax(x, axis=-1)


def _layernorm(x, gamma, beta):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta


# ---- convolutions ---------------------------------------------------------------------

def _conv(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _conv_backward(x, w, g):
    # Gradients of the convolution with respect to its input and its kernel.
    _, vjp = jax.vjp(_conv, x, w)
    return vjp(g)


# ---- models ---------------------------------------------------------------------------

def _mlp_params(rng, sizes):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append(_normal(rng, (fan_in, fan_out), scale=(2.0 / fan_in) ** 0.5))
        params.append(np.zeros((fan_out,), np.float32))
    return params


def _mlp_loss(params, x, y):
    h = x
    for i in range(0, len(params) - 2, 2):
        h = jax.nn.relu(h @ params[i] + params[i + 1])
    logits = h @ params[-2] + params[-1]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def _sgd(loss_fn, lr=0.01):
    def step(params, *batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, *batch)
        return [p - lr * g for p, g in zip(params, grads)], loss
    return step


def _mlp_inputs(rng):
    params = _mlp_params(rng, [784, 512, 512, 10])
    x = _normal(rng, (128, 784))
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    return params, x, y


def _cnn_loss(params, x, y):
    w1, w2, wd, bd = params
    dn = ("NHWC", "HWIO", "NHWC")
    h = jax.nn.relu(jax.lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn))
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = jax.nn.relu(jax.lax.conv_general_dilated(h, w2, (1, 1), "SAME", dimension_numbers=dn))
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    logits = h.reshape(h.shape[0], -1) @ wd + bd
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def _cnn_inputs(rng):
    params = [_normal(rng, (3, 3, 1, 16), scale=0.3), _normal(rng, (3, 3, 16, 32), scale=0.1),
              _normal(rng, (7 * 7 * 32, 10), scale=0.05), np.zeros((10,), np.float32)]
    x = _normal(rng, (64, 28, 28, 1))
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    return params, x, y


D_MODEL, HEADS, SEQ, BATCH, D_FF = 256, 4, 128, 8, 1024


def _transformer_block(params, x):
    wq, wk, wv, wo, w1, b1, w2, b2, g1, g2 = params

    def norm(h, g):
        mean = jnp.mean(h, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(h - mean), axis=-1, keepdims=True)
        return (h - mean) * jax.lax.rsqrt(var + 1e-5) * g

    b, s, d = x.shape
    h = norm(x, g1)
    split = lambda t: t.reshape(b, s, HEADS, d // HEADS).transpose(0, 2, 1, 3)
    q, k, v = split(h @ wq), split(h @ wk), split(h @ wv)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(d // HEADS).astype(np.float32)
    mask = jnp.tril(jnp.ones((s, s), bool))
    scores = jnp.where(mask, scores, -1e9)
    attn = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)
    x = x + attn.transpose(0, 2, 1, 3).reshape(b, s, d) @ wo
    h = norm(x, g2)
    return x + jax.nn.gelu(h @ w1 + b1) @ w2 + b2


def _transformer_inputs(rng):
    d, f = D_MODEL, D_FF
    params = [_normal(rng, (d, d), scale=d ** -0.5) for _ in range(4)]
    params += [_normal(rng, (d, f), scale=d ** -0.5), np.zeros((f,), np.float32),
               _normal(rng, (f, d), scale=f ** -0.5), np.zeros((d,), np.float32),
               np.ones((d,), np.float32), np.ones((d,), np.float32)]
    return params, _normal(rng, (BATCH, SEQ, d))


def _transformer_loss(params, x, target):
    return jnp.mean(jnp.square(_transformer_block(params, x) - target))


def _rnn(params, xs, h0):
    wx, wh, b = params

    def cell(h, x):
        h = jnp.tanh(x @ wx + h @ wh + b)
        return h, h

    h, hs = jax.lax.scan(cell, h0, xs)
    return h, jnp.sum(hs)


def _rnn_inputs(rng):
    hidden, features = 256, 128
    params = [_normal(rng, (features, hidden), scale=0.1), _normal(rng, (hidden, hidden), scale=0.05),
              np.zeros((hidden,), np.float32)]
    return params, _normal(rng, (64, 32, features)), np.zeros((32, hidden), np.float32)


VOCAB, EMBED = 32768, 256


def _embedding_grad(table, ids, g):
    # The lookup (gather) and its gradient (a scatter-add into the table).
    out, vjp = jax.vjp(lambda t: jnp.take(t, ids, axis=0), table)
    return out, vjp(g)[0]


def _embedding_inputs(rng):
    ids = rng.integers(0, VOCAB, (64, 128)).astype(np.int32)
    return _normal(rng, (VOCAB, EMBED), scale=0.02), ids, _normal(rng, (64, 128, EMBED))


def _matmul_inputs(m, k, n, dtype=np.float32, batch=()):
    return lambda rng: (_normal(rng, batch + (m, k), dtype), _normal(rng, batch + (k, n), dtype))


def _int8_inputs(m, k, n, dtype=np.int8):
    info = np.iinfo(dtype)
    return lambda rng: (rng.integers(info.min, info.max + 1, (m, k)).astype(dtype),
                        rng.integers(info.min, info.max + 1, (k, n)).astype(dtype))


def _int8_matmul(a, b):
    # A quantized product: 8-bit operands summed in 32 bits.
    return jax.lax.dot(a, b, preferred_element_type=jnp.int32)


def _bf16():
    import ml_dtypes
    return ml_dtypes.bfloat16


# --- The classes issue 29 names: integer products, linear algebra, random
# numbers, FFT, loops, gathers and scatters, RNN cells, f64. ---

def _int_inputs(m, k, n, dtype, low, high):
    return lambda rng: (rng.integers(low, high, (m, k)).astype(dtype),
                        rng.integers(low, high, (k, n)).astype(dtype))


def _spd(rng, n, dtype=np.float32):
    a = rng.standard_normal((n, n))
    return (a @ a.T / n + np.eye(n)).astype(dtype)


def _square(rng, n, dtype=np.float32):
    a = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n))
                                        if np.issubdtype(dtype, np.complexfloating) else 0)
    return (a + n ** 0.5 * np.eye(n)).astype(dtype)


def _complex(rng, shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def _threefry_key(rng):
    return (rng.integers(0, 2 ** 32, (2,), dtype=np.uint32),)


def _rbg_key(rng):
    return (rng.integers(0, 2 ** 32, (4,), dtype=np.uint32),)


def _rbg_normal(k):
    return jax.random.normal(jax.random.wrap_key_data(k, impl="rbg"), (1 << 22,))


def _fori_set(xs):
    # Each trip writes one element of a 20K carry: a trip should cost the
    # update, not the carry (equinox tests this scaling).
    return jax.lax.fori_loop(0, 2000, lambda i, xs: xs.at[i].set(1.0), xs)


def _newton_sqrt(x):
    return jax.lax.fori_loop(0, 30, lambda i, y: y - (y * y - x) / (2 * y), x)


def _scan_decay(xs):
    # A scan of a small body: 1000 steps over a carry of 128 floats.
    return jax.lax.scan(lambda c, x: (c * 0.9 + x, c), jnp.zeros((128,), xs.dtype), xs)


def _lstm(params, xs, h0):
    w, u, b = params

    def cell(carry, x):
        h, c = carry
        i, f, g, o = jnp.split(x @ w + h @ u + b, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h

    return jax.lax.scan(cell, (h0, h0), xs)[1]


def _lstm_inputs(rng):
    hidden, features = 128, 64
    params = [_normal(rng, (features, 4 * hidden), scale=0.1),
              _normal(rng, (hidden, 4 * hidden), scale=0.1), np.zeros((4 * hidden,), np.float32)]
    return params, _normal(rng, (100, 32, features)), np.zeros((32, hidden), np.float32)


def _gru_loss(params, xs, h0):
    wz, uz, wr, ur, wh, uh = params

    def cell(h, x):
        z = jax.nn.sigmoid(x @ wz + h @ uz)
        r = jax.nn.sigmoid(x @ wr + h @ ur)
        h = (1 - z) * h + z * jnp.tanh(x @ wh + (r * h) @ uh)
        return h, h

    return jnp.mean(jnp.square(jax.lax.scan(cell, h0, xs)[1]))


def _gru_inputs(rng):
    hidden, features = 128, 64
    params = []
    for _ in range(3):
        params += [_normal(rng, (features, hidden), scale=0.1), _normal(rng, (hidden, hidden), scale=0.1)]
    return params, _normal(rng, (50, 32, features)), np.zeros((32, hidden), np.float32)


def _abs(outputs):
    # Householder signs: columns of Q (rows of R) and eigenvectors are
    # determined up to sign.
    return jax.tree_util.tree_map(np.abs, outputs)


def _segment_sum(data, ids):
    return jax.ops.segment_sum(data, ids, num_segments=1000)


def _scatter_add(x, idx, v):
    return x.at[idx].add(v)


WORKLOADS: list[Workload] = [
    Workload("dispatch_scalar_add", "dispatch", lambda x: x + 1,
             lambda rng: (np.float32(1.0),), calls_per_sample=200),
    Workload("elementwise_chain10_1M", "elementwise", _chain10,
             lambda rng: (_normal(rng, (1 << 20,)),), calls_per_sample=5),
    Workload("elementwise_chain10_16M", "elementwise", _chain10,
             lambda rng: (_normal(rng, (1 << 24,)),)),
    Workload("reduce_rows_2048x2048", "reduction", lambda x: jnp.sum(x, axis=1),
             lambda rng: (_normal(rng, (2048, 2048)),), calls_per_sample=5),
    Workload("reduce_cols_2048x2048", "reduction", lambda x: jnp.sum(x, axis=0),
             lambda rng: (_normal(rng, (2048, 2048)),), calls_per_sample=5),
    Workload("reduce_all_2048x2048", "reduction", jnp.sum,
             lambda rng: (_normal(rng, (2048, 2048)),), calls_per_sample=5),
    Workload("softmax_1024x1024", "elementwise", _softmax,
             lambda rng: (_normal(rng, (1024, 1024)),), calls_per_sample=5),
    Workload("layernorm_4096x1024", "elementwise", _layernorm,
             lambda rng: (_normal(rng, (4096, 1024)), _normal(rng, (1024,)), _normal(rng, (1024,))),
             calls_per_sample=2),
    Workload("matmul_f32_128", "matmul", jnp.matmul, _matmul_inputs(128, 128, 128),
             calls_per_sample=50),
    Workload("matmul_f32_1024", "matmul", jnp.matmul, _matmul_inputs(1024, 1024, 1024)),
    Workload("matmul_f32_2048", "matmul", jnp.matmul, _matmul_inputs(2048, 2048, 2048)),
    Workload("matmul_batched_32x256", "matmul", jnp.matmul,
             _matmul_inputs(256, 256, 256, batch=(32,)), calls_per_sample=2),
    Workload("matmul_bf16_1024", "matmul", jnp.matmul,
             lambda rng: _matmul_inputs(1024, 1024, 1024, _bf16())(rng)),
    Workload("matmul_f16_1024", "matmul", jnp.matmul, _matmul_inputs(1024, 1024, 1024, np.float16)),
    Workload("matmul_int8_to_int32_512", "matmul", _int8_matmul, _int8_inputs(512, 512, 512),
             calls_per_sample=5),
    Workload("matmul_uint8_to_int32_1024", "matmul", _int8_matmul,
             _int8_inputs(1024, 1024, 1024, np.uint8)),
    Workload("conv3x3_fwd_8x56x56x64", "conv", _conv,
             lambda rng: (_normal(rng, (8, 56, 56, 64)), _normal(rng, (3, 3, 64, 64), scale=0.05))),
    Workload("conv3x3_bwd_8x56x56x64", "conv", _conv_backward,
             lambda rng: (_normal(rng, (8, 56, 56, 64)), _normal(rng, (3, 3, 64, 64), scale=0.05),
                          _normal(rng, (8, 56, 56, 64)))),
    Workload("conv1x1_fwd_8x28x28x256", "conv", _conv,
             lambda rng: (_normal(rng, (8, 28, 28, 256)), _normal(rng, (1, 1, 256, 128), scale=0.05))),
    Workload("conv1x1_bwd_8x28x28x256", "conv", _conv_backward,
             lambda rng: (_normal(rng, (8, 28, 28, 256)), _normal(rng, (1, 1, 256, 128), scale=0.05),
                          _normal(rng, (8, 28, 28, 128)))),
    Workload("mlp_train_step", "model", _sgd(_mlp_loss), _mlp_inputs, calls_per_sample=5),
    Workload("cnn_train_step", "model", _sgd(_cnn_loss), _cnn_inputs),
    Workload("transformer_fwd", "model", _transformer_block, _transformer_inputs),
    Workload("transformer_train_step", "model", _sgd(_transformer_loss),
             lambda rng: _transformer_inputs(rng) + (_normal(rng, (BATCH, SEQ, D_MODEL)),)),
    Workload("scan_rnn_64steps", "model", _rnn, _rnn_inputs, calls_per_sample=2),
    Workload("embedding_grad", "model", _embedding_grad, _embedding_inputs),
    Workload("sort_1M", "sort", jnp.sort, lambda rng: (_normal(rng, (1 << 20,)),)),
    Workload("top_k_256x8192_k64", "sort", lambda x: jax.lax.top_k(x, 64),
             lambda rng: (_normal(rng, (256, 8192)),)),
    # Integer products summed in 32 bits.
    Workload("matmul_int16_to_int32_512", "integer", _int8_matmul,
             _int_inputs(512, 512, 512, np.int16, -32768, 32768), calls_per_sample=5),
    Workload("matmul_int32_512", "integer", _int8_matmul,
             _int_inputs(512, 512, 512, np.int32, -2 ** 31, 2 ** 31), calls_per_sample=2),
    # Decompositions and solvers.
    Workload("solve_f32_512x16", "linalg", jnp.linalg.solve,
             lambda rng: (_square(rng, 512), _normal(rng, (512, 16)))),
    Workload("solve_c64_256x16", "linalg", jnp.linalg.solve,
             lambda rng: (_square(rng, 256, np.complex64), _complex(rng, (256, 16)))),
    Workload("lu_f32_512", "linalg", jax.scipy.linalg.lu_factor, lambda rng: (_square(rng, 512),)),
    Workload("cholesky_f32_512", "linalg", jnp.linalg.cholesky, lambda rng: (_spd(rng, 512),)),
    Workload("triangular_solve_f32_512x64", "linalg",
             lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=True),
             lambda rng: (np.tril(_square(rng, 512)), _normal(rng, (512, 64)))),
    Workload("qr_f32_256", "linalg", jnp.linalg.qr, lambda rng: (_normal(rng, (256, 256)),),
             canonical=_abs),
    Workload("eigh_f32_256", "linalg", jnp.linalg.eigh, lambda rng: (_spd(rng, 256),),
             canonical=_abs),
    Workload("svd_f32_128", "linalg", lambda a: jnp.linalg.svd(a, compute_uv=False),
             lambda rng: (_normal(rng, (128, 128)),)),
    Workload("inv_f64_256", "linalg", jnp.linalg.inv,
             lambda rng: (_square(rng, 256, np.float64),), x64=True),
    # Random numbers (threefry unless named).
    Workload("random_normal_4M", "rng", lambda k: jax.random.normal(jax.random.wrap_key_data(k), (1 << 22,)),
             _threefry_key),
    Workload("random_uniform_4M", "rng",
             lambda k: jax.random.uniform(jax.random.wrap_key_data(k), (1 << 22,)), _threefry_key),
    Workload("random_bernoulli_4M", "rng",
             lambda k: jax.random.bernoulli(jax.random.wrap_key_data(k), 0.3, (1 << 22,)),
             _threefry_key),
    Workload("random_categorical_1024x1000", "rng",
             lambda k, logits: jax.random.categorical(jax.random.wrap_key_data(k), logits),
             lambda rng: _threefry_key(rng) + (_normal(rng, (1024, 1000)),)),
    Workload("random_normal_rbg_4M", "rng", _rbg_normal, _rbg_key),
    # FFT: 1-D, 2-D, real, inverse, not a power of two.
    Workload("fft_c64_1M", "fft", jnp.fft.fft, lambda rng: (_complex(rng, (1 << 20,)),)),
    Workload("fft2_c64_16x512x512", "fft", jnp.fft.fft2, lambda rng: (_complex(rng, (16, 512, 512)),)),
    Workload("rfft_f32_1024x4096", "fft", jnp.fft.rfft, lambda rng: (_normal(rng, (1024, 4096)),)),
    Workload("ifft_c64_1000x1000", "fft", jnp.fft.ifft, lambda rng: (_complex(rng, (1000, 1000)),)),
    # Loops with small bodies.
    Workload("fori_set_2000_trips_20K", "loop", _fori_set, lambda rng: (_normal(rng, (20000,)),),
             calls_per_sample=5),
    Workload("while_newton_30_64K", "loop", _newton_sqrt,
             lambda rng: (np.abs(_normal(rng, (65536,))) + 1,), calls_per_sample=5),
    Workload("scan_decay_1000_steps", "loop", _scan_decay, lambda rng: (_normal(rng, (1000, 128)),),
             calls_per_sample=5),
    # Gathers and scatters.
    Workload("take_rows_1000x256_by_4096", "indexing", lambda t, i: jnp.take(t, i, axis=0),
             lambda rng: (_normal(rng, (1000, 256)), rng.integers(0, 1000, (4096,)).astype(np.int32)),
             calls_per_sample=5),
    Workload("take_along_axis_4096x1024_by_256", "indexing",
             lambda x, i: jnp.take_along_axis(x, i, axis=1),
             lambda rng: (_normal(rng, (4096, 1024)), rng.integers(0, 1024, (4096, 256)).astype(np.int32))),
    Workload("segment_sum_1M_into_1000", "indexing", _segment_sum,
             lambda rng: (_normal(rng, (1 << 20,)), rng.integers(0, 1000, (1 << 20,)).astype(np.int32))),
    Workload("scatter_add_64K_into_1M", "indexing", _scatter_add,
             lambda rng: (_normal(rng, (1 << 20,)), rng.integers(0, 1 << 20, (65536,)).astype(np.int32),
                          _normal(rng, (65536,)))),
    # Recurrent cells.
    Workload("lstm_scan_100steps_b32", "model", _lstm, _lstm_inputs),
    Workload("gru_train_step_50steps_b32", "model", _sgd(_gru_loss), _gru_inputs),
    # f64.
    Workload("matmul_f64_512", "f64", jnp.matmul, _matmul_inputs(512, 512, 512, np.float64), x64=True),
    Workload("elementwise_chain10_f64_1M", "f64", _chain10,
             lambda rng: (_normal(rng, (1 << 20,), np.float64),), calls_per_sample=2, x64=True),
]


def by_name() -> dict[str, Workload]:
    return {w.name: w for w in WORKLOADS}
