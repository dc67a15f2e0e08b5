"""What jax.jit does on Kiln before execution exists: Kiln reads and verifies
the program JAX sent, then refuses it with a clear error; the program can be
captured with KILN_DUMP_DIR."""

import jax
import numpy as np
import pytest


def test_jit_raises_unimplemented_naming_compile():
    with pytest.raises(Exception) as info:
        jax.jit(lambda x: x * 2)(np.float32(1))
    message = str(info.value)
    assert "UNIMPLEMENTED" in message and "PJRT_Client_Compile" in message, message
    # The artifact was read and verified before the refusal.
    assert "read and verified" in message, message


def test_jit_of_a_larger_program_is_read_and_verified():
    def f(x, k):
        y = jax.lax.fori_loop(0, 3, lambda i, a: jax.numpy.sin(a) * i, x)
        return jax.nn.softmax(y @ y.T), jax.lax.top_k(y, 2), jax.scipy.special.erf(y), k + 1

    with pytest.raises(Exception) as info:
        jax.jit(f)(np.ones((4, 5), np.float32), np.int32(2))
    message = str(info.value)
    assert "read and verified" in message, message


def test_dump_dir_captures_the_portable_artifact(run_python, tmp_path):
    code = """
import jax, numpy as np
try:
    jax.jit(lambda x: x + 1)(np.float32(1))
except Exception:
    pass
"""
    run_python(code, env={"KILN_DUMP_DIR": str(tmp_path)})
    dumps = sorted(tmp_path.glob("kiln-*.mlir.bc"))
    assert dumps, list(tmp_path.iterdir())
    data = dumps[0].read_bytes()
    assert data.startswith(b"ML\xefR"), data[:16]
    assert b"StableHLO_v" in data[:64]
