"""Elementwise lax primitives x every dtype they accept, on special values:
unary math, binary arithmetic, comparisons, bitwise ops and shifts,
conversions and bitcasts, reduce_precision, nextafter, clamp, select_n,
and a few shapes (0-d, zero-size, 3x5x7, 257x129)."""

import functools

import jax.numpy as jnp
import numpy as np
from jax import lax

from _common import (kind, ALL, BOOL, COMPLEX, FLOATS, INTS, NUMERIC, SIGNED, UNSIGNED, Case,
                     Inputs, short)

_in = Inputs(1)
F32 = np.dtype(np.float32)
C64 = np.dtype(np.complex64)

# Per-op (rtol, atol) for f32 results where the functions are approximations
# whose last bits legitimately differ (XLA's CPU polynomials vs the
# decompositions or libm); narrow floats use differential.TOLERANCES.
_LOOSE = {"lgamma": (1e-4, 1e-5), "digamma": (1e-4, 1e-5), "erf_inv": (1e-5, 1e-6),
          "igamma": (1e-4, 1e-6), "igammac": (1e-4, 1e-6), "tan": (1e-5, 1e-6),
          "pow": (1e-5, 1e-6)}

UNARY_FLOAT = {
    "exp": lax.exp, "exp2": lax.exp2, "expm1": lax.expm1, "log": lax.log,
    "log1p": lax.log1p, "sqrt": lax.sqrt, "rsqrt": lax.rsqrt, "cbrt": lax.cbrt,
    "sin": lax.sin, "cos": lax.cos, "tan": lax.tan, "asin": lax.asin, "acos": lax.acos,
    "atan": lax.atan, "sinh": lax.sinh, "cosh": lax.cosh, "tanh": lax.tanh,
    "asinh": lax.asinh, "acosh": lax.acosh, "atanh": lax.atanh, "logistic": lax.logistic,
    "erf": lax.erf, "erfc": lax.erfc, "erf_inv": lax.erf_inv, "lgamma": lax.lgamma,
    "digamma": lax.digamma, "bessel_i0e": lax.bessel_i0e, "bessel_i1e": lax.bessel_i1e,
    "floor": lax.floor, "ceil": lax.ceil,
    "round_away": lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
    "round_even": lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
    "is_finite": lax.is_finite, "reciprocal": lax.reciprocal,
}
# Complex-capable unary ops, run on finite complex values (the special
# values of complex transcendental functions are checked by COMPLEX_SPECIAL).
UNARY_COMPLEX = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan",
                 "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
                 "reciprocal"]
UNARY_NUMERIC = {
    "abs": lax.abs, "neg": lax.neg, "sign": lax.sign, "square": lax.square,
    "pow2": lambda x: lax.integer_pow(x, 2), "pow3": lambda x: lax.integer_pow(x, 3),
    "pow7": lambda x: lax.integer_pow(x, 7), "pow0": lambda x: lax.integer_pow(x, 0),
}
UNARY_INT = {"population_count": lax.population_count, "clz": lax.clz,
             "not": lax.bitwise_not}
UNARY_COMPLEX_ONLY = {"real": lax.real, "imag": lax.imag, "conj": lax.conj,
                      "abs_c": lax.abs}

BINARY_NUMERIC = {"add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div,
                  "max": lax.max, "min": lax.min}
BINARY_REAL = {"rem": lax.rem}
BINARY_FLOAT = {"pow": lax.pow, "atan2": lax.atan2, "nextafter": lax.nextafter}
BINARY_INT = {"and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
              "shl": lax.shift_left, "shr_a": lax.shift_right_arithmetic,
              "shr_l": lax.shift_right_logical}
COMPARE = {"eq": lax.eq, "ne": lax.ne, "lt": lax.lt, "le": lax.le, "gt": lax.gt,
           "ge": lax.ge}


def _tolerance(op_name, dtype):
    if np.dtype(dtype) in (F32, C64) and op_name in _LOOSE:
        return _LOOSE[op_name]
    return (None, None)


def _unary_cases():
    cases = []
    for dtype in FLOATS:
        x = _in.specials(dtype, 64)
        for name, fn in UNARY_FLOAT.items():
            rtol, atol = _tolerance(name, dtype)
            cases.append(Case(f"{name}_{short(dtype)}", fn, (x,), rtol, atol))
    finite_c = _in.random_values(C64, (40,), scale=1.5)
    for name in UNARY_COMPLEX:
        cases.append(Case(f"{name}_c64", UNARY_FLOAT[name], (finite_c,), 1e-5, 1e-5))
    special_c = _in.specials(C64)
    for name in ("exp", "log", "sqrt", "tanh"):
        cases.append(Case(f"{name}_c64_special", UNARY_FLOAT[name], (special_c,)))
    for name, fn in UNARY_COMPLEX_ONLY.items():
        cases.append(Case(f"{name}_c64", fn, (special_c,)))
    # Infinities and NaN in either part (XLA's forms, not C++'s: cosh(-inf +
    # inf i) is NaN + NaN i), and magnitudes from 1e-38 to 1e38, where
    # expm1's real part needs expm1(a) cos b + cosm1(b) (JAX's complex-plane
    # accuracy tests).
    nonfinite_c = _complex_nonfinite_pairs()[0][:, 0]
    magnitudes = np.array([0.0, 1.2e-38, 5e-31, 2e-23, 1e-15, 4.5e-8, 0.3, 2.0, 8.8e7, 1.7e23,
                           3.4e38], np.float32)
    grid = (magnitudes[:, None] + 1j * magnitudes[None, :]).astype(C64)
    grid = np.concatenate([grid, -grid, np.conj(grid)])
    for name in ("exp", "expm1", "tan", "tanh", "cosh", "sinh"):
        cases.append(Case(f"{name}_c64_nonfinite", UNARY_FLOAT[name], (nonfinite_c,)))
        # No absolute tolerance: a real part of 1e-17 must not be 0.
        cases.append(Case(f"{name}_c64_magnitudes", UNARY_FLOAT[name], (grid,), 1e-5,
                          0.0 if name == "expm1" else 1e-6))
    for dtype in NUMERIC:
        x = _in.specials(dtype)
        for name, fn in UNARY_NUMERIC.items():
            if name == "abs" and kind(dtype) == "u":
                continue
            cases.append(Case(f"{name}_{short(dtype)}", fn, (x,)))
    for dtype in FLOATS + COMPLEX:
        x = _in.specials(dtype)
        cases.append(Case(f"pow_neg2_{short(dtype)}", lambda v: lax.integer_pow(v, -2), (x,)))
    for dtype in INTS:
        x = _in.specials(dtype)
        for name, fn in UNARY_INT.items():
            cases.append(Case(f"{name}_{short(dtype)}", fn, (x,)))
    cases.append(Case("not_pred", lax.bitwise_not, (_in.specials(BOOL),)))
    return cases


def _binary_cases():
    cases = []
    for dtype in NUMERIC:
        x, y = _in.pairs(dtype)
        ops = dict(BINARY_NUMERIC)
        if kind(dtype) == "c":
            del ops["max"], ops["min"]
        if kind(dtype) != "c":
            ops.update(BINARY_REAL)
        if kind(dtype) == "f":
            ops.update(BINARY_FLOAT)
        if kind(dtype) in "iu":
            ops.update(BINARY_INT)
        for name, fn in ops.items():
            rtol, atol = _tolerance(name, dtype)
            cases.append(Case(f"{name}_{short(dtype)}", fn, (x, y), rtol, atol))
    for dtype in INTS:
        x = np.repeat(_in.specials(dtype, 16)[:16, None], 40, 1)
        bits = dtype.itemsize * 8
        amounts = np.arange(-3, 37)[None, :] % (2 ** bits) if kind(dtype) == "u" else \
            np.arange(-3, 37)[None, :]
        amounts = np.repeat(amounts, 16, 0).astype(dtype)
        for name in ("shl", "shr_a", "shr_l"):
            cases.append(Case(f"{name}_amounts_{short(dtype)}", BINARY_INT[name], (x, amounts)))
    px, py = _in.pairs(BOOL)
    for name, fn in {"and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
                     "add": jnp.add, "mul": jnp.multiply, "max": lax.max,
                     "min": lax.min}.items():
        cases.append(Case(f"{name}_pred", fn, (px, py)))
    for dtype in ALL:
        x, y = _in.pairs(dtype)
        for name, fn in COMPARE.items():
            if kind(dtype) == "c" and name not in ("eq", "ne"):
                continue
            cases.append(Case(f"{name}_{short(dtype)}", fn, (x, y)))
    for dtype in INTS:
        x, y = _in.pairs(dtype)
        cases.append(Case(f"mulhi_{short(dtype)}", lax.mulhi, (x, y)))
    # Complex arithmetic on infinities and NaN without denormals (which the
    # CPU backend flushes, see test_differential.FLUSH_DENORMALS): XLA's
    # textbook multiply and Smith divide, not C99 Annex G recovery.
    x, y = _complex_nonfinite_pairs()
    for name in ("mul", "div", "add", "sub"):
        cases.append(Case(f"{name}_c64_nonfinite", BINARY_NUMERIC[name], (x, y)))
    cases.append(Case("prod_c64_nonfinite", lambda a: jnp.prod(a, axis=1), (x[:, :3],)))
    cases.append(Case("cumprod_c64_nonfinite", lambda a: jnp.cumprod(a, axis=1), (x[:, :3],)))
    cases.append(Case("scatter_mul_c64_nonfinite", lambda a, b: a.at[::3].multiply(b[::3]),
                      (x[:, 0], y[:, 0])))
    # Complex powers in XLA's polar form: whole powers of whole numbers come
    # out whole (9^3 in complex64 is 729, not exp(3 log 9) = 729.00006), and
    # 0^0 = 1, 0^c = 0 for c > 0.
    for dtype in COMPLEX:
        bases = np.repeat(np.arange(-4, 10)[:, None], 5, 1).astype(dtype)
        exponents = np.repeat(np.arange(5)[None, :], 14, 0).astype(dtype)
        cases.append(Case(f"pow_whole_{short(dtype)}", lax.pow, (bases, exponents), 0.0, 1e-5))
    return cases


def _complex_nonfinite_pairs():
    parts = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.0, 0.5, 1e30, -1e30]
    values = np.array([complex(r, i) for r in parts for i in parts[::3]], np.complex64)
    return (np.repeat(values[:, None], values.size, 1),
            np.repeat(values[None, :], values.size, 0))


def _special_function_cases():
    a = np.array([0.0, 0.5, 1.0, 2.5, 10.0, 0.1, -1.0, np.nan, np.inf, 30.0], np.float32)
    x = np.array([0.0, 0.3, 1.0, 2.0, 12.0, 0.05, 1.0, 1.0, 2.0, 25.0], np.float32)
    grid_a, grid_x = np.meshgrid(a, x)
    cases = [
        Case("igamma_f32", lax.igamma, (grid_a, grid_x), *_LOOSE["igamma"]),
        Case("igammac_f32", lax.igammac, (grid_a, grid_x), *_LOOSE["igammac"]),
        Case("zeta_f32", lax.zeta, (np.float32([2, 3, 4.5, 1.5, 10]),
                                    np.float32([1, 2, 0.5, 3, 1])), 1e-4, 1e-6),
        Case("polygamma_f32", lax.polygamma, (np.float32([1, 2, 1, 3, 0]),
                                              np.float32([0.5, 1, 3.5, 2, 4])), 1e-4, 1e-5),
        Case("betainc_f32", lax.betainc, (np.float32([1, 2, 0.5, 3]), np.float32([2, 1, 0.5, 4]),
                                          np.float32([0.2, 0.5, 0.9, 0.3])), 1e-4, 1e-5),
        Case("complex_f32", lax.complex, _in.pairs(F32)),
        Case("clamp_f32", lax.clamp, (np.float32(-1.5), _in.specials(F32), np.float32(2.0))),
        Case("clamp_array_bounds_f32", lax.clamp,
             (np.full(48, -1.0, np.float32), _in.specials(F32), np.full(48, np.nan, np.float32))),
    ]
    for dtype in INTS + [np.dtype(np.float16), np.dtype(jnp.bfloat16)]:
        x = _in.specials(dtype)
        lo, hi = x[12], x[10]
        cases.append(Case(f"clamp_{short(dtype)}", lax.clamp, (lo, x, hi)))
    for dtype in ALL:
        x, y = _in.pairs(dtype)
        which = _in.random_values(BOOL, x.shape)
        cases.append(Case(f"select_n_pred_{short(dtype)}", lax.select_n, (which, x, y)))
        index = _in.random.randint(0, 3, size=x.shape).astype(np.int32)
        cases.append(Case(f"select_n_3way_{short(dtype)}", lax.select_n, (index, x, y, y[::-1])))
    return cases


def _convert_cases():
    cases = []
    for source in ALL:
        x = _in.specials(source)
        if kind(source) == "f":
            # Floats that convert to every integer type: in range, fractional, negative.
            x = np.concatenate([x, np.array([-0.7, 0.7, 1.9, -1.9, 126.5, 200.0], source)])
        for target in ALL:
            if kind(source) == "c" and kind(target) != "c":
                continue
            cases.append(Case(f"convert_{short(source)}_to_{short(target)}",
                              functools.partial(lax.convert_element_type, new_dtype=target),
                              (x,)))
    return cases


def _bitcast_cases():
    groups = [[np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint32)],
              [np.dtype(np.float16), np.dtype(jnp.bfloat16), np.dtype(np.int16),
               np.dtype(np.uint16)],
              [np.dtype(np.int8), np.dtype(np.uint8)]]
    cases = []
    for group in groups:
        for source in group:
            x = _in.specials(source)
            for target in group:
                if target != source:
                    cases.append(Case(f"bitcast_{short(source)}_to_{short(target)}",
                                      functools.partial(lax.bitcast_convert_type,
                                                        new_dtype=target), (x,)))
    x32 = _in.specials(F32, 12)
    cases += [
        Case("bitcast_f32_to_u8", lambda v: lax.bitcast_convert_type(v, jnp.uint8), (x32,)),
        Case("bitcast_s32_to_s16", lambda v: lax.bitcast_convert_type(v, jnp.int16),
             (_in.specials(np.int32, 12),)),
        Case("bitcast_u8x4_to_f32", lambda v: lax.bitcast_convert_type(v, jnp.float32),
             (_in.random_values(np.uint8, (5, 4)),)),
        Case("bitcast_s16x2_to_u32", lambda v: lax.bitcast_convert_type(v, jnp.uint32),
             (_in.random_values(np.int16, (3, 7, 2)),)),
    ]
    return cases


def _reduce_precision_cases():
    cases = []
    for dtype in FLOATS:
        x = _in.specials(dtype, 64)
        for exponent, mantissa in ((5, 10), (8, 7), (4, 3), (5, 2), (8, 23), (2, 1)):
            cases.append(Case(f"reduce_precision_e{exponent}m{mantissa}_{short(dtype)}",
                              functools.partial(lax.reduce_precision, exponent_bits=exponent,
                                                mantissa_bits=mantissa), (x,)))
    return cases


def _shape_cases():
    cases = []
    for shape in ((), (0,), (0, 3), (3, 5, 7), (257, 129)):
        tag = "x".join(map(str, shape)) or "scalar"
        x = _in.random_values(F32, shape)
        y = _in.random_values(F32, shape)
        n = _in.random_values(np.int32, shape)
        cases += [
            Case(f"shape_{tag}_add_f32", lax.add, (x, y)),
            Case(f"shape_{tag}_exp_tanh_f32", lambda a: jnp.tanh(jnp.exp(a) - 1.0), (x,)),
            Case(f"shape_{tag}_where_f32", lambda a, b: jnp.where(a > b, a, b * 2), (x, y)),
            Case(f"shape_{tag}_convert_s32_f16", lambda a: a.astype(jnp.float16), (n,)),
            Case(f"shape_{tag}_mul_xor_s32", lambda a: (a * 3) ^ (a >> 2), (n,)),
            # XLA's CPU backend keeps the last bf16 add in f32 when its result
            # is converted to f32 anyway (xla_allow_excess_precision); Kiln
            # rounds it to bf16 as written, so compare at bf16 precision.
            Case(f"shape_{tag}_bf16_chain",
                 lambda a, b: (a.astype(jnp.bfloat16) * b.astype(jnp.bfloat16) + 1)
                 .astype(jnp.float32), (x, y), 1e-2, 1e-2),
        ]
    # Broadcasting scalars and rank-1 against a 3-d array.
    x = _in.random_values(F32, (3, 5, 7))
    cases += [
        Case("broadcast_scalar_mul_f32", lambda a: a * 2.5, (x,)),
        Case("broadcast_row_sub_f32", lambda a, b: a - b, (x, _in.random_values(F32, (7,)))),
        Case("broadcast_column_div_f32", lambda a, b: a / b,
             (x, _in.random_values(F32, (3, 1, 1)))),
        Case("broadcast_u8_python_scalar", lambda a: a + 200, (_in.specials(np.uint8),)),
        Case("broadcast_s8_mul_wrap", lambda a: a * np.int8(-128), (_in.specials(np.int8),)),
    ]
    return cases


CASES = (_unary_cases() + _binary_cases() + _special_function_cases() + _convert_cases()
         + _bitcast_cases() + _reduce_precision_cases() + _shape_cases())
