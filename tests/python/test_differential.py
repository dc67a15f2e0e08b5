"""The generated differential suite: well over 1,000 JAX programs, each run
on Kiln and on JAX's CPU backend and compared (differential.py: integers and
bools exactly, floats within a tolerance per dtype).

The programs live in diff_programs/*.py, one module per area, each with a
list CASES built at import time from deterministic inputs full of special
values (NaN, infinities, signed zeros, denormals, integer extremes). The
CPU reference runs once per module, in one child interpreter, the first
time a case of that module runs.

Cases Kiln gets wrong and that are not fixed yet are listed in XFAIL with
the diagnosis; they are strict, so a fix makes them fail until removed.
"""

import collections
import concurrent.futures
import importlib
import os
import sys

import pytest

import differential

_HERE = os.path.dirname(os.path.abspath(__file__))
_PROGRAMS = os.path.join(_HERE, "diff_programs")
sys.path.insert(0, _PROGRAMS)

MODULES = ["programs", "contractions", "shape_ops", "reductions", "numpy_nn", "elementwise"]

# Denormals: XLA's CPU backend runs with FTZ+DAZ, and so does Kiln
# (kernels/float_env.h); the special-value inputs include f32/bf16 denormals,
# so the elementwise cases check that both flush alike.

# "module::case" -> why Kiln differs from the CPU backend.
XFAIL: dict[str, str] = {}


def _load(name):
    return importlib.import_module(name)


def _params():
    params = []
    for module_name in MODULES:
        for case in _load(module_name).CASES:
            key = f"{module_name}::{case.name}"
            marks = []
            if key in XFAIL:
                marks.append(pytest.mark.xfail(strict=True, reason=XFAIL[key]))
            params.append(pytest.param(module_name, case, id=key, marks=marks))
    # KILN_DIFFERENTIAL_EVERY=N runs every Nth program only: `make test`'s
    # pass over a second backend (KILN_BACKEND=opencl) takes a third.
    every = int(os.environ.get("KILN_DIFFERENTIAL_EVERY", "1"))
    return params[::max(1, every)]


@pytest.fixture(scope="session")
def references(tmp_path_factory):
    """Module name -> its CPU reference. Every module's CPU child starts at
    once (two at a time, in threads: each waits on its child process), so
    the references compute while Kiln runs the cases of earlier modules."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    futures = {
        name: pool.submit(differential.cpu_reference,
                          os.path.join(_PROGRAMS, f"{name}.py"), "CASES",
                          tmp_path_factory.mktemp(f"cpu_{name}"))
        for name in MODULES}
    yield lambda module_name: futures[module_name].result()
    pool.shutdown(cancel_futures=True)


@pytest.mark.parametrize("module_name, case", _params())
def test_matches_cpu(module_name, case, references):
    differential.check(case, references(module_name))


def test_suite_size_and_unique_names():
    counts = collections.Counter(f"{m}::{c.name}" for m in MODULES for c in _load(m).CASES)
    assert sum(counts.values()) >= 1000
    assert [name for name, n in counts.items() if n > 1] == []
    assert set(XFAIL) <= set(counts), set(XFAIL) - set(counts)
