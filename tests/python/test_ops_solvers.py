"""Solvers on Kiln, checked against JAX's CPU backend (differential.py):
cholesky, triangular_solve and everything jnp.linalg / jax.scipy.linalg
builds from them for a generic platform (solve, inv, det, lu, ...), QR
through the Qr / ProductOfElementaryHouseholderReflectors custom calls,
top-k (chlo.top_k, the ApproxTopK custom call), eigh (kiln_pjrt's lowering
to the Eigh custom call) and what JAX builds from it (svd, pinv, lstsq, ...),
eig (the Eig custom call),
and batch_norm_* (which JAX never emits: those run as StableHLO text on both
backends)."""

import json
import textwrap

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
from jax import lax

import differential
from differential import Case

_random = np.random.RandomState(0)


def _spd(n, batch=(), dtype=np.float32):
    """A well-conditioned Hermitian positive definite matrix: A A^H + n I."""
    a = _random.randn(*batch, n, n)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * _random.randn(*batch, n, n)
    spd = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    return spd.astype(dtype)


def _general(*shape, dtype=np.float32):
    a = _random.randn(*shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * _random.randn(*shape)
    return a.astype(dtype)


def _well_conditioned(n, batch=(), dtype=np.float32):
    return (_general(*batch, n, n, dtype=dtype) + 2 * n * np.eye(n)).astype(dtype)


def _triangular(n, lower, batch=(), dtype=np.float32):
    a = _well_conditioned(n, batch, dtype)
    return np.tril(a) if lower else np.triu(a)


SIZES = (0, 1, 2, 5, 33, 128)
LOOSE = dict(rtol=2e-4, atol=2e-4)

CASES = []
for n in SIZES:
    CASES += [
        Case(f"cholesky_{n}", jnp.linalg.cholesky, (_spd(n),), **LOOSE),
        Case(f"solve_{n}", jnp.linalg.solve, (_well_conditioned(n), _general(n, 3)), **LOOSE),
        Case(f"inv_{n}", jnp.linalg.inv, (_well_conditioned(n),), **LOOSE),
    ]
    for lower in (True, False):
        a = _triangular(n, lower)
        CASES.append(Case(f"solve_triangular_{n}_lower{lower}",
                          lambda a, b, lower=lower: jsl.solve_triangular(a, b, lower=lower),
                          (a, _general(n, 4)), **LOOSE))

TRI = _triangular(6, True)
TRI_C = _triangular(6, True, dtype=np.complex64)
B_LEFT = _general(6, 3)
B_RIGHT = _general(3, 6)
B_LEFT_C = _general(6, 3, dtype=np.complex64)
for transpose in (0, 1, 2):
    for unit in (False, True):
        for lower in (True, False):
            a = TRI if lower else TRI.T.copy()
            ac = TRI_C if lower else TRI_C.T.copy()
            name = f"t{transpose}_unit{unit}_lower{lower}"
            kwargs = dict(lower=lower, trans=transpose, unit_diagonal=unit)
            CASES += [
                Case(f"trsm_left_{name}",
                     lambda a, b, kwargs=kwargs: jsl.solve_triangular(a, b, **kwargs),
                     (a, B_LEFT), **LOOSE),
                Case(f"trsm_complex_{name}",
                     lambda a, b, kwargs=kwargs: jsl.solve_triangular(a, b, **kwargs),
                     (ac, B_LEFT_C), **LOOSE),
                Case(f"trsm_right_{name}",
                     lambda a, b, t=transpose, unit=unit, lower=lower:
                     lax.linalg.triangular_solve(a, b, left_side=False, lower=lower,
                                                 transpose_a=t > 0, conjugate_a=t == 2,
                                                 unit_diagonal=unit),
                     (a, B_RIGHT), **LOOSE),
            ]

CASES += [
    Case("cholesky_batched", jnp.linalg.cholesky, (_spd(5, (3, 2)),), **LOOSE),
    Case("cholesky_c64", jnp.linalg.cholesky, (_spd(7, dtype=np.complex64),), **LOOSE),
    Case("cholesky_upper", lambda a: lax.linalg.cholesky(a, symmetrize_input=False).T,
         (_spd(6),), **LOOSE),
    Case("cholesky_not_pd", jnp.linalg.cholesky,
         (np.array([[1, 2], [2, 1]], np.float32),)),
    Case("cholesky_batch_one_not_pd", jnp.linalg.cholesky,
         (np.stack([_spd(3), -np.eye(3, dtype=np.float32)]),)),
    Case("solve_batched", jnp.linalg.solve,
         (_well_conditioned(5, (4,)), _general(4, 5, 2)), **LOOSE),
    Case("solve_c64", jnp.linalg.solve,
         (_well_conditioned(6, dtype=np.complex64), _general(6, 2, dtype=np.complex64)),
         **LOOSE),
    Case("trsm_batched", lambda a, b: jsl.solve_triangular(a, b, lower=True),
         (_triangular(5, True, (3,)), _general(3, 5, 4)), **LOOSE),
    Case("det", jnp.linalg.det, (_well_conditioned(5) / 10,), **LOOSE),
    Case("slogdet", jnp.linalg.slogdet, (_well_conditioned(33),), **LOOSE),
    Case("lu", jsl.lu, (_general(6, 6),), **LOOSE),
    Case("lu_factor_solve", lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b),
         (_well_conditioned(8), _general(8, 2)), **LOOSE),
    Case("cho_solve", lambda a, b: jsl.cho_solve(jsl.cho_factor(a), b),
         (_spd(8), _general(8, 3)), **LOOSE),
    Case("matrix_power", lambda a: jnp.linalg.matrix_power(a, 3), (_general(5, 5),), **LOOSE),
    Case("matrix_power_negative", lambda a: jnp.linalg.matrix_power(a, -2),
         (_well_conditioned(4),), **LOOSE),
    Case("cholesky_grad", jax.grad(lambda a: jnp.linalg.cholesky(a).sum()), (_spd(4),),
         **LOOSE),
]

# QR: Kiln's Householder reflectors follow LAPACK's convention, so even the
# signs match the CPU backend's LAPACK.
for shape in ((5, 5), (7, 4), (4, 7), (33, 33), (2, 3, 4), (0, 3), (128, 64)):
    name = "x".join(map(str, shape))
    CASES += [
        Case(f"qr_reduced_{name}", jnp.linalg.qr, (_general(*shape),), **LOOSE),
        Case(f"qr_complete_{name}", lambda a: jnp.linalg.qr(a, mode="complete"),
             (_general(*shape),), **LOOSE),
        Case(f"qr_r_{name}", lambda a: jnp.linalg.qr(a, mode="r"), (_general(*shape),),
             **LOOSE),
    ]
CASES += [
    Case("qr_c64", jnp.linalg.qr, (_general(6, 4, dtype=np.complex64),), **LOOSE),
    Case("householder_product", lambda a, t: lax.linalg.householder_product(a, t),
         (_general(6, 4), _general(3) / 4), **LOOSE),
]

# Top-k: random floats (no ties).
TOPK_X = _general(4, 50)
# +NaN, -NaN, +0, -0 and ties: each top-k flavour orders them its own way.
SPECIAL = np.array([[3, 1, np.nan, 5, 5, -np.nan, 1, 0, -0.0, 0]], np.float32)
CASES += [
    Case("top_k", lambda x: lax.top_k(x, 5), (TOPK_X,)),
    Case("top_k_3d", lambda x: lax.top_k(x, 3), (_general(2, 3, 9),)),
    Case("top_k_int", lambda x: lax.top_k(x, 4),
         (_random.randint(-1000, 1000, size=(3, 20)).astype(np.int32),)),
    Case("top_k_all", lambda x: lax.top_k(x, 50), (TOPK_X,)),
    Case("approx_max_k", lambda x: lax.approx_max_k(x, 5), (TOPK_X,)),
    Case("approx_min_k", lambda x: lax.approx_min_k(x, 4), (TOPK_X,)),
    Case("approx_max_k_dim0", lambda x: lax.approx_max_k(x, 2, reduction_dimension=0),
         (_general(7, 3),)),
    Case("top_k_nan_zeros", lambda x: lax.top_k(x, 9), (SPECIAL,)),
    Case("approx_max_k_nan_zeros", lambda x: lax.approx_max_k(x, 9), (SPECIAL,)),
    Case("approx_min_k_nan_zeros", lambda x: lax.approx_min_k(x, 9), (SPECIAL,)),
    Case("approx_max_k_nan_zeros_all", lambda x: lax.approx_max_k(x, 10), (SPECIAL,)),
    Case("approx_min_k_nan_zeros_all", lambda x: lax.approx_min_k(x, 10), (SPECIAL,)),
    Case("approx_min_k_bf16", lambda x: lax.approx_min_k(x, 3),
         (_general(3, 40).astype(jnp.bfloat16),)),
]


# Eigh, and through it JAX's generic SVD. Eigenvectors are unique only up to a
# sign (a phase for complex), so cases compare what does not depend on it:
# eigenvalues, |v| (distinct eigenvalues), and reconstructions.


def _hermitian(n, batch=(), dtype=np.float32):
    a = _general(*batch, n, n, dtype=dtype)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)


def _eigh_invariants(a, **kwargs):
    v, w = lax.linalg.eigh(a, **kwargs)
    return w, jnp.abs(v)


for n in (0, 1, 2, 5, 33, 100):
    CASES += [
        Case(f"eigvalsh_{n}", jnp.linalg.eigvalsh, (_hermitian(n),), **LOOSE),
        Case(f"eigh_{n}", _eigh_invariants, (_hermitian(n),), **LOOSE),
    ]
for dtype in (np.float64, np.complex64, np.complex128):
    CASES.append(Case(f"eigh_{np.dtype(dtype).name}", _eigh_invariants,
                      (_hermitian(6, dtype=dtype),), **LOOSE))
# symmetrize_input=False: each backend reads only one triangle, so garbage in
# the other must not change the result.
for lower in (True, False):
    garbage = _general(6, 6)
    CASES.append(Case(f"eigh_reads_one_triangle_lower{lower}",
                      lambda a, lower=lower: _eigh_invariants(a, lower=lower,
                                                              symmetrize_input=False),
                      (garbage,), **LOOSE))
CASES += [
    Case("eigh_batched", _eigh_invariants, (_hermitian(5, (2, 3)),), **LOOSE),
    Case("eigh_nan", jnp.linalg.eigh,
         (np.array([[1, 0, 0], [0, 1, 0], [np.nan, 0, 1]], np.float32),)),
    Case("eigh_reconstructs", lambda a: (lambda w, v: (v * w[None, :]) @ v.T)(
        *jnp.linalg.eigh(a)), (_hermitian(9),), **LOOSE),
    Case("eigh_grad", jax.grad(lambda a: jnp.linalg.eigvalsh(a) @ jnp.arange(6.0)),
         (_hermitian(6),), **LOOSE),
    Case("svd_values", lambda a: jnp.linalg.svd(a, compute_uv=False), (_general(7, 5),),
         **LOOSE),
    Case("svd_values_wide_batched", lambda a: jnp.linalg.svd(a, compute_uv=False),
         (_general(2, 4, 9),), **LOOSE),
    Case("svd_reconstructs", lambda a: (lambda u, s, vt: (u * s[None, :]) @ vt)(
        *jnp.linalg.svd(a, full_matrices=False)), (_general(8, 6),), **LOOSE),
    Case("svd_abs_u", lambda a: jnp.abs(jnp.linalg.svd(a, full_matrices=False)[0]),
         (_general(6, 4),), **LOOSE),
    Case("pinv", jnp.linalg.pinv, (_general(7, 5),), **LOOSE),
    Case("lstsq", lambda a, b: jnp.linalg.lstsq(a, b)[0], (_general(9, 4), _general(9, 2)),
         **LOOSE),
    Case("matrix_rank", jnp.linalg.matrix_rank,
         (np.outer(_general(6), _general(5)).astype(np.float32),)),
    Case("norm_2", lambda a: jnp.linalg.norm(a, 2), (_general(6, 6),), **LOOSE),
    Case("cond", jnp.linalg.cond, (_well_conditioned(6),), **LOOSE),
]
# eig: eigenvalue order is the solver's own (Kiln's matches LAPACK for real
# input but not always for complex), so cases compare sorted eigenvalues;
# test_eig_properties checks the eigenvectors.
def _sorted_eigvals(a):
    return jnp.sort_complex(jnp.linalg.eigvals(a))


for n in (0, 1, 4, 17):
    CASES.append(Case(f"eigvals_{n}", _sorted_eigvals, (_general(n, n),), **LOOSE))
CASES += [
    Case("eigvals_f64", _sorted_eigvals, (_general(6, 6, dtype=np.float64),), **LOOSE),
    Case("eigvals_c64", _sorted_eigvals, (_general(6, 6, dtype=np.complex64),), **LOOSE),
    Case("eigvals_c128", _sorted_eigvals, (_general(5, 5, dtype=np.complex128),), **LOOSE),
    Case("eigvals_batched", _sorted_eigvals, (_general(3, 4, 4),), **LOOSE),
    Case("eigvals_symmetric_real", _sorted_eigvals, (_hermitian(6),), **LOOSE),
    Case("eigvals_nan", jnp.linalg.eigvals,
         (np.array([[1, np.nan], [0, 1]], np.float32),)),
]


# --- tridiagonal reduction and solve (Kiln's Tridiagonal / TridiagonalSolve;
# LAPACK sytrd/hetrd and gtsv on the CPU backend) -----------------------------

def _tridiagonal_system(n, batch=(), rhs=2, dtype=np.float32):
    """Diagonals that are not diagonally dominant, so that gtsv pivots."""
    return (_general(*batch, n, dtype=dtype), _general(*batch, n, dtype=dtype) * 0.1,
            _general(*batch, n, dtype=dtype), _general(*batch, n, rhs, dtype=dtype))


for lower in (True, False):
    for dtype in (np.float32, np.float64, np.complex64):
        for shape in ((1, 1), (5, 5), (2, 6, 6)):
            name = f"tridiagonal_{'lower' if lower else 'upper'}_{np.dtype(dtype).name}_" + \
                   "x".join(map(str, shape))
            CASES.append(Case(name, lambda a, lower=lower: lax.linalg.tridiagonal(a, lower=lower),
                              (_general(*shape, dtype=dtype),), **LOOSE))
CASES += [
    Case("tridiagonal_solve_pivoting", lax.linalg.tridiagonal_solve,
         _tridiagonal_system(7), **LOOSE),
    Case("tridiagonal_solve_batched_f64", lax.linalg.tridiagonal_solve,
         _tridiagonal_system(5, (3,), dtype=np.float64), **LOOSE),
    Case("tridiagonal_solve_c64", lax.linalg.tridiagonal_solve,
         _tridiagonal_system(6, rhs=1, dtype=np.complex64), **LOOSE),
    Case("tridiagonal_solve_singular",  lax.linalg.tridiagonal_solve,
         (np.zeros(3, np.float32), np.array([0, 1, 1], np.float32),
          np.zeros(3, np.float32), np.ones((3, 1), np.float32))),
    Case("tridiagonal_solve_grad",
         jax.grad(lambda *a: lax.linalg.tridiagonal_solve(*a).sum(), argnums=(0, 1, 2, 3)),
         _tridiagonal_system(4, rhs=1), **LOOSE),
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


@pytest.mark.parametrize("shape,dtype", [((9, 6), np.float32), ((6, 9), np.float32),
                                         ((3, 8, 8), np.complex64)])
def test_qr_properties(shape, dtype):
    a = _general(*shape, dtype=dtype)
    q, r = jax.jit(jnp.linalg.qr)(a)
    q, r = np.asarray(q), np.asarray(r)
    k = min(shape[-2:])
    eye = np.broadcast_to(np.eye(k), (*shape[:-2], k, k))
    np.testing.assert_allclose(np.conj(np.swapaxes(q, -1, -2)) @ q, eye, atol=1e-5)
    np.testing.assert_allclose(q @ r, a, atol=1e-4)
    assert np.allclose(r, np.triu(r))


def test_cholesky_reconstructs_large():
    a = _spd(256)
    chol = np.asarray(jax.jit(jnp.linalg.cholesky)(a)).astype(np.float64)
    np.testing.assert_allclose(chol @ chol.T, a, rtol=1e-5, atol=1e-3)


def test_lapack_dtypes_only_as_on_the_cpu_backend():
    # JAX's CPU lowerings raise this while lowering (JAX 0.11's own tests
    # match it for QR; 0.12 refuses f16 for QR already while tracing).
    for f in (jnp.linalg.qr, lax.linalg.tridiagonal):
        with pytest.raises((NotImplementedError, TypeError),
                           match="Unsupported dtype float16|does not accept dtype float16"):
            jax.jit(f).lower(np.eye(3, dtype=np.float16))


def test_eigh_lowers_to_kilns_custom_call():
    # JAX lowers eigh only for cpu, gpu and tpu; kiln_pjrt adds `kiln`.
    text = jax.jit(jnp.linalg.eigh).lower(np.eye(3, dtype=np.float32)).as_text()
    assert 'stablehlo.custom_call @Eigh(' in text
    assert 'backend_config = "1,1,100,1e-6"' in text


def test_eigh_subset_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="subset_by_index"):
        jax.jit(lambda a: lax.linalg.eigh(a, subset_by_index=(0, 2))).lower(
            np.eye(3, dtype=np.float32))


def test_eigh_properties_large():
    a = _hermitian(200).astype(np.float64)
    w, v = (np.asarray(x) for x in jax.jit(jnp.linalg.eigh)(a.astype(np.float32)))
    assert np.all(np.diff(w) >= 0)
    np.testing.assert_allclose(v.T @ v, np.eye(200), atol=1e-4)
    np.testing.assert_allclose((v * w) @ v.T, a, atol=1e-3)


# --- batch norm: StableHLO text on both backends --------------------------

_BN_TEXT = """
func.func public @main(%x: tensor<{x}>, %scale: tensor<{c}>, %offset: tensor<{c}>,
                       %mean: tensor<{c}>, %var: tensor<{c}>, %dy: tensor<{x}>)
    -> (tensor<{x}>, tensor<{x}>, tensor<{c}>, tensor<{c}>, tensor<{x}>, tensor<{c}>,
        tensor<{c}>) {{
  %0 = "stablehlo.batch_norm_inference"(%x, %scale, %offset, %mean, %var)
      {{epsilon = 1.0e-3 : f32, feature_index = {f} : i64}}
      : (tensor<{x}>, tensor<{c}>, tensor<{c}>, tensor<{c}>, tensor<{c}>) -> tensor<{x}>
  %1:3 = "stablehlo.batch_norm_training"(%x, %scale, %offset)
      {{epsilon = 1.0e-3 : f32, feature_index = {f} : i64}}
      : (tensor<{x}>, tensor<{c}>, tensor<{c}>) -> (tensor<{x}>, tensor<{c}>, tensor<{c}>)
  %2:3 = "stablehlo.batch_norm_grad"(%x, %scale, %mean, %var, %dy)
      {{epsilon = 1.0e-3 : f32, feature_index = {f} : i64}}
      : (tensor<{x}>, tensor<{c}>, tensor<{c}>, tensor<{c}>, tensor<{x}>)
      -> (tensor<{x}>, tensor<{c}>, tensor<{c}>)
  return %0, %1#0, %1#1, %1#2, %2#0, %2#1, %2#2 : tensor<{x}>, tensor<{x}>, tensor<{c}>,
      tensor<{c}>, tensor<{x}>, tensor<{c}>, tensor<{c}>
}}
"""

_RUN_TEXT = """
import sys, numpy as np, jax
from jax._src import xla_bridge, compiler
from jax._src.lib import xla_client as xc

def run_text(text, args):
    backend = xla_bridge.get_backend()
    device = backend.devices()[0]
    options = compiler.get_compile_options(num_replicas=1, num_partitions=1)
    exe = backend.compile_and_load(text, xc.DeviceList((device,)), options)
    return [np.asarray(o) for o in exe.execute([jax.device_put(a, device) for a in args])]
"""

# (operand shape, feature index, dtype)
BN_CASES = [((2, 3, 4, 5), 1, "f32"), ((6, 4), 1, "f32"), ((3, 7, 2), 0, "f32"),
            ((4, 5, 3), 2, "f32"), ((2, 8, 3, 3), 1, "bf16"), ((5, 6), 1, "f16")]
_NUMPY = {"f32": np.float32, "f64": np.float64, "bf16": jnp.bfloat16, "f16": np.float16}


def _bn_program(shape, feature, dtype):
    features = shape[feature]
    text = _BN_TEXT.format(x="x".join(map(str, shape)) + "x" + dtype,
                           c=f"{features}x{dtype}", f=feature)
    rng = np.random.RandomState(1)
    np_type = _NUMPY[dtype]
    args = [rng.randn(*shape), rng.rand(features) + 0.5, rng.randn(features),
            rng.randn(features) / 4, rng.rand(features) + 0.5, rng.randn(*shape)]
    return text, [a.astype(np_type) for a in args]


def test_batch_norm_matches_cpu(run_python, tmp_path):
    programs = [_bn_program(*case) for case in BN_CASES]
    np.savez(tmp_path / "in.npz", **{f"{i}_{j}": a for i, (_, args) in enumerate(programs)
                                     for j, a in enumerate(args)})
    (tmp_path / "texts.json").write_text(json.dumps([text for text, _ in programs]))
    child = _RUN_TEXT + textwrap.dedent(f"""
        import json, ml_dtypes
        texts = json.load(open({str(tmp_path / 'texts.json')!r}))
        inputs = np.load({str(tmp_path / 'in.npz')!r}, allow_pickle=True)
        out = {{}}
        for i, text in enumerate(texts):
            args = [inputs[f"{{i}}_{{j}}"] for j in range(6)]
            if "bf16" in text:
                args = [a.view(ml_dtypes.bfloat16) for a in args]
            for k, value in enumerate(run_text(text, args)):
                out[f"{{i}}_{{k}}"] = value.astype(np.float64)
        np.savez({str(tmp_path / 'out.npz')!r}, **out)
    """)
    run_python(child, env={"JAX_PLATFORMS": "cpu"})
    want = np.load(tmp_path / "out.npz")
    namespace: dict = {}
    exec(_RUN_TEXT, namespace)
    for i, (text, args) in enumerate(programs):
        got = namespace["run_text"](text, args)
        dtype = BN_CASES[i][2]
        tolerance = {"f32": 1e-4, "f64": 1e-10, "bf16": 3e-2, "f16": 3e-3}[dtype]
        for k, value in enumerate(got):
            np.testing.assert_allclose(value.astype(np.float64), want[f"{i}_{k}"],
                                       rtol=tolerance, atol=tolerance,
                                       err_msg=f"{BN_CASES[i]} output {k}")


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eig_properties(dtype):
    a = _general(2, 7, 7, dtype=dtype)
    w, vl, vr = (np.asarray(x) for x in jax.jit(
        lambda x: lax.linalg.eig(x, compute_left_eigenvectors=True))(a))
    a = a.astype(np.complex128)
    # A v = w v and u^H A = w u^H, columns of unit norm.
    np.testing.assert_allclose(a @ vr, vr * w[..., None, :], atol=1e-4)
    vl_h = np.conj(np.swapaxes(vl, -1, -2))
    np.testing.assert_allclose(vl_h @ a, w[..., :, None] * vl_h, atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(vr, axis=-2), 1, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=-2), 1, atol=1e-5)


def test_eig_lowers_to_kilns_custom_call():
    text = jax.jit(jnp.linalg.eig).lower(np.eye(3, dtype=np.float32)).as_text()
    assert 'stablehlo.custom_call @Eig(' in text and 'backend_config = "0,1"' in text
