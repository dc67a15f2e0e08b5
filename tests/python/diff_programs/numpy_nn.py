"""A broad sample of jax.numpy, jax.nn and jax.random (default threefry
implementation, compared bit-exactly)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from _common import Case, Inputs

_in = Inputs(5)
F32 = np.dtype(np.float32)
X = _in.random_values(F32, (4, 6))
X3 = _in.random_values(F32, (3, 5, 7))
V = _in.random_values(F32, (11,))
I = _in.small_ints(np.int32, (4, 6), -5, 6)
SPECIAL = _in.specials(F32, 40)


def _numpy_cases():
    return [
        Case("jnp_where_3", lambda a: jnp.where(a > 0, a, -a * 2), (X,)),
        Case("jnp_clip", lambda a: jnp.clip(a, -1.0, 0.5), (SPECIAL,)),
        Case("jnp_einsum_bij", lambda a: jnp.einsum("bij,bkj->bik", a, a), (X3,), 1e-5, 1e-5),
        Case("jnp_linspace_endpoint", lambda: (jnp.linspace(0, 1, 7, endpoint=False),
                                               jnp.logspace(0, 2, 5), jnp.geomspace(1, 8, 4))),
        Case("jnp_cumsum_cumprod", lambda a: (jnp.cumsum(a, axis=1), jnp.cumprod(a, axis=0)),
             (I,)),
        Case("jnp_sort_argsort", lambda a: (jnp.sort(a, axis=0), jnp.argsort(a, axis=1)), (X,)),
        Case("jnp_unique_size", lambda a: jnp.unique(a, size=8, fill_value=-1), (I,)),
        Case("jnp_unique_counts", lambda a: jnp.unique(a, size=12, return_counts=True,
                                                       return_index=True), (I,)),
        Case("jnp_histogram", lambda a: jnp.histogram(a, bins=5, range=(-3, 3)), (V,)),
        Case("jnp_bincount", lambda a: jnp.bincount(a, length=10), (np.abs(I).ravel(),)),
        Case("jnp_take_along_axis", lambda a, i: jnp.take_along_axis(a, i, axis=1),
             (X, np.abs(I) % 6)),
        Case("jnp_roll", lambda a: (jnp.roll(a, 3), jnp.roll(a, -2, axis=1)), (X,)),
        Case("jnp_tile_repeat", lambda a: (jnp.tile(a, (2, 3)), jnp.repeat(a, 2, axis=0),
                                           jnp.repeat(a, np.array([1, 0, 2, 1]), axis=0,
                                                      total_repeat_length=4)), (X,)),
        Case("jnp_meshgrid", lambda a, b: jnp.meshgrid(a, b, indexing="ij"), (V[:3], V[:4])),
        Case("jnp_polyval", lambda c, x: jnp.polyval(c, x), (V[:4], X), 1e-5, 1e-5),
        Case("jnp_diff_gradient", lambda a: (jnp.diff(a, axis=1), jnp.gradient(a, axis=0)), (X,)),
        Case("jnp_tri_masks", lambda a: (jnp.triu(a), jnp.tril(a, -1), jnp.eye(4, 6, 1)), (X,)),
        Case("jnp_outer_kron", lambda a, b: (jnp.outer(a, b), jnp.kron(a[:3], b[:2])),
             (V, V[::-1])),
        Case("jnp_flip_rot90", lambda a: (jnp.flip(a), jnp.rot90(a)), (X,)),
        Case("jnp_argwhere_size", lambda a: jnp.argwhere(a > 0, size=10, fill_value=-1), (I,)),
        Case("jnp_nonzero_size", lambda a: jnp.nonzero(a, size=6), (I,)),
        Case("jnp_searchsorted", lambda s, q: jnp.searchsorted(s, q), (np.sort(V), X.ravel())),
        Case("jnp_interp", lambda x: jnp.interp(x, np.float32([-1, 0, 2]), np.float32([0, 1, 5])),
             (X,), 1e-5, 1e-5),
        Case("jnp_nan_reductions", lambda a: (jnp.nansum(a), jnp.nanmax(a), jnp.nanmin(a),
                                              jnp.nanmean(a[np.isfinite(SPECIAL)][:5])),
             (SPECIAL,)),
        Case("jnp_median_percentile", lambda a: (jnp.median(a), jnp.percentile(a, 30.0)), (V,)),
        Case("jnp_floor_divide_mod", lambda a, b: (a // b, a % b, jnp.fmod(a, b)),
             (I, np.where(I[::-1] == 0, 3, I[::-1]))),
        Case("jnp_float_mod_divmod", lambda a, b: jnp.divmod(a, b), (X, X[::-1] + 0.25)),
        Case("jnp_round_decimals", lambda a: (jnp.round(a, 2), jnp.around(a * 100, -1)), (X,)),
        Case("jnp_isclose_allclose", lambda a, b: (jnp.isclose(a, b), jnp.allclose(a, a)),
             (SPECIAL, SPECIAL[::-1])),
        Case("jnp_nan_to_num", lambda a: jnp.nan_to_num(a), (SPECIAL,)),
        Case("jnp_logaddexp_hypot", lambda a, b: (jnp.logaddexp(a, b), jnp.hypot(a, b)),
             (X, X[::-1]), 1e-5, 1e-5),
        Case("jnp_sinc_deg", lambda a: (jnp.sinc(a), jnp.deg2rad(a), jnp.arctan2(a, 1.0)), (X,),
             1e-5, 1e-6),
        Case("jnp_stack_split", lambda a: jnp.split(jnp.stack([a, a * 2], 1), 3, axis=0), (X[:3],)),
        Case("jnp_cov_corrcoef", lambda a: (jnp.cov(a), jnp.corrcoef(a)), (X,), 1e-5, 1e-5),
        Case("jnp_convolve", lambda a, b: (jnp.convolve(a, b), jnp.correlate(a, b, "same")),
             (V, V[:4]), 1e-5, 1e-5),
        Case("jnp_trapezoid_vander", lambda a: (jnp.trapezoid(a), jnp.vander(a[:4], 3)), (V,),
             1e-5, 1e-5),
        Case("jnp_argmax_keepdims", lambda a: jnp.argmax(a, axis=1, keepdims=True), (X3,)),
        Case("jnp_select_piecewise", lambda a: (
            jnp.select([a < -1, a > 1], [a * 0, a * 2], default=a),
            jnp.piecewise(a, [a < 0], [lambda v: -v, lambda v: v * v])), (X,)),
        Case("jnp_count_nonzero", lambda a: (jnp.count_nonzero(a, axis=0), jnp.sign(a)), (I,)),
        Case("jnp_frexp_ldexp", lambda a: (jnp.frexp(a), jnp.ldexp(a, 3)), (X,)),
        Case("jnp_bitwise_count_invert", lambda a: (jnp.bitwise_count(a), ~a,
                                                    jnp.left_shift(a, 2)), (I,)),
        Case("jnp_packbits", lambda a: jnp.packbits(a > 0), (I,)),
        Case("jnp_cross_inner", lambda a, b: (jnp.cross(a, b), jnp.inner(a, b)),
             (X[:, :3], X[::-1, :3]), 1e-5, 1e-5),
        Case("jnp_matrix_power", lambda a: jnp.linalg.matrix_power(a, 3),
             (_in.random_values(F32, (4, 4), 0.5),), 1e-5, 1e-5),
        Case("jnp_norms", lambda a: (jnp.linalg.norm(a), jnp.linalg.norm(a, 1, axis=1),
                                     jnp.linalg.norm(a, np.inf)), (X,), 1e-5, 1e-5),
        Case("jnp_average_weights", lambda a, w: jnp.average(a, axis=1, weights=w),
             (X, np.abs(V[:6])), 1e-5, 1e-5),
        Case("jnp_ravel_multi_index", lambda i: jnp.ravel_multi_index((i[0], i[1]), (6, 6),
                                                                       mode="clip"), (np.abs(I[:2]),)),
        Case("jnp_diagonal_trace", lambda a: (jnp.diagonal(a, 1), jnp.trace(a)), (X,), 1e-5, 1e-6),
        Case("jnp_int_float_promotion", lambda a, b: (a + b, a * 1.5, a / 2), (I, X)),
        Case("jnp_uint8_wraps", lambda a: (a + np.uint8(250), a * np.uint8(3)),
             (np.arange(0, 256, 7, dtype=np.uint8),)),
    ]


def _nn_cases():
    nn = jax.nn
    return [
        Case("nn_relu_relu6", lambda a: (nn.relu(a), nn.relu6(a)), (SPECIAL,)),
        Case("nn_gelu_exact", lambda a: nn.gelu(a, approximate=False), (X,), 1e-5, 1e-6),
        Case("nn_gelu_tanh", lambda a: nn.gelu(a, approximate=True), (X,), 1e-5, 1e-6),
        Case("nn_softmax", lambda a: (nn.softmax(a), nn.softmax(a, axis=0)), (X,), 1e-5, 1e-6),
        Case("nn_log_softmax", lambda a: nn.log_softmax(a, axis=-1), (X3,), 1e-5, 1e-5),
        Case("nn_logsumexp", lambda a: (nn.logsumexp(a), nn.logsumexp(a, axis=1)), (X3,),
             1e-5, 1e-5),
        Case("nn_logsumexp_inf", lambda a: nn.logsumexp(a),
             (np.array([-np.inf, -np.inf], np.float32),)),
        Case("nn_one_hot", lambda i: (nn.one_hot(i, 5), nn.one_hot(i, 3, dtype=jnp.int32)),
             (np.array([0, 4, 2, -1, 7], np.int32),)),
        Case("nn_silu_sigmoid", lambda a: (nn.silu(a), nn.sigmoid(a), nn.log_sigmoid(a)),
             (X,), 1e-5, 1e-6),
        Case("nn_softplus_elu", lambda a: (nn.softplus(a), nn.elu(a), nn.selu(a), nn.celu(a),
                                           nn.leaky_relu(a), nn.hard_tanh(a), nn.mish(a)),
             (X,), 1e-5, 1e-6),
        Case("nn_standardize", lambda a: nn.standardize(a, axis=1), (X,), 1e-5, 1e-5),
        Case("nn_glu_squareplus", lambda a: (nn.glu(a), nn.squareplus(a), nn.sparse_plus(a)),
             (X,), 1e-5, 1e-6),
        Case("nn_softmax_specials", lambda a: nn.softmax(a.reshape(5, 8), axis=1), (SPECIAL,)),
        Case("nn_dot_product_attention", lambda q, k, v: nn.dot_product_attention(q, k, v),
             (_in.random_values(F32, (1, 4, 2, 8)), _in.random_values(F32, (1, 5, 2, 8)),
              _in.random_values(F32, (1, 5, 2, 8))), 1e-5, 1e-5),
    ]


def _random_cases():
    random = jax.random
    seeds = [0, 1, 42, 2**31 - 1]
    cases = []
    for seed in seeds:
        cases += [
            Case(f"random_bits_{seed}", lambda k: random.bits(random.key(k), (3, 5)),
                 (np.uint32(seed),)),
            Case(f"random_uniform_{seed}", lambda k: random.uniform(random.key(k), (7,)),
                 (np.uint32(seed),), 0, 0),
            # XLA's CPU backend contracts `u * (max - min) + min` into one FMA;
            # Kiln rounds the multiply and the add separately: 1 ulp apart.
            Case(f"random_uniform_range_{seed}",
                 lambda k: random.uniform(random.key(k), (7,), minval=-2.0, maxval=3.0),
                 (np.uint32(seed),), 0, 2.5e-7),
            Case(f"random_normal_{seed}", lambda k: random.normal(random.key(k), (4, 3)),
                 (np.uint32(seed),), 1e-6, 1e-6),
            Case(f"random_randint_{seed}", lambda k: random.randint(random.key(k), (9,), -5, 50),
                 (np.uint32(seed),)),
            Case(f"random_permutation_{seed}", lambda k: random.permutation(random.key(k), 12),
                 (np.uint32(seed),)),
            Case(f"random_categorical_{seed}",
                 lambda k, logits: random.categorical(random.key(k), logits, shape=(6, 4)),
                 (np.uint32(seed), X[0, :4].copy())),
            Case(f"random_bernoulli_{seed}",
                 lambda k: random.bernoulli(random.key(k), 0.3, (20,)), (np.uint32(seed),)),
            Case(f"random_split_fold_{seed}", lambda k: jax.random.key_data(
                random.split(random.fold_in(random.key(k), 7), 3)), (np.uint32(seed),)),
        ]
    cases += [
        Case("random_legacy_prngkey", lambda: random.uniform(random.PRNGKey(3), (5,)), (), 0, 0),
        Case("random_choice_noreplace", lambda: random.choice(random.key(5), 10, (4,),
                                                             replace=False)),
        Case("random_bits_u8_u16", lambda: (random.bits(random.key(9), (5,), jnp.uint8),
                                            random.bits(random.key(9), (5,), jnp.uint16))),
        Case("random_truncated_normal", lambda: random.truncated_normal(random.key(2), -1.0, 1.0,
                                                                         (6,)), (), 1e-6, 1e-6),
        Case("random_shuffle_axis", lambda a: random.permutation(random.key(4), a, axis=1), (X,)),
        Case("random_uniform_bf16", lambda: random.uniform(random.key(6), (8,), jnp.bfloat16),
             (), 0, 0),
        Case("random_gumbel_exponential", lambda: (random.gumbel(random.key(8), (4,)),
                                                   random.exponential(random.key(8), (4,))),
             (), 1e-6, 1e-6),
    ]
    return cases


def _row_group_cases():
    """Normalizations over arrays large enough (256 KiB and up) for Kiln to
    run the reductions and the loops reading their rows block by block
    (compiler/row_groups.cc), with row counts that leave a short last
    block; and neighbours that must not be grouped (statistics read across
    rows, reductions over leading axes)."""
    nn = jax.nn

    def layernorm(x, gamma, beta):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta

    def rmsnorm(x):
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)

    big = _in.random_values(F32, (600, 384))
    gamma, beta = _in.random_values(F32, (384,)), _in.random_values(F32, (384,))
    scores = _in.random_values(F32, (4, 130, 256))
    bf16 = _in.random_values(np.dtype(jnp.bfloat16), (250, 1024), 1.0)
    f16 = _in.random_values(np.dtype(np.float16), (300, 512), 1.0)
    ints = _in.small_ints(np.int32, (513, 600), -50, 51)
    square = _in.random_values(F32, (512, 512), 1.0)
    return [
        Case("rows_layernorm", layernorm, (big, gamma, beta), 1e-4, 1e-4),
        Case("rows_standardize_3d", lambda a: nn.standardize(a, axis=-1),
             (scores,), 1e-4, 1e-4),
        Case("rows_softmax", lambda a: nn.softmax(a, axis=-1), (scores,), 1e-5, 1e-7),
        Case("rows_log_softmax_logsumexp",
             lambda a: (nn.log_softmax(a, axis=-1), nn.logsumexp(a, axis=-1)),
             (big,), 1e-5, 1e-5),
        Case("rows_rmsnorm", rmsnorm, (big,), 1e-5, 1e-5),
        Case("rows_softmax_axis0", lambda a: nn.softmax(a, axis=0), (big,), 1e-5, 1e-7),
        Case("rows_layernorm_bf16", layernorm,
             (bf16, np.ones(1024, jnp.bfloat16), np.zeros(1024, jnp.bfloat16)), 5e-2, 5e-2),
        Case("rows_softmax_f16", lambda a: nn.softmax(a, axis=-1), (f16,), 1e-2, 1e-4),
        Case("rows_int_max_shift", lambda a: a - jnp.max(a, axis=1, keepdims=True), (ints,)),
        Case("rows_sum_read_across_rows",
             lambda a: (a - a.sum(1, keepdims=True)) * a.sum(1)[None, :], (square,), 1e-4, 1e-3),
        Case("rows_softmax_reversed", lambda a: nn.softmax(a, axis=-1)[:, ::-1] * 2.0,
             (big,), 1e-5, 1e-7),
    ]


CASES = _numpy_cases() + _nn_cases() + _random_cases() + _row_group_cases()
