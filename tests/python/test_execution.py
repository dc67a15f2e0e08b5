"""Executables on Kiln as JAX uses them: donation and aliasing, cost and
memory analysis, serialization, and failures at run time raised in Python."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def _device_array(values):
    """An array computed on the device (its memory is Kiln's own, not a
    zero-copy view of a NumPy array)."""
    return jax.jit(lambda x: x + 0)(np.asarray(values))


def test_donated_argument_is_deleted_and_result_is_right():
    f = jax.jit(lambda x: x * 2 + 1, donate_argnums=0)
    x = _device_array(np.arange(8, dtype=np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Some donated buffers were not usable" fails
        y = f(x)
    np.testing.assert_array_equal(np.asarray(y), np.arange(8, dtype=np.float32) * 2 + 1)
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)


def test_aliased_result_reuses_the_donated_memory():
    f = jax.jit(lambda x: jnp.tanh(x) * 3, donate_argnums=0)
    x = _device_array(np.linspace(-2, 2, 4096, dtype=np.float32))
    expected = np.tanh(np.asarray(x)) * 3
    pointer = x.unsafe_buffer_pointer()
    y = f(x)
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-6)
    assert y.unsafe_buffer_pointer() == pointer


def test_not_donated_argument_survives():
    f = jax.jit(lambda x, y: x + y, donate_argnums=0)
    x = _device_array(np.ones(4, np.float32))
    y = _device_array(np.full(4, 2, np.float32))
    out = f(x, y)
    assert x.is_deleted() and not y.is_deleted()
    np.testing.assert_array_equal(np.asarray(y), np.full(4, 2, np.float32))
    np.testing.assert_array_equal(np.asarray(out), np.full(4, 3, np.float32))


def test_result_read_after_write_is_not_computed_in_place():
    # The output is written (by x[::-1]) while x is still needed for the sum:
    # Kiln must not write it over x.
    f = jax.jit(lambda x: (x[::-1] + x.sum(), x * 1), donate_argnums=0)
    values = np.arange(16, dtype=np.float32)
    x = _device_array(values)
    a, b = f(x)
    np.testing.assert_array_equal(np.asarray(a), values[::-1] + values.sum())
    np.testing.assert_array_equal(np.asarray(b), values)


def test_swapped_donations_stay_correct():
    f = jax.jit(lambda x, y: (y, x), donate_argnums=(0, 1))
    x = _device_array(np.arange(4, dtype=np.int32))
    y = _device_array(np.arange(4, 8, dtype=np.int32))
    a, b = f(x, y)
    np.testing.assert_array_equal(np.asarray(a), np.arange(4, 8))
    np.testing.assert_array_equal(np.asarray(b), np.arange(4))


def test_donating_training_loop_matches_and_holds_memory_steady():
    def step(w, x):
        loss, grad = jax.value_and_grad(lambda w: jnp.mean((x @ w) ** 2))(w)
        return w - 0.1 * grad, loss

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 16), dtype=np.float32)
    w0 = rng.standard_normal((16, 4), dtype=np.float32)
    plain = jax.jit(step)
    donating = jax.jit(step, donate_argnums=0)
    w_plain, w = _device_array(w0), _device_array(w0)
    device = jax.devices()[0]
    in_use = []
    for _ in range(20):
        w_plain, loss_plain = plain(w_plain, x)
        w, loss = donating(w, x)
        loss.block_until_ready()
        in_use.append(device.memory_stats()["bytes_in_use"])
    np.testing.assert_array_equal(np.asarray(w), np.asarray(w_plain))
    assert float(loss) == float(loss_plain)
    assert in_use[-1] <= in_use[2], in_use


def test_cost_analysis_counts_matmul_flops():
    a = np.ones((8, 16), np.float32)
    b = np.ones((16, 32), np.float32)
    compiled = jax.jit(lambda a, b: a @ b).lower(a, b).compile()
    cost = compiled.cost_analysis()
    assert cost["flops"] == 2 * 8 * 16 * 32, cost
    assert cost["bytes accessed"] >= (8 * 16 + 16 * 32 + 8 * 32) * 4, cost


def test_cost_analysis_counts_transcendentals():
    x = np.ones((10, 10), np.float32)
    cost = jax.jit(lambda x: jnp.exp(x) + 1).lower(x).compile().cost_analysis()
    assert cost["transcendentals"] == 100 and cost["flops"] == 100, cost


def test_memory_analysis_reports_arguments_and_outputs():
    x = np.ones((64, 64), np.float32)
    stats = jax.jit(lambda x: (x @ x).sum(0)).lower(x).compile().memory_analysis()
    assert stats.argument_size_in_bytes == 64 * 64 * 4
    assert stats.output_size_in_bytes == 64 * 4


def test_failure_at_run_time_raises_in_python():
    # Intermediates of 2**42 floats (16 TiB) cannot be allocated: the run
    # fails on the device queue and the error reaches Python through the
    # result's event, naming the cause (host memory, or on the OpenCL
    # backend the device's largest allocation); the process carries on.
    def f(x):
        return jnp.broadcast_to(x, (2**21, 2**21)).sum()

    with pytest.raises(Exception, match="out of host memory|exceed .* largest allocation"):
        np.asarray(jax.jit(f)(np.float32(1)))
    assert float(jax.jit(lambda x: x + 1)(np.float32(1))) == 2.0


def test_demo_trains_an_mlp_that_agrees_with_the_cpu_backend(run_python):
    demo = __file__.rsplit("/tests/", 1)[0] + "/examples/demo.py"
    result = run_python("", env={"JAX_PLATFORMS": "kiln,cpu"}, args=(demo,))
    assert "the loss falls, and Kiln agrees with the CPU backend" in result.stdout, result.stdout
    assert "on 4 Kiln devices:" in result.stdout and "[6 7 8 9]" in result.stdout, result.stdout
