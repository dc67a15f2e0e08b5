"""One Kiln library against every jaxlib from 0.10 to the pinned release
(`make test-compat`): each minor release runs these in a virtual environment
of its own, JAX on Kiln checked against numpy and against JAX's CPU backend
in the same process.

The seed checks (devices, transfers, elementwise, matmul, reductions,
control flow), a training step with its gradients, donation, a host
callback, and pmap with a psum between four devices (in a child process:
a client's device count is fixed when it is created).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

os.environ["JAX_PLATFORMS"] = "kiln,cpu"
os.environ.setdefault("KILN_NUM_DEVICES", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

RNG = np.random.default_rng(0)
KILN = jax.devices("kiln")[0]
CPU = jax.devices("cpu")[0]


def on_both(f, *args):
    """f jitted on Kiln and on the CPU backend, with the same arguments."""
    results = []
    for device in (KILN, CPU):
        placed = jax.device_put(args, device)
        results.append(jax.tree_util.tree_map(np.asarray, jax.jit(f)(*placed)))
    return results


def test_kiln_is_the_default_device_and_reports_its_version():
    assert jax.default_backend() == "kiln"
    assert KILN.platform == "kiln"
    assert "kiln" in KILN.client.platform_version


def test_round_trips_are_exact():
    # x64 is off (JAX's default): no 64-bit types.
    for dtype in (np.float32, np.float16, np.int8, np.uint16, np.bool_, np.complex64):
        host = (RNG.standard_normal((3, 5)) * 10).astype(dtype)
        back = np.asarray(jax.device_put(host, KILN))
        assert back.dtype == host.dtype and back.tobytes() == host.tobytes(), dtype


@pytest.mark.parametrize("name,f,shapes", [
    ("elementwise", lambda x, y: jnp.tanh(x) * y + jnp.exp(-x), [(64, 32), (64, 32)]),
    ("matmul", lambda x, y: x @ y.T, [(64, 32), (48, 32)]),
    ("reduce", lambda x, y: (x.sum(0), jnp.max(y, axis=1), jnp.mean(x * y)), [(64, 32), (64, 32)]),
    ("softmax", lambda x, y: jax.nn.softmax(x @ y.T, axis=-1), [(16, 8), (12, 8)]),
    ("while", lambda x, y: jax.lax.fori_loop(0, 5, lambda i, c: c * 0.5 + y, x), [(8,), (8,)]),
    ("scan", lambda x, y: jax.lax.scan(lambda c, r: (c + r, c * r), x[0], x)[1],
     [(6, 4), (4,)]),
    ("gather_scatter", lambda x, y: x.at[jnp.array([3, 1])].add(y[:2]), [(8, 3), (8, 3)]),
])
def test_programs_match_the_cpu_backend(name, f, shapes):
    args = [RNG.standard_normal(shape).astype(np.float32) for shape in shapes]
    kiln, cpu = on_both(f, *args)
    for a, b in zip(jax.tree_util.tree_leaves(kiln), jax.tree_util.tree_leaves(cpu)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6, err_msg=name)


def test_a_training_step_matches_the_cpu_backend():
    x = RNG.standard_normal((128, 8)).astype(np.float32)
    y = np.sin(x.sum(1, keepdims=True)).astype(np.float32)
    params = [RNG.standard_normal((8, 16)).astype(np.float32) * 0.3, np.zeros(16, np.float32),
              RNG.standard_normal((16, 1)).astype(np.float32) * 0.3, np.zeros(1, np.float32)]

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        return jnp.mean((jax.nn.relu(x @ w1 + b1) @ w2 + b2 - y) ** 2)

    def step(params, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return [p - 0.1 * g for p, g in zip(params, grads)], value

    results = []
    for device in (KILN, CPU):
        p = jax.device_put(params, device)
        losses = []
        for _ in range(5):
            p, value = jax.jit(step)(p, *jax.device_put((x, y), device))
            losses.append(float(value))
        results.append(losses)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5)
    assert results[0][-1] < results[0][0]


def test_donation_deletes_the_argument():
    x = jax.jit(lambda v: v + 0)(jnp.arange(16.0))
    y = jax.jit(lambda v: v * 2, donate_argnums=0)(x)
    assert x.is_deleted() and np.asarray(y).tolist() == (np.arange(16.0) * 2).tolist()


def test_a_host_callback_runs():
    seen = []
    f = jax.jit(lambda v: (jax.debug.callback(lambda a: seen.append(float(a.sum())), v), v * 2)[1])
    assert np.asarray(f(jnp.arange(4.0))).tolist() == [0, 2, 4, 6]
    jax.effects_barrier()
    assert seen == [6.0]


def test_pmap_with_psum_over_four_devices():
    code = textwrap.dedent("""
        import jax, jax.numpy as jnp, numpy as np
        assert jax.device_count() == 4, jax.devices()
        out = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(jnp.arange(4.0))
        print(np.asarray(out).tolist())
    """)
    env = dict(os.environ, JAX_PLATFORMS="kiln", KILN_NUM_DEVICES="4")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[6.0, 6.0, 6.0, 6.0]", result.stdout
