"""Reductions, windows, control flow and sort on Kiln, checked against JAX's
CPU backend (differential.py): each case runs under jax.jit on both."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import differential
from differential import Case

_random = np.random.RandomState(0)
X = _random.randn(3, 4, 5).astype(np.float32)
XI = _random.randint(-50, 50, size=(3, 4, 5)).astype(np.int32)
XB = _random.rand(3, 4, 5) > 0.3
XNAN = np.array([[1.0, np.nan, 3.0], [-0.0, 0.0, -1.0], [np.inf, -np.inf, 2.0]], np.float32)
TIES = np.array([[3, 1, 3, 0], [2, 2, 2, 2], [0, 5, 5, 1]], np.float32)
EMPTY = np.zeros((0, 3), np.float32)
IMAGE = _random.randn(2, 8, 8, 3).astype(np.float32)  # NHWC
LONG = _random.rand(100_000).astype(np.float32)
BF16 = _random.randn(4, 6).astype(jnp.bfloat16)
SORTME = np.array([[3.0, np.nan, -0.0, 0.0, -1.0, 2.0, np.inf, -np.inf, 1.0, 3.0],
                   [5.0, 4.0, 3.0, 2.0, 1.0, 0.0, -1.0, -2.0, -3.0, -4.0]], np.float32)
KEYS = _random.randint(0, 3, size=(2, 12)).astype(np.int32)
XC = (_random.randn(3, 4) + 1j * _random.randn(3, 4)).astype(np.complex64)
XH = _random.randn(4, 6).astype(np.float16)
XU8 = _random.randint(0, 256, size=(4, 6)).astype(np.uint8)


def _max_pool(x, window=(1, 2, 2, 1), strides=(1, 2, 2, 1), padding="VALID"):
    return lax.reduce_window(x, -jnp.inf, lax.max, window, strides, padding)


def _avg_pool(x):
    summed = lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
    counts = lax.reduce_window(jnp.ones_like(x), 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
    return summed / counts


def _while_collatz(n):
    def cond(state):
        return state[0] != 1

    def body(state):
        value, steps = state
        value = jnp.where(value % 2 == 0, value // 2, 3 * value + 1)
        return value, steps + 1

    return lax.while_loop(cond, body, (n, jnp.int32(0)))


def _scan_cumulative(x):
    def step(carry, row):
        carry = carry * 0.5 + row
        return carry, carry.sum()

    return lax.scan(step, jnp.zeros(x.shape[1:], x.dtype), x)


def _switch(index, x):
    return lax.switch(index, [lambda v: v + 1, lambda v: v * 2, lambda v: -v], x)


CASES = [
    # --- reduce: one-op bodies (kernels)
    Case("sum_all", jnp.sum, (X,)),
    Case("sum_axis0", lambda x: jnp.sum(x, 0), (X,)),
    Case("sum_axis1", lambda x: jnp.sum(x, 1), (X,)),
    Case("sum_axis2", lambda x: jnp.sum(x, 2), (X,)),
    Case("sum_axes02_keepdims", lambda x: jnp.sum(x, (0, 2), keepdims=True), (X,)),
    Case("sum_long", jnp.sum, (LONG,)),
    Case("sum_long_columns", lambda x: jnp.sum(x.reshape(1000, 100), 0), (LONG,)),
    Case("mean_var", lambda x: (jnp.mean(x, 1), jnp.var(x, (0, 2))), (X,)),
    Case("prod_axis1", lambda x: jnp.prod(x, 1), (X,)),
    Case("max_min", lambda x: (jnp.max(x, 0), jnp.min(x, (1, 2))), (X,)),
    Case("max_nan", lambda x: (jnp.max(x, 1), jnp.min(x, 0), jnp.nanmax(x, 1)), (XNAN,)),
    Case("int_sum_max", lambda x: (jnp.sum(x, 2), jnp.max(x, (0, 1)), jnp.prod(x[:, :2, :3], 1)),
         (XI,)),
    Case("int8_sum_wraps", lambda x: jnp.sum(x.astype(jnp.int8), 0, dtype=jnp.int8), (XI,)),
    Case("any_all", lambda x: (jnp.any(x, 1), jnp.all(x, (0, 2)), jnp.any(x)), (XB,)),
    Case("bool_count", lambda x: jnp.sum(x, 0), (XB,)),
    Case("bf16_sum", lambda x: (jnp.sum(x, 0), jnp.max(x, 1)), (BF16,)),
    Case("logsumexp", lambda x: jax.nn.logsumexp(x, axis=-1), (X,)),
    Case("softmax", lambda x: jax.nn.softmax(x, axis=1), (X,)),
    Case("zero_size_sum", lambda x: (jnp.sum(x, 0), jnp.sum(x, 1), jnp.sum(x)), (EMPTY,)),
    Case("zero_size_max", lambda x: jnp.max(x, 0, initial=-1.0), (EMPTY,)),
    Case("scalar_reduce", lambda x: jnp.sum(x[0, 0, 0]), (X,)),
    Case("complex_sum_prod", lambda x: (jnp.sum(x, 0), jnp.prod(x, 1), jnp.sum(x)), (XC,)),
    Case("f16_max_min_sum", lambda x: (jnp.max(x, 0), jnp.min(x, 1), jnp.sum(x, 1)), (XH,)),
    Case("uint8_reductions", lambda x: (jnp.max(x, 1), jnp.sum(x, 0, dtype=jnp.uint8),
                                        jnp.bitwise_xor.reduce(x, axis=1)), (XU8,)),
    Case("int_bitwise_reductions", lambda x: (jnp.bitwise_and.reduce(x, axis=0),
                                              jnp.bitwise_or.reduce(x, axis=(1, 2))), (XI,)),
    # --- reduce: bodies run per element
    Case("argmax_argmin", lambda x: (jnp.argmax(x, 1), jnp.argmin(x, 0), jnp.argmax(x)), (X,)),
    Case("argmax_ties_nan", lambda x, t: (jnp.argmax(x, 1), jnp.argmin(x, 0), jnp.argmax(t, 1),
                                          jnp.argmin(t, 0)), (XNAN, TIES)),
    Case("argmax_int", lambda x: (jnp.argmax(x, 2), jnp.argmin(x, 1)), (XI,)),
    Case("two_operand_reduce",
         lambda x, y: lax.reduce((x, y), (0.0, 0), lambda a, b: (a[0] + b[0], a[1] + b[1]), (1,)),
         (X, XI)),
    # --- reduce_window
    Case("cumsum", lambda x: (jnp.cumsum(x, 0), jnp.cumsum(x, 2)), (X,)),
    Case("cumsum_long", jnp.cumsum, (LONG,), rtol=1e-4),
    Case("cumprod_cummax_cummin", lambda x: (jnp.cumprod(x, 1), lax.cummax(x, 2),
                                             lax.cummin(x, 0)), (X,)),
    Case("cumsum_int_reverse", lambda x: (jnp.cumsum(x, 1), lax.cumsum(x, 2, reverse=True)),
         (XI,)),
    Case("max_pool", _max_pool, (IMAGE,)),
    Case("max_pool_same_strided", functools.partial(_max_pool, window=(1, 3, 3, 1),
                                                    strides=(1, 2, 2, 1), padding="SAME"),
         (IMAGE,)),
    Case("avg_pool", _avg_pool, (IMAGE,)),
    Case("window_dilations",
         lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 3), (1, 2), [(1, 0), (2, 1)],
                                     base_dilation=(2, 1), window_dilation=(1, 2)),
         (X[0],)),
    Case("variadic_reduce_window",
         lambda x, i: lax.reduce_window(
             (x, i), (-jnp.inf, 0),
             lambda a, b: (jnp.maximum(a[0], b[0]), jnp.where(a[0] >= b[0], a[1], b[1])),
             (1, 3), (1, 2), "SAME"),
         (X[0], XI[0])),
    Case("cumsum_complex_f16", lambda c, h: (jnp.cumsum(c, 1), jnp.cumsum(h, 0)), (XC, XH)),
    Case("max_pool_grad", jax.grad(lambda x: _max_pool(x).sum()), (IMAGE,)),
    Case("max_pool_grad_overlapping",
         jax.grad(lambda x: (_max_pool(x, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") ** 2).sum()),
         (IMAGE,)),
    # --- control flow
    Case("fori_loop", lambda x: lax.fori_loop(0, 5, lambda i, c: c * 1.5 + i, x), (X,)),
    Case("while_collatz", _while_collatz, (np.int32(27),)),
    Case("cond", lambda p, x: lax.cond(p, lambda v: jnp.sin(v), lambda v: jnp.cos(v) * 2, x),
         (np.bool_(True), X)),
    Case("cond_false_captures", lambda p, x: lax.cond(p, lambda: x + 1, lambda: x.sum() * x),
         (np.bool_(False), X)),
    Case("switch", lambda x: [_switch(i, x) for i in (0, 1, 2)], (X,)),
    Case("switch_out_of_range", lambda i, x: _switch(i, x), (np.int32(7), X)),
    Case("switch_negative", lambda i, x: _switch(i, x), (np.int32(-3), X)),
    Case("scan", _scan_cumulative, (X,)),
    Case("scan_many_carries", lambda x: lax.scan(
        lambda c, r: ((c[0] + r, c[1] * 0.9, c[2] + 1), (r * c[1]).sum()),
        (jnp.zeros(5), jnp.ones(5), jnp.int32(0)), x[0]), (X,)),
    Case("cond_tuple_outputs", lambda p, x, i: lax.cond(p, lambda: (x * 2, i + 1),
                                                        lambda: (x, i - 1)),
         (np.bool_(False), X, XI)),
    Case("searchsorted", lambda s, v: jnp.searchsorted(jnp.sort(s.reshape(-1)), v.reshape(-1)),
         (X, X[0] * 2)),
    Case("nested_loops", lambda x: lax.fori_loop(
        0, 3, lambda i, c: lax.fori_loop(0, i + 1, lambda j, d: d + j * c.mean(), c), x), (X,)),
    Case("grad_through_loop", jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: jnp.sin(c),
                                                               x).sum()), (X,)),
    # --- sort
    Case("sort_last_axis", lambda x: jnp.sort(x, -1), (X,)),
    Case("sort_axis0", lambda x: jnp.sort(x, 0), (X,)),
    Case("sort_nan_zeros", lambda x: jnp.sort(x, 1), (SORTME,)),
    Case("argsort_stable", lambda x: jnp.argsort(x, 1, stable=True), (SORTME,)),
    Case("argsort_ties", lambda k: jnp.argsort(k, 1), (KEYS,)),
    Case("sort_descending", lambda x: (jnp.sort(x, 1, descending=True),
                                       jnp.argsort(x, 1, descending=True)), (SORTME,)),
    Case("sort_ints_bools", lambda x, b: (jnp.sort(x, 2), jnp.sort(b, 1)), (XI, XB)),
    Case("lax_sort_operands", lambda k, v: lax.sort((k, v), dimension=1, num_keys=1),
         (KEYS, KEYS[::-1] * 10)),
    Case("lax_sort_two_keys", lambda k, v: lax.sort((k, v), dimension=1, num_keys=2),
         (KEYS, KEYS[::-1] * 10)),
    Case("lax_sort_float_int_keys", lambda x, k: lax.sort((x, k), num_keys=2),
         (np.array([1.0, np.nan, 1.0, -0.0, 0.0], np.float32),
          np.array([3, 1, 2, 5, 4], np.int32))),
    Case("median_quantile", lambda x: (jnp.median(x, 1), jnp.quantile(x, 0.25)), (X,)),
    Case("sort_bf16", lambda x: jnp.sort(x, 1), (BF16,)),
    Case("sort_complex", lambda c: (jnp.sort(c, 1), jnp.argsort(c.reshape(-1))),
         (np.concatenate([XC, [[complex(1, np.nan), -0.0, 0.0, complex(np.nan, 1)]]])
          .astype(np.complex64),)),
    Case("lexsort", lambda a, b: jnp.lexsort((a, b)), (KEYS[0], KEYS[1])),
    Case("sort_long", jnp.sort, (LONG,)),
    Case("top_k_via_sort", lambda x: jnp.sort(x.reshape(-1))[-5:], (X,)),
]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return differential.cpu_reference(__file__, "CASES", tmp_path_factory.mktemp("cpu"))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_matches_cpu(case, reference):
    differential.check(case, reference)


def test_names_are_unique():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


def test_infinite_loop_over_constants_compiles():
    # A loop over constants is not folded at compile time (it could run
    # forever); compiling it must return.
    def forever():
        return lax.while_loop(lambda c: c >= 0, lambda c: c + 1, jnp.int32(0))

    compiled = jax.jit(forever).lower().compile()
    assert compiled is not None
