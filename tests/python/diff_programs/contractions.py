"""dot_general (batch and contracting dimensions, preferred_element_type) and
conv_general_dilated (strides, padding, dilations, feature and batch groups)
across dtypes."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from _common import FLOATS, INTS, Case, Inputs, short

_in = Inputs(4)
F32 = np.dtype(np.float32)
BF16 = np.dtype(jnp.bfloat16)
C64 = np.dtype(np.complex64)

_DOT_FORMS = {
    # name: (lhs shape, rhs shape, ((lhs contract, rhs contract), (lhs batch, rhs batch)))
    "mm": ((5, 7), (7, 3), (((1,), (0,)), ((), ()))),
    "mm_lhs_t": ((7, 5), (7, 3), (((0,), (0,)), ((), ()))),
    "mm_rhs_t": ((5, 7), (3, 7), (((1,), (1,)), ((), ()))),
    "vv": ((9,), (9,), (((0,), (0,)), ((), ()))),
    "mv": ((4, 9), (9,), (((1,), (0,)), ((), ()))),
    "batch": ((2, 5, 7), (2, 7, 3), (((2,), (1,)), ((0,), (0,)))),
    "batch_last": ((5, 7, 2), (7, 3, 2), (((1,), (0,)), ((2,), (2,)))),
    "two_contract": ((3, 4, 5), (5, 4, 6), (((1, 2), (1, 0)), ((), ()))),
    "outer": ((3,), (4,), (((), ()), ((), ()))),
    "empty_k": ((3, 0), (0, 4), (((1,), (0,)), ((), ()))),
}


def _dot_cases():
    cases = []
    for dtype in INTS + FLOATS + [C64]:
        tag = short(dtype)
        for name, (ls, rs, dims) in _DOT_FORMS.items():
            lhs = _in.small_ints(dtype, ls, -5, 6)
            rhs = _in.small_ints(dtype, rs, -5, 6)
            cases.append(Case(f"dot_{name}_{tag}",
                              functools.partial(lax.dot_general, dimension_numbers=dims),
                              (lhs, rhs)))
    a = _in.random_values(F32, (6, 33))
    b = _in.random_values(F32, (33, 5))
    cases += [
        Case("dot_f32_random", jnp.matmul, (a, b), 1e-5, 1e-5),
        Case("dot_bf16_pref_f32", lambda x, y: lax.dot(x, y, preferred_element_type=jnp.float32),
             (a.astype(BF16), b.astype(BF16)), 1e-5, 1e-5),
        Case("dot_f16_pref_f32", lambda x, y: lax.dot(x, y, preferred_element_type=jnp.float32),
             (a.astype(np.float16), b.astype(np.float16)), 1e-5, 1e-5),
        Case("dot_s8_pref_s32", lambda x, y: lax.dot(x, y, preferred_element_type=jnp.int32),
             (_in.random_values(np.int8, (4, 40)), _in.random_values(np.int8, (40, 3)))),
        Case("dot_u8_pref_u32", lambda x, y: lax.dot(x, y, preferred_element_type=jnp.uint32),
             (_in.random_values(np.uint8, (4, 40)), _in.random_values(np.uint8, (40, 3)))),
        Case("dot_s16_pref_s32", lambda x, y: lax.dot(x, y, preferred_element_type=jnp.int32),
             (_in.random_values(np.int16, (3, 10)), _in.random_values(np.int16, (10, 2)))),
        Case("dot_pred", lambda x, y: lax.dot(x, y),
             (_in.random_values(np.bool_, (4, 6)), _in.random_values(np.bool_, (6, 3)))),
        Case("dot_big_f32", jnp.matmul, (_in.random_values(F32, (257, 129)),
                                         _in.random_values(F32, (129, 65))), 1e-4, 1e-3),
        # bf16 and f16 products widen tile by tile in the GEMM (256 x 256
        # tiles, depth panels of 256): partial tiles and panels, and a
        # transposed operand.
        Case("dot_big_bf16", jnp.matmul, (_in.random_values(BF16, (257, 300)),
                                          _in.random_values(BF16, (300, 130))), 1e-2, 1e-2),
        Case("dot_big_f16", jnp.matmul, (_in.random_values(np.dtype(np.float16), (257, 300)),
                                         _in.random_values(np.dtype(np.float16), (300, 130))),
             2e-3, 2e-3),
        Case("dot_big_lhs_t_f16",
             functools.partial(lax.dot_general, dimension_numbers=(((0,), (0,)), ((), ()))),
             (_in.random_values(np.dtype(np.float16), (300, 40)),
              _in.random_values(np.dtype(np.float16), (300, 270))), 2e-3, 2e-3),
        Case("dot_specials_f32", jnp.matmul,
             (np.array([[np.inf, 1.0], [np.nan, 0.0], [0.0, 0.0]], np.float32),
              np.array([[0.0, 1.0], [1.0, -np.inf]], np.float32))),
        Case("einsum_three_operands", lambda x, y, z: jnp.einsum("ij,jk,kl->il", x, y, z),
             (a[:, :8], _in.random_values(F32, (8, 4)), _in.random_values(F32, (4, 2))),
             1e-5, 1e-4),
        Case("einsum_trace_diag", lambda x: (jnp.einsum("ii->", x), jnp.einsum("ii->i", x)),
             (_in.random_values(F32, (5, 5)),), 1e-5, 1e-5),
        Case("tensordot_axes2", lambda x, y: jnp.tensordot(x, y, axes=2),
             (_in.random_values(F32, (3, 4, 5)), _in.random_values(F32, (4, 5, 2))), 1e-5, 1e-5),
    ]
    return cases


def _conv(x, w, **kwargs):
    return lax.conv_general_dilated(x, w, **kwargs)


_CONV_FORMS = {
    "valid": dict(window_strides=(1, 1), padding="VALID"),
    "same_stride2": dict(window_strides=(2, 2), padding="SAME"),
    "pad_asym": dict(window_strides=(1, 2), padding=((2, 0), (1, 3))),
    "pad_negative": dict(window_strides=(1, 1), padding=((-1, 1), (0, -1))),
    "rhs_dilation": dict(window_strides=(1, 1), padding="SAME", rhs_dilation=(2, 1)),
    "lhs_dilation": dict(window_strides=(1, 1), padding=((1, 1), (2, 2)), lhs_dilation=(2, 2)),
    "all_dilations": dict(window_strides=(2, 1), padding=((1, 2), (0, 1)), lhs_dilation=(1, 2),
                          rhs_dilation=(2, 2)),
}


def _conv_cases():
    cases = []
    x = _in.random_values(F32, (2, 4, 9, 8))  # NCHW
    w = _in.random_values(F32, (6, 4, 3, 2))  # OIHW
    for name, kwargs in _CONV_FORMS.items():
        cases.append(Case(f"conv_{name}_f32", functools.partial(_conv, **kwargs), (x, w),
                          1e-5, 1e-4))
    for dtype in (np.dtype(np.float16), BF16):
        cases.append(Case(f"conv_same_{short(dtype)}",
                          functools.partial(_conv, window_strides=(1, 1), padding="SAME"),
                          (x.astype(dtype), w.astype(dtype)), 2e-2, 2e-2))
    xi = _in.small_ints(np.int32, (2, 4, 9, 8), -3, 4)
    wi = _in.small_ints(np.int32, (6, 4, 3, 2), -3, 4)
    cases += [
        Case("conv_valid_s32", functools.partial(_conv, window_strides=(1, 1), padding="VALID"),
             (xi, wi)),
        Case("conv_groups2_f32", functools.partial(_conv, window_strides=(1, 1), padding="SAME",
                                                   feature_group_count=2),
             (x, _in.random_values(F32, (6, 2, 3, 3))), 1e-5, 1e-4),
        Case("conv_depthwise_f32", functools.partial(_conv, window_strides=(2, 1), padding="SAME",
                                                     feature_group_count=4),
             (x, _in.random_values(F32, (8, 1, 3, 3))), 1e-5, 1e-4),
        Case("conv_batch_groups_f32", functools.partial(_conv, window_strides=(1, 1),
                                                        padding="VALID", batch_group_count=2),
             (x, _in.random_values(F32, (6, 4, 2, 2))), 1e-5, 1e-4),
        Case("conv_nhwc_hwio_f32", functools.partial(
            _conv, window_strides=(1, 1), padding="SAME",
            dimension_numbers=("NHWC", "HWIO", "NHWC")),
            (_in.random_values(F32, (2, 7, 6, 3)), _in.random_values(F32, (3, 3, 3, 5))),
            1e-5, 1e-4),
        Case("conv_1d_f32", functools.partial(_conv, window_strides=(2,), padding="SAME"),
             (_in.random_values(F32, (3, 2, 20)), _in.random_values(F32, (4, 2, 5))), 1e-5, 1e-4),
        Case("conv_3d_f32", functools.partial(_conv, window_strides=(1, 1, 1), padding="VALID"),
             (_in.random_values(F32, (1, 2, 5, 4, 4)), _in.random_values(F32, (3, 2, 2, 2, 2))),
             1e-5, 1e-4),
        Case("conv_transpose_f32", lambda a, b: lax.conv_transpose(
            a, b, strides=(2, 2), padding="SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")),
             (x, _in.random_values(F32, (4, 4, 3, 3))), 1e-5, 1e-4),
        Case("conv_1x1_f32", functools.partial(_conv, window_strides=(1, 1), padding="VALID"),
             (x, _in.random_values(F32, (5, 4, 1, 1))), 1e-5, 1e-4),
        Case("conv_window_bigger_than_input", functools.partial(
            _conv, window_strides=(1, 1), padding="VALID"),
             (_in.random_values(F32, (1, 1, 2, 2)), _in.random_values(F32, (1, 1, 3, 3)))),
        Case("conv_c64", functools.partial(_conv, window_strides=(1, 1), padding="SAME"),
             (_in.small_ints(C64, (1, 2, 5, 5)), _in.small_ints(C64, (2, 2, 3, 3)))),
    ]
    # Kernel gradients: their convolution's window is the whole image, each
    # output row thousands of columns deep (Kiln GEMMs such rows a slice of
    # window positions at a time, kernels::ConvSlicesDepth).
    for name, strides in (("", (1, 1)), ("_stride2", (2, 2))):
        cases.append(Case(
            f"conv_kernel_grad{name}_f32",
            functools.partial(_kernel_grad, window_strides=strides, padding="SAME",
                              dimension_numbers=("NHWC", "HWIO", "NHWC")),
            (_in.random_values(F32, (4, 24 * strides[0], 24 * strides[1], 8), scale=1.0),
             _in.random_values(F32, (3, 3, 8, 16), scale=1.0),
             _in.random_values(F32, (4, 24, 24, 16), scale=1.0)),
            # Each element sums 2304 products (magnitude ~50 in all): XLA
            # and Kiln add them in different orders.
            1e-4, 1e-3))
    return cases


def _kernel_grad(x, w, dy, **kwargs):
    _, vjp = jax.vjp(lambda kernel: lax.conv_general_dilated(x, kernel, **kwargs), w)
    return vjp(dy)[0]


CASES = _dot_cases() + _conv_cases()
