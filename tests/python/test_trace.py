"""KILN_TRACE=1 logs one line per PJRT call; KILN_TRACE_FILE sends the lines to a file."""

PREFIX = "kiln-trace: "
CODE = """
import jax, numpy as np
np.asarray(jax.device_put(np.arange(4, dtype=np.float32)))
"""


def trace_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(PREFIX)]


def called(lines: list[str]) -> set[str]:
    """Names of the PJRT functions in trace lines."""
    return {(line[len(PREFIX):].split() or [""])[0] for line in lines}


def test_no_trace_by_default(run_python):
    assert trace_lines(run_python(CODE).stderr) == []


def test_trace_to_stderr(run_python):
    lines = trace_lines(run_python(CODE, env={"KILN_TRACE": "1"}).stderr)
    names = called(lines)
    assert {"PJRT_Client_Create", "PJRT_Client_BufferFromHostBuffer"} <= names, lines
    assert all(name.startswith("PJRT_") for name in names), names


def test_trace_to_file(run_python, tmp_path):
    path = tmp_path / "trace.txt"
    result = run_python(CODE, env={"KILN_TRACE": "1", "KILN_TRACE_FILE": str(path)})
    assert trace_lines(result.stderr) == []
    lines = trace_lines(path.read_text())
    assert "PJRT_Client_Create" in called(lines), lines
