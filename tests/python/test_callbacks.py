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


def test_callbacks_need_only_kiln_in_jax_platforms(run_python):
    # JAX runs callback bodies on its CPU backend; kiln_pjrt adds `cpu` after
    # `kiln` when the user names only `kiln` (kiln stays the default).
    result = run_python("""
        import jax, jax.numpy as jnp, numpy as np
        assert jax.default_backend() == "kiln", jax.default_backend()
        assert all(d.platform == "kiln" for d in jax.devices())
        @jax.jit
        def f(x):
            jax.debug.print("x={x}", x=x)
            return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        print([round(float(v), 3) for v in np.asarray(f(jnp.arange(3.0)))])
        def body(carry, x):
            jax.debug.callback(lambda v: print("step", int(v)), x)
            return carry + x, None
        print(int(jax.jit(lambda xs: jax.lax.scan(body, 0, xs)[0])(jnp.arange(3))))
    """, env={"JAX_PLATFORMS": "kiln"})
    assert result.stdout.splitlines() == ["x=[0. 1. 2.]", "[0.0, 0.841, 0.909]",
                                          "step 0", "step 1", "step 2", "3"], result.stdout


def test_the_platform_list_can_be_kept_as_named(run_python):
    result = run_python("""
        import jax
        try:
            jax.devices("cpu")
            print("cpu present")
        except RuntimeError:
            print("kiln only")
    """, env={"JAX_PLATFORMS": "kiln", "KILN_ADD_CPU_PLATFORM": "0"})
    assert result.stdout.strip() == "kiln only", result.stdout


def test_a_callback_outside_shard_map_runs_once_in_a_sharded_program(run_python):
    # JAX places it on one device (sdy.sharding on a mesh of one device);
    # XLA runs it there alone and shares a recv's results with the others.
    result = run_python("""
        import jax, jax.numpy as jnp, numpy as np
        from jax.experimental import io_callback
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        mesh = Mesh(np.array(jax.devices()), ("x",))
        x = jax.device_put(jnp.arange(4.0), NamedSharding(mesh, P("x")))
        calls = []
        def f(x):
            jax.debug.print("whole {x}", x=x)
            io_callback(lambda v: calls.append(float(v.sum())), None, x, ordered=True)
            y = jax.pure_callback(lambda v: np.asarray(v) * 10,
                                  jax.ShapeDtypeStruct(x.shape, x.dtype), x)
            return y + 1
        print(np.asarray(jax.jit(f)(x)).tolist())
        jax.effects_barrier()
        print("calls", calls)
        print(np.asarray(jax.pmap(lambda v: (jax.debug.print("each {v}", v=v), v)[1])(
            jnp.arange(2.0))).tolist())
    """, env={"JAX_PLATFORMS": "kiln", "KILN_NUM_DEVICES": "2"})
    lines = result.stdout.splitlines()
    assert lines.count("whole [0. 1. 2. 3.]") == 1, result.stdout
    assert "[1.0, 11.0, 21.0, 31.0]" in lines and "calls [6.0]" in lines, result.stdout
    assert sorted(l for l in lines if l.startswith("each")) == ["each 0.0", "each 1.0"]


def test_an_ordered_io_callback_under_shard_map_runs(run_python):
    # JAX's pjit_test test_empty_io_callback_under_shard_map: the token goes
    # through sdy.manual_computation, which VHLO leaves alone, so the portable
    # artifact holds a !stablehlo.token in StableHLO's own encoding.
    result = run_python("""
        import jax, jax.numpy as jnp, numpy as np
        from jax.sharding import Mesh, PartitionSpec as P
        mesh = Mesh(np.array(jax.devices()), ("i",))
        calls = []
        def body(x, y):
            jax.experimental.io_callback(lambda v: calls.append(v.shape), (), x, ordered=True)
            return x + y[..., jnp.newaxis]
        f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P(None, "i"), P(None)),
                                  out_specs=P(None, "i")))
        print(np.asarray(f(jnp.zeros((2, 16)), jnp.arange(2.0))).sum())
        jax.effects_barrier()
        print("calls", calls)
    """, env={"JAX_PLATFORMS": "kiln", "KILN_NUM_DEVICES": "2"})
    assert result.stdout.splitlines() == ["16.0", "calls [(2, 8), (2, 8)]"], result.stdout


def test_inspect_array_sharding_reports_how_kiln_holds_the_value(run_python):
    # Kiln computes every value whole on each device (issue 28 partitions per
    # op): the sharding it reports is replicated over the program's devices.
    result = run_python("""
        import jax, jax.numpy as jnp, numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        seen = []
        def f(x):
            jax.debug.inspect_array_sharding(x, callback=seen.append)
            return x * 2
        mesh = Mesh(np.array(jax.devices()), ("x",))
        x = jax.device_put(jnp.arange(4.0), NamedSharding(mesh, P("x")))
        print(np.asarray(jax.jit(f)(x)).tolist())
        print(np.asarray(jax.jit(f)(jnp.arange(2.0))).tolist())
        print(len(seen), [len(s.device_set) for s in seen], tuple(seen[0].spec))
    """, env={"JAX_PLATFORMS": "kiln", "KILN_NUM_DEVICES": "2"})
    assert result.stdout.splitlines() == ["[0.0, 2.0, 4.0, 6.0]", "[0.0, 2.0]",
                                          "2 [2, 1] ()"], result.stdout


def test_checkify_checks_lower_and_raise_at_run_time(run_python):
    # check_p has lowerings for cpu, gpu and tpu only; kiln_pjrt adds JAX's
    # cpu rule (a host callback raising the error).
    result = run_python("""
        import jax, jax.numpy as jnp
        from jax.experimental import checkify
        jax.config.update("jax_experimental_unsafe_xla_runtime_errors", True)
        f = jax.jit(lambda x: (checkify.check(jnp.all(x > 0), "x has {n} non-positive values",
                                              n=jnp.sum(x <= 0)), x * 2)[1])
        print(f(jnp.arange(1.0, 4.0)).tolist())
        try:
            f(jnp.arange(-1.0, 2.0)).block_until_ready()
            print("no error")
        except Exception as error:
            print("raised", "x has 2 non-positive values" in str(error))
        err, y = jax.jit(checkify.checkify(lambda x: (checkify.check(x.sum() < 0, "sum"), x)[1]))(
            jnp.ones(2))
        print(err.get(), y.tolist())
    """, env={"JAX_PLATFORMS": "kiln"})
    lines = result.stdout.splitlines()
    assert lines[0] == "[2.0, 4.0, 6.0]", result.stdout
    assert lines[1] == "raised True", result.stdout
    assert lines[2].startswith("sum") and lines[2].endswith("[1.0, 1.0]"), result.stdout
