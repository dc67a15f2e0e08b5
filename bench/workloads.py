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
]


def by_name() -> dict[str, Workload]:
    return {w.name: w for w in WORKLOADS}
