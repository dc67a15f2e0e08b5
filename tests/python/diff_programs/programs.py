"""Control flow (while_loop, cond, switch, scan, fori_loop, map), autodiff
compositions (grad, value_and_grad, vmap, jvp, vjp, jacfwd, jacrev,
hessian) and small training steps (an MLP and a CNN, a few SGD steps)."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from _common import Case, Inputs

_in = Inputs(6)
F32 = np.dtype(np.float32)
X = _in.random_values(F32, (4, 6), 1.0)
V = _in.random_values(F32, (5,), 1.0)
S = np.float32(0.7)


def _collatz(n):
    def body(state):
        value, steps = state
        return jnp.where(value % 2 == 0, value // 2, 3 * value + 1), steps + 1
    return lax.while_loop(lambda s: s[0] != 1, body, (n, jnp.int32(0)))


def _newton_sqrt(a):
    def body(state):
        x, i = state
        return 0.5 * (x + a / x), i + 1
    return lax.while_loop(lambda s: (s[1] < 20) & jnp.any(jnp.abs(s[0] * s[0] - a) > 1e-4),
                          body, (jnp.ones_like(a), 0))


def _control_cases():
    return [
        Case("while_collatz", _collatz, (np.int32(27),)),
        Case("while_vector_newton", _newton_sqrt, (np.abs(V) + 0.5,), 1e-5, 1e-5),
        Case("while_zero_trips", lambda x: lax.while_loop(lambda c: c[0] > 100,
                                                          lambda c: (c[0] + 1, c[1] * 2),
                                                          (jnp.int32(0), x)), (X,)),
        Case("cond_true_false", lambda p, x: (lax.cond(p, jnp.sin, jnp.cos, x),
                                              lax.cond(~p, jnp.sin, jnp.cos, x)),
             (np.bool_(True), X)),
        Case("cond_captures", lambda p, x, y: lax.cond(p > 0, lambda a: a + y, lambda a: a * y, x),
             (np.int32(-2), X, X[::-1])),
        Case("switch_clamped_index", lambda i, x: [lax.switch(j, [jnp.sin, jnp.cos, jnp.tanh], x)
                                                   for j in (i, i + 1, i + 5, i - 3)],
             (np.int32(0), V)),
        Case("scan_cumulative", lambda x: lax.scan(lambda c, r: (c * 0.5 + r, (c * r).sum()),
                                                   jnp.zeros(x.shape[1:]), x), (X,), 1e-5, 1e-6),
        Case("scan_reverse_unroll", lambda x: lax.scan(lambda c, r: (c + r, c), 0.0, x,
                                                       reverse=True, unroll=2), (V,)),
        Case("scan_no_xs", lambda x: lax.scan(lambda c, _: (c * 1.1, c), x, None, length=4),
             (V,), 1e-6, 1e-6),
        Case("fori_loop_int", lambda n: lax.fori_loop(0, 10, lambda i, c: c * 3 + i, n),
             (np.int32(1),)),
        Case("fori_loop_dynamic_bounds", lambda lo, hi, x: lax.fori_loop(
            lo, hi, lambda i, c: c + jnp.roll(c, i), x), (np.int32(1), np.int32(5), V), 1e-5, 1e-6),
        Case("lax_map", lambda x: lax.map(lambda r: jnp.sort(r) * r.max(), x), (X,)),
        Case("lax_map_batched", lambda x: lax.map(lambda r: r.cumsum(), x, batch_size=3),
             (X,), 1e-6, 1e-6),
        Case("nested_while_in_scan", lambda x: lax.scan(
            lambda c, r: (c + lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0 + 1.0,
                                             jnp.abs(r).sum() + 0.1), r), 0.0, x), (X,)),
        Case("associative_scan_add", lambda x: lax.associative_scan(jnp.add, x), (V,), 1e-6, 1e-6),
        Case("associative_scan_max_2d", lambda x: lax.associative_scan(jnp.maximum, x, axis=1),
             (X,)),
        Case("cond_in_while", lambda x: lax.while_loop(
            lambda s: s[1] < 6,
            lambda s: (lax.cond(s[1] % 2 == 0, lambda a: a * 2, lambda a: a - 1, s[0]), s[1] + 1),
            (x, 0)), (V,)),
        Case("while_dynamic_update", lambda x: lax.fori_loop(
            0, x.shape[0], lambda i, c: lax.dynamic_update_slice(c, x[i][None] * i, (i, 0)),
            jnp.zeros_like(x)), (X,)),
        Case("checkpoint_remat_grad", lambda x: jax.grad(
            lambda v: jax.checkpoint(lambda u: jnp.sin(u).sum() * jnp.cos(u).sum())(v))(x),
             (V,), 1e-5, 1e-6),
    ]


def _loop_program_cases():
    # Small loops run as generated machine code (docs/execution.md, "Loop
    # programs run as machine code"): scalars of every common type in
    # registers, float compares with NaN, element runs with tails, clamped
    # windows, one-element scatters, and instructions the code calls back.
    rows = _in.random_values(F32, (10, 37), 1.0)
    int_rows = _in.random_values(np.dtype(np.int32), (10, 37))
    nan = np.float32(np.nan)

    def float_until(x):
        return lax.while_loop(lambda s: (s[1] < 6) & ~(s[0] > 0.0),
                              lambda s: (s[0] * 2.0 - 0.5, s[1] + 1), (x, 0))

    return [
        Case("loop_u32_hash", lambda c: lax.fori_loop(
            0, 50, lambda i, c: (c ^ (c * np.uint32(2654435761))) + i.astype(jnp.uint32), c),
             (np.uint32(12345),)),
        Case("loop_f32_grow_until", lambda x: lax.while_loop(
            lambda s: s[0] < 1000.0, lambda s: (s[0] * 1.5 + 0.25, s[1] + 1), (x, 0)),
             (np.float32(0.1),)),
        Case("loop_float_compare_nan", float_until, (nan,)),
        Case("loop_float_compare_negative", float_until, (np.float32(-3.0),)),
        Case("loop_float_compare_no_trips", float_until, (np.float32(1.0),)),
        Case("loop_int_max_min_where", lambda c: lax.fori_loop(
            0, 12, lambda i, c: jnp.where(i % 3 == 0, jnp.maximum(c, i * 7 - 20),
                                          jnp.minimum(c, 50 - i)), c), (np.int32(3),)),
        Case("loop_rows_f32_odd_length", lambda xs: lax.scan(
            lambda c, x: (c * 0.5 + x - 1.0, c * x), jnp.zeros(37, jnp.float32), xs), (rows,),
             1e-6, 1e-6),
        Case("loop_rows_i32_odd_length", lambda xs: lax.scan(
            lambda c, x: ((c * 3 + x) ^ 5, c - x), jnp.zeros(37, jnp.int32), xs), (int_rows,)),
        Case("loop_dynamic_slice_clamped", lambda x: lax.fori_loop(
            -3, 9, lambda i, c: c + lax.dynamic_slice(x, (i - 2,), (3,)) * i.astype(jnp.float32),
            jnp.zeros(3, jnp.float32)), (V,), 1e-6, 1e-6),
        Case("loop_pred_carry", lambda n: lax.fori_loop(
            0, n, lambda i, s: (~s[0], s[1] + jnp.where(s[0], 1, 2)), (True, 0)), (np.int32(7),)),
        Case("loop_scatter_add_one", lambda x: lax.fori_loop(
            0, 5, lambda i, c: c.at[i % 3].add(x[i]), jnp.zeros(3, jnp.float32)), (V,), 1e-6,
             1e-6),
        Case("loop_set_unsigned_index", lambda x: lax.fori_loop(
            0, 7, lambda i, c: c.at[i.astype(jnp.uint32)].set(c[0] + 1.0), x), (V,)),
    ]


def _loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def _autodiff_cases():
    w = _in.random_values(F32, (6, 3), 0.5)
    return [
        Case("grad_sin_sum", jax.grad(lambda x: jnp.sin(x).sum()), (X,), 1e-5, 1e-6),
        Case("value_and_grad_loss", jax.value_and_grad(_loss), (w, X), 1e-5, 1e-5),
        Case("grad_argnums_both", jax.grad(_loss, argnums=(0, 1)), (w, X), 1e-5, 1e-5),
        Case("vmap_matvec", jax.vmap(lambda m, v: m @ v, in_axes=(None, 0)), (X, X[:, :6] @
                                                                             np.eye(6, dtype=np.float32)),
             1e-5, 1e-5),
        Case("vmap_nested", jax.vmap(jax.vmap(lambda a, b: a * b + jnp.sin(a))), (X, X[::-1]),
             1e-5, 1e-6),
        Case("vmap_grad_per_example", jax.vmap(jax.grad(lambda w_, x_: jnp.tanh(x_ @ w_).sum()),
                                               in_axes=(None, 0)), (w, X), 1e-5, 1e-5),
        Case("jvp_tanh", lambda x, t: jax.jvp(jnp.tanh, (x,), (t,)), (X, X[::-1]), 1e-5, 1e-6),
        Case("vjp_loss", lambda w_, x: jax.vjp(lambda a: jnp.tanh(x @ a), w_)[1](
            jnp.ones((4, 3), jnp.float32)), (w, X), 1e-5, 1e-5),
        Case("jacfwd_vector_fn", jax.jacfwd(lambda v: jnp.sin(v) * v.sum()), (V,), 1e-5, 1e-6),
        Case("jacrev_vector_fn", jax.jacrev(lambda v: jnp.exp(v) / (1 + v ** 2)), (V,), 1e-5, 1e-6),
        Case("hessian_quartic", jax.hessian(lambda v: (v ** 4).sum() + v[0] * v[1] * v[2]), (V,),
             1e-5, 1e-5),
        Case("grad_of_grad_scalar", jax.grad(jax.grad(lambda s: jnp.sin(s) * s ** 3)), (S,),
             1e-5, 1e-6),
        Case("grad_through_while", jax.grad(lambda s: lax.fori_loop(0, 5, lambda i, c: c * s, 1.0)),
             (S,), 1e-5, 1e-6),
        Case("grad_through_scan", jax.grad(lambda x: lax.scan(
            lambda c, r: (jnp.tanh(c + r), c), jnp.zeros(6), x)[0].sum()), (X,), 1e-5, 1e-6),
        Case("grad_through_cond", jax.grad(lambda s: lax.cond(s > 0, jnp.sin, jnp.cos, s)), (S,)),
        Case("grad_sort_topk", jax.grad(lambda v: (jnp.sort(v) * jnp.arange(5.0)).sum()
                                        + lax.top_k(v, 2)[0].sum()), (V,)),
        Case("grad_gather_scatter", jax.grad(lambda x: (x[jnp.array([0, 2, 2])] ** 2).sum()
                                             + x.at[1].set(0.0).sum()), (X,)),
        Case("grad_softmax_xent", jax.grad(lambda x: -jax.nn.log_softmax(x)[:, 0].mean()), (X,),
             1e-5, 1e-6),
        Case("grad_integer_pow_div", jax.grad(lambda v: (v ** 3 / (1.0 + v ** 2)).sum()), (V,),
             1e-5, 1e-6),
        Case("linearize_transpose", lambda x: jax.linear_transpose(lambda v: v.sum(0) * 2.0, x)(
            jnp.ones(6, jnp.float32)), (X,)),
    ]


def _mlp_init(key_seed):
    r = np.random.RandomState(key_seed)
    return {"w1": (r.randn(8, 16) * 0.3).astype(np.float32), "b1": np.zeros(16, np.float32),
            "w2": (r.randn(16, 3) * 0.3).astype(np.float32), "b2": np.zeros(3, np.float32)}


def _mlp_loss(params, x, y):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 3), axis=1))


def _mlp_train(params, x, y):
    def step(p, _):
        loss, grads = jax.value_and_grad(_mlp_loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads), loss
    return lax.scan(step, params, None, length=5)


def _cnn_loss(params, x, y):
    h = lax.conv_general_dilated(x, params["k"], (1, 1), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = jax.nn.relu(h + params["bk"])
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    logits = h.reshape(h.shape[0], -1) @ params["w"]
    return jnp.mean((logits - y) ** 2)


def _cnn_train(params, x, y):
    for _ in range(3):
        loss, grads = jax.value_and_grad(_cnn_loss)(params, x, y)
        params = jax.tree_util.tree_map(lambda a, g: a - 0.05 * g, params, grads)
    return params, loss


def _gelu_mlp_loss(params, x, y):
    h = jax.nn.gelu(x @ params["w1"] + params["b1"], approximate=True)
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def _gelu_mlp_step(params, x, y):
    # One SGD step: the updates are the program's results (written last, so
    # the plan keeps activations in their buffers until then), and the GELU
    # gradient recomputes the forward loop's residuals from the product.
    loss, grads = jax.value_and_grad(_gelu_mlp_loss)(params, x, y)
    return jax.tree_util.tree_map(lambda a, g: a - 0.05 * g, params, grads), loss


def _training_cases():
    r = np.random.RandomState(7)
    gelu = {"w1": (r.randn(8, 32) * 0.3).astype(np.float32), "b1": np.zeros(32, np.float32),
            "w2": (r.randn(32, 4) * 0.2).astype(np.float32), "b2": np.zeros(4, np.float32)}
    cnn = {"k": (r.randn(3, 3, 2, 4) * 0.3).astype(np.float32), "bk": np.zeros(4, np.float32),
           "w": (r.randn(4 * 4 * 4, 2) * 0.1).astype(np.float32)}
    return [
        Case("train_mlp_sgd", _mlp_train, (_mlp_init(1), r.randn(10, 8).astype(np.float32),
                                           r.randint(0, 3, 10).astype(np.int32)), 1e-4, 1e-5),
        Case("train_cnn_sgd", _cnn_train, (cnn, r.randn(3, 8, 8, 2).astype(np.float32),
                                           r.randn(3, 2).astype(np.float32)), 1e-4, 1e-5),
        Case("train_gelu_mlp_step", _gelu_mlp_step,
             (gelu, r.randn(16, 8).astype(np.float32), r.randn(16, 4).astype(np.float32)),
             1e-4, 1e-5),
    ]


CASES = _control_cases() + _loop_program_cases() + _autodiff_cases() + _training_cases()
