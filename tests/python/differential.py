"""Differential testing: JAX programs run on Kiln and on JAX's own CPU backend.

The pytest process sees only Kiln (conftest.py sets JAX_PLATFORMS=kiln), so
the CPU reference runs in ONE fresh interpreter per test module: it imports
the test module by path, runs every case of a list in it under jax.jit on the
CPU backend, and saves the outputs to an .npz file. Each test then runs its
case on Kiln in-process and compares:

* integers, bools: exactly;
* floats and complex: allclose with a tolerance per element type (f32
  rtol 1e-5, atol 1e-6; see TOLERANCES), NaN where the reference has NaN;
* always: the same number of outputs, shapes and dtypes.

Usage in a test module::

    import differential
    from differential import Case

    CASES = [
        Case("sum_rows", lambda x: x.sum(1), (np.ones((2, 3), np.float32),)),
        ...
    ]

    @pytest.fixture(scope="module")
    def reference(tmp_path_factory):
        return differential.cpu_reference(__file__, "CASES", tmp_path_factory.mktemp("cpu"))

    @pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
    def test_matches_cpu(case, reference):
        differential.check(case, reference)

Cases must be importable: the module is imported again (in the CPU child)
and must build the same arguments, so make them deterministic (fixed seeds)
and cheap, and keep module-level code free of side effects. A case whose
reference raises is reported with the CPU error.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import numpy as np

# Default (rtol, atol) per dtype kind; a Case may override both.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-14),
    "complex64": (1e-5, 1e-6),
    "complex128": (1e-12, 1e-14),
}


@dataclasses.dataclass(frozen=True)
class Case:
    """One program: `fn` is jitted and called on `args` (numpy arrays or scalars)."""

    name: str
    fn: Callable[..., Any]
    args: tuple = ()
    rtol: float | None = None
    atol: float | None = None


@dataclasses.dataclass
class Reference:
    """The CPU backend's outputs per case name (flattened pytree leaves), or its error."""

    outputs: dict[str, list[np.ndarray]]
    errors: dict[str, str]


# The child: imports the test module with JAX on CPU and saves every case's
# outputs. Non-numpy dtypes (bfloat16, float8...) are saved as raw bytes and
# their names kept in the metadata.
_CHILD = textwrap.dedent("""
    import importlib.util, json, sys, traceback
    import numpy as np
    module_path, attribute, out_dir = sys.argv[1:4]
    sys.path.insert(0, str(__import__("pathlib").Path(module_path).parent))
    import jax
    spec = importlib.util.spec_from_file_location("_differential_cases", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    arrays, meta = {}, {"outputs": {}, "errors": {}}
    for case in getattr(module, attribute):
        try:
            leaves = jax.tree_util.tree_leaves(jax.jit(case.fn)(*case.args))
            dtypes = []
            for i, leaf in enumerate(leaves):
                value = np.asarray(leaf)
                dtypes.append([value.dtype.name, list(value.shape)])
                if value.dtype.isbuiltin != 1:
                    value = value.view(np.dtype(f"u{value.dtype.itemsize}"))
                arrays[f"{case.name}::{i}"] = value
            meta["outputs"][case.name] = dtypes
        except Exception:
            meta["errors"][case.name] = traceback.format_exc(limit=3)
    np.savez(f"{out_dir}/reference.npz", **arrays)
    with open(f"{out_dir}/reference.json", "w") as f:
        json.dump(meta, f)
""")


def cpu_reference(module_path: str, attribute: str, out_dir: str | os.PathLike,
                  timeout: float = 600) -> Reference:
    """Runs every Case in `module_path`'s list `attribute` on JAX's CPU backend.

    One child interpreter for the whole list; `out_dir` receives
    reference.npz and reference.json. Raises RuntimeError with the child's
    output if it fails as a whole.
    """
    return run_cases(module_path, attribute, "cpu", out_dir, timeout=timeout)


def run_cases(module_path: str, attribute: str, platform: str, out_dir: str | os.PathLike,
              x64: bool = False, timeout: float = 600) -> Reference:
    """Runs every Case in `module_path`'s list `attribute` on `platform` ("cpu"
    or "kiln") in one fresh interpreter, with JAX_ENABLE_X64=1 when `x64`
    (64-bit cases: the pytest process runs with x64 off). The child sees
    KILN_* variables only for kiln. Raises RuntimeError with the child's
    output if it fails as a whole.
    """
    out_dir = Path(out_dir)
    env = {k: v for k, v in os.environ.items() if platform == "kiln" or not k.startswith("KILN_")}
    env["JAX_PLATFORMS"] = platform
    if x64:
        env["JAX_ENABLE_X64"] = "1"
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, str(module_path), attribute, str(out_dir)],
        env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"the {platform} run failed ({result.returncode})\n"
                           f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}")
    return load_reference(out_dir)


def x64_runs(module_path: str, attribute: str, tmp_path_factory) -> tuple[Reference, Reference]:
    """Kiln's and the CPU's runs of the 64-bit cases `attribute` of
    `module_path` (run_cases with x64), for check_runs."""
    return tuple(run_cases(module_path, attribute, platform,
                           tmp_path_factory.mktemp(f"{platform}64"), x64=True)
                 for platform in ("kiln", "cpu"))


def load_reference(out_dir: str | os.PathLike) -> Reference:
    """Reads what cpu_reference saved in `out_dir`."""
    import ml_dtypes  # noqa: F401  (registers bfloat16 & co. with numpy)

    out_dir = Path(out_dir)
    meta = json.loads((out_dir / "reference.json").read_text())
    outputs = {}
    with np.load(out_dir / "reference.npz") as arrays:
        for name, leaves in meta["outputs"].items():
            values = []
            for i, (dtype, shape) in enumerate(leaves):
                value = arrays[f"{name}::{i}"]
                if value.dtype.name != dtype:
                    value = value.view(_dtype(dtype))
                values.append(value.reshape(shape))
            outputs[name] = values
    return Reference(outputs=outputs, errors=meta["errors"])


def _dtype(name: str) -> np.dtype:
    import ml_dtypes

    try:
        return np.dtype(name)
    except TypeError:
        return np.dtype(getattr(ml_dtypes, name))


def run_on_kiln(case: Case) -> list[np.ndarray]:
    """The case's outputs on the default backend of this process (Kiln)."""
    import jax

    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(jax.jit(case.fn)(*case.args))]


def assert_close(got: np.ndarray, want: np.ndarray, rtol: float | None = None,
                 atol: float | None = None, where: str = "") -> None:
    """Shape and dtype equal; values exact for integers and bools, allclose for floats."""
    assert got.shape == want.shape, f"{where}: shape {got.shape}, the CPU gives {want.shape}"
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, the CPU gives {want.dtype}"
    kind = want.dtype.name
    if kind not in TOLERANCES and np.dtype(want.dtype).kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=where)
        return
    default_rtol, default_atol = TOLERANCES.get(kind, (1e-5, 1e-6))
    wide = np.complex128 if np.iscomplexobj(want) else np.float64
    np.testing.assert_allclose(
        got.astype(wide), want.astype(wide),
        rtol=default_rtol if rtol is None else rtol,
        atol=default_atol if atol is None else atol, equal_nan=True, err_msg=where)


def check(case: Case, reference: Reference) -> None:
    """Runs `case` on Kiln and compares every output with the CPU reference."""
    if case.name in reference.errors:
        raise AssertionError(f"{case.name}: the CPU reference failed:\n"
                             f"{reference.errors[case.name]}")
    compare(case, run_on_kiln(case), reference.outputs[case.name])


def check_runs(case: Case, kiln: Reference, cpu: Reference) -> None:
    """Compares `case`'s outputs from two child runs (run_cases), Kiln's and the CPU's."""
    for platform, run in (("CPU", cpu), ("Kiln", kiln)):
        assert case.name not in run.errors, f"{case.name} failed on {platform}:\n" + \
            run.errors[case.name]
    compare(case, kiln.outputs[case.name], cpu.outputs[case.name])


def compare(case: Case, got: list[np.ndarray], want: list[np.ndarray]) -> None:
    """Every output of `case` on Kiln (`got`) against the CPU's (`want`)."""
    assert len(got) == len(want), f"{case.name}: {len(got)} outputs, the CPU gives {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w, case.rtol, case.atol, where=f"{case.name} output {i}")
