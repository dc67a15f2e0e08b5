"""Multi-device JAX programs for test_multidevice.py, run on Kiln and on the
CPU backend with the same device count (a fresh interpreter per platform and
count). Run as a script: `python multidevice_cases.py OUT.npz` saves every
case's outputs (arrays, and the output shardings' specs as strings) and the
errors of cases that raised.

Every case is a function of the device count returning a dict of named
numpy arrays; cases that need a device count they do not have return None.
"""

from __future__ import annotations

import json
import sys
import traceback
from functools import partial

import numpy as np


# The cases _cases() builds, by name (test_multidevice.py parametrizes over them).
NAMES = [
    "pmap_psum_guide", "pmap_psum", "pmap_pmax", "pmap_pmin", "pmap_pmean", "pmap_all_gather",
    "pmap_psum_scatter", "pmap_all_to_all", "pmap_ppermute_and_axis_index",
    "pmap_grad_of_a_psum_loss", "shard_map_1d_collectives", "shard_map_2d_collectives",
    "shard_map_tensor_parallel_matmul", "jit_named_shardings_1d", "jit_named_shardings_2d",
    "device_put_between_shardings", "data_parallel_training_step", "jit_ops_on_tiles_1d",
    "jit_ops_on_tiles_2d", "jit_output_shardings_follow_the_inputs",
]


def _cases():
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    n = jax.device_count()
    devices = np.array(jax.devices())
    mesh1 = Mesh(devices, ("x",))
    mesh2 = Mesh(devices.reshape(2, n // 2), ("x", "y")) if n >= 4 else None

    def ints(*shape):
        return np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)

    def floats(*shape, seed=0):
        return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

    def spec(array):
        sharding = array.sharding
        return np.array(str(getattr(sharding, "spec", sharding)))

    def out(**arrays):
        """Outputs and the shardings JAX reports for them."""
        result = {}
        for name, value in arrays.items():
            result[name] = np.asarray(value)
            if isinstance(value, jax.Array):
                result[name + ".spec"] = spec(value)
        return result

    def values(**arrays):
        """Outputs whose sharding the program leaves to the compiler: XLA
        propagates one, Kiln returns them whole; only values are compared."""
        return {name: np.asarray(value) for name, value in arrays.items()}

    cases = {}

    def case(fn):
        cases[fn.__name__] = fn
        return fn

    # pmap (jit over shard_map in this JAX) with each collective.
    @case
    def pmap_psum_guide():
        return out(y=jax.pmap(lambda x: x + jax.lax.psum(x, "i"), axis_name="i")(jnp.arange(n)))

    for name, fn in [("psum", jax.lax.psum), ("pmax", jax.lax.pmax),
                     ("pmin", jax.lax.pmin), ("pmean", jax.lax.pmean)]:
        def make(fn=fn):
            return lambda: out(
                y=jax.pmap(lambda x: fn(x, "i"), axis_name="i")(floats(n, 3)),
                k=jax.pmap(lambda x: fn(x, "i"), axis_name="i")(ints(n, 2) - 3))
        cases[f"pmap_{name}"] = make()

    @case
    def pmap_all_gather():
        x = floats(n, 2, 3)
        return out(stacked=jax.pmap(lambda v: jax.lax.all_gather(v, "i"), axis_name="i")(x),
                   tiled=jax.pmap(lambda v: jax.lax.all_gather(v, "i", tiled=True),
                                  axis_name="i")(x),
                   axis1=jax.pmap(lambda v: jax.lax.all_gather(v, "i", axis=1),
                                  axis_name="i")(x))

    @case
    def pmap_psum_scatter():
        x = floats(n, n, 3)
        return out(plain=jax.pmap(lambda v: jax.lax.psum_scatter(v, "i"), axis_name="i")(x),
                   tiled=jax.pmap(lambda v: jax.lax.psum_scatter(v, "i", tiled=True),
                                  axis_name="i")(x))

    @case
    def pmap_all_to_all():
        x = ints(n, n, 2)
        return out(y=jax.pmap(lambda v: jax.lax.all_to_all(v, "i", 0, 0), axis_name="i")(x),
                   z=jax.pmap(lambda v: jax.lax.all_to_all(v, "i", 0, 1, tiled=True),
                              axis_name="i")(x))

    @case
    def pmap_ppermute_and_axis_index():
        ring = [(i, (i + 1) % n) for i in range(n)]
        half = [(i, i + 1) for i in range(0, n - 1, 2)]
        f = jax.pmap(lambda v: (jax.lax.ppermute(v, "i", ring), jax.lax.ppermute(v, "i", half),
                                jax.lax.axis_index("i")), axis_name="i")
        shifted, partial_shift, index = f(floats(n, 4))
        return out(shifted=shifted, partial=partial_shift, index=index)

    @case
    def pmap_grad_of_a_psum_loss():
        w = floats(3, seed=1)
        x = floats(n, 5, 3, seed=2)
        def loss(w, x):
            return jax.lax.psum(jnp.sum(jnp.tanh(x @ w) ** 2), "i")
        g = jax.pmap(jax.grad(loss), axis_name="i", in_axes=(None, 0))(w, x)
        return out(g=g)

    # shard_map on a 1-D mesh.
    def smap(fn, mesh, in_specs, out_specs, check_vma=True):
        return jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                                     check_vma=check_vma))

    @case
    def shard_map_1d_collectives():
        x = floats(n * n, 3)
        results = {}
        results["psum"] = smap(lambda v: jax.lax.psum(v, "x"), mesh1, P("x"), P())(x)
        results["gather"] = smap(lambda v: jax.lax.all_gather(v, "x", tiled=True), mesh1,
                                 P("x"), P(), check_vma=False)(x)
        results["scatter"] = smap(lambda v: jax.lax.psum_scatter(v, "x", tiled=True), mesh1,
                                  P(), P("x"))(x)
        results["permute"] = smap(
            lambda v: jax.lax.ppermute(v, "x", [(i, (i + 1) % n) for i in range(n)]),
            mesh1, P("x"), P("x"))(x)
        results["all_to_all"] = smap(
            lambda v: jax.lax.all_to_all(v, "x", 0, 0, tiled=True), mesh1, P("x"), P("x"))(x)
        results["index"] = smap(lambda v: v + jax.lax.axis_index("x"), mesh1, P("x"), P("x"))(x)
        return out(**results)

    @case
    def shard_map_2d_collectives():
        if mesh2 is None:
            return None
        x = floats(4, 2 * n)
        both = P("x", "y")
        results = {}
        results["psum_x"] = smap(lambda v: jax.lax.psum(v, "x"), mesh2, both, P(None, "y"))(x)
        results["psum_y"] = smap(lambda v: jax.lax.psum(v, "y"), mesh2, both, P("x", None))(x)
        results["psum_xy"] = smap(lambda v: jax.lax.psum(v, ("x", "y")), mesh2, both, P())(x)
        results["gather_y"] = smap(lambda v: jax.lax.all_gather(v, "y", axis=1, tiled=True),
                                   mesh2, both, P("x", None), check_vma=False)(x)
        results["permute_x"] = smap(lambda v: jax.lax.ppermute(v, "x", [(0, 1), (1, 0)]),
                                    mesh2, both, both)(x)
        results["index"] = smap(
            lambda v: v + 10 * jax.lax.axis_index("x") + jax.lax.axis_index("y"),
            mesh2, both, both)(x)
        results["pmax_y"] = smap(lambda v: jax.lax.pmax(v, "y"), mesh2, both, P("x", None))(x)
        results["scatter_y"] = smap(
            lambda v: jax.lax.psum_scatter(v, "y", scatter_dimension=1, tiled=True),
            mesh2, P("x", None), P("x", "y"))(x)
        results["all_to_all_y"] = smap(
            lambda v: jax.lax.all_to_all(v, "y", 1, 0, tiled=True), mesh2, P(None, "y"),
            P("y", None))(floats(n, n * n // 2))
        # Only "x" manual: the body sees whole columns, "y" stays automatic.
        results["auto_y"] = jax.jit(jax.shard_map(
            lambda v: jax.lax.psum(v * 2, "x"), mesh=mesh2, in_specs=P("x"), out_specs=P(),
            axis_names={"x"}))(x)
        # A sharding constraint on the automatic axis inside the body, and
        # one on the result: the body's values are the devices' own tiles
        # along "x" (constraints there must not cut them as tiles of the
        # whole mesh).
        def constrained(v):
            v = jax.lax.with_sharding_constraint(v, P(None, "y"))
            return v * v

        results["auto_y_constrained"] = jax.jit(lambda v: jax.lax.with_sharding_constraint(
            jax.shard_map(constrained, mesh=mesh2, in_specs=P("x", None),
                          out_specs=P("x", None), axis_names={"x"})(v),
            NamedSharding(mesh2, P("x", "y"))))(x)
        return out(**results)

    @case
    def shard_map_tensor_parallel_matmul():
        x = floats(8, 4 * n)
        w = floats(4 * n, 6, seed=3)
        f = smap(lambda a, b: jax.lax.psum(a @ b, "x"), mesh1, (P(None, "x"), P("x", None)), P())
        return out(y=f(x, w))

    # jit with NamedSharding inputs and outputs.
    def put(x, mesh, spec_):
        return jax.device_put(x, NamedSharding(mesh, spec_))

    @case
    def jit_named_shardings_1d():
        x = floats(2 * n, 3)
        f = jax.jit(lambda a: jnp.sin(a) * 2 + a.sum(0))
        free = {}
        for name, spec_ in [("replicated", P()), ("rows", P("x")), ("cols", P(None, None))]:
            free[name] = f(put(x, mesh1, spec_))
        given = jax.jit(lambda a: a @ a.T, out_shardings=NamedSharding(mesh1, P()))(
            put(x, mesh1, P("x")))
        rows = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh1, P("x")))(
            put(x, mesh1, P()))
        return {**values(**free), **out(rows_to_replicated=given, replicated_to_rows=rows)}

    @case
    def jit_named_shardings_2d():
        if mesh2 is None:
            return None
        x = floats(4, n)
        f = jax.jit(lambda a: jnp.exp(a) - a.mean())
        free = {}
        for name, spec_ in [("both", P("x", "y")), ("dim0", P("x", None)),
                            ("dim1", P(None, "y")), ("partial", P("y", None)),
                            ("replicated", P())]:
            free[name] = f(put(x, mesh2, spec_))
        free["constraint"] = jax.jit(lambda a: jax.lax.with_sharding_constraint(
            a * 3, NamedSharding(mesh2, P(None, "x"))) + 1)(put(x, mesh2, P("x", "y")))
        matmul = jax.jit(
            lambda a, b: a @ b, out_shardings=NamedSharding(mesh2, P("x", "y")))(
                put(floats(4, 6), mesh2, P("x", None)), put(floats(6, n, seed=4), mesh2,
                                                          P(None, "y")))
        return {**values(**free), **out(matmul=matmul)}

    @case
    def device_put_between_shardings():
        x = floats(2 * n, 4)
        a = put(x, mesh1, P("x"))
        b = jax.device_put(a, NamedSharding(mesh1, P()))
        c = jax.device_put(b, NamedSharding(mesh1, P(None, "x"))) if 4 % n == 0 else b
        return out(b=b, c=c, shards=np.stack([np.asarray(s.data) for s in a.addressable_shards]))

    @case
    def data_parallel_training_step():
        rng = np.random.default_rng(7)
        params = {"w1": rng.standard_normal((4, 8)).astype(np.float32) * 0.3,
                  "b1": np.zeros(8, np.float32),
                  "w2": rng.standard_normal((8, 2)).astype(np.float32) * 0.3}
        xb = rng.standard_normal((4 * n, 4)).astype(np.float32)
        yb = rng.standard_normal((4 * n, 2)).astype(np.float32)

        def loss(p, x, y):
            h = jnp.tanh(x @ p["w1"] + p["b1"])
            return jnp.mean((h @ p["w2"] - y) ** 2)

        @jax.jit
        def step(p, x, y):
            l, g = jax.value_and_grad(loss)(p, x, y)
            return l, jax.tree.map(lambda a, b: a - 0.1 * b, p, g)

        p = jax.device_put(params, NamedSharding(mesh1, P()))
        x = put(xb, mesh1, P("x"))
        y = put(yb, mesh1, P("x"))
        losses = []
        for _ in range(3):
            l, p = step(p, x, y)
            losses.append(l)
        return values(losses=np.array([float(v) for v in losses]), w1=p["w1"], w2=p["w2"])

    # Ops Kiln computes on the tiles of sharded inputs (lower_on_tiles.cc):
    # pointwise ops, broadcasts, transposes, contractions and reductions
    # with sharded batch, free and contracting dimensions.
    def tile_ops(a, b, v, i):
        return {
            "chain": jnp.where(a > 0, jnp.exp(-a) * 2, a - 1).astype(jnp.float32),
            "broadcast": a * v[None, :] + v[None, :],
            "transpose": (a.T * 3).T + 1,
            "rowsum": a.sum(axis=1),
            "colsum": a.sum(axis=0),
            "total": a.sum(),
            "max": jnp.max(a, axis=0),
            "imax": jnp.max(i, axis=1),
            "isum": i.sum(axis=0),
            "matmul": a @ b,
            "gram": a.T @ a,
            "outer": jnp.einsum("ij,kj->ik", a, a),
            "batched": jnp.einsum("bij,bjk->bik", a.reshape(a.shape[0], 1, -1),
                                  b.reshape(1, b.shape[0], -1).repeat(a.shape[0], 0)),
            "mean_sq": jnp.mean((a @ b) ** 2),
            "split": (a.reshape(a.shape[0] // 2, 2, -1) * 2).sum(1),
            "merge": a.reshape(-1) * 3,
            "unit": a.reshape(1, a.shape[0], 1, -1) + 1,
        }

    def on_tiles(mesh, arrays, layouts):
        """tile_ops on `arrays` put on `mesh` by each layout's specs."""
        f = jax.jit(tile_ops)
        result = {}
        for name, specs in layouts:
            args = [put(array, mesh, spec_) for array, spec_ in zip(arrays, specs)]
            for key, value in f(*args).items():
                result[f"{name}.{key}"] = value
        return values(**result)

    @case
    def jit_ops_on_tiles_1d():
        arrays = (floats(4 * n, 8), floats(8, 6, seed=1), floats(8, seed=2),
                  ints(4 * n, 8) % 17 - 8)
        cols = P(None, "x") if 8 % n == 0 else P()
        return on_tiles(mesh1, arrays, [
            ("rows", (P("x"), P(), P(), P("x"))),
            ("cols", (cols, P("x") if 8 % n == 0 else P(), P(), cols)),
            ("mixed", (P("x"), P(), P(), P()))])

    @case
    def jit_ops_on_tiles_2d():
        if mesh2 is None:
            return None
        arrays = (floats(4 * n, 2 * n), floats(2 * n, 6, seed=1), floats(2 * n, seed=2),
                  ints(4 * n, 2 * n) % 13)
        return on_tiles(mesh2, arrays, [
            ("both", (P("x", "y"), P("y"), P("y"), P("x", "y"))),
            ("rows_xy", (P(("x", "y")), P(), P(), P(("x", "y")))),
            ("cols_y", (P(None, "y"), P("y", None), P(), P(None, "y")))])

    # Results the program leaves to the compiler: Kiln returns the tiles it
    # computed, with the sharding XLA's propagation gives them.
    @case
    def jit_output_shardings_follow_the_inputs():
        x = put(floats(4 * n, 4), mesh1, P("x"))
        programs = {"pointwise": lambda a: jnp.sin(a) * 2, "rowsum": lambda a: a.sum(1),
                    "colsum": lambda a: a.sum(0), "gram": lambda a: a.T @ a,
                    "outer": lambda a: a @ a.T, "scaled": lambda a: a * a.mean()}
        return out(**{name: jax.jit(f)(x) for name, f in programs.items()})

    return cases


def assert_same_values(expected, actual, key):
    """`actual` equals `expected` (within float tolerance), dtype and shape
    alike: the comparison of every multi-device test against the CPU."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, key
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5, err_msg=key)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=key)


def main(path: str) -> None:
    arrays, errors = {}, {}
    cases = _cases()
    assert sorted(cases) == sorted(NAMES), sorted(set(cases) ^ set(NAMES))
    for name, fn in cases.items():
        try:
            result = fn()
        except Exception:  # noqa: BLE001 - reported per case
            errors[name] = traceback.format_exc(limit=3)
            continue
        if result is None:
            errors[name] = "skipped: needs another device count"
            continue
        for key, value in result.items():
            arrays[f"{name}/{key}"] = value
    np.savez(path, **arrays)
    with open(path + ".errors.json", "w") as f:
        json.dump(errors, f)


if __name__ == "__main__":
    main(sys.argv[1])
