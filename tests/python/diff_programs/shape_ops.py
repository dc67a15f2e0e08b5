"""Data-movement lax primitives x every dtype: broadcast_in_dim, reshape,
squeeze, expand_dims, transpose, rev, slice, dynamic_slice,
dynamic_update_slice, concatenate, pad (negative and interior), iota,
gather/scatter through jnp indexing and .at[], on 0-d, zero-size, odd and
larger shapes."""

import jax.numpy as jnp
import numpy as np
from jax import lax

from _common import kind, ALL, BOOL, INTS, Case, Inputs, short

_in = Inputs(2)
F32 = np.dtype(np.float32)


def _per_dtype(dtype):
    tag = short(dtype)
    x = _in.random_values(dtype, (3, 5, 7))
    if kind(dtype) == "f":
        x.flat[:6] = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0], dtype)
    s = _in.random_values(dtype, ())
    empty = _in.random_values(dtype, (0, 4))
    upd = _in.random_values(dtype, (2, 3, 4))
    pad_value = _in.random_values(dtype, ())
    idx = np.array([4, 0, 2, 2, -1], np.int32)
    cases = [
        Case(f"broadcast_in_dim_{tag}",
             lambda a: lax.broadcast_in_dim(a, (2, 3, 4, 5, 7), (1, 3, 4)), (x[:, :1, :],)),
        Case(f"broadcast_scalar_{tag}", lambda a: jnp.broadcast_to(a, (4, 3)), (s,)),
        Case(f"reshape_{tag}", lambda a: a.reshape(7, 15), (x,)),
        Case(f"reshape_scalar_{tag}", lambda a: a.reshape(1, 1, 1), (s,)),
        Case(f"reshape_empty_{tag}", lambda a: a.reshape(2, 0, 2), (empty,)),
        Case(f"squeeze_expand_{tag}",
             lambda a: lax.expand_dims(lax.squeeze(a[:, :1, :], (1,)), (0, 2)), (x,)),
        Case(f"transpose_{tag}", lambda a: lax.transpose(a, (2, 0, 1)), (x,)),
        Case(f"transpose_empty_{tag}", lambda a: a.T, (empty,)),
        Case(f"rev_{tag}", lambda a: lax.rev(a, (0, 2)), (x,)),
        Case(f"slice_strided_{tag}", lambda a: lax.slice(a, (0, 1, 2), (3, 5, 7), (2, 3, 2)), (x,)),
        Case(f"slice_empty_{tag}", lambda a: a[1:1, 2:], (x,)),
        Case(f"dynamic_slice_{tag}",
             lambda a, i: lax.dynamic_slice(a, (i, i + 1, -2), (2, 3, 4)), (x, np.int32(2))),
        Case(f"dynamic_update_slice_{tag}",
             lambda a, u, i: lax.dynamic_update_slice(a, u, (i, 1, 5)), (x, upd, np.int32(1))),
        Case(f"concatenate_{tag}", lambda a, b: jnp.concatenate([a, b, a[:, :2]], axis=1),
             (x, x[:, ::-1])),
        Case(f"concatenate_empty_{tag}", lambda a, b: jnp.concatenate([a, b], axis=0),
             (empty, _in.random_values(dtype, (2, 4)))),
        Case(f"pad_{tag}", lambda a, v: lax.pad(a, v, ((1, 2, 0), (-1, 1, 2), (2, -3, 1))),
             (x, pad_value)),
        Case(f"pad_empty_{tag}", lambda a, v: lax.pad(a, v, ((1, 1, 0), (0, 2, 3))),
             (empty, pad_value)),
        Case(f"gather_take_{tag}", lambda a, i: a[i], (x, idx)),
        Case(f"gather_2d_{tag}", lambda a, i, j: a[i, :, j], (x, idx[:3] % 3, idx[:3])),
        Case(f"gather_take_along_{tag}",
             lambda a, i: jnp.take_along_axis(a, i, axis=2),
             (x, _in.random.randint(0, 7, size=(3, 5, 2)).astype(np.int32))),
        # Gathers with one start index run in fused loops (Pointwise kGather):
        # jnp's fill mode masks indices out of range, negative ones wrap.
        Case(f"gather_take_fill_{tag}", lambda a, i: jnp.take(a, i, axis=1, mode="fill"),
             (x, np.array([4, -1, 5, -6, 0, 2, 9], np.int32))),
        Case(f"gather_take_along_fill_{tag}",
             lambda a, i: jnp.take_along_axis(a, i, axis=2, mode="fill"),
             (x, _in.random.randint(-9, 9, size=(3, 5, 4)).astype(np.int32))),
        Case(f"scatter_set_{tag}", lambda a, i, u: a.at[i].set(u), (x, idx[:3], x[:3])),
        Case(f"scatter_set_drop_{tag}",
             lambda a, u: a.at[jnp.array([1, 9])].set(u, mode="drop"), (x, x[:2])),
        Case(f"select_where_{tag}", lambda c, a, b: jnp.where(c, a, b),
             (_in.random_values(BOOL, (3, 5, 7)), x, x[::-1])),
    ]
    if dtype != BOOL:
        cases += [
            Case(f"iota_{tag}", lambda: lax.broadcasted_iota(dtype, (4, 5), 1)),
            Case(f"scatter_add_{tag}", lambda a, i, u: a.at[i].add(u), (x, idx, x[[0, 1, 2, 0, 1]])),
        ]
    if dtype != BOOL and kind(dtype) != "c":
        cases += [
            Case(f"scatter_min_{tag}", lambda a, i, u: a.at[i].min(u), (x, idx, x[[2, 1, 0, 1, 2]])),
            Case(f"scatter_max_{tag}", lambda a, i, u: a.at[i].max(u), (x, idx, x[[2, 1, 0, 1, 2]])),
        ]
    if dtype != BOOL:
        cases.append(Case(f"scatter_mul_{tag}", lambda a, i, u: a.at[i].multiply(u),
                          (x, idx, x[[1, 1, 0, 1, 2]])))
    return cases


def _extra_cases():
    big = _in.random_values(F32, (257, 129))
    x = _in.random_values(F32, (3, 5, 7))
    ints = _in.random_values(np.int32, (6, 8))
    cases = [
        Case("big_transpose_f32", lambda a: a.T, (big,)),
        Case("big_rev_slice_f32", lambda a: a[::-3, 5:100:7], (big,)),
        Case("big_pad_f32", lambda a: jnp.pad(a, ((3, 0), (0, 5)), constant_values=7.0), (big,)),
        Case("big_concat_f32", lambda a: jnp.concatenate([a, a * 2], axis=1), (big,)),
        Case("big_gather_rows_f32", lambda a, i: a[i], (big, np.arange(0, 257, 5, dtype=np.int32))),
        # Fused gathers across tiles: rows with a mask, one index per element
        # (indices out of range and negative), columns alone.
        Case("big_take_rows_fill_f32", lambda a, i: jnp.take(a, i, axis=0, mode="fill") * 2.0,
             (big, _in.random.randint(-300, 300, size=(1000,)).astype(np.int32))),
        Case("big_take_along_fill_f32",
             lambda a, i: jnp.take_along_axis(a, i, axis=1, mode="fill") + 1.0,
             (big, _in.random.randint(-140, 140, size=(257, 64)).astype(np.int32))),
        Case("big_take_columns_f32", lambda a, i: a[:, i],
             (big, _in.random.randint(0, 129, size=(300,)).astype(np.int32))),
        Case("big_broadcast_add_f32", lambda a, r: a + r, (big, _in.random_values(F32, (129,)))),
        Case("transpose_4d_f32", lambda a: jnp.transpose(a.reshape(3, 5, 7, 1), (3, 1, 0, 2)), (x,)),
        Case("iota_s32_3d", lambda: lax.broadcasted_iota(jnp.int32, (2, 3, 4), 2)),
        Case("iota_f32_dim0", lambda: lax.iota(jnp.float32, 13)),
        Case("arange_linspace", lambda: (jnp.arange(-3, 10, 2), jnp.linspace(-1.0, 2.0, 11))),
        Case("dynamic_slice_clamp_negative", lambda a, i: lax.dynamic_slice(a, (i, i), (2, 2)),
             (ints, np.int32(-5))),
        Case("dynamic_update_slice_clamp_big",
             lambda a, u, i: lax.dynamic_update_slice(a, u, (i, i)),
             (ints, ints[:3, :3] * 0, np.int32(100))),
        Case("dynamic_index_in_dim_s32", lambda a, i: lax.dynamic_index_in_dim(a, i, 1, False),
             (ints, np.int32(3))),
        Case("gather_negative_index_wrap", lambda a: a[-1, -2], (ints,)),
        Case("gather_oob_clamp", lambda a, i: a[i], (ints, np.array([-9, 100, 3], np.int32))),
        Case("gather_fill_mode", lambda a, i: a.at[i].get(mode="fill", fill_value=-1),
             (ints, np.array([-9, 100, 3, 5], np.int32))),
        Case("gather_bool_mask_static", lambda a: a[:, np.array([True, False] * 4)], (ints,)),
        Case("scatter_add_repeated_f32", lambda a, i, u: a.at[i].add(u),
             (np.zeros(6, np.float32), np.array([1, 1, 1, 5, 5, 0], np.int32),
              _in.random_values(F32, (6,)))),
        Case("scatter_2d_points", lambda a, i, j, u: a.at[i, j].set(u),
             (ints, np.array([0, 5, 2], np.int32), np.array([7, 0, 3], np.int32),
              np.array([1, 2, 3], np.int32))),
        Case("scatter_slice_add", lambda a, u: a.at[1:4, ::2].add(u),
             (ints, _in.random_values(np.int32, (3, 4)))),
        Case("scatter_empty_updates", lambda a, i: a.at[i].add(1), (ints, np.zeros(0, np.int32))),
        Case("gather_empty_indices", lambda a, i: a[i], (ints, np.zeros((0,), np.int32))),
        Case("squeeze_all_ones", lambda a: jnp.squeeze(a), (np.ones((1, 1, 3, 1), np.int8),)),
        Case("expand_dims_scalar", lambda a: jnp.expand_dims(a, (0, 1)), (np.float32(3.5),)),
        Case("rev_scalar_like", lambda a: lax.rev(a, ()), (np.float32(-0.0),)),
        Case("concat_scalars_stack", lambda a, b: jnp.stack([a, b, a]), (np.int16(3), np.int16(-4))),
        Case("pad_interior_only", lambda a: lax.pad(a, 0, ((0, 0, 3), (0, 0, 1))), (ints,)),
        Case("pad_all_negative", lambda a: lax.pad(a, 0, ((-2, -1, 0), (-3, -3, 0))), (ints,)),
        Case("pad_negative_with_interior", lambda a: lax.pad(a, -1, ((-3, -2, 2), (1, -4, 1))),
             (ints,)),
    ]
    return cases


CASES = [case for dtype in ALL for case in _per_dtype(dtype)] + _extra_cases()
