"""Round trip against jaxlib (issue 3).

For every program of tests/data/jax_programs.py, lowered and serialized by
JAX's CPU backend as PJRT does it (and a few modules written by hand):

  (a) `kiln print ARTIFACT` equals what jaxlib's own deserializer prints for
      the same bytes (up to trailing whitespace), in the pretty form and in
      MLIR's generic form (`--generic`);
  (b) Kiln reads its printed text back to the same module: printing it gives
      the same text, and the generic form jaxlib prints for that text;
  (c) `kiln print --verify ARTIFACT` accepts it (Kiln's verifier);
  (d) jaxlib parses Kiln's printed text and prints it identically.

test_programs_cover_every_op_jax_emits checks that the programs use every
StableHLO op JAX's lowering rules build, but the few listed in NOT_PRODUCIBLE.

The programs are generated once per session by a child Python on JAX's CPU
backend (this process sees only Kiln); KILN_TOOL_PATH points the tests at a
kiln-tool from a build tree instead of the installed one.
"""

import difflib
import functools
import inspect
import os
import pathlib
import re
import subprocess
import sys

import pytest

import kiln_pjrt

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
sys.path.insert(0, str(DATA))
import jax_programs  # noqa: E402  (needs the path above)

NAMES = sorted(jax_programs.PROGRAMS) + sorted(jax_programs.HANDWRITTEN)

# StableHLO ops that JAX's lowering rules build but that no program can make
# JAX emit when lowering for CPU (or, via jax.export, for TPU) on this machine.
NOT_PRODUCIBLE = {
    "stablehlo.collective_broadcast": "lax.pbroadcast has a lowering for GPU only",
    "stablehlo.send": "psend and TPU host callbacks only; CPU callbacks are custom calls",
    "stablehlo.recv": "precv and TPU host callbacks only; CPU callbacks are custom calls",
    "stablehlo.replica_id": "axis_index outside SPMD lowering, which JAX 0.12 never does "
                            "(pmap lowers through shard_map: partition_id)",
    "stablehlo.logistic": "TPU only, behind jax_use_hlo_logistic_lowering; else 1/(1+exp(-x))",
}


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    """The folder with every program's artifact and jaxlib's print of it."""
    out = tmp_path_factory.mktemp("roundtrip")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    env.update(JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=8")
    command = [sys.executable, "-W", "ignore", str(DATA / "jax_programs.py"), "--out", str(out)]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        pytest.fail(f"{command} exited with {result.returncode}\n{result.stderr}")
    return out


def kiln(*args: str) -> str:
    """kiln-tool's standard output; fails the test with its message on an error."""
    result = subprocess.run([kiln_pjrt.tool_path(), *args], capture_output=True, text=True,
                            timeout=60)
    if result.returncode != 0:
        pytest.fail(f"kiln-tool {' '.join(args)} exited with {result.returncode}: "
                    f"{result.stderr.strip()}")
    return result.stdout


@functools.cache
def kiln_print(path: pathlib.Path, *options: str) -> str:
    return kiln("print", *options, str(path))


def normalized(text: str) -> str:
    """Whitespace-only normalization: no trailing spaces or trailing blank lines."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines()) + "\n"


def assert_same_text(actual: str, expected: str, what: str):
    actual, expected = normalized(actual), normalized(expected)
    if actual != expected:
        diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(),
                                    "expected", what, lineterm="", n=1)
        pytest.fail(f"{what} differs:\n" + "\n".join(list(diff)[:80]))


def artifact(generated: pathlib.Path, name: str) -> pathlib.Path:
    error = generated / f"{name}.error"
    if error.exists():
        pytest.fail(f"JAX could not lower {name}: {error.read_text()}")
    return generated / f"{name}.mlir.bc"


@pytest.mark.parametrize("name", NAMES)
def test_kiln_prints_what_jaxlib_prints(generated, name):
    expected = (generated / f"{name}.jaxlib.mlir").read_text()
    assert_same_text(kiln_print(artifact(generated, name)), expected, "kiln print")


@pytest.mark.parametrize("name", NAMES)
def test_kiln_generic_print_is_jaxlibs(generated, name):
    expected = (generated / f"{name}.jaxlib.generic.mlir").read_text()
    assert_same_text(kiln_print(artifact(generated, name), "--generic"), expected,
                     "kiln print --generic")


@pytest.mark.parametrize("name", NAMES)
def test_printed_text_reads_back_identically(generated, tmp_path, name):
    printed = kiln_print(artifact(generated, name))
    text = tmp_path / f"{name}.mlir"
    text.write_text(printed)
    assert_same_text(kiln("print", str(text)), printed, "kiln print of the text")
    # The pretty form leaves out some of what the artifact has (arg_attrs = [{}]):
    # compare with what jaxlib reads from the same text.
    assert_same_text(kiln("print", "--generic", str(text)),
                     jax_programs.jaxlib_print(text=printed, generic=True),
                     "kiln print --generic of the text")


@pytest.mark.parametrize("name", NAMES)
def test_verifier_accepts_artifact(generated, name):
    kiln("print", "--verify", str(artifact(generated, name)))


@pytest.mark.parametrize("name", NAMES)
def test_jaxlib_reads_printed_text_identically(generated, name):
    printed = kiln_print(artifact(generated, name))
    assert_same_text(jax_programs.jaxlib_print(text=printed), printed, "jaxlib's print")


def ops_jax_emits() -> set[str]:
    """The StableHLO ops jax/_src builds: every `hlo.<op>` builder or `hlo.<Name>Op`
    class it names (test data under internal_test_util aside), as op names."""
    import jax
    from jaxlib.mlir.dialects import stablehlo

    names = set()
    for path in (pathlib.Path(jax.__file__).parent / "_src").rglob("*.py"):
        if "internal_test_util" not in path.parts:
            names.update(re.findall(r"\bhlo\.([A-Za-z_]\w*)", path.read_text()))
    ops = set()
    for name in names:
        builder = getattr(stablehlo, name, None)
        if inspect.isclass(builder):
            ops.add(getattr(builder, "OPERATION_NAME", None))
        elif inspect.isfunction(builder):  # `hlo.add` wraps `AddOp(...)`
            match = re.search(r"\b(\w+Op)\(", inspect.getsource(builder))
            op_class = getattr(stablehlo, match.group(1), None) if match else None
            ops.add(getattr(op_class, "OPERATION_NAME", None))
    return ops - {None}


def test_programs_cover_every_op_jax_emits(generated):
    emitted = ops_jax_emits()
    used = set()
    for path in generated.glob("*.jaxlib.mlir"):
        used.update(re.findall(r'^\s*(?:%\S+(?:, %\S+)* = )?"?(stablehlo\.\w+)', path.read_text(),
                               re.MULTILINE))
    assert len(emitted) > 80, sorted(emitted)
    assert set(NOT_PRODUCIBLE) <= emitted, "JAX no longer emits these: drop them from the list"
    assert not set(NOT_PRODUCIBLE) & used, "a program makes these now: drop them from the list"
    assert sorted(emitted - used - set(NOT_PRODUCIBLE)) == []
