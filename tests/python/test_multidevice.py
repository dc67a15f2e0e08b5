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
        multidevice_cases.assert_same_values(cpu_arrays[key], kiln_arrays[key], key)


STRESS = r"""
import concurrent.futures
import numpy as np
import jax, jax.numpy as jnp

n = jax.device_count()
psum = jax.pmap(lambda x: x + jax.lax.psum(x, "i"), axis_name="i")
gather = jax.pmap(lambda x: jax.lax.all_gather(x, "i", tiled=True) * 2, axis_name="i")
ring = jax.pmap(lambda x: jax.lax.ppermute(x, "i", [(i, (i + 1) % n) for i in range(n)]),
                axis_name="i")
x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
expected = [np.asarray(f(x)) for f in (psum, gather, ring)]

def work(t):
    for i in range(30):
        k = (t + i) % 3
        got = np.asarray((psum, gather, ring)[k](x))
        if not np.array_equal(got, expected[k]):
            return f"thread {t} call {i}: wrong result"
    return None

with concurrent.futures.ThreadPoolExecutor(6) as pool:
    errors = [e for e in pool.map(work, range(6)) if e]
print("errors", errors)
assert not errors
"""


def test_collectives_from_several_threads_at_once_meet_without_deadlock():
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_NUM_DEVICES")}
    env.update(JAX_PLATFORMS="kiln", KILN_NUM_DEVICES="4", KILN_COLLECTIVE_TIMEOUT_SECONDS="30")
    result = subprocess.run([sys.executable, "-c", STRESS], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "errors []" in result.stdout


@pytest.mark.parametrize("count, printed", [(4, "[6 7 8 9]"), (1, "[0]")])
def test_integration_guide_pmap_check(count, printed):
    code = ("import jax\n"
            "print(jax.pmap(lambda x: x + jax.lax.psum(x, 'i'), axis_name='i')"
            f"(jax.numpy.arange({count})))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_NUM_DEVICES")}
    env.update(JAX_PLATFORMS="kiln", KILN_NUM_DEVICES=str(count))
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == printed
