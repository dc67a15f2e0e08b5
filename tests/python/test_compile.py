"""jax.jit on Kiln: programs compile and run; what Kiln cannot run yet fails at
compile time with a clear error; the program can be captured with
KILN_DUMP_DIR."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def test_integration_guide_checks(run_python):
    result = run_python("""
import jax
print(jax.numpy.add(1, 1))
print(jax.jit(lambda x: x * 2)(1.))
""")
    assert result.stdout.split() == ["2", "2.0"], result.stdout


def test_jit_runs_elementwise_and_shape_ops():
    def f(x, y):
        return jnp.tanh(x) * 2 + y.T, jnp.sin(x).astype(jnp.int32), x[::-1, 1:]

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((3, 2), np.float32)
    got = jax.jit(f)(x, y)
    np.testing.assert_allclose(got[0], np.tanh(x) * 2 + y.T, rtol=1e-6)
    np.testing.assert_array_equal(got[1], np.sin(x).astype(np.int32))
    np.testing.assert_array_equal(got[2], x[::-1, 1:])


def test_an_op_kiln_cannot_run_is_unimplemented_at_compile_time():
    def f(x):
        return jax.ffi.ffi_call("kiln_no_such_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    with pytest.raises(Exception) as info:
        jax.jit(f)(np.float32(1))
    message = str(info.value)
    assert "UNIMPLEMENTED" in message and "PJRT_Client_Compile" in message, message
    assert "stablehlo.custom_call" in message and "kiln_no_such_target" in message, message


def test_run_time_shape_mismatch_is_rejected_before_running():
    compiled = jax.jit(lambda x: x + 1).lower(np.ones(3, np.float32)).compile()
    with pytest.raises(Exception):
        compiled(np.ones(4, np.float32))


def test_dump_dir_captures_the_portable_artifact(run_python, tmp_path):
    code = """
import jax, numpy as np
print(jax.jit(lambda x: x + 1)(np.float32(1)))
"""
    result = run_python(code, env={"KILN_DUMP_DIR": str(tmp_path)})
    assert result.stdout.strip() == "2.0", result.stdout
    dumps = sorted(tmp_path.glob("kiln-*.mlir.bc"))
    assert dumps, list(tmp_path.iterdir())
    data = dumps[0].read_bytes()
    assert data.startswith(b"ML\xefR"), data[:16]
    assert b"StableHLO_v" in data[:64]
