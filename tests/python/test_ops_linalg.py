"""Contractions and indexing on Kiln, checked against JAX's CPU backend
(differential.py): matmuls and einsums in several dtypes, convolutions in
every layout and grouping (and their gradients), gather/scatter through
numpy indexing and .at[], dynamic slices, pad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import differential
from differential import Case

_random = np.random.RandomState(0)


def _normal(*shape, dtype=np.float32):
    return _random.randn(*shape).astype(dtype)


A = _normal(64, 32)
B = _normal(32, 48)
V = _normal(32)
BATCH_A = _normal(4, 6, 5)
BATCH_B = _normal(4, 5, 7)
BF_A = _normal(16, 40, dtype=jnp.bfloat16)
BF_B = _normal(40, 24, dtype=jnp.bfloat16)
HALF_A = _normal(16, 40, dtype=np.float16)
HALF_B = _normal(40, 24, dtype=np.float16)
INT_A = _random.randint(-2**30, 2**30, size=(8, 9)).astype(np.int32)
INT_B = _random.randint(-2**30, 2**30, size=(9, 5)).astype(np.int32)
I8_A = _random.randint(-128, 128, size=(6, 33)).astype(np.int8)
I8_B = _random.randint(-128, 128, size=(33, 7)).astype(np.int8)
# Deep enough to split the depth into passes (kernels::MatMulInt8), odd
# sizes, the extremes.
I8_C = _random.randint(-128, 128, size=(70, 301)).astype(np.int8)
I8_D = _random.randint(-128, 128, size=(301, 45)).astype(np.int8)
I8_C[0, :] = -128
I8_D[:, 0] = -128
I16_C = _random.randint(-32768, 32768, size=(70, 301)).astype(np.int16)
I16_D = _random.randint(-32768, 32768, size=(301, 45)).astype(np.int16)
U8_C = _random.randint(0, 256, size=(70, 301)).astype(np.uint8)
U8_D = _random.randint(0, 256, size=(301, 45)).astype(np.uint8)
C_A = (_normal(5, 6) + 1j * _normal(5, 6)).astype(np.complex64)
C_B = (_normal(6, 3) + 1j * _normal(6, 3)).astype(np.complex64)
Q = _normal(2, 3, 8, 16)  # batch, heads, queries, depth
K = _normal(2, 3, 10, 16)

NCHW = _normal(2, 4, 9, 9)
OIHW = _normal(6, 4, 3, 3)
NHWC = _normal(2, 9, 9, 4)
HWIO = _normal(3, 3, 4, 6)
GROUPED = _normal(6, 2, 3, 3)  # OIHW for feature_group_count=2 on 4 features
DEPTHWISE = _normal(8, 1, 3, 3)  # OIHW, 4 features x multiplier 2
SIGNAL = _normal(3, 2, 20)  # NCW
FILTER_1D = _normal(4, 2, 5)
VOLUME = _normal(1, 2, 6, 5, 4)  # NCDHW
FILTER_3D = _normal(3, 2, 2, 3, 2)

ROWS = _normal(7, 5)
IDX = np.array([3, 0, 6, 3, -1], np.int32)
IDX2 = np.array([[1, 2], [4, 0]], np.int32)
OOB = np.array([2, 9, -20, 6], np.int32)
UPD = _normal(5, 5)
TAKE_IDX = _random.randint(0, 5, size=(7, 3)).astype(np.int32)
IMAGE_I = _random.randint(-9, 9, size=(4, 6)).astype(np.int32)


def _conv(x, w, **kwargs):
    return lax.conv_general_dilated(x, w, **kwargs)


def _conv_vjp(x, w, **kwargs):
    out, vjp = jax.vjp(lambda a, b: _conv(a, b, **kwargs), x, w)
    return vjp(jnp.cos(out))


def _dus_loop(x):
    # Each step copies row i of x, doubled, into the carry.
    def step(i, carry):
        row = lax.dynamic_slice(x, (i, 0), (1, x.shape[1]))
        return lax.dynamic_update_slice(carry, row * 2.0, (i, 0))

    return lax.fori_loop(0, x.shape[0], step, jnp.zeros_like(x))


CASES = [
    # --- matmul and einsum ---
    Case("matmul_f32", jnp.matmul, (A, B), rtol=1e-5, atol=1e-5),
    Case("matmul_lhs_transposed", lambda a, b: a.T @ b, (B, B[:, :16]), rtol=1e-5, atol=1e-5),
    Case("matmul_rhs_transposed", lambda a, b: a @ b.T, (A, A[:10]), rtol=1e-5, atol=1e-5),
    Case("matmul_bf16", jnp.matmul, (BF_A, BF_B)),
    Case("matmul_bf16_to_f32",
         lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float32), (BF_A, BF_B),
         rtol=1e-5, atol=1e-5),
    Case("matmul_f16", jnp.matmul, (HALF_A, HALF_B), rtol=2e-3, atol=2e-3),
    Case("matmul_int32_wraps", jnp.matmul, (INT_A, INT_B)),
    Case("matmul_int8_to_int32",
         lambda a, b: lax.dot(a, b, preferred_element_type=jnp.int32), (I8_A, I8_B)),
    Case("matmul_int8_deep_to_int32",
         lambda a, b: lax.dot(a, b, preferred_element_type=jnp.int32), (I8_C, I8_D)),
    Case("matmul_int16_to_int32_wraps",
         lambda a, b: lax.dot(a, b, preferred_element_type=jnp.int32), (I16_C, I16_D)),
    Case("matmul_uint8_to_int32",
         lambda a, b: lax.dot(a, b, preferred_element_type=jnp.int32), (U8_C, U8_D)),
    Case("matmul_int8_transposed_batched_to_int32",
         lambda a, b: jnp.einsum("bki,bkj->bij", a, b, preferred_element_type=jnp.int32),
         (I8_C[:, :300].reshape(2, 35, 300).transpose(0, 2, 1),
          np.stack([I8_D[:300], I8_D[1:]]))),
    Case("matmul_complex64", jnp.matmul, (C_A, C_B), rtol=1e-5, atol=1e-5),
    Case("dot_vector_vector", jnp.dot, (V, V), rtol=1e-5, atol=1e-5),
    Case("dot_matrix_vector", jnp.dot, (A, V), rtol=1e-5, atol=1e-5),
    Case("dot_vector_matrix", jnp.dot, (V, B), rtol=1e-5, atol=1e-5),
    Case("einsum_batched", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (BATCH_A, BATCH_B),
         rtol=1e-5, atol=1e-5),
    Case("einsum_attention", lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k), (Q, K),
         rtol=1e-5, atol=1e-5),
    Case("einsum_batch_last", lambda a, b: jnp.einsum("ijb,jkb->ikb", a, b),
         (BATCH_A.transpose(1, 2, 0), BATCH_B.transpose(1, 2, 0)), rtol=1e-5, atol=1e-5),
    Case("einsum_two_contracting", lambda a, b: jnp.einsum("ijk,kjl->il", a, b),
         (_normal(3, 4, 5), _normal(5, 4, 6)), rtol=1e-5, atol=1e-5),
    Case("matmul_empty_depth", jnp.matmul, (np.zeros((3, 0), np.float32),
                                            np.zeros((0, 4), np.float32))),
    Case("matmul_constants_folded", lambda: jnp.arange(12.0).reshape(3, 4) @ jnp.ones((4, 2))),
    # --- convolution ---
    Case("conv_nchw_valid", lambda x, w: _conv(x, w, window_strides=(1, 1), padding="VALID"),
         (NCHW, OIHW), rtol=1e-5, atol=1e-5),
    Case("conv_nchw_same_strided",
         lambda x, w: _conv(x, w, window_strides=(2, 2), padding="SAME"), (NCHW, OIHW),
         rtol=1e-5, atol=1e-5),
    Case("conv_nhwc_hwio",
         lambda x, w: _conv(x, w, window_strides=(1, 2), padding=((1, 0), (2, 1)),
                            dimension_numbers=("NHWC", "HWIO", "NHWC")), (NHWC, HWIO),
         rtol=1e-5, atol=1e-5),
    Case("conv_rhs_dilation",
         lambda x, w: _conv(x, w, window_strides=(1, 1), padding="SAME", rhs_dilation=(2, 2)),
         (NCHW, OIHW), rtol=1e-5, atol=1e-5),
    Case("conv_transpose_lhs_dilation",
         lambda x, w: lax.conv_transpose(x, w, strides=(2, 2), padding="SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC")),
         (NHWC, HWIO), rtol=1e-5, atol=1e-5),
    Case("conv_grouped",
         lambda x, w: _conv(x, w, window_strides=(1, 1), padding="SAME", feature_group_count=2),
         (NCHW, GROUPED), rtol=1e-5, atol=1e-5),
    Case("conv_depthwise",
         lambda x, w: _conv(x, w, window_strides=(2, 2), padding="VALID", feature_group_count=4),
         (NCHW, DEPTHWISE), rtol=1e-5, atol=1e-5),
    Case("conv_1d", lambda x, w: _conv(x, w, window_strides=(3,), padding=((2, 1),)),
         (SIGNAL, FILTER_1D), rtol=1e-5, atol=1e-5),
    Case("conv_3d", lambda x, w: _conv(x, w, window_strides=(1, 2, 1), padding="SAME"),
         (VOLUME, FILTER_3D), rtol=1e-5, atol=1e-5),
    Case("conv_bf16", lambda x, w: _conv(x, w, window_strides=(1, 1), padding="SAME"),
         (NCHW.astype(jnp.bfloat16), OIHW.astype(jnp.bfloat16)), rtol=2e-2, atol=5e-2),
    Case("conv_grad_strided",
         lambda x, w: _conv_vjp(x, w, window_strides=(2, 2), padding="SAME"), (NCHW, OIHW),
         rtol=1e-4, atol=1e-4),
    Case("conv_grad_depthwise",
         lambda x, w: _conv_vjp(x, w, window_strides=(1, 1), padding="SAME",
                                feature_group_count=4), (NCHW, DEPTHWISE), rtol=1e-4, atol=1e-4),
    Case("conv_grad_grouped_dilated",
         lambda x, w: _conv_vjp(x, w, window_strides=(1, 1), padding="VALID",
                                rhs_dilation=(2, 1), feature_group_count=2), (NCHW, GROUPED),
         rtol=1e-4, atol=1e-4),
    # --- gather ---
    Case("index_rows", lambda x, i: x[i], (ROWS, IDX)),
    Case("index_columns", lambda x, i: x[:, i], (ROWS, IDX2)),
    Case("index_pairs", lambda x, i: x[i[:, 0], i[:, 1]], (ROWS, IDX2)),
    Case("index_clamped", lambda x, i: jnp.take(x, i, axis=0, mode="clip"), (ROWS, OOB)),
    Case("index_fill", lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=-1.0),
         (ROWS, OOB)),
    Case("take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1), (ROWS, TAKE_IDX)),
    Case("index_int_scalar", lambda x, i: x[i[0], 2:], (IMAGE_I, IDX)),
    # Windows of 2, 4 or 8 bytes starting at an odd element (one move per
    # window; it was read at the element before): JAX emits such gathers in
    # the gradient of x.at[1:].add(...).
    *[Case(f"window_pairs_at_odd_starts_{np.dtype(t).name}",
           lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers(
               offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,)),
               slice_sizes=(2,)), (np.arange(9).astype(t), np.array([[1], [3], [6]], np.int32)))
      for t in (np.float32, np.float16, np.uint8)],
    Case("grad_of_at_add_on_a_slice",
         jax.grad(lambda d, y: (y.at[1:].add(d[1:, None] * y[:-1])).sum()),
         (_normal(5), _normal(5, 1))),
    # --- scatter ---
    Case("at_add_duplicates", lambda x, i, u: x.at[i].add(u), (ROWS, IDX, UPD)),
    Case("at_set", lambda x, i, u: x.at[i].set(u), (ROWS, np.array([0, 2, 4, 6, 1], np.int32),
                                                    UPD)),
    Case("at_max", lambda x, i, u: x.at[i].max(u), (ROWS, IDX, UPD)),
    Case("at_min_int", lambda x, i: x.at[i[:4] % 4].min(-x[::-1]), (IMAGE_I, IDX)),
    Case("at_mul", lambda x, i, u: x.at[i].multiply(u), (ROWS, IDX, UPD)),
    Case("at_add_dropped_out_of_bounds", lambda x, i: x.at[i].add(1.0, mode="drop"),
         (ROWS, OOB)),
    Case("at_apply_generic_body", lambda x, i: x.at[i].apply(lambda v: v * v - 1.0),
         (ROWS, IDX)),
    Case("at_add_pairs", lambda x, i: x.at[i[:, 0], i[:, 1]].add(10.0), (ROWS, IDX2)),
    Case("at_add_batched_along_axis",
         lambda x, i: jax.vmap(lambda r, j: r.at[j].add(1.0))(x, i), (ROWS, TAKE_IDX)),
    # --- dynamic slices and pad ---
    Case("dynamic_slice_clamped", lambda x, i: lax.dynamic_slice(x, (i[0], i[1]), (3, 2)),
         (ROWS, np.array([6, -3], np.int32))),
    Case("dynamic_update_slice_clamped",
         lambda x, u, i: lax.dynamic_update_slice(x, u, (i[0], i[1])),
         (ROWS, _normal(2, 3), np.array([9, 1], np.int32))),
    Case("dynamic_update_slice_in_loop", _dus_loop, (ROWS,)),
    Case("pad_constant", lambda x: jnp.pad(x, ((1, 2), (0, 3)), constant_values=-5.0), (ROWS,)),
    Case("pad_edge", lambda x: jnp.pad(x, ((2, 1), (1, 2)), mode="edge"), (ROWS,)),
    Case("pad_reflect", lambda x: jnp.pad(x, 2, mode="reflect"), (ROWS,)),
    Case("pad_symmetric", lambda x: jnp.pad(x, ((1, 3), (2, 0)), mode="symmetric"), (ROWS,)),
    Case("pad_wrap", lambda x: jnp.pad(x, ((3, 1), (1, 1)), mode="wrap"), (ROWS,)),
    Case("lax_pad_negative_interior",
         lambda x: lax.pad(x, 0.5, ((-1, 2, 1), (2, -3, 2))), (ROWS,)),
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


def test_large_matmul_splits_over_threads():
    # Big enough that the GEMM is split into blocks over the thread pool.
    a = np.random.RandomState(1).randn(300, 257).astype(np.float32)
    b = np.random.RandomState(2).randn(257, 301).astype(np.float32)
    got = np.asarray(jax.jit(jnp.matmul)(a, b))
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
