"""Reductions, windows, scans and sorting x dtypes: reduce_sum/max/min/prod/
and/or/xor, argmax/argmin, reduce_window (pooling with strides, padding,
dilations), cumsum/cumprod/cummax/cummin/cumlogsumexp, sort (multi-operand,
num_keys), argsort, top_k."""

import functools

import jax.numpy as jnp
import numpy as np
from jax import lax

from _common import kind, BOOL, FLOATS, INTS, Case, Inputs, short

_in = Inputs(3)
F32 = np.dtype(np.float32)
C64 = np.dtype(np.complex64)
REAL = INTS + FLOATS


def _data(dtype, shape):
    """Small integers for sums and products (exact), random values otherwise."""
    return _in.small_ints(dtype, shape, -4, 5)


def _reduce_cases():
    cases = []
    for dtype in REAL + [C64]:
        tag = short(dtype)
        x = _data(dtype, (3, 5, 7))
        sp = _in.specials(dtype, 35).reshape(5, 7)
        ops = {"sum": jnp.sum, "prod": jnp.prod}
        if dtype != C64:
            ops.update({"max": jnp.max, "min": jnp.min, "argmax": jnp.argmax,
                        "argmin": jnp.argmin})
        for name, fn in ops.items():
            for axis in (None, 0, 2, (0, 2)):
                if name.startswith("arg") and isinstance(axis, tuple):
                    continue
                atag = "all" if axis is None else str(axis).replace(", ", "_").strip("()")
                cases.append(Case(f"reduce_{name}_{atag}_{tag}",
                                  functools.partial(fn, axis=axis), (x,)))
            if name != "prod":
                cases.append(Case(f"reduce_{name}_specials_{tag}",
                                  functools.partial(fn, axis=1), (sp,)))
        cases.append(Case(f"reduce_sum_scalar_{tag}", jnp.sum, (_data(dtype, ()),)))
        if kind(dtype) in "iu":
            cases += [
                Case(f"reduce_and_{tag}", lambda a: lax.reduce_and(a, (1,)), (x,)),
                Case(f"reduce_or_{tag}", lambda a: lax.reduce_or(a, (0, 2)), (x,)),
                Case(f"reduce_xor_{tag}", lambda a: lax.reduce_xor(a, (2,)), (x,)),
            ]
        if dtype != C64:
            cases.append(Case(f"reduce_max_empty_{tag}", lambda a: jnp.max(a, axis=0,
                                                                          initial=0 if kind(dtype) != "f" else -np.inf),
                              (_data(dtype, (0, 3)),)))
        cases.append(Case(f"reduce_sum_empty_{tag}", lambda a: jnp.sum(a, axis=0),
                          (_data(dtype, (0, 3)),)))
    b = _in.random_values(BOOL, (3, 5, 7))
    cases += [
        Case("reduce_all_pred", lambda a: jnp.all(a, axis=1), (b,)),
        Case("reduce_any_pred", lambda a: jnp.any(a, axis=(0, 2)), (b,)),
        Case("reduce_xor_pred", lambda a: lax.reduce_xor(a, (0,)), (b,)),
        Case("reduce_sum_pred_count", lambda a: jnp.sum(a, axis=2), (b,)),
        Case("reduce_argmax_pred", lambda a: jnp.argmax(a, axis=0), (b,)),
        Case("reduce_sum_long_f32", jnp.sum, (_in.random_values(F32, (100_000,)),), 1e-5, 1e-3),
        Case("reduce_sum_big_rows_f32", lambda a: a.sum(axis=1),
             (_in.random_values(F32, (257, 129)),), 1e-5, 1e-4),
        Case("reduce_max_big_cols_f32", lambda a: a.max(axis=0), (_in.random_values(F32, (257, 129)),)),
        Case("reduce_mean_var_f32", lambda a: (a.mean(0), a.var(1), a.std()),
             (_in.random_values(F32, (3, 5, 7)),), 1e-5, 1e-5),
        Case("reduce_sum_bf16_to_f32", lambda a: jnp.sum(a, dtype=jnp.float32),
             (_in.random_values(np.dtype(jnp.bfloat16), (64,)),)),
        Case("reduce_multi_operand_argmax_nan", lambda a: jnp.argmax(a, axis=1),
             (np.array([[1, np.nan, 3], [np.nan, np.nan, 1], [-np.inf, -np.inf, -np.inf]],
                       np.float32),)),
        Case("reduce_min_signed_zero", lambda a: (jnp.min(a), jnp.max(a)),
             (np.array([0.0, -0.0, 0.0], np.float32),)),
    ]
    return cases


def _window_cases():
    cases = []
    for dtype in [np.dtype(np.int32), np.dtype(np.int8), np.dtype(np.uint16)] + FLOATS:
        tag = short(dtype)
        x = _data(dtype, (2, 9, 8, 3))
        low = -np.inf if kind(dtype) == "f" else np.iinfo(dtype).min
        high = np.inf if kind(dtype) == "f" else np.iinfo(dtype).max
        cases += [
            Case(f"max_pool_2x2_{tag}", lambda a: lax.reduce_window(
                a, np.array(low, dtype), lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"), (x,)),
            Case(f"max_pool_3x3_same_{tag}", lambda a: lax.reduce_window(
                a, np.array(low, dtype), lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), (x,)),
            Case(f"min_pool_dilated_{tag}", lambda a: lax.reduce_window(
                a, np.array(high, dtype), lax.min, (1, 2, 3, 1), (1, 1, 2, 1), "VALID",
                window_dilation=(1, 2, 2, 1)), (x,)),
            Case(f"sum_pool_padded_{tag}", lambda a: lax.reduce_window(
                a, np.array(0, dtype), lax.add, (1, 3, 2, 1), (1, 2, 1, 1),
                ((0, 0), (1, 2), (2, 0), (0, 0))), (x,)),
            Case(f"sum_pool_base_dilation_{tag}", lambda a: lax.reduce_window(
                a, np.array(0, dtype), lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID",
                base_dilation=(1, 2, 1, 1)), (x,)),
        ]
    x = _in.random_values(F32, (2, 9, 8, 3))
    cases += [
        Case("avg_pool_f32", lambda a: lax.reduce_window(a, 0.0, lax.add, (1, 3, 3, 1),
                                                        (1, 2, 2, 1), "SAME") / 9.0, (x,)),
        Case("prod_window_f32", lambda a: lax.reduce_window(a, 1.0, lax.mul, (1, 2, 1, 1),
                                                           (1, 1, 1, 1), "VALID"), (x,)),
        Case("max_pool_specials_f32", lambda a: lax.reduce_window(
            a, -np.inf, lax.max, (2,), (1,), "VALID"), (_in.specials(F32, 40),)),
        Case("window_1d_big_f32", lambda a: lax.reduce_window(a, 0.0, lax.add, (5,), (3,),
                                                             "VALID"),
             (_in.random_values(F32, (1001,)),)),
        Case("max_pool_grad_f32", lambda a: __import__("jax").grad(
            lambda v: lax.reduce_window(v, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                        "VALID").sum())(a), (x,)),
        Case("avg_pool_grad_f32", lambda a: __import__("jax").grad(
            lambda v: (lax.reduce_window(v, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1),
                                         "SAME") ** 2).sum())(a), (x,), 1e-5, 1e-4),
    ]
    return cases


def _scan_cases():
    cases = []
    for dtype in REAL:
        tag = short(dtype)
        x = _data(dtype, (3, 5, 7))
        for name, fn in {"cumsum": lax.cumsum, "cumprod": lax.cumprod, "cummax": lax.cummax,
                         "cummin": lax.cummin}.items():
            for axis, reverse in ((0, False), (2, False), (1, True)):
                cases.append(Case(f"{name}_axis{axis}{'_rev' if reverse else ''}_{tag}",
                                  functools.partial(fn, axis=axis, reverse=reverse), (x,)))
    for dtype in FLOATS:
        tag = short(dtype)
        x = _in.random_values(dtype, (4, 33))
        cases += [
            Case(f"cumlogsumexp_{tag}", functools.partial(lax.cumlogsumexp, axis=1), (x,)),
            Case(f"cumsum_specials_{tag}", jnp.cumsum, (_in.specials(dtype, 40),)),
            Case(f"cummax_specials_{tag}", functools.partial(lax.cummax, axis=0),
                 (_in.specials(dtype, 40),)),
        ]
    cases += [
        Case("cumsum_long_f32", jnp.cumsum, (_in.random_values(F32, (5000,)),), 1e-4, 1e-3),
        Case("cumsum_pred_to_s32", lambda a: jnp.cumsum(a), (_in.random_values(BOOL, (50,)),)),
        Case("cumsum_c64", lambda a: jnp.cumsum(a, axis=1),
             (_in.small_ints(C64, (3, 6)),)),
    ]
    return cases


def _sort_cases():
    cases = []
    for dtype in REAL + [BOOL]:
        tag = short(dtype)
        x = _in.specials(dtype, 40) if dtype != BOOL else _in.random_values(BOOL, (40,))
        m = _in.small_ints(dtype, (4, 9), -3, 4)
        cases += [
            Case(f"sort_specials_{tag}", jnp.sort, (x,)),
            Case(f"sort_axis0_{tag}", lambda a: jnp.sort(a, axis=0), (m,)),
            Case(f"argsort_stable_{tag}", lambda a: jnp.argsort(a, axis=1, stable=True), (m,)),
            Case(f"argsort_descending_{tag}",
                 lambda a: jnp.argsort(a, axis=1, stable=True, descending=True), (m,)),
        ]
        if dtype != BOOL:
            cases.append(Case(f"top_k_{tag}", lambda a: lax.top_k(a, 4), (m,)))
    keys = _in.small_ints(np.int32, (20,), 0, 3)
    keys2 = _in.small_ints(F32, (20,), 0, 3)
    vals = _in.random_values(F32, (20,))
    cases += [
        Case("sort_multi_operand_1key", lambda k, v: lax.sort((k, v), num_keys=1), (keys, vals)),
        Case("sort_multi_operand_2keys", lambda a, b, v: lax.sort((a, b, v), num_keys=2),
             (keys, keys2, vals)),
        Case("sort_key_val_unstable", lambda k, v: lax.sort_key_val(k, v), (vals, keys)),
        Case("sort_c64", jnp.sort, (_in.small_ints(C64, (12,), -2, 3),)),
        Case("sort_empty", jnp.sort, (np.zeros((0,), np.float32),)),
        Case("sort_big_f32", lambda a: jnp.sort(a, axis=0), (_in.random_values(F32, (257, 129)),)),
        Case("top_k_specials_f32", lambda a: lax.top_k(a, 10), (_in.specials(F32, 40),)),
        Case("top_k_big_f32", lambda a: lax.top_k(a, 7), (_in.random_values(F32, (33, 129)),)),
        Case("lexsort_s32", lambda a, b: jnp.lexsort((a, b)), (keys, keys[::-1])),
        Case("sort_3d_axis1_f16", lambda a: jnp.sort(a, axis=1),
             (_in.random_values(np.float16, (3, 5, 7)),)),
    ]
    return cases


CASES = _reduce_cases() + _window_cases() + _scan_cases() + _sort_cases()
