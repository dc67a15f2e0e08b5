"""PyTorch/XLA on Kiln (`make test-torch`, opt-in: it downloads torch and
torch_xla into their own virtual environment, .venv-torch).

Every program of programs.py runs twice, in subprocesses, with
PJRT_DEVICE=KILN (Kiln found through its `torch_xla.plugins` entry point) and
with PJRT_DEVICE=CPU (XLA's own CPU client inside torch_xla), and the results
must agree within float tolerance.
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import programs  # noqa: E402  (needs torch_xla, as this whole suite does)

TOLERANCE = 1e-4


def run(name, device, extra_env=None, expect_ok=True):
  env = dict(os.environ, PJRT_DEVICE=device, XLA_REGISTER_INSTALLED_PLUGINS="1")
  env.update(extra_env or {})
  done = subprocess.run([sys.executable, str(HERE / "programs.py"), name], env=env,
                        capture_output=True, text=True, timeout=600)
  if not expect_ok:
    return done
  assert done.returncode == 0, f"{name} on {device} failed:\n{done.stderr[-4000:]}"
  return json.loads(done.stdout.strip().splitlines()[-1])


def assert_close(kiln, cpu, where=""):
  if isinstance(cpu, dict):
    assert sorted(kiln) == sorted(cpu), where
    for key in cpu:
      assert_close(kiln[key], cpu[key], f"{where}.{key}")
  elif isinstance(cpu, list):
    assert len(kiln) == len(cpu), where
    for i, (a, b) in enumerate(zip(kiln, cpu)):
      assert_close(a, b, f"{where}[{i}]")
  elif isinstance(cpu, float):
    assert abs(kiln - cpu) <= TOLERANCE * (1 + abs(cpu)), f"{where}: Kiln {kiln}, CPU {cpu}"
  else:
    assert kiln == cpu, f"{where}: Kiln {kiln!r}, CPU {cpu!r}"


COMPARED = ["smoke", "elementwise", "matmul_reductions", "indexing", "random", "mlp_training",
            "cnn_training", "transformer_training"]


@pytest.mark.parametrize("name", COMPARED)
def test_program_matches_xla_cpu(name):
  assert_close(run(name, "KILN"), run(name, "CPU"), name)


def test_smoke_gives_the_documented_result():
  assert run("smoke", "KILN") == {"result": [4.0, 4.0, 13.0, 13.0]}


def test_devices_are_kilns():
  result = run("devices", "KILN", {"KILN_NUM_DEVICES": "2"})
  assert result == {"count": 2, "kind": "xla"}


def test_memory_info():
  result = run("memory_info", "KILN")
  assert result["keys"] == ["bytes_limit", "bytes_used", "peak_bytes_used"]
  assert result["positive"] and result["limit_positive"]
  assert result["x"] == [1048576.0]


def test_persistent_cache_round_trip(tmp_path):
  env = {"XLA_PERSISTENT_CACHE_PATH": str(tmp_path)}
  first = run("persistent_cache", "KILN", env)
  assert first == {"y": [92.0], "cached_files": True}
  entries = sorted(os.listdir(tmp_path))
  # A second process finds the cache filled and still computes the same.
  assert run("persistent_cache", "KILN", env) == first
  assert sorted(os.listdir(tmp_path)) == entries


@pytest.mark.parametrize("name", COMPARED)
def test_stablehlo_compile_path_matches_too(name):
  # torch_xla then compiles portable artifacts (PJRT format "mlir").
  env = {"XLA_STABLEHLO_COMPILE": "1"}
  assert_close(run(name, "KILN", env), run(name, "CPU"), name)


def test_second_device_runs_its_own_programs():
  kiln = run("second_device", "KILN", {"KILN_NUM_DEVICES": "2"})
  cpu = run("second_device", "CPU", {"CPU_NUM_DEVICES": "2"})
  assert kiln["where"] == "xla:1"
  assert_close(kiln, cpu, "second_device")


SPMD = ["spmd_data_parallel", "spmd_tensor_parallel", "spmd_uneven", "spmd_constraint",
        "spmd_cnn", "spmd_training"]


@pytest.mark.parametrize("name", SPMD)
def test_spmd_program_matches_xla_cpu(name):
  # xr.use_spmd() over 4 devices: the values and each device's shard shapes
  # (XLA's partitioner decides the shardings of results left to it).
  kiln = run(name, "KILN", {"KILN_NUM_DEVICES": "4"})
  cpu = run(name, "CPU", {"CPU_NUM_DEVICES": "4"})
  assert_close(kiln, cpu, name)


def test_unsupported_op_is_a_runtime_error_naming_it():
  done = run("unsupported_op", "KILN", expect_ok=False)
  assert done.returncode != 0
  assert "RuntimeError" in done.stderr or "ValueError" in done.stderr, done.stderr[-2000:]
  assert "not supported by Kiln" in done.stderr, done.stderr[-2000:]
  assert "Segmentation fault" not in done.stderr and done.returncode > 0
