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


def register() -> None:
    """Registers Kiln's lowerings with JAX (called from `initialize()`)."""
    try:
        from jax._src.interpreters import mlir
        from jax._src.lax import linalg
    except ImportError:
        return
    for name, rule in (("eigh_p", _eigh_lowering), ("eig_p", _eig_lowering)):
        primitive = getattr(linalg, name, None)
        if primitive is not None:
            mlir.register_lowering(primitive, rule, platform=PLATFORM_NAME)
