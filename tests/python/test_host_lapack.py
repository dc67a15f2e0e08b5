"""SciPy's LAPACK lent to Kiln (kiln_pjrt/host_lapack.py, kernels/lapack.h).

In this process Kiln's package lent the plugin SciPy's getrf, potrf, trsm,
geqrf, orgqr/ungqr and syevd/heevd when JAX initialized it, as jaxlib lends
them to XLA's CPU backend: factorizations of 32 or more rows run on them.
The same library gives the same LU, QR and eigendecomposition as XLA's CPU
backend bit for bit; Cholesky and triangular solves agree to rounding, in
every triangle, side and transposition. With KILN_LAPACK=0 nothing is lent and Kiln's own
kernels give the same results within tolerance."""

import json

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import kiln_pjrt
from kiln_pjrt import host_lapack

_random = np.random.RandomState(7)
TYPES = (np.float32, np.float64, np.complex64, np.complex128)


def _general(n, m=None, dtype=np.float32):
    a = _random.randn(n, m or n)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * _random.randn(n, m or n)
    return a.astype(dtype)


def _on(platform, fn, *args):
    device = jax.devices(platform)[0] if platform != "kiln" else jax.devices()[0]
    with jax.enable_x64(True):
        return jax.tree_util.tree_map(np.asarray,
                                      jax.jit(fn)(*jax.device_put(args, device)))


def test_scipy_lapack_was_lent_and_can_be_lent_again():
    # Registering again replaces the same functions: every routine is taken.
    taken = host_lapack.lend(kiln_pjrt.library_path())
    want = [p + r for p in "sdcz" for r in ("getrf", "potrf", "trsm", "geqrf", "gesdd")]
    want += ["sorgqr", "dorgqr", "cungqr", "zungqr", "ssyevd", "dsyevd", "cheevd", "zheevd"]
    assert sorted(taken) == sorted(want)


def test_a_library_without_the_export_is_lent_nothing(tmp_path):
    # An older Kiln build (KILN_LIBRARY_PATH) or no library at all: JAX still
    # initializes the plugin, on Kiln's own kernels.
    import ctypes.util

    assert host_lapack.lend(str(tmp_path / "missing.so")) == []
    assert host_lapack.lend(ctypes.util.find_library("m") or "libm.so.6") == []


def test_unknown_or_null_functions_are_refused():
    import ctypes

    register = ctypes.CDLL(kiln_pjrt.library_path()).KilnRegisterHostFunction
    register.restype, register.argtypes = ctypes.c_int, [ctypes.c_char_p, ctypes.c_void_p]
    assert register(b"sgesvd", 1234) == 0  # not a routine Kiln calls
    assert register(b"sgetrf", None) == 0
    assert register(None, 1234) == 0
    assert host_lapack.lend(kiln_pjrt.library_path())  # the real ones are back


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
def test_lu_is_xlas_bit_for_bit(dtype):
    a = _general(96, 80, dtype)
    lu = lambda x: jax.lax.linalg.lu(x)
    kiln = _on("kiln", lu, a)
    cpu = _on("cpu", lu, a)
    for got, want in zip(kiln, cpu):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_in_either_triangle(dtype, lower):
    a = _general(70, dtype=dtype)
    spd = a @ np.conj(a.T) + 70 * np.eye(70, dtype=dtype)
    # The upper factor: U = L^H of the same matrix, read from its upper triangle.
    fn = lambda x: jax.lax.linalg.cholesky(x, symmetrize_input=False)
    if not lower:
        fn = lambda x: jnp.conj(jax.lax.linalg.cholesky(jnp.conj(x.T), symmetrize_input=False).T)
    kiln, cpu = _on("kiln", fn, spd), _on("cpu", fn, spd)
    tolerance = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(kiln, cpu, rtol=tolerance, atol=tolerance * 10)
    # Not positive definite: NaN where XLA's CPU backend has NaN.
    broken = spd.copy()
    broken[5, 5] = -1
    kiln = _on("kiln", jax.lax.linalg.cholesky, broken)
    np.testing.assert_array_equal(np.isnan(kiln), np.isnan(_on("cpu", jax.lax.linalg.cholesky,
                                                                broken)))
    assert np.isnan(kiln).any()


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a,conjugate_a", [(False, False), (True, False), (True, True)])
def test_triangular_solve_every_side_triangle_and_transposition(dtype, left_side, lower,
                                                               transpose_a, conjugate_a):
    a = np.tril(_general(48, dtype=dtype)) + 48 * np.eye(48, dtype=dtype)
    if not lower:
        a = a.T.copy()
    b = _general(48, 40, dtype) if left_side else _general(40, 48, dtype)
    fn = lambda a, b: jax.lax.linalg.triangular_solve(
        a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
        conjugate_a=conjugate_a, unit_diagonal=False)
    kiln, cpu = _on("kiln", fn, a, b), _on("cpu", fn, a, b)
    tolerance = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(kiln, cpu, rtol=tolerance, atol=tolerance)


def test_kiln_s_own_kernels_without_the_library(run_python):
    # Small systems by substitution; from 96 rows the LU in panels and, with
    # 128 right-hand sides or more, the triangular solves in blocks, both on
    # Kiln's GEMM (kernels/solvers.cc LuBlocked, SolveLeftLarge): the
    # pivots getf2 picks, so SciPy's, and its factors to rounding.
    code = """
        import json, os
        import jax, jax.numpy as jnp, numpy as np, scipy.linalg
        import kiln_pjrt
        from kiln_pjrt import host_lapack
        rng = np.random.RandomState(3)
        a = (rng.randn(64, 64) + 8 * np.eye(64)).astype(np.float32)
        b = rng.randn(64, 5).astype(np.float32)
        big = rng.randn(200, 200)
        rhs = rng.randn(200, 150)
        lu, pivots = jax.scipy.linalg.lu_factor(big)
        want_lu, want_pivots = scipy.linalg.lu_factor(big)
        with jax.enable_x64(True):
            x = jnp.linalg.solve(big, rhs)
        print(json.dumps({"lent": host_lapack.lend(kiln_pjrt.library_path()),
                          "x": np.asarray(jnp.linalg.solve(a, b)).tolist(),
                          "want": np.linalg.solve(a.astype(np.float64), b).tolist(),
                          "lu": np.asarray(lu).tolist(), "want_lu": want_lu.tolist(),
                          "pivots": np.asarray(pivots).tolist(),
                          "want_pivots": want_pivots.tolist(),
                          "big_x": np.asarray(x).tolist(),
                          "big_want": np.linalg.solve(big, rhs).tolist()}))
    """
    out = json.loads(run_python(code, env={"KILN_LAPACK": "0"}).stdout.splitlines()[-1])
    assert out["lent"] == []
    np.testing.assert_allclose(out["x"], out["want"], rtol=1e-4, atol=1e-5)
    assert out["pivots"] == out["want_pivots"]
    np.testing.assert_allclose(out["lu"], out["want_lu"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out["big_x"], out["big_want"], rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("dtype,name", [(np.float64, "f64"), (np.complex64, "complex<f32>")])
def test_upper_cholesky_reads_the_upper_triangle(dtype, name):
    # JAX always asks for L; StableHLO's lower = false (U with A = U^H U,
    # from A's upper triangle) as other producers write it.
    from jax._src import compiler, xla_bridge
    from jax._src.lib import xla_client as xc

    n = 48
    a = _general(n, dtype=dtype)
    spd = a @ np.conj(a.T) + n * np.eye(n, dtype=dtype)
    garbage = np.triu(spd) + np.tril(np.full_like(spd, 1e30), -1)  # the lower triangle unread
    text = f"""
func.func public @main(%a: tensor<{n}x{n}x{name}>) -> tensor<{n}x{n}x{name}> {{
  %0 = stablehlo.cholesky %a, lower = false : tensor<{n}x{n}x{name}>
  return %0 : tensor<{n}x{n}x{name}>
}}"""
    backend = xla_bridge.get_backend("kiln")
    device = backend.devices()[0]
    exe = backend.compile_and_load(text, xc.DeviceList((device,)),
                                   compiler.get_compile_options(num_replicas=1, num_partitions=1))
    with jax.enable_x64(True):
        got = np.asarray(exe.execute([jax.device_put(garbage, device)])[0])
    want = np.conj(np.linalg.cholesky(spd.astype(np.complex128 if name != "f64" else np.float64)).T)
    tolerance = 1e-4 if dtype == np.complex64 else 1e-10
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * n)
    assert (np.tril(got, -1) == 0).all()


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("shape", [(80, 48), (48, 48), (40, 64)])
def test_qr_is_xlas_bit_for_bit(dtype, shape):
    a = _general(*shape, dtype=dtype)
    for mode in ("reduced", "complete"):
        qr = lambda x: jnp.linalg.qr(x, mode=mode)
        for got, want in zip(_on("kiln", qr, a), _on("cpu", qr, a)):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
def test_eigh_is_xlas(dtype):
    a = _general(64, dtype=dtype)
    hermitian = a + np.conj(a.T)
    kiln = _on("kiln", jnp.linalg.eigh, hermitian)
    cpu = _on("cpu", jnp.linalg.eigh, hermitian)
    tolerance = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_array_equal(kiln[0], cpu[0])
    np.testing.assert_array_equal(kiln[1], cpu[1])  # the same signs too
    # Either triangle (JAX symmetrizes first; the custom call reads one):
    # the same eigenvalues, and eigenvectors up to sign.
    upper = jax.jit(lambda x: jax.lax.linalg.eigh(x, lower=False, symmetrize_input=False))
    lower = jax.jit(lambda x: jax.lax.linalg.eigh(x, lower=True, symmetrize_input=False))
    with jax.enable_x64(True):
        from_upper = upper(np.triu(hermitian))
        from_lower = lower(np.tril(hermitian))
    for vectors, values in (from_upper, from_lower):  # lax.linalg.eigh: (v, w)
        np.testing.assert_allclose(np.asarray(values), kiln[0], rtol=tolerance, atol=tolerance)
        rebuilt = np.asarray(vectors) @ np.diag(np.asarray(values)) @ np.conj(np.asarray(vectors).T)
        np.testing.assert_allclose(rebuilt, hermitian, rtol=tolerance, atol=tolerance * 64)
    broken = hermitian.copy()
    broken[3, 1] = np.nan
    assert np.isnan(_on("kiln", jnp.linalg.eigh, broken)[0]).all()


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("shape", [(40, 24), (24, 40), (3, 5, 8)])
def test_svd_is_gesdd_as_on_xla(dtype, shape):
    a = _random.randn(*shape) + (1j * _random.randn(*shape) if np.issubdtype(dtype, np.complexfloating)
                                 else 0)
    a = a.astype(dtype)
    for kwargs in ({"full_matrices": True}, {"full_matrices": False}, {"compute_uv": False}):
        svd = lambda x: jnp.linalg.svd(x, **kwargs)
        kiln = jax.tree_util.tree_leaves(_on("kiln", svd, a))
        cpu = jax.tree_util.tree_leaves(_on("cpu", svd, a))
        for got, want in zip(kiln, cpu):
            np.testing.assert_array_equal(got, want)  # the same library, the same call
    text = jax.jit(jnp.linalg.svd).lower(a[..., :4, :3]).as_text()
    assert "Svd" in text


def test_svd_without_lapack_is_jaxs_generic_svd(run_python):
    code = """
        import json
        import jax, jax.numpy as jnp, numpy as np
        a = np.random.RandomState(1).randn(6, 4).astype(np.float32)
        s = jnp.linalg.svd(a, compute_uv=False)
        print(json.dumps({"custom": "Svd" in jax.jit(jnp.linalg.svd).lower(a).as_text(),
                          "s": np.asarray(s).tolist(),
                          "want": np.linalg.svd(a, compute_uv=False).tolist()}))
    """
    out = json.loads(run_python(code, env={"KILN_LAPACK": "0"}).stdout.splitlines()[-1])
    assert not out["custom"]
    np.testing.assert_allclose(out["s"], out["want"], rtol=1e-5, atol=1e-5)
