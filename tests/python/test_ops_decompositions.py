"""Schur decomposition, Hessenberg reduction, QR with column pivoting and
LU on Kiln (kiln_pjrt's lowerings of lax.linalg.schur, hessenberg, geqp3
and lu to Kiln's custom calls Schur, Hessenberg, PivotedQr and
LuDecomposition), and what jax.scipy.linalg and jnp.linalg build from them:
schur, hessenberg, qr(pivoting=True), qr_multiply, sqrtm, funm, rsf2csf,
solve_sylvester, lu, lu_factor, solve, inv, det, slogdet. Checked against
JAX's CPU backend (differential.py), which calls LAPACK (gees, gehrd,
geqp3, getrf).

What is compared: Hessenberg, pivoted QR and LU outputs as they are
(LAPACK's packed forms, taus, pivots and permutations). A Schur form is not unique, and
LAPACK's is not even continuous in its input: each QR step makes a tiny
subdiagonal element real (complex) or standardizes a 2x2 block (real), so
an input one ulp away gives other phases, signs and block rotations. So
Schur cases compare what LAPACK does determine: the eigenvalues in the
order of T's diagonal blocks (LAPACK's order, which Kiln follows up to
n = 75; above, LAPACK's multishift laqr0 orders them its own way), Z T Z^H
and Z^H Z; small, well-separated cases compare T and Z themselves. sqrtm,
funm and solve_sylvester are unique and compared as they are. 64-bit cases
run in two fresh interpreters with JAX_ENABLE_X64=1, one per backend.
"""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
from jax import lax
from jax._src.lax import linalg as lax_linalg

import differential
from differential import Case

_random = np.random.RandomState(0)
LOOSE = dict(rtol=2e-4, atol=2e-4)
TIGHT = dict(rtol=1e-10, atol=1e-10)


def _general(*shape, dtype=np.float32):
    a = _random.randn(*shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * _random.randn(*shape)
    return a.astype(dtype)


def _schur_eigenvalues(t):
    """T's eigenvalues, sorted by their real parts to three decimals, then
    their imaginary parts (a conjugate pair's real parts differ in the last
    bits): a 2x2 block [a b; c a] of a real Schur form holds
    a +- i sqrt(-b c). Their order along T's diagonal is the order the QR
    iteration deflated them in, which no definition fixes and which moves
    with the arithmetic: on one Zen 4 machine (2026-11-29) the 40 x 40
    float32 case put a real eigenvalue two blocks later than XLA's CPU
    backend did, on others the orders agreed."""
    d = jnp.diagonal(t, axis1=-2, axis2=-1)
    if not jnp.iscomplexobj(t):
        sub = jnp.diagonal(t, -1, axis1=-2, axis2=-1)
        sup = jnp.diagonal(t, 1, axis1=-2, axis2=-1)
        imag = jnp.where(sub != 0, jnp.sqrt(jnp.abs(sub * sup)), 0)
        pad = jnp.zeros_like(d[..., :1])
        d = d + 1j * (jnp.concatenate([imag, pad], -1) - jnp.concatenate([pad, imag], -1))
    order = jnp.lexsort((d.imag, jnp.round(d.real, 3)), axis=-1)
    return jnp.take_along_axis(d, order, axis=-1)


def _schur_invariants(t, z):
    """What a Schur decomposition determines: the eigenvalues, Z T Z^H (the
    input) and Z^H Z (the identity)."""
    zh = jnp.conj(jnp.swapaxes(z, -1, -2))
    highest = lax.Precision.HIGHEST
    reconstructed = jnp.matmul(jnp.matmul(z, t, precision=highest), zh, precision=highest)
    return _schur_eigenvalues(t), reconstructed, jnp.matmul(zh, z, precision=highest)


def _abs_schur(t, z):
    """A complex Schur form up to its phases: |T|, |Z|."""
    return jnp.abs(t), jnp.abs(z)


def _sqrtm_input(n, dtype, batch=()):
    """A matrix whose principal square root exists: A A^H + n I."""
    a = _general(*batch, n, n, dtype=dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _geqp3(a):
    """lax.linalg's geqp3 with every column free (as qr(pivoting=True) calls it)."""
    return lax_linalg.geqp3(a, jnp.zeros(a.shape[:-2] + a.shape[-1:], jnp.int32))


def _cases(dtype, tolerance):
    name = np.dtype(dtype).name
    complex_dtype = np.result_type(dtype, np.complex64)
    cases = []
    for n in (0, 1, 2, 5, 17, 40):
        cases.append(Case(f"schur_{name}_{n}",
                          lambda a: _schur_invariants(*jsl.schur(a)),
                          (_general(n, n, dtype=dtype),), **tolerance))
    cases += [
        Case(f"schur_batched_{name}", lambda a: _schur_invariants(*lax.linalg.schur(a)),
             (_general(3, 2, 6, 6, dtype=dtype),), **tolerance),
        Case(f"schur_vmap_{name}", lambda a: _schur_invariants(*jax.vmap(jsl.schur)(a)),
             (_general(3, 5, 5, dtype=dtype),), **tolerance),
        Case(f"schur_output_complex_{name}",
             lambda a: _schur_invariants(*jsl.schur(a, output="complex")),
             (_general(7, 7, dtype=dtype),), **tolerance),
        Case(f"schur_form_only_{name}",
             lambda a: _schur_eigenvalues(lax.linalg.schur(a, compute_schur_vectors=False)[0]),
             (_general(9, 9, dtype=dtype),), **tolerance),
        # gebal's permutation isolates eigenvalues of triangular inputs: T and
        # Z are permuted copies, exactly as LAPACK's.
        Case(f"schur_lower_triangular_{name}", jsl.schur,
             (np.tril(_general(6, 6, dtype=dtype)),), **tolerance),
        # gees scales a matrix of tiny elements up, and T back down.
        Case(f"schur_tiny_{name}",
             lambda a: (lambda w, r, i: (w * 1e20, r * 1e20, i))(*_schur_invariants(
                 *jsl.schur(a))),
             ((_general(5, 5, dtype=dtype) * 1e-20).astype(dtype),), **tolerance),
        Case(f"schur_nan_{name}", jsl.schur, (np.array([[np.nan, 1], [2, 3]], dtype),)),
        Case(f"schur_inf_{name}", jsl.schur, (np.array([[np.inf, 1], [2, 3]], dtype),)),
        Case(f"hessenberg_{name}", lambda a: jsl.hessenberg(a, calc_q=True),
             (_general(8, 8, dtype=dtype),), **tolerance),
        Case(f"hessenberg_packed_batched_{name}", lax.linalg.hessenberg,
             (_general(2, 3, 6, 6, dtype=dtype),), **tolerance),
        Case(f"hessenberg_vmap_{name}", jax.vmap(jsl.hessenberg),
             (_general(2, 5, 5, dtype=dtype),), **tolerance),
        Case(f"hessenberg_1x1_{name}", lax.linalg.hessenberg,
             (_general(1, 1, dtype=dtype),), **tolerance),
        Case(f"hessenberg_nan_{name}", lax.linalg.hessenberg,
             (np.array([[np.nan, 1, 1], [2, 3, 1], [1, 1, 1]], dtype),)),
        Case(f"sqrtm_{name}", jsl.sqrtm, (_sqrtm_input(6, dtype),), **tolerance),
        Case(f"sqrtm_vmap_{name}", jax.vmap(jsl.sqrtm), (_sqrtm_input(4, dtype, (3,)),),
             **tolerance),
        Case(f"funm_exp_{name}", lambda a: jsl.funm(a, jnp.exp),
             (_general(5, 5, dtype=dtype) / 2,), **tolerance),
        Case(f"funm_with_error_{name}", lambda a: jsl.funm(a, jnp.sin, disp=False),
             (_general(4, 4, dtype=dtype) / 2,), **tolerance),
        # Bartels-Stewart through the Schur forms of A and B (unique X).
        Case(f"solve_sylvester_{name}", jsl.solve_sylvester,
             (_sqrtm_input(4, dtype), _sqrtm_input(3, dtype), _general(4, 3, dtype=dtype)),
             **tolerance),
        Case(f"solve_sylvester_batched_{name}", jsl.solve_sylvester,
             (_sqrtm_input(3, dtype, (2,)), _sqrtm_input(3, dtype, (2,)),
              _general(2, 3, 3, dtype=dtype)), **tolerance),
        Case(f"rsf2csf_of_schur_{name}", lambda a: _abs_schur(*jsl.rsf2csf(*jsl.schur(a))),
             (_general(4, 4, dtype=dtype),), **tolerance),
        Case(f"rsf2csf_{name}", jsl.rsf2csf,
             (_general(5, 5, dtype=dtype), _general(5, 5, dtype=dtype)), **tolerance),
        Case(f"complex_schur_abs_{name}", lambda a: _abs_schur(*jsl.schur(a)),
             (_general(3, 3, dtype=complex_dtype),), **tolerance),
        Case(f"geqp3_fixed_columns_{name}",
             lambda a: lax_linalg.geqp3(a, jnp.array([0, 1, 0, 0, 1, 0], jnp.int32)),
             (_general(5, 6, dtype=dtype),), **tolerance),
        Case(f"geqp3_nan_{name}", _geqp3,
             (np.array([[np.nan, 1, 1], [2, 3, 1], [1, 1, 1]], dtype),)),
    ]
    for shape in ((6, 4), (4, 6), (5, 5), (2, 3, 5, 4), (1, 3), (0, 3)):
        label = "x".join(map(str, shape))
        for mode in ("full", "economic", "r"):
            cases.append(Case(f"qr_pivoting_{mode}_{name}_{label}",
                              lambda a, mode=mode: jsl.qr(a, mode=mode, pivoting=True),
                              (_general(*shape, dtype=dtype),), **tolerance))
    for shape in ((5, 5), (7, 4), (4, 7), (3, 2, 6, 6), (1, 1), (0, 0)):
        label = "x".join(map(str, shape))
        cases.append(Case(f"lu_{name}_{label}", lax.linalg.lu, (_general(*shape, dtype=dtype),),
                          **tolerance))
    singular = np.array([[0, 0, 1], [0, 0, 2], [1, 2, 3]], dtype)
    well = _sqrtm_input(5, dtype)
    cases += [
        # A zero column: no pivot, the column left unscaled (getrf's info > 0).
        Case(f"lu_singular_{name}", lax.linalg.lu, (singular,), **tolerance),
        Case(f"lu_factor_{name}", jsl.lu_factor, (well,), **tolerance),
        Case(f"scipy_lu_{name}", jsl.lu, (_general(6, 4, dtype=dtype),), **tolerance),
        Case(f"solve_{name}", jnp.linalg.solve, (well, _general(5, 3, dtype=dtype)),
             **tolerance),
        Case(f"inv_{name}", jnp.linalg.inv, (well,), **tolerance),
        Case(f"det_{name}", jnp.linalg.det, (_general(3, 4, 4, dtype=dtype),), **tolerance),
        Case(f"slogdet_{name}", jnp.linalg.slogdet, (_general(2, 5, 5, dtype=dtype),),
             **tolerance),
        Case(f"det_grad_{name}", jax.grad(lambda a: jnp.abs(jnp.linalg.det(a))),
             (well,), **tolerance),
        Case(f"lu_vmap_{name}", jax.vmap(lax.linalg.lu), (_general(3, 4, 4, dtype=dtype),),
             **tolerance),
    ]
    cases += [
        Case(f"geqp3_{name}", _geqp3, (_general(7, 5, dtype=dtype),), **tolerance),
        Case(f"qr_multiply_pivoting_{name}",
             lambda a, c: jsl.qr_multiply(a, c, pivoting=True),
             (_general(6, 4, dtype=dtype), _general(2, 6, dtype=dtype)), **tolerance),
        Case(f"qr_pivoting_vmap_{name}", jax.vmap(lambda a: jsl.qr(a, pivoting=True)),
             (_general(3, 5, 4, dtype=dtype),), **tolerance),
        # JAX differentiates qr(pivoting=True) (qr_p's JVP; the pivots are
        # constants); schur and hessenberg have no derivative on any backend.
        Case(f"qr_pivoting_grad_{name}",
             jax.grad(lambda a: jnp.sum(jnp.abs(jsl.qr(a, pivoting=True)[1]) ** 2)),
             (_general(5, 5, dtype=dtype),), **tolerance),
    ]
    return cases


CASES = _cases(np.float32, LOOSE) + _cases(np.complex64, LOOSE)
X64_CASES = _cases(np.float64, TIGHT) + _cases(np.complex128, TIGHT)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return differential.cpu_reference(__file__, "CASES", tmp_path_factory.mktemp("cpu"))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_matches_cpu(case, reference):
    differential.check(case, reference)


@pytest.fixture(scope="module")
def x64_references(tmp_path_factory):
    return differential.x64_runs(__file__, "X64_CASES", tmp_path_factory)


@pytest.mark.parametrize("case", X64_CASES, ids=lambda case: case.name)
def test_x64_matches_cpu(case, x64_references):
    differential.check_runs(case, *x64_references)


def test_names_are_unique():
    names = [case.name for case in CASES + X64_CASES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("n", [76, 120])
def test_schur_properties_beyond_lapacks_crossover(n, dtype):
    # Above n = 75 LAPACK switches to its multishift QR (laqr0) and orders
    # the eigenvalues its own way; Kiln's still decomposes.
    a = _general(n, n, dtype=dtype)
    t, z = (np.asarray(x).astype(np.complex128) for x in jax.jit(jsl.schur)(a))
    np.testing.assert_allclose(z @ t @ np.conj(z.T), a, atol=2e-4 * n)
    np.testing.assert_allclose(np.conj(z.T) @ z, np.eye(n), atol=2e-5 * n)
    assert np.all(np.tril(t, -1 if np.iscomplexobj(a) else -2) == 0)
    # T's eigenvalues are A's (each near one of numpy's, and the other way round).
    got = np.diag(t) if np.iscomplexobj(a) else np.asarray(_schur_eigenvalues(t.real))
    want = np.linalg.eigvals(a.astype(np.complex128))
    distances = np.abs(got[:, None] - want[None, :])
    assert distances.min(axis=1).max() < 1e-3 and distances.min(axis=0).max() < 1e-3


def test_lowers_to_kilns_custom_calls():
    a = np.eye(3, dtype=np.float32)
    assert 'stablehlo.custom_call @Schur(' in jax.jit(jsl.schur).lower(a).as_text()
    text = jax.jit(lambda a: lax.linalg.schur(a, compute_schur_vectors=False)).lower(a).as_text()
    assert 'backend_config = "0"' in text
    assert 'stablehlo.custom_call @Hessenberg(' in jax.jit(jsl.hessenberg).lower(a).as_text()
    text = jax.jit(lambda a: jsl.qr(a, pivoting=True)).lower(a).as_text()
    assert 'stablehlo.custom_call @PivotedQr(' in text
    assert 'stablehlo.custom_call @LuDecomposition(' in jax.jit(lax.linalg.lu).lower(a).as_text()


def test_lu_in_a_shard_map_checking_varying_axes():
    # JAX's Python LU (its fallback on platforms without an lu lowering)
    # is a loop whose carry JAX refuses inside such a shard_map.
    from jax.sharding import PartitionSpec as P
    mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
    a = _sqrtm_input(4, np.float32, (2,))
    with jax.set_mesh(mesh):
        f = jax.jit(jax.shard_map(lambda x: jax.lax.map(jnp.linalg.inv, x), out_specs=P("x"),
                                  in_specs=P("x")))
        np.testing.assert_allclose(f(jax.device_put(a, P("x"))), np.linalg.inv(a), rtol=1e-4,
                                   atol=1e-5)


def test_schur_sorting_is_refused_as_on_the_cpu_backend():
    with pytest.raises(NotImplementedError, match="The sort feature of LAPACK's gees routine"):
        jax.jit(lambda a: lax.linalg.schur(a, sort_eig_vals=True)).lower(
            np.eye(3, dtype=np.float32))


def test_derivatives_of_schur_are_refused_as_on_every_backend():
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        jax.grad(lambda a: jnp.sum(jsl.sqrtm(a)).real)(np.eye(3, dtype=np.float32) * 2)
