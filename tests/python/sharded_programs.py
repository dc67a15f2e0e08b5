"""Sharded jit programs for test_sharded_programs.py: every op family Kiln
partitions (issue 28) under every layout of its operands on 1-D and 2-D
meshes, run on Kiln and on XLA's CPU backend with the same device count.

Run as a script: `python sharded_programs.py COUNT OUT.npz` runs every
program for COUNT devices and saves each result's values, and into
OUT.npz.json the shardings JAX reports for them (which slice of the result
each device holds) and the errors of programs that raised.

A program is a family (a function of jax arrays, its operands' shapes)
times a layout (a mesh and a PartitionSpec per operand). Names are
`family/layout`; `program_names(count)` lists them without importing jax.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

import numpy as np

# Layouts of the operands: a mesh ("1d": all devices on axis x; "2d": 2 x
# count/2 on axes x, y) and a spec per operand, written as tuples of axis
# names (None: a dimension left whole). Families name the layouts they take
# by the spec of their first operand; the others follow the family's rule.
LAYOUTS_1D = {
    "rep": ("1d", ()),
    "x": ("1d", ("x",)),
    "_x": ("1d", (None, "x")),
}
LAYOUTS_2D = {
    "x_y": ("2d", ("x", "y")),
    "y_x": ("2d", ("y", "x")),
    "xy": ("2d", (("x", "y"),)),
    "_xy": ("2d", (None, ("x", "y"))),
    "y": ("2d", ("y",)),
    "_y": ("2d", (None, "y")),
}


def _layouts(count: int) -> dict:
    layouts = dict(LAYOUTS_1D)
    if count >= 4:
        layouts.update(LAYOUTS_2D)
    return layouts


def _swap(spec):
    """The spec of an array's transpose (rank 2)."""
    spec = tuple(spec) + (None,) * (2 - len(spec))
    return (spec[1], spec[0])


def _families():
    """family name -> (fn(jnp, lax, *arrays), operand builders, operand specs
    from the layout's spec). Shapes scale with the device count `n` so that
    every layout divides them evenly: rows 4n, columns 2n."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def floats(*shape, seed=0):
        return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

    def ints(*shape, mod=17):
        return (np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) * 7) % mod - 5

    same = lambda spec: (spec,)  # noqa: E731 - one operand laid out as the layout says
    pair = lambda spec: (spec, spec)  # noqa: E731
    first = lambda spec: (spec, ())  # noqa: E731 - a sharded and a replicated operand
    mat = lambda n: floats(4 * n, 2 * n)  # noqa: E731
    mat2 = lambda n: floats(4 * n, 2 * n, seed=1)  # noqa: E731
    square = lambda n: floats(2 * n, 2 * n, seed=2)  # noqa: E731
    row = lambda n: floats(2 * n, seed=3)  # noqa: E731
    col = lambda n: floats(4 * n, seed=4)  # noqa: E731

    families = {
        # Elementwise, broadcast, reshape, transpose.
        "unary": (lambda a: jnp.sin(a) * 2 + 1, [mat], same),
        "binary": (lambda a, b: a * b - jnp.maximum(a, b), [mat, mat2], pair),
        "binary_half_sharded": (lambda a, b: a / (1 + b * b), [mat, mat2], first),
        "compare_select": (lambda a, b: jnp.where(a > b, a, -b), [mat, mat2], pair),
        "integer_ops": (lambda a: (a * 3 + 1) // 2 % 5, [lambda n: ints(4 * n, 2 * n)], same),
        "convert": (lambda a: a.astype(jnp.int32) + (a > 0).astype(jnp.int32),
                    [mat], same),
        "bias": (lambda a, v: jnp.tanh(a + v), [mat, row], lambda s: (s, ())),
        "outer": (lambda u, v: u[:, None] * v[None, :], [col, row],
                  lambda s: (s[:1], ())),
        "transpose": (lambda a: a.T * 2, [mat], same),
        "transpose_add": (lambda a, b: a.T + b, [mat, lambda n: floats(2 * n, 4 * n, seed=5)],
                          lambda s: (s, _swap(s))),
        "reshape_split": (lambda a: a.reshape(2 * a.shape[0], a.shape[1] // 2) + 1, [mat],
                          same),
        "reshape_merge": (lambda a: a.reshape(-1) * 3, [mat], same),
        "reshape_unit": (lambda a: a[None, :, None, :] - 1, [mat], same),
        "iota_mask": (lambda a: jnp.where(jnp.arange(a.shape[0])[:, None]
                                          > jnp.arange(a.shape[1])[None, :], a, 0.0),
                      [mat], same),
        "tril": (lambda a: jnp.tril(a) + jnp.triu(a, 1) * 2, [square], same),
        # Reductions.
        "sum_rows": (lambda a: a.sum(axis=1), [mat], same),
        "sum_cols": (lambda a: a.sum(axis=0), [mat], same),
        "sum_all": (lambda a: a.sum(), [mat], same),
        "max_rows": (lambda a: a.max(axis=1), [mat], same),
        "min_cols_int": (lambda a: a.min(axis=0), [lambda n: ints(4 * n, 2 * n)], same),
        "argmax": (lambda a: jnp.argmax(a, axis=1), [mat], same),
        "mean_var": (lambda a: (a.mean(axis=0), a.var(axis=1)), [mat], same),
        "softmax": (lambda a: jax.nn.softmax(a, axis=-1), [mat], same),
        "layernorm": (lambda a: (a - a.mean(-1, keepdims=True))
                      * lax.rsqrt(a.var(-1, keepdims=True) + 1e-5), [mat], same),
        "logsumexp": (lambda a: jax.nn.logsumexp(a, axis=0), [mat], same),
        "any_all": (lambda a: (jnp.any(a > 1.5, axis=1), jnp.all(a > -3, axis=0)), [mat],
                    same),
        # Contractions.
        "matmul": (lambda a, w: a @ w, [mat, square], lambda s: (s, ())),
        "matmul_rhs": (lambda a, w: a @ w, [mat, square], lambda s: ((), s)),
        "matmul_both": (lambda a, w: a @ w, [mat, square], lambda s: (s, _swap(s))),
        "matmul_same": (lambda a, w: a @ w, [mat, square], pair),
        "gram": (lambda a: a.T @ a, [mat], same),
        "outer_product": (lambda a: a @ a.T, [mat], same),
        "matvec": (lambda a, v: a @ v, [mat, row], lambda s: (s, s[1:2])),
        "batched": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
                    [lambda n: floats(2 * n, 2 * n, 2 * n), lambda n: floats(2 * n, 2 * n, 3, seed=1)],
                    lambda s: (s, s[:1])),
        "mlp": (lambda a, w1, w2: jax.nn.relu(a @ w1) @ w2,
                [mat, square, lambda n: floats(2 * n, 4, seed=6)],
                lambda s: (s, _swap(s), ())),
        "mlp_grad": (lambda a, w1, w2: jax.grad(
            lambda w: jnp.mean((jax.nn.relu(a @ w) @ w2) ** 2))(w1),
            [mat, square, lambda n: floats(2 * n, 4, seed=6)], lambda s: (s, (), ())),
        "attention": (lambda q, k: jax.nn.softmax(q @ k.T / 4.0, axis=-1) @ k,
                      [mat, mat2], pair),
        "conv": (lambda x, k: lax.conv_general_dilated(
            x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
            [lambda n: floats(2 * n, 6, 6, 2 * n), lambda n: floats(3, 3, 2 * n, 4, seed=1)],
            lambda s: (s[:1] + (None, None) + s[1:2], ())),
        "conv_features": (lambda x, k: lax.conv_general_dilated(
            x, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")),
            [lambda n: floats(2, 5, 5, 2 * n), lambda n: floats(2, 2, 2 * n, 2 * n, seed=1)],
            lambda s: ((), (None, None) + s[:2])),
        # Indexing.
        "gather_rows": (lambda a, i: a[i], [mat, lambda n: (np.arange(3 * n) * 5) % (4 * n)],
                        lambda s: (s, ())),
        "gather_batch": (lambda a, i: jnp.take_along_axis(a, i, axis=1),
                         [mat, lambda n: ints(4 * n, 3, mod=2 * n) + 5],
                         lambda s: (s, s[:1])),
        "scatter_add": (lambda a, i, v: a.at[i].add(v),
                        [mat, lambda n: (np.arange(n) * 3) % (4 * n),
                         lambda n: floats(n, 2 * n, seed=7)], lambda s: (s, (), ())),
        "slice": (lambda a: a[1:-1, ::2] * 2, [mat], same),
        "slice_aligned": (lambda a: a[: a.shape[0] // 2] + 1, [mat], same),
        "pad": (lambda a: jnp.pad(a, ((1, 2), (0, 3)), constant_values=0.5), [mat], same),
        "concatenate": (lambda a, b: jnp.concatenate([a, b], axis=0), [mat, mat2], pair),
        "concatenate_cols": (lambda a, b: jnp.concatenate([a, b * 2], axis=1), [mat, mat2],
                             pair),
        "dynamic_slice": (lambda a, i: lax.dynamic_slice(a, (i, 1), (a.shape[0] // 2, 3)),
                          [mat, lambda n: np.int32(3)], lambda s: (s, ())),
        "dynamic_update_slice": (lambda a, u, i: lax.dynamic_update_slice(a, u, (i, 0)),
                                 [mat, lambda n: floats(2, 2 * n, seed=8),
                                  lambda n: np.int32(5)], lambda s: (s, (), ())),
        "roll": (lambda a: jnp.roll(a, 3, axis=0) + jnp.roll(a, -1, axis=1), [mat], same),
        "reverse": (lambda a: a[::-1] - a[:, ::-1], [mat], same),
        # Sort, top_k, scans.
        "sort_rows": (lambda a: jnp.sort(a, axis=1), [mat], same),
        "sort_cols": (lambda a: jnp.sort(a, axis=0), [mat], same),
        "argsort": (lambda a: jnp.argsort(a, axis=1), [mat], same),
        "top_k": (lambda a: lax.top_k(a, 3), [mat], same),
        "cumsum_rows": (lambda a: jnp.cumsum(a, axis=0), [mat], same),
        "cumsum_cols": (lambda a: jnp.cumsum(a, axis=1), [mat], same),
        "cummax": (lambda a: lax.cummax(a, axis=0), [mat], same),
        # Control flow.
        "fori_loop": (lambda a: lax.fori_loop(0, 3, lambda i, c: c * 0.5 + jnp.sin(c), a),
                      [mat], same),
        "while_sum": (lambda a: lax.while_loop(lambda c: c[1] < 4,
                                               lambda c: (c[0] + c[0].sum(1, keepdims=True)
                                                          * 0.01, c[1] + 1), (a, 0))[0],
                      [mat], same),
        "cond": (lambda a: lax.cond(a.sum() > 0, lambda x: x * 2, lambda x: -x, a), [mat],
                 same),
        "switch": (lambda a, i: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], a),
                   [mat, lambda n: np.int32(1)], lambda s: (s, ())),
        "scan": (lambda a: lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(a.shape[1]), a),
                 [mat], same),
        # A carry that enters whole and leaves the body as partial sums
        # (a matrix split on its columns times a whole vector).
        "matvec_loop": (lambda m, v: lax.fori_loop(0, 3, lambda i, c: jnp.tanh(m @ c), v),
                        [square, row], lambda s: (s, ())),
        # The same with a linear body: the carry leaves as partial sums.
        "matvec_loop_linear": (lambda m, v: lax.fori_loop(0, 3, lambda i, c: (m @ c) * 0.5, v),
                               [square, row], lambda s: (s, ())),
        "scan_matmul": (lambda a, w: lax.scan(lambda c, _: (jnp.tanh(c @ w), None), a,
                                              None, length=3)[0],
                        [mat, square], lambda s: (s, ())),
        # Constraints and explicit output shardings are in _programs.
    }
    return families


# Families the 2-D layouts also run (the rest run the 1-D layouts only, to
# keep the suite's time within make test's budget).
FAMILIES_2D = {
    "unary", "binary", "binary_half_sharded", "bias", "transpose", "transpose_add",
    "reshape_split", "reshape_merge", "iota_mask", "sum_rows", "sum_cols", "sum_all",
    "max_rows", "argmax", "softmax", "layernorm", "matmul", "matmul_rhs", "matmul_both",
    "gram", "outer_product", "batched", "mlp", "mlp_grad", "attention", "conv",
    "gather_batch", "slice", "pad", "concatenate", "dynamic_slice", "sort_rows", "top_k",
    "cumsum_rows", "fori_loop", "scan", "matvec_loop", "matvec_loop_linear",
}

FAMILY_NAMES = [
    "unary", "binary", "binary_half_sharded", "compare_select", "integer_ops", "convert",
    "bias", "outer", "transpose", "transpose_add", "reshape_split", "reshape_merge",
    "reshape_unit", "iota_mask", "tril", "sum_rows", "sum_cols", "sum_all", "max_rows",
    "min_cols_int", "argmax", "mean_var", "softmax", "layernorm", "logsumexp", "any_all",
    "matmul", "matmul_rhs", "matmul_both", "matmul_same", "gram", "outer_product", "matvec",
    "batched", "mlp", "mlp_grad", "attention", "conv", "conv_features", "gather_rows",
    "gather_batch", "scatter_add", "slice", "slice_aligned", "pad", "concatenate",
    "concatenate_cols", "dynamic_slice", "dynamic_update_slice", "roll", "reverse",
    "sort_rows", "sort_cols", "argsort", "top_k", "cumsum_rows", "cumsum_cols", "cummax",
    "fori_loop", "while_sum", "cond", "switch", "scan", "matvec_loop", "matvec_loop_linear",
    "scan_matmul",
]

# Programs beyond family x layout: constraints inside the program, explicit
# output shardings, random bits, shardings a dimension does not divide.
EXTRA_NAMES = [
    "constraint/rows_to_cols", "constraint/cols_to_rows", "constraint/to_replicated",
    "constraint/from_replicated", "constraint/open_dims", "out_shardings/cols", "out_shardings/replicated",
    "out_shardings/rows_from_replicated", "random/normal_rows", "random/uniform_cols",
    "random/bits_replicated", "out_shardings/concatenate_rows",
    "out_shardings/pad_slice_reverse_rows", "uneven/rows", "uneven/cols_sum", "uneven/matmul",
    "uneven/max_rows", "uneven/log_sum", "uneven/contract", "uneven/argmax",
    "uneven/transpose_broadcast", "uneven/int_divide", "uneven/call", "uneven/mostly_padding",
]
EXTRA_NAMES_2D = [
    "constraint/x_to_y", "out_shardings/x_y", "random/normal_x_y", "uneven/x_y",
    "unreduced/einsum_add", "unreduced/reshard", "shard_map/nested",
    "shard_map/auto_constraint", "shard_map/auto_operand", "shard_map/auto_matmul",
    "shard_map/auto_all_gather", "shard_map/auto_psum_scatter", "shard_map/auto_all_to_all",
    "shard_map/explicit_vmap_grad",
]
# Programs on meshes of explicit axes whose results hold partial sums
# (unreduced): their devices' shards are compared, not only the sums.
EXTRA_NAMES += ["unreduced/einsum", "unreduced/segment_sum", "unreduced/from_tiles",
                "unreduced/scan_carry"]


# Programs XLA's GSPMD partitioner aborts on (a CHECK failure in
# hlo_sharding_util.cc, GetManualSubgroupSharding: an all_gather or
# all_to_all over a shard_map's manual axis of a value split over an
# automatic one), left out of the GSPMD run, whose reference would die.
GSPMD_ABORTS = {"shard_map/auto_all_gather", "shard_map/auto_all_to_all"}


def program_names(count: int, gspmd: bool = False) -> list[str]:
    """The programs on `count` devices (`gspmd`: those run as GSPMD
    programs too)."""
    names = []
    for family in FAMILY_NAMES:
        for layout in _layouts(count):
            if layout in LAYOUTS_2D and family not in FAMILIES_2D:
                continue
            names.append(f"{family}/{layout}")
    names += EXTRA_NAMES
    if count >= 4:
        names += EXTRA_NAMES_2D
    if gspmd:
        names = [name for name in names if name not in GSPMD_ABORTS]
    return names


def _programs(count: int):
    """name -> a function returning (the program's outputs as jax values)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    n = count
    devices = np.array(jax.devices())
    meshes = {"1d": Mesh(devices, ("x",))}
    if n >= 4:
        meshes["2d"] = Mesh(devices.reshape(2, n // 2), ("x", "y"))

    def put(array, mesh, spec):
        spec = tuple(spec)[: np.ndim(array)]
        return jax.device_put(array, NamedSharding(mesh, P(*spec)))

    programs = {}
    families = _families()
    assert sorted(families) == sorted(FAMILY_NAMES), sorted(set(families) ^ set(FAMILY_NAMES))
    layouts = _layouts(n)
    for family in FAMILY_NAMES:
        fn, builders, specs_of = families[family]
        for layout, (mesh_name, spec) in layouts.items():
            name = f"{family}/{layout}"
            if layout in LAYOUTS_2D and family not in FAMILIES_2D:
                continue

            def run(fn=fn, builders=builders, specs_of=specs_of, mesh=meshes[mesh_name],
                    spec=spec):
                arrays = [build(n) for build in builders]
                args = [put(a, mesh, s) for a, s in zip(arrays, specs_of(spec))]
                return jax.jit(fn)(*args)

            programs[name] = run

    mesh1 = meshes["1d"]
    rows, cols, rep = (NamedSharding(mesh1, P("x")), NamedSharding(mesh1, P(None, "x")),
                       NamedSharding(mesh1, P()))
    a = np.random.default_rng(0).standard_normal((4 * n, 2 * n)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((2 * n, 2 * n)).astype(np.float32)
    wsc = jax.lax.with_sharding_constraint

    extra = {
        "constraint/rows_to_cols": lambda: jax.jit(
            lambda x: jnp.cos(wsc(jnp.sin(x), cols)) * 2)(jax.device_put(a, rows)),
        "constraint/cols_to_rows": lambda: jax.jit(
            lambda x: wsc(x @ w, rows).sum(1))(jax.device_put(a, cols)),
        "constraint/to_replicated": lambda: jax.jit(
            lambda x: wsc(x * 2, rep) + 1)(jax.device_put(a, rows)),
        "constraint/from_replicated": lambda: jax.jit(
            lambda x: jnp.exp(wsc(x, rows)) - 1)(jax.device_put(a, rep)),
        # Open dimensions ({?}) keep what the value has.
        "constraint/open_dims": lambda: jax.jit(lambda x: wsc(
            x.T * 2, NamedSharding(mesh1, P(P.UNCONSTRAINED, P.UNCONSTRAINED))))(
                jax.device_put(a, rows)),
        "out_shardings/cols": lambda: jax.jit(lambda x: x * 3, out_shardings=cols)(
            jax.device_put(a, rows)),
        "out_shardings/replicated": lambda: jax.jit(lambda x: (x @ w).sum(0),
                                                    out_shardings=rep)(jax.device_put(a, rows)),
        "out_shardings/rows_from_replicated": lambda: jax.jit(
            lambda x: jnp.tanh(x), out_shardings=rows)(jax.device_put(a, rep)),
        "random/normal_rows": lambda: jax.jit(
            lambda k: jax.random.normal(k, (4 * n, 2 * n)), out_shardings=rows)(
                jax.random.key(3)),
        "random/uniform_cols": lambda: jax.jit(
            lambda k: jax.random.uniform(k, (4 * n, 2 * n)), out_shardings=cols)(
                jax.random.key(4)),
        # Made on the output's tiles through ops that leave the split
        # dimension alone (backward propagation through them).
        "out_shardings/concatenate_rows": lambda: jax.jit(
            lambda k: jnp.concatenate([jax.random.normal(k, (4 * n, 2 * n)),
                                       jnp.ones((4 * n, 3))], axis=1), out_shardings=rows)(
                jax.random.key(7)),
        "out_shardings/pad_slice_reverse_rows": lambda: jax.jit(
            lambda k: jnp.pad(jax.random.normal(k, (4 * n, 2 * n))[:, 1:][:, ::-1],
                              ((0, 0), (2, 1))), out_shardings=rows)(jax.random.key(8)),
        "random/bits_replicated": lambda: jax.jit(
            lambda k, x: jax.random.bits(k, (4 * n, 2 * n)) ^ (x > 0).astype(jnp.uint32))(
                jax.random.key(5), jax.device_put(a, rows)),
        # JAX refuses arguments and results whose dimensions a sharding does
        # not divide; inside a program a constraint may still split unevenly.
        "uneven/rows": lambda: jax.jit(lambda x: jnp.sin(wsc(x[: n + 1] * 2, rows)) + 1)(
            jax.device_put(a, rows)),
        "uneven/cols_sum": lambda: jax.jit(lambda x: wsc(x[:, : n + 3], cols).sum(0) * 2)(
            jax.device_put(a, cols)),
        "uneven/matmul": lambda: jax.jit(lambda x, y: (wsc(x[: 2 * n + 1], rows) @ y).sum(1))(
            jax.device_put(a, rows), jax.device_put(w, rep)),
        # On padded tiles: a reduction or contraction along the padded
        # dimension first masks the padding (NaN here: log of negatives).
        "uneven/max_rows": lambda: jax.jit(lambda x: wsc(x[: n + 1] - 3, rows).max(0))(
            jax.device_put(a, rows)),
        "uneven/log_sum": lambda: jax.jit(
            lambda x: jnp.log(wsc(x[: n + 1] - 100, rows)).sum(0))(jax.device_put(a, rows)),
        "uneven/contract": lambda: jax.jit(lambda x, y: wsc(x[:, : n + 3], cols) @ y[: n + 3])(
            jax.device_put(a, rows), jax.device_put(w, rep)),
        "uneven/argmax": lambda: jax.jit(
            lambda x: jnp.argmax(wsc(x[: n + 1], rows), axis=1) + jnp.argmax(
                wsc(x[: n + 1], rows), axis=0).sum())(jax.device_put(a, rows)),
        "uneven/transpose_broadcast": lambda: jax.jit(
            lambda x: (jnp.tanh(wsc(x[: n + 1, 0], rows))[:, None] * x[: n + 1]).T.sum(0))(
                jax.device_put(a, rows)),
        "uneven/int_divide": lambda: jax.jit(
            lambda x: (wsc((x[: n + 1] * 10).astype(jnp.int32), rows) // 3).sum(0))(
                jax.device_put(a, rows)),
        "uneven/call": lambda: jax.jit(
            lambda x: jax.jit(lambda v: jnp.exp(v) * 2)(wsc(x[: n + 1], rows)).sum())(
                jax.device_put(a, rows)),
        # Two rows over n devices: most devices hold nothing but padding.
        "uneven/mostly_padding": lambda: jax.jit(lambda x: jnp.cos(wsc(x[:2, :3], rows)).sum(0))(
            jax.device_put(a, rows)),
    }
    if n >= 4:
        mesh2 = meshes["2d"]
        x_y = NamedSharding(mesh2, P("x", "y"))
        y_only = NamedSharding(mesh2, P(None, "y"))
        extra.update({
            "constraint/x_to_y": lambda: jax.jit(lambda x: wsc(x * 2, y_only).sum(0))(
                jax.device_put(a, x_y)),
            "out_shardings/x_y": lambda: jax.jit(lambda x: x @ w, out_shardings=x_y)(
                jax.device_put(a, NamedSharding(mesh2, P("x")))),
            "random/normal_x_y": lambda: jax.jit(
                lambda k: jax.random.normal(k, (4 * n, 2 * n)), out_shardings=x_y)(
                    jax.random.key(6)),
            # A shard_map over "y" inside one over "x": the inner result is
            # gathered among the devices that share an "x" coordinate.
            "shard_map/nested": lambda: jax.jit(jax.shard_map(
                lambda x: jax.shard_map(lambda v: jnp.sin(v) * v, in_specs=P("y"),
                                        out_specs=P("y"), axis_names={"y"})(x).sum(0),
                mesh=mesh2, in_specs=P("x"), out_specs=P("x"), axis_names={"x"}))(
                    jax.device_put(a, x_y)),
            # A constraint over the axis a shard_map leaves automatic, in its
            # body: the result takes it through the open out_sharding.
            "shard_map/auto_constraint": lambda: jax.jit(jax.shard_map(
                lambda v: wsc(v * v, NamedSharding(mesh2, P("x"))), mesh=mesh2, in_specs=P(),
                out_specs=P(), check_vma=False, axis_names={"y"}))(jax.device_put(a, x_y)),
            # An operand split over the axis a shard_map leaves automatic
            # enters its body as those tiles; the result keeps them.
            "shard_map/auto_operand": lambda: jax.jit(jax.shard_map(
                lambda v: jnp.tanh(v) * 2 + v.sum(1, keepdims=True), mesh=mesh2,
                in_specs=P("x"), out_specs=P("x"), axis_names={"x"}))(jax.device_put(a, x_y)),
            "shard_map/auto_matmul": lambda: jax.jit(jax.shard_map(
                lambda v, u: jax.lax.psum((jnp.sin(v) @ u).sum(0, keepdims=True), "x")
                + jnp.sin(v) @ u, mesh=mesh2, in_specs=(P("x"), P()), out_specs=P("x"),
                axis_names={"x"}))(jax.device_put(a, x_y), jax.device_put(w, y_only)),
            # Collectives over the manual axis of values split over the
            # automatic one run on those tiles.
            "shard_map/auto_all_gather": lambda: jax.jit(jax.shard_map(
                lambda v: jax.lax.all_gather(jnp.sin(v), "x", axis=0, tiled=True) * 2,
                mesh=mesh2, in_specs=P("x"), out_specs=P(), axis_names={"x"},
                check_vma=False))(jax.device_put(a, x_y)),
            "shard_map/auto_psum_scatter": lambda: jax.jit(jax.shard_map(
                lambda v: jax.lax.psum_scatter(jnp.sin(v), "x", scatter_dimension=0, tiled=True),
                mesh=mesh2, in_specs=P("x"), out_specs=P("x"), axis_names={"x"},
                check_vma=False))(jax.device_put(a, x_y)),
            "shard_map/auto_all_to_all": lambda: jax.jit(jax.shard_map(
                lambda v: jax.lax.all_to_all(jnp.sin(v), "x", 0, 0, tiled=True),
                mesh=mesh2, in_specs=P("x"), out_specs=P("x"), axis_names={"x"},
                check_vma=False))(jax.device_put(a, x_y)),
            "uneven/x_y": lambda: jax.jit(lambda x: jnp.cos(wsc(x[:5, : n + 1], x_y)).sum())(
                jax.device_put(a, x_y)),
        })
    def explicit(shape, names):
        from jax.sharding import AxisType
        return jax.make_mesh(shape, names, axis_types=(AxisType.Explicit,) * len(names))

    def explicit_vmap_grad():
        # shard_map_test's test_explicit_vmap_grad_shmap: a constraint over
        # the automatic axis in a body whose result leaves whole over it.
        mesh = explicit((2, n // 2), ("x", "y"))
        with jax.set_mesh(mesh):
            def g(x):
                x = jax.sharding.reshard(x, P("y"))
                return jax.shard_map(jnp.cos, in_specs=P("y"), out_specs=P("y"),
                                     axis_names={"y"})(x).sum()
            return jax.jit(jax.vmap(jax.grad(g)))(jax.device_put(a, P("x", None)))

    def unreduced_einsum():
        mesh = explicit((n,), ("x",))
        with jax.set_mesh(mesh):
            x = jax.device_put(a[:4], P(None, "x"))
            y = jax.device_put(w[:, :4], P("x", None))
            out = jax.jit(lambda x, y: jnp.einsum(
                "ab,bc->ac", x, y, out_sharding=P(None, None, unreduced={"x"})))(x, y)
            return Partials(out), jax.sharding.reshard(out, P(None, None))

    def unreduced_einsum_add(resharded):
        mesh = explicit((2, n // 2), ("x", "y"))
        with jax.set_mesh(mesh):
            x = jax.device_put(a, P("x", "y"))
            y = jax.device_put(w, P("y", None))

            @jax.jit
            def f(x, y):
                m1 = jnp.einsum("ab,bc->ac", x, y, out_sharding=P("x", unreduced={"y"}))
                m2 = jnp.einsum("ab,bc->ac", x * 2, y, out_sharding=P("x", unreduced={"y"}))
                total = m1 + m2
                return jax.sharding.reshard(total, P("x")) if resharded else total
            out = f(x, y)
            return out if resharded else Partials(out)

    def unreduced_segment_sum():
        # A scatter-add of row-split data: each device adds its own rows.
        mesh = explicit((n,), ("x",))
        with jax.set_mesh(mesh):
            data = jax.device_put(a[:, 0], P("x"))
            ids = jax.device_put((np.arange(4 * n) * 7) % 5, P("x"))
            f = jax.jit(lambda d, i, out: jax.ops.segment_sum(d, i, num_segments=5,
                                                              out_sharding=out),
                        static_argnums=2)
            out = f(data, ids, P(None, unreduced={"x"}))
            return Partials(out), jax.sharding.reshard(out, P(None)), f(data, ids, P(None))

    def unreduced_from_tiles():
        # Row tiles made partial sums: each tile in zeros, no communication.
        mesh = explicit((n,), ("x",))
        with jax.set_mesh(mesh):
            x = jax.device_put(a, P("x"))
            out = jax.jit(lambda x: x * 2, out_shardings=P(unreduced={"x"}))(x)
            return Partials(out)

    def unreduced_scan_carry():
        # Gradients accumulated as partial sums through a loop, summed once.
        mesh = explicit((n,), ("x",))
        with jax.set_mesh(mesh):
            ws = tuple(jax.device_put(w[:, :4] * s, P(reduced={"x"})) for s in (1.0, 0.5))
            xs = jax.device_put(a.reshape(2, 2 * n, 2 * n), P(None, "x", None))

            def loss(ws, x):
                return jnp.sum(jnp.tanh(x @ ws[0]) * (x @ ws[1]))

            @jax.jit
            def step(ws, xs):
                def body(acc, x):
                    grads = jax.grad(loss)(ws, x)
                    return jax.tree.map(jnp.add, acc, grads), None
                acc = jax.tree.map(jnp.zeros_like, ws)
                acc = jax.sharding.reshard(acc, P(unreduced={"x"}))
                acc, _ = jax.lax.scan(body, acc, xs)
                return acc, jax.sharding.reshard(acc, P())
            partial, summed = step(ws, xs)
            return [Partials(p) for p in partial] + list(summed)

    extra["unreduced/einsum"] = unreduced_einsum
    extra["unreduced/segment_sum"] = unreduced_segment_sum
    extra["unreduced/from_tiles"] = unreduced_from_tiles
    extra["unreduced/scan_carry"] = unreduced_scan_carry
    if n >= 4:
        extra["unreduced/einsum_add"] = lambda: unreduced_einsum_add(False)
        extra["unreduced/reshard"] = lambda: unreduced_einsum_add(True)
        extra["shard_map/explicit_vmap_grad"] = explicit_vmap_grad
    programs.update(extra)
    return programs


class Partials:
    """An array of partial sums: each device's shard is its own summand."""

    def __init__(self, value):
        self.value = value


def _held(value) -> list:
    """Which slice of `value` each device holds, by device id."""
    indices = value.sharding.devices_indices_map(value.shape)
    held = []
    for device in sorted(indices, key=lambda d: d.id):
        held.append([[s.start, s.stop] if isinstance(s, slice) else s
                     for s in indices[device]])
    return held


def main(count: int, path: str) -> None:
    import jax

    gspmd = os.environ.get("SHARDED_PROGRAMS_GSPMD") == "1"
    if gspmd:
        # The same programs as GSPMD writes them (mhlo.sharding, no Shardy).
        jax.config.update("jax_use_shardy_partitioner", False)

    assert jax.device_count() == count, (jax.device_count(), count)
    programs = _programs(count)
    names = program_names(count, gspmd)
    assert sorted(programs) == sorted(program_names(count)), sorted(
        set(programs) ^ set(program_names(count)))
    arrays, shardings, errors = {}, {}, {}
    for name in names:
        try:
            outputs = programs[name]()
            outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
            for i, value in enumerate(jax.tree_util.tree_leaves(
                    outputs, is_leaf=lambda v: isinstance(v, Partials))):
                key = f"{name}/{i}"
                if isinstance(value, Partials):
                    value = value.value
                    shards = sorted(value.addressable_shards, key=lambda s: s.device.id)
                    arrays[key] = np.stack([np.asarray(s.data) for s in shards])
                    shardings[key] = [str(value.sharding.spec)] + [
                        list(s.data.shape) for s in shards]
                    continue
                arrays[key] = np.asarray(value)
                shardings[key] = _held(value)
        except Exception:  # noqa: BLE001 - reported per program
            errors[name] = traceback.format_exc(limit=4)
    np.savez(path, **arrays)
    with open(path + ".json", "w") as f:
        json.dump({"shardings": shardings, "errors": errors}, f)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
