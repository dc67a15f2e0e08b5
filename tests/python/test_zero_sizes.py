"""Programs over zero-sized arrays: every op class with a zero in each place
it can take one (batch, rows, depth, columns, window, group), on Kiln and on
the CPU backend, same shapes and values. A kernel that divides by a zero
size crashes the process (SIGFPE: a batched matmul of batch 0 from torch's
cholesky samples did), so the cases run in a child that prints each name
before running it."""

import textwrap

_PROGRAM = r'''
import sys, numpy as np, jax, jax.numpy as jnp
from jax import lax
jax.config.update("jax_enable_x64", True)
def cases():
    z = lambda *s: np.ones(s, np.float32)
    zi = lambda *s: np.ones(s, np.int32)
    yield "matmul_b0", jnp.matmul, (z(0,5,5), z(0,5,5))
    yield "matmul_m0", jnp.matmul, (z(0,5), z(5,3))
    yield "matmul_k0", jnp.matmul, (z(4,0), z(0,3))
    yield "matmul_n0", jnp.matmul, (z(4,5), z(5,0))
    yield "matvec_0", jnp.matmul, (z(0,5), z(5))
    yield "bf16_matmul_b0", lambda a,b: jnp.matmul(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16)), (z(0,5,5), z(0,5,5))
    yield "f16_matmul_b0", lambda a,b: jnp.matmul(a.astype(jnp.float16), b.astype(jnp.float16)), (z(0,5,5), z(0,5,5))
    yield "int_matmul_b0", jnp.matmul, (zi(0,5,5), zi(0,5,5))
    yield "c64_matmul_b0", lambda a,b: jnp.matmul(a.astype(jnp.complex64), b), (z(0,5,5), z(0,5,5))
    yield "einsum_0", lambda a,b: jnp.einsum("bij,bjk->bik", a, b), (z(3,0,4), z(3,4,2))
    yield "conv_n0", lambda x,w: lax.conv(x, w, (1,1), "SAME"), (z(0,3,8,8), z(4,3,3,3))
    yield "conv_c0", lambda x,w: lax.conv(x, w, (1,1), "SAME"), (z(2,0,8,8), z(4,0,3,3))
    yield "conv_o0", lambda x,w: lax.conv(x, w, (1,1), "SAME"), (z(2,3,8,8), z(0,3,3,3))
    yield "conv_hw0", lambda x,w: lax.conv(x, w, (1,1), "SAME"), (z(2,3,0,8), z(4,3,3,3))
    yield "depthwise_0", lambda x,w: lax.conv_general_dilated(x, w, (1,1), "SAME", feature_group_count=3), (z(0,3,8,8), z(3,1,3,3))
    yield "sum_0", lambda x: x.sum(axis=1), (z(4,0,3),)
    yield "max_0", lambda x: x.max(axis=0, initial=-1.0), (z(0,3),)
    yield "argmax_0", lambda x: jnp.argmax(x, axis=1), (z(0,3),)
    yield "mean_0", lambda x: x.mean(axis=0), (z(0,3),)
    yield "cumsum_0", lambda x: jnp.cumsum(x, axis=1), (z(3,0),)
    yield "cumsum_outer0", lambda x: jnp.cumsum(x, axis=1), (z(0,5),)
    yield "sort_0", lambda x: jnp.sort(x, axis=1), (z(0,5),)
    yield "sort_inner0", lambda x: jnp.sort(x, axis=0), (z(5,0),)
    yield "argsort_0", lambda x: jnp.argsort(x, axis=1), (z(0,5),)
    yield "topk_0", lambda x: lax.top_k(x, 2)[0], (z(0,5),)
    yield "topk_k0", lambda x: lax.top_k(x, 0)[0], (z(3,5),)
    yield "reduce_window_0", lambda x: lax.reduce_window(x, 0.0, lax.add, (1,2), (1,1), "VALID"), (z(0,5),)
    yield "avg_pool_0", lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1,1,2,2), (1,1,2,2), "VALID"), (z(0,3,8,8),)
    yield "gather_0", lambda x, i: x[i], (z(5,3), np.zeros((0,), np.int32))
    yield "gather_from0", lambda x, i: jnp.take(x, i, axis=1, mode="clip"), (z(0,3), np.zeros((4,), np.int32))
    yield "scatter_0", lambda x, i, u: x.at[i].add(u), (z(5,3), np.zeros((0,), np.int32), z(0,3))
    yield "scatter_into0", lambda x, i, u: x.at[:, i].add(u), (z(0,3), np.zeros((2,), np.int32), z(0,2))
    yield "dynamic_slice_0", lambda x: lax.dynamic_slice(x, (1, 0), (2, 0)), (z(4,3),)
    yield "dus_0", lambda x, u: lax.dynamic_update_slice(x, u, (1, 0)), (z(4,3), z(0,3))
    yield "pad_0", lambda x: jnp.pad(x, ((1,1),(2,0))), (z(0,3),)
    yield "concat_0", lambda a, b: jnp.concatenate([a, b], axis=1), (z(2,0), z(2,3))
    yield "transpose_0", lambda x: x.T + 1, (z(0,7),)
    yield "reshape_0", lambda x: x.reshape(0, 3, 2) * 2, (z(0,6),)
    yield "broadcast_0", lambda x: jnp.broadcast_to(x, (0, 4, 3)) + 1, (z(4,3),)
    yield "iota_0", lambda x: x + jnp.arange(0, dtype=jnp.float32), (z(0),)
    yield "fft_0", lambda x: jnp.fft.fft(x, axis=1), (z(0,8),)
    yield "fft_len0", lambda x: jnp.fft.fft(x.astype(jnp.complex64), axis=0), (z(0,8),)
    yield "rfft_0", lambda x: jnp.fft.rfft(x, axis=1), (z(0,8),)
    yield "cholesky_b0", jnp.linalg.cholesky, (z(0,5,5),)
    yield "cholesky_n0", jnp.linalg.cholesky, (z(3,0,0),)
    yield "qr_b0", lambda x: jnp.linalg.qr(x)[1], (z(0,5,4),)
    yield "qr_n0", lambda x: jnp.linalg.qr(x)[0], (z(2,0,4),)
    yield "svd_b0", lambda x: jnp.linalg.svd(x, compute_uv=False), (z(0,4,3),)
    yield "eigh_b0", lambda x: jnp.linalg.eigh(x)[0], (z(0,4,4),)
    yield "eigh_n0", lambda x: jnp.linalg.eigh(x)[0], (z(2,0,0),)
    yield "lu_b0", lambda x: jax.scipy.linalg.lu_factor(x)[0], (z(0,4,4),)
    yield "inv_b0", jnp.linalg.inv, (z(0,4,4),)
    yield "det_b0", jnp.linalg.det, (z(0,4,4),)
    yield "solve_b0", jnp.linalg.solve, (z(0,4,4), z(0,4,2))
    yield "tri_solve_b0", lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True), (z(0,4,4), z(0,4,2))
    yield "tri_solve_rhs0", lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True), (z(4,4), z(4,0))
    yield "eig_b0", lambda x: jnp.linalg.eigvals(x), (z(0,3,3),)
    yield "random_0", lambda k: jax.random.normal(jax.random.key(0), (0, 3)) + k, (z(0,3),)
    yield "random_bits_0", lambda k: jax.random.bits(jax.random.key(1), (4, 0)).astype(jnp.float32) + k, (z(4,0),)
    yield "while_0", lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2, x), (z(0,3),)
    yield "scan_0", lambda x: lax.scan(lambda c, r: (c + r, c), jnp.zeros(3), x)[1], (z(0,3),)
    yield "scan_len0_carry", lambda x: lax.scan(lambda c, r: (c + r.sum(), r), 0.0, x)[0], (z(0,3),)
    yield "select_0", lambda p, a: jnp.where(p > 0, a, -a), (z(0,3), z(0,3))
    yield "clamp_0", lambda a: jnp.clip(a, 0.0, 1.0), (z(3,0),)
    yield "convert_0", lambda a: a.astype(jnp.int8).astype(jnp.float32), (z(0,3),)
    yield "rev_0", lambda a: a[::-1], (z(0,3),)
    yield "searchsorted_0", lambda a, v: jnp.searchsorted(a, v), (np.arange(5, dtype=np.float32), z(0))
    yield "searchsorted_in0", lambda a, v: jnp.searchsorted(a, v), (z(0), z(4))
    yield "unique_like_0", lambda a: jnp.cumprod(a, axis=0), (z(0,4),)
    yield "softmax_0", lambda a: jax.nn.softmax(a, axis=-1), (z(0,4),)
    yield "softmax_axis0", lambda a: jax.nn.softmax(a, axis=-1), (z(3,0),)
    yield "logsumexp_0", lambda a: jax.scipy.special.logsumexp(a, axis=0), (z(0,4),)
    yield "bitcast_0", lambda a: lax.bitcast_convert_type(a, jnp.int16).astype(jnp.float32), (z(0,2),)
    yield "int_div_0", lambda a, b: a // b, (zi(0,3), zi(0,3))
    yield "dot_general_k0_int", lambda a, b: a @ b, (zi(3,0), zi(0,2))
    yield "tridiagonal_b0", lambda d: lax.linalg.tridiagonal_solve(d, d + 2, d, d[..., None])[..., 0], (z(0,4),)
    yield "reduce_precision_0", lambda a: lax.reduce_precision(a, 5, 10), (z(0,3),)
    yield "cumlogsumexp_0", lambda a: lax.cumlogsumexp(a, axis=1), (z(0,5),)
    yield "cummax_0", lambda a: lax.cummax(a, axis=0), (z(0,5),)
    yield "segment_sum_0", lambda d: jax.ops.segment_sum(d, np.zeros(0, np.int32), num_segments=3), (z(0,2),)
    yield "nonzero_like_0", lambda a: jnp.sum(a > 0, axis=1), (z(0,3),)
    yield "einsum_outer0", lambda a, b: jnp.einsum("i,j->ij", a, b), (z(0), z(3))
    yield "batch_norm_0", lambda x: (x - x.mean(0)) / (x.std(0) + 1), (z(0,4),)
    yield "approx_max_k_0", lambda x: lax.approx_max_k(x, 2)[0], (z(0,8),)


kiln, cpu = jax.devices("kiln")[0], jax.devices("cpu")[0]
for name, f, args in cases():
    print("case", name, flush=True)
    run = lambda dev: jax.tree.leaves(jax.jit(f)(*[jax.device_put(a, dev) for a in args]))
    got, want = run(kiln), run(cpu)
    assert len(got) == len(want), name
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, err_msg=name)
print("all passed", flush=True)
'''


def test_zero_sized_programs_match_the_cpu_backend(run_python):
    result = run_python(_PROGRAM, env={"JAX_PLATFORMS": "kiln,cpu"}, check=False)
    last = [line for line in result.stdout.splitlines() if line.startswith("case ")][-1:]
    assert result.returncode == 0 and "all passed" in result.stdout, (
        f"exit {result.returncode} after {last}\n{result.stderr[-3000:]}")
