"""Host callbacks inside jax.jit on Kiln: jax.debug.print, jax.debug.callback,
jax.pure_callback, jax.experimental.io_callback (kiln_pjrt/callbacks.py
routes them to stablehlo.send / recv to the host; docs/framework-notes.md).
Callback bodies run on JAX's CPU backend, so each program runs in a child
with JAX_PLATFORMS=kiln,cpu, once on Kiln and once on the CPU backend."""

import json

import pytest

_PROGRAMS = r"""
import json, sys
import numpy as np, jax, jax.numpy as jnp
from jax.experimental import io_callback

device = jax.devices(sys.argv[1])[0]
results = {}

def run(name, f, *args):
    args = [jax.device_put(a, device) for a in args]
    results[name] = np.asarray(jax.jit(f)(*args)).tolist()

def printed(x):
    jax.debug.print("x={x} sum={s}", x=x, s=x.sum())
    return x * 2
run("debug_print", printed, np.arange(3.0, dtype=np.float32))

def loop(x):
    def body(i, c):
        jax.debug.print("step {i}: {c}", i=i, c=c)
        return c * 2
    return jax.lax.fori_loop(0, 3, body, x)
run("debug_print_in_loop", loop, np.float32(1.5))

def branch(x):
    return jax.lax.cond(x > 0, lambda v: (jax.debug.print("positive {}", v), v)[1],
                        lambda v: -v, x)
run("debug_print_in_cond", branch, np.float32(4.0))

def pure(x):
    out = jax.ShapeDtypeStruct((2, 3), np.float32), jax.ShapeDtypeStruct((), np.int32)
    a, n = jax.pure_callback(lambda v: (np.outer(v[:2], v).astype(np.float32),
                                        np.int32(v.size)), out, x)
    return a.sum() + n
run("pure_callback", pure, np.array([1.0, 2.0, 3.0], np.float32))

def empty_result(x):
    e = jax.pure_callback(lambda v: np.zeros((0, 2), np.float32),
                          jax.ShapeDtypeStruct((0, 2), np.float32), x)
    return x + e.sum()
run("pure_callback_empty_result", empty_result, np.float32(2.0))

seen = []
def ordered(x):
    io_callback(lambda v: seen.append(float(v)), None, x, ordered=True)
    return x + 1
for value in (1.0, 2.0, 3.0):
    run(f"io_callback_{value}", ordered, np.float32(value))
jax.effects_barrier()
results["io_callback_seen"] = seen

def collected(x):
    jax.debug.callback(lambda v: seen.append(float(v) * 10), x)
    return x
run("debug_callback", collected, np.float32(7.0))
jax.effects_barrier()
results["debug_callback_seen"] = seen[-1:]

print("RESULTS " + json.dumps(results))
"""


def _run(run_python, platform):
    import os
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(_PROGRAMS)
    try:
        result = run_python("", env={"JAX_PLATFORMS": "kiln,cpu"},
                            args=(script.name, platform))
    finally:
        os.unlink(script.name)
    line = [l for l in result.stdout.splitlines() if l.startswith("RESULTS ")]
    assert line, result.stdout + result.stderr
    return json.loads(line[0][len("RESULTS "):]), result.stdout


@pytest.fixture(scope="module")
def outcomes(run_python):
    return {platform: _run(run_python, platform) for platform in ("kiln", "cpu")}


def test_callback_programs_match_the_cpu_backend(outcomes):
    kiln, _ = outcomes["kiln"]
    cpu, _ = outcomes["cpu"]
    assert kiln == cpu


def test_debug_print_prints_what_the_cpu_backend_prints(outcomes):
    _, kiln_out = outcomes["kiln"]
    _, cpu_out = outcomes["cpu"]
    printed = [l for l in kiln_out.splitlines() if not l.startswith("RESULTS ")]
    assert printed == [l for l in cpu_out.splitlines() if not l.startswith("RESULTS ")]
    assert "x=[0. 1. 2.] sum=3.0" in printed
    assert ["step 0: 1.5", "step 1: 3.0", "step 2: 6.0"] == [l for l in printed
                                                             if l.startswith("step")]
    assert "positive 4.0" in printed


def test_lowering_for_kiln_uses_host_send_and_recv(run_python):
    result = run_python("""
        import jax, numpy as np
        text = jax.jit(lambda x: jax.pure_callback(
            np.sin, jax.ShapeDtypeStruct((2,), np.float32), x)).lower(
            np.ones(2, np.float32)).as_text()
        assert '"stablehlo.send"' in text or "stablehlo.send" in text, text
        assert "is_host_transfer = true" in text, text
        print("ok")
    """, env={"JAX_PLATFORMS": "kiln,cpu"})
    assert "ok" in result.stdout


def test_a_failing_callback_raises_in_python_and_kiln_carries_on(run_python):
    result = run_python("""
        import jax, jax.numpy as jnp, numpy as np
        def bad(v):
            raise ValueError("no such thing")
        f = jax.jit(lambda x: jax.pure_callback(bad, jax.ShapeDtypeStruct((2,), np.float32), x))
        try:
            np.asarray(f(jnp.ones(2, np.float32)))
            print("no error")
        except Exception as error:
            print("raised", "no such thing" in str(error))
        g = jax.jit(lambda x: jax.pure_callback(lambda v: np.zeros(3, np.float32),
                                                jax.ShapeDtypeStruct((2,), np.float32), x))
        try:
            np.asarray(g(jnp.ones(2, np.float32)))
            print("no error")
        except Exception as error:
            print("raised", "Incorrect output shape" in str(error))
        print("after", float(jax.jit(lambda x: x + 1)(1.0)))
    """, env={"JAX_PLATFORMS": "kiln,cpu"}, check=False)
    lines = result.stdout.splitlines()
    assert lines[:3] == ["raised True", "raised True", "after 2.0"], result.stdout + result.stderr
