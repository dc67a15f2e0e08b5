"""`jax.export` artifacts on Kiln: one exported for the CPU runs on Kiln
(kiln_pjrt/export.py), taking the CPU's branch of a multi-platform
artifact; one exported for Kiln runs as its own; one for other platforms
only is still refused by JAX's check."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export, lax


def _platform_dependent(x):
    # The branch taken says which platform's lowering ran.
    return lax.platform_dependent(x, cpu=lambda v: v * 2.0, kiln=lambda v: v * 5.0,
                                  default=lambda v: v * 3.0)


def _f(x):
    return jnp.sin(x) * 2 + jnp.cumsum(x)


def _x():
    return np.arange(6, dtype=np.float32)


def test_a_cpu_export_runs_on_kiln():
    exp = export.export(jax.jit(_f), platforms=("cpu",))(_x())
    result = exp.call(_x())
    assert result.devices() == {jax.devices()[0]}
    np.testing.assert_allclose(result, np.sin(_x()) * 2 + np.cumsum(_x()), rtol=1e-6)
    # Also called inside a jit, whose lowering for Kiln embeds the artifact.
    np.testing.assert_allclose(jax.jit(exp.call)(_x()), result, rtol=1e-6)


@pytest.mark.parametrize("platforms", [("cpu", "tpu"), ("tpu", "cpu")])
def test_a_multi_platform_export_takes_its_cpu_lowering(platforms):
    exp = export.export(jax.jit(_platform_dependent), platforms=platforms)(_x())
    np.testing.assert_array_equal(exp.call(_x()), _x() * 2.0)
    # Re-exported from Kiln (the call embedded in a program lowered for Kiln).
    again = export.export(jax.jit(exp.call))(_x())
    assert again.platforms == ("kiln",)
    np.testing.assert_array_equal(again.call(_x()), _x() * 2.0)


def test_an_export_for_kiln_keeps_its_own_lowering():
    exp = export.export(jax.jit(_platform_dependent), platforms=("cpu", "kiln"))(_x())
    np.testing.assert_array_equal(exp.call(_x()), _x() * 5.0)


def test_an_export_for_other_platforms_only_is_refused():
    exp = export.export(jax.jit(_f), platforms=("tpu",))(_x())
    with pytest.raises(ValueError, match=r"exported for platforms .*tpu.* but it is used on .*kiln"):
        exp.call(_x())
