"""Multi-device programs on Kiln against JAX's CPU backend with the same
device count (XLA_FLAGS=--xla_force_host_platform_device_count=N), for
N = 2, 4 and 8: pmap with every collective, shard_map on 1-D and 2-D
meshes, jit with NamedSharding inputs and outputs, device_put between
shardings and a data-parallel training step (multidevice_cases.py). Each
platform runs all cases in one fresh interpreter per device count; outputs
(and the output shardings JAX reports) must agree."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import multidevice_cases

CASES_SCRIPT = Path(__file__).with_name("multidevice_cases.py")
COUNTS = (2, 4, 8)


def _run(platform: str, count: int, path: Path) -> tuple[dict, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_NUM_DEVICES")}
    env["JAX_PLATFORMS"] = platform
    if platform == "cpu":
        env = {k: v for k, v in env.items() if not k.startswith("KILN_")}
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={count}"
    else:
        env["KILN_NUM_DEVICES"] = str(count)
        env["KILN_COLLECTIVE_TIMEOUT_SECONDS"] = "60"
    result = subprocess.run([sys.executable, str(CASES_SCRIPT), str(path)], env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{platform} x{count}:\n{result.stdout}\n{result.stderr}"
    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files}
    errors = json.loads(Path(str(path) + ".errors.json").read_text())
    return arrays, errors


@pytest.fixture(scope="module", params=COUNTS, ids=lambda n: f"{n}dev")
def runs(request, tmp_path_factory):
    count = request.param
    out = tmp_path_factory.mktemp(f"multi{count}")
    return {platform: _run(platform, count, out / f"{platform}.npz")
            for platform in ("cpu", "kiln")}


@pytest.mark.parametrize("name", multidevice_cases.NAMES)
def test_matches_cpu(name, runs):
    cpu_arrays, cpu_errors = runs["cpu"]
    kiln_arrays, kiln_errors = runs["kiln"]
    if name in cpu_errors:
        if cpu_errors[name].startswith("skipped"):
            pytest.skip(cpu_errors[name])
        pytest.fail(f"the CPU reference failed:\n{cpu_errors[name]}")
    assert name not in kiln_errors, kiln_errors.get(name)
    keys = sorted(k for k in cpu_arrays if k.startswith(name + "/"))
    assert keys == sorted(k for k in kiln_arrays if k.startswith(name + "/"))
    for key in keys:
        expected, actual = cpu_arrays[key], kiln_arrays[key]
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, key
        if expected.dtype.kind in "fc":
            np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5, err_msg=key)
        else:
            np.testing.assert_array_equal(actual, expected, err_msg=key)
