"""`kiln run` on StableHLO text as JAX prints it (`jax.jit(f).lower(x).as_text()`),
which names chlo ops (chlo.erf, chlo.square, ...) that portable artifacts carry
as decompositions: each program's results match JAX's CPU backend."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

# name -> (function source, inputs as a Python expression, tolerance)
CASES = {
    "erf": ("jax.lax.erf", "np.linspace(-3, 3, 13, dtype=np.float32)", 2e-6),
    "erfc": ("jax.lax.erfc", "np.linspace(-3, 3, 13, dtype=np.float32)", 2e-6),
    "erf_inv": ("jax.lax.erf_inv", "np.array([-1, -0.99, -0.5, 0, 0.25, 0.9, 0.999, 1], np.float32)", 1e-5),
    "digamma": ("jax.lax.digamma", "np.array([0.5, 1, 2.5, 7, 30, -0.5, -2.5, 1e-3], np.float32)", 1e-5),
    "sinh": ("jnp.sinh", "np.linspace(-5, 5, 11, dtype=np.float32)", 2e-6),
    "cosh": ("jnp.cosh", "np.linspace(-5, 5, 11, dtype=np.float32)", 2e-6),
    "acos": ("jnp.arccos", "np.linspace(-1, 1, 9, dtype=np.float32)", 2e-6),
    "atan": ("jnp.arctan", "np.linspace(-10, 10, 9, dtype=np.float32)", 2e-6),
    "asinh": ("jnp.arcsinh", "np.linspace(-10, 10, 9, dtype=np.float32)", 2e-6),
    "acosh": ("jnp.arccosh", "np.linspace(1, 10, 9, dtype=np.float32)", 2e-6),
    "atanh": ("jnp.arctanh", "np.linspace(-0.9, 0.9, 9, dtype=np.float32)", 2e-6),
    "square": ("jnp.square", "np.linspace(-3, 3, 7, dtype=np.float32)", 2e-6),
    "bessel_i1e": ("jax.lax.bessel_i1e", "np.array([-600, -40, -3, -0.5, 0, 0.25, 2, 30, 800], np.float32)", 2e-6),
    "polygamma": ("lambda x: jax.lax.polygamma(jnp.full_like(x, 2.0), x)",
                  "np.array([0.5, 1, 2.5, 7, 30, -0.5, -2.5], np.float32)", 1e-5),
    "zeta": ("lambda x: jax.lax.zeta(x + 1.5, x)", "np.array([0.5, 1, 2.5, 7, 30], np.float32)", 1e-5),
    "next_after": ("lambda x: jax.lax.nextafter(x, x + 1)",
                   "np.array([0, 1, -1, 1e-3, 3e38], np.float32)", 0.0),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """For every case: JAX's text, the input literal and JAX's CPU results."""
    out = tmp_path_factory.mktemp("chlo")
    script = textwrap.dedent(f"""
        import json, pathlib
        import numpy as np
        import jax, jax.numpy as jnp
        jax.config.update("jax_enable_x64", False)
        out = pathlib.Path({str(out)!r})
        cases = {json.dumps({k: [v[0], v[1]] for k, v in CASES.items()})}
        for name, (fn, inputs) in cases.items():
            f = eval(fn)
            x = eval(inputs)
            text = jax.jit(f).lower(x).as_text()
            (out / f"{{name}}.mlir").write_text(text)
            np.save(out / f"{{name}}.x.npy", x)
            np.save(out / f"{{name}}.y.npy", np.asarray(jax.jit(f)(x)))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    env["JAX_PLATFORMS"] = "cpu"
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=600)
    return out


def _literal(x: np.ndarray) -> str:
    values = ", ".join(f"{float(v):.9e}" for v in x.ravel())
    return f"dense<[{values}]> : tensor<{x.size}xf32>"


def _number(token: str) -> float:
    """A printed f32: decimal, or hex bits where decimal would not round-trip."""
    token = token.strip()
    if token.startswith("0x"):
        return float(np.array([int(token, 16)], np.uint32).view(np.float32)[0])
    return float(token)


def _kiln_run(*args: str) -> subprocess.CompletedProcess:
    script = os.path.join(os.path.dirname(sys.executable), "kiln")
    return subprocess.run([script, "run", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jax_text_with_chlo_runs_like_cpu(programs, name):
    text = (programs / f"{name}.mlir").read_text()
    assert "chlo." in text, f"JAX no longer prints a chlo op for {name}; the case tests nothing"
    x = np.load(programs / f"{name}.x.npy")
    expected = np.load(programs / f"{name}.y.npy")
    result = _kiln_run(str(programs / f"{name}.mlir"), _literal(x))
    assert result.returncode == 0, result.stdout + result.stderr
    body = result.stdout.strip().split(" : ")[0]
    assert body.startswith("dense<"), result.stdout
    got = np.array([_number(v) for v in body[len("dense<["):-len("]>")].split(",")], np.float32)
    tolerance = CASES[name][2]
    if tolerance == 0.0:
        # Bit-exact: printed values round-trip only to 7 digits, so compare
        # the neighbours' ordering instead — next_after moves by one ulp.
        np.testing.assert_array_equal(got > x, expected > x)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=0)
    else:
        np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance, equal_nan=True)
