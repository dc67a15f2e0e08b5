"""JAX lists Kiln's devices: how many, and what they report."""

import json
import os

import jax
import pytest

LIST_DEVICES = """
import json, jax
print(json.dumps([[d.id, d.platform, d.device_kind, str(d)] for d in jax.devices()]))
"""


def listed_devices(run_python, env=None, prelude=""):
    """[id, platform, device_kind, str] of each device a fresh JAX process sees."""
    result = run_python(prelude + LIST_DEVICES, env=env)
    return json.loads(result.stdout.strip().splitlines()[-1])


def check_devices(devices, count):
    assert len(devices) == count, devices
    assert len({device[0] for device in devices}) == count, f"ids repeat: {devices}"
    assert {device[1] for device in devices} == {"kiln"}


def test_one_device_by_default(run_python):
    check_devices(listed_devices(run_python), 1)


@pytest.mark.parametrize("count", [1, 2, 4, 8])
def test_num_devices_from_environment(run_python, count):
    check_devices(listed_devices(run_python, env={"KILN_NUM_DEVICES": str(count)}), count)


@pytest.mark.parametrize("options", ["'num_devices:4'", "{'num_devices': 4}"])
def test_num_devices_from_create_options(run_python, options):
    prelude = f"import jax\njax.config.update('jax_pjrt_client_create_options', {options})\n"
    check_devices(listed_devices(run_python, prelude=prelude), 4)


@pytest.mark.parametrize("value", ["0", "-1", "two", "3x"])
def test_bad_num_devices_is_reported(run_python, value):
    code = """
    import jax
    try:
        jax.devices()
    except RuntimeError as error:
        print("error:", error)
    else:
        print("no error")
    """
    result = run_python(code, env={"KILN_NUM_DEVICES": value})
    assert "error:" in result.stdout and "KILN_NUM_DEVICES" in result.stdout, result.stdout


def test_in_process_devices(devices):
    # conftest.py sets KILN_NUM_DEVICES for this process.
    assert len(devices) == int(os.environ["KILN_NUM_DEVICES"])
    assert jax.default_backend() == "kiln"
    for device in devices:
        assert device.platform == "kiln"
        # KILN_BACKEND picks the devices: Kiln's virtual CPUs, or an OpenCL
        # device named for its hardware.
        backend = os.environ.get("KILN_BACKEND") or "host"
        assert device.backend == backend
        if backend == "host":
            assert device.device_kind == "kiln-cpu"
        else:
            assert device.device_kind == device.opencl_device
        # JAX's repr(device) is PJRT's ToString, str(device) its DebugString.
        assert f"id={device.id}" in repr(device), repr(device)
        assert str(device), "empty DebugString"
        assert device.process_index == 0
