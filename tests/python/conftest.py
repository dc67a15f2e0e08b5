"""Shared setup for Kiln's Python tests.

In this pytest process JAX sees only Kiln, with two devices. Tests that need
another device count or other KILN_* settings run a fresh Python through
the `run_python` fixture, because the Kiln client is created once per process.
"""

import os
import subprocess
import sys
import textwrap

import pytest

IN_PROCESS_DEVICES = 2
_KILN_VARIABLES = ("KILN_NUM_DEVICES", "KILN_TRACE", "KILN_TRACE_FILE")

# Set before any test module imports jax.
os.environ["JAX_PLATFORMS"] = "kiln"
for _name in _KILN_VARIABLES:
    os.environ.pop(_name, None)
os.environ["KILN_NUM_DEVICES"] = str(IN_PROCESS_DEVICES)
# Every attribute a lowering reads must be declared in src/ir/ops.def.
os.environ["KILN_CHECK_OP_DESCRIPTIONS"] = "1"


def _run_python(code: str, env: dict[str, str] | None = None, check: bool = True,
               args: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Runs `code` (or `python args...` when code is empty) in a fresh interpreter.

    The child sees JAX_PLATFORMS=kiln, no KILN_* variables except those in
    `env`, and fails the test with its output when `check` and it exits non-zero.
    """
    child_env = {k: v for k, v in os.environ.items() if k not in _KILN_VARIABLES}
    child_env["JAX_PLATFORMS"] = "kiln"
    child_env.update(env or {})
    command = [sys.executable, *(["-c", textwrap.dedent(code)] if code else []), *args]
    result = subprocess.run(command, env=child_env, capture_output=True, text=True,
                            timeout=300)
    if check and result.returncode != 0:
        pytest.fail(f"{command[1:]} exited with {result.returncode}\n"
                    f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}")
    return result


@pytest.fixture(scope="session")
def run_python():
    """The function `_run_python`: a fresh interpreter per call."""
    return _run_python


def _run_on_kiln_and_cpu(code: str, devices: int) -> tuple[dict, dict]:
    """Runs `code` on Kiln and on XLA's CPU backend, each with `devices`
    devices, and returns the JSON each printed on its last line."""
    import json

    runs = {}
    for platform in ("kiln", "cpu"):
        done = _run_python(code, env={
            "JAX_PLATFORMS": platform, "KILN_NUM_DEVICES": str(devices),
            "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}"})
        runs[platform] = json.loads(done.stdout.strip().splitlines()[-1])
    return runs["kiln"], runs["cpu"]


@pytest.fixture(scope="session")
def run_on_kiln_and_cpu():
    """The function `_run_on_kiln_and_cpu`: (Kiln's JSON, XLA's JSON)."""
    return _run_on_kiln_and_cpu


@pytest.fixture(scope="session")
def devices():
    """Kiln's devices in this process (IN_PROCESS_DEVICES of them)."""
    import jax

    return jax.devices()
