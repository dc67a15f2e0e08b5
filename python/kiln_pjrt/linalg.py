"""Lowerings JAX lacks for a platform other than CPU, GPU and TPU.

JAX lowers `jnp.linalg.eigh` (lax.linalg.eigh_p) only for cpu, cuda, rocm,
oneapi and tpu; on any other platform tracing it fails with "MLIR
translation rule for primitive 'eigh' not found", and with it JAX's generic
SVD (which diagonalizes H = U^H A), pinv, lstsq, matrix_rank and norm(ord=2).
`register()` gives the `kiln` platform a lowering of eigh_p to a custom call
`Eigh` in the TPU's format (backend_config "lower,sort,max_iter,tol"), which
Kiln's compiler runs natively (src/kernels/eigh.cc). `jnp.linalg.eig`
(lax.linalg.eig_p) has lowerings for cpu and gpu only; Kiln's is a custom
call `Eig` of its own (backend_config "left,right"; src/kernels/eig.cc).
`lax.linalg.tridiagonal` (LAPACK sytrd/hetrd) has lowerings for cpu and gpu
only, and `tridiagonal_solve` elsewhere falls back to JAX's Thomas
algorithm without pivoting, whose results (and second derivatives) drift
from the CPU backend's LAPACK gtsv on matrices that are not diagonally
dominant: Kiln's custom calls `Tridiagonal` (backend_config "lower") and
`TridiagonalSolve` follow LAPACK (src/kernels/tridiagonal.cc).
`lax.linalg.schur`, `hessenberg` and `geqp3` (jax.scipy.linalg.schur,
hessenberg, qr(pivoting=True), sqrtm, funm) have lowerings for cpu (and geqp3
for gpu) only; Kiln's custom calls `Schur` (backend_config
"compute_schur_vectors"), `Hessenberg` and `PivotedQr` return LAPACK's
gees, gehrd and geqp3 results (src/kernels/schur.cc, pivoted_qr.cc), which
JAX's Python code post-processes as on the CPU backend.
A dtype LAPACK lacks (f16, bf16) raises NotImplementedError("Unsupported
dtype ...") while lowering, as JAX's CPU lowerings do.
`lax.linalg.lu` (solve, inv, det, slogdet) falls back elsewhere to JAX's
Python LU, a loop over the columns that JAX itself rejects inside a
shard_map checking varying axes ("scan body function carry input and carry
output must have equal types"); Kiln's `LuDecomposition` custom call (the
TPU backend's name and results: lu, 0-based pivots, permutation) runs
LAPACK getrf's algorithm natively (src/kernels/solvers.cc).
See docs/framework-notes.md.
"""

PLATFORM_NAME = "kiln"


def _eigh_lowering(ctx, operand, *, lower, sort_eigenvalues, subset_by_index,
                   algorithm=None):
    from jax._src.interpreters import mlir

    del algorithm  # one algorithm on Kiln; JAX's QR/JACOBI/QDWH choice is a hint
    operand_aval, = ctx.avals_in
    n = operand_aval.shape[-1]
    if subset_by_index is not None and tuple(subset_by_index) != (0, n):
        # As JAX's CPU and GPU lowerings: a subset needs a different solver.
        raise NotImplementedError(
            f"eigh with subset_by_index={subset_by_index} is not supported on "
            f"Kiln (only the whole spectrum, (0, {n}))")
    result_types = [mlir.aval_to_ir_type(ctx.module_context, aval)
                    for aval in ctx.avals_out]
    op = mlir.custom_call(
        "Eigh",
        result_types=result_types,
        operands=[operand],
        backend_config=f"{int(lower)},{int(sort_eigenvalues)},100,1e-6",
        api_version=1,
    )
    return op.results


def _eig_lowering(ctx, operand, *, compute_left_eigenvectors=True,
                  compute_right_eigenvectors=True, **_):
    # enable_eigvec_derivs and implementation change nothing on Kiln: one
    # algorithm, and derivatives are JAX's (they call eig again).
    from jax._src.interpreters import mlir

    result_types = [mlir.aval_to_ir_type(ctx.module_context, aval)
                    for aval in ctx.avals_out]
    left, right = int(compute_left_eigenvectors), int(compute_right_eigenvectors)
    op = mlir.custom_call(
        "Eig",
        result_types=result_types,
        operands=[operand],
        backend_config=f"{left},{right}",
        api_version=1,
    )
    return op.results


_LAPACK_DTYPES = ("float32", "float64", "complex64", "complex128")


def _check_dtype(aval) -> None:
    """As jaxlib's lapack.prepare_lapack_call: LAPACK has four dtypes."""
    if str(aval.dtype) not in _LAPACK_DTYPES:
        raise NotImplementedError(f"Unsupported dtype {aval.dtype}")


def _custom_call(ctx, target, operands, backend_config=None):
    from jax._src.interpreters import mlir

    result_types = [mlir.aval_to_ir_type(ctx.module_context, aval) for aval in ctx.avals_out]
    kwargs = {} if backend_config is None else {"backend_config": backend_config}
    op = mlir.custom_call(target, result_types=result_types, operands=list(operands),
                          api_version=1, **kwargs)
    return op.results


def _geqrf_lowering(original):
    def rule(ctx, operand, **params):
        _check_dtype(ctx.avals_in[0])
        return original(ctx, operand, **params)
    return rule


def _tridiagonal_lowering(ctx, operand, *, lower):
    _check_dtype(ctx.avals_in[0])
    return _custom_call(ctx, "Tridiagonal", [operand], backend_config=str(int(lower)))


def _tridiagonal_solve_lowering(ctx, dl, d, du, b, *, perturb_singular):
    _check_dtype(ctx.avals_in[-1])
    if perturb_singular:
        raise NotImplementedError(
            "tridiagonal_solve with perturb_singular=True is not supported on Kiln "
            "(JAX's CPU backend runs its own kernel for it)")
    return _custom_call(ctx, "TridiagonalSolve", [dl, d, du, b])


def _schur_lowering(ctx, operand, *, compute_schur_vectors, sort_eig_vals,
                    select_callable=None):
    del select_callable  # unused, as on the CPU backend
    if sort_eig_vals:
        # JAX's CPU lowering's words.
        raise NotImplementedError(
            "The sort feature of LAPACK's gees routine is not implemented.")
    _check_dtype(ctx.avals_in[0])
    return _custom_call(ctx, "Schur", [operand],
                        backend_config=str(int(compute_schur_vectors)))


def _hessenberg_lowering(ctx, operand):
    _check_dtype(ctx.avals_in[0])
    return _custom_call(ctx, "Hessenberg", [operand])


def _geqp3_lowering(ctx, operand, jpvt, *, use_magma=None, **_):
    del use_magma  # a GPU option
    _check_dtype(ctx.avals_in[0])
    return _custom_call(ctx, "PivotedQr", [operand, jpvt])


def _lu_lowering(ctx, operand):
    _check_dtype(ctx.avals_in[0])
    return _custom_call(ctx, "LuDecomposition", [operand])


def _svd_lowering(ctx, operand, *, full_matrices, compute_uv, subset_by_index,
                  algorithm=None):
    # Where the host lent Kiln LAPACK's gesdd (host_lapack.py), svd is
    # gesdd, as on JAX's CPU backend; JAX's generic SVD (a polar
    # decomposition by QDWH, then eigh) took 6-7 times as long at 128 x 128.
    # SvdAlgorithm.QR (gesvd on the CPU backend) runs gesdd too.
    from jax._src.interpreters import mlir
    from jax._src.lax import linalg

    operand_aval, = ctx.avals_in
    m, n = operand_aval.shape[-2:]
    if subset_by_index is not None and tuple(subset_by_index) != (0, min(m, n)):
        raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    if algorithm is not None and algorithm not in (linalg.SvdAlgorithm.DEFAULT,
                                                   linalg.SvdAlgorithm.QR,
                                                   linalg.SvdAlgorithm.DIVIDE_AND_CONQUER):
        raise NotImplementedError(
            "The SVD Jacobi and Polar algorithms are not implemented on CPU.")
    if m == 0 or n == 0:
        return mlir.lower_fun(linalg._empty_svd, multiple_results=True)(
            ctx, operand, full_matrices=full_matrices, compute_uv=compute_uv)
    mode = "N" if not compute_uv else ("S" if full_matrices is False else "A")
    result_types = [mlir.aval_to_ir_type(ctx.module_context, aval) for aval in ctx.avals_out]
    op = mlir.custom_call("Svd", result_types=result_types, operands=[operand],
                          backend_config=mode, api_version=1)
    return op.results


def register(lent: tuple[str, ...] | list[str] = ()) -> None:
    """Registers Kiln's lowerings with JAX (called from `initialize()`, with
    the LAPACK routines the host lent the plugin)."""
    try:
        from jax._src.interpreters import mlir
        from jax._src.lax import linalg
    except ImportError:
        return
    rules = [("eigh_p", _eigh_lowering), ("eig_p", _eig_lowering),
             ("tridiagonal_p", _tridiagonal_lowering),
             ("tridiagonal_solve_p", _tridiagonal_solve_lowering),
             ("schur_p", _schur_lowering), ("hessenberg_p", _hessenberg_lowering),
             ("geqp3_p", _geqp3_lowering), ("lu_p", _lu_lowering)]
    if all(prefix + "gesdd" in lent for prefix in "sdcz"):
        rules.append(("svd_p", _svd_lowering))
    geqrf_rule = getattr(linalg, "_geqrf_lowering_rule", None)
    if geqrf_rule is not None:
        rules.append(("geqrf_p", _geqrf_lowering(geqrf_rule)))
    for name, rule in rules:
        primitive = getattr(linalg, name, None)
        if primitive is not None:
            mlir.register_lowering(primitive, rule, platform=PLATFORM_NAME)
