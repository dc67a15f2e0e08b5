"""`make bench`'s harness (bench/run.py) stays runnable: a short run of two
workloads on Kiln and the CPU backend writes both backends' timings, compile
times, peak memory and an output check, and bad arguments are refused. The
timings themselves are not asserted (speed is measured by `make bench`,
never by tests)."""

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "run.py")


def test_a_short_run_reports_both_backends(run_python, tmp_path):
    result = run_python("", env={"JAX_PLATFORMS": "kiln,cpu"},
                        args=(SCRIPT, "--only", "dispatch_scalar_add,softmax_1024x1024",
                              "--samples", "2", "--compile-samples", "1", "--out", str(tmp_path)))
    data = json.loads((tmp_path / "results.json").read_text())
    assert [r["name"] for r in data["results"]] == ["dispatch_scalar_add", "softmax_1024x1024"]
    for row in data["results"]:
        assert row["check"] == "ok", row
        assert row["samples"] == 2
        for backend in ("kiln", "cpu"):
            assert row[f"{backend}_median_s"] > 0 and row[f"{backend}_compile_s"] > 0, row
            assert row[f"{backend}_first_call_s"] > 0, row
            assert row[f"{backend}_peak_bytes"] is not None, row
        assert row["ratio"] == row["kiln_median_s"] / row["cpu_median_s"]
    table = (tmp_path / "results.md").read_text()
    assert "| softmax_1024x1024 |" in table and "Geometric mean" in table
    assert "of first-call ratios" in table
    assert "Geometric mean" in result.stdout


def test_unknown_workloads_are_refused(run_python, tmp_path):
    result = run_python("", env={"JAX_PLATFORMS": "kiln,cpu"}, check=False,
                        args=(SCRIPT, "--only", "no_such_workload", "--out", str(tmp_path)))
    assert result.returncode == 2
    assert "unknown workloads: no_such_workload" in result.stderr


def test_list_names_every_workload(run_python):
    result = run_python("", env={"JAX_PLATFORMS": "kiln,cpu"}, args=(SCRIPT, "--list"))
    names = [line.split()[-1] for line in result.stdout.splitlines() if line.strip()]
    assert len(names) == 59 and len(set(names)) == 59
    assert "dispatch_scalar_add" in names and "sort_1M" in names
    assert "matmul_int8_to_int32_512" in names and "matmul_uint8_to_int32_1024" in names
    # Issue 29's classes: each has workloads.
    groups = {line.split()[0] for line in result.stdout.splitlines() if line.strip()}
    assert {"integer", "linalg", "rng", "fft", "loop", "indexing", "f64"} <= groups


def test_a_thread_sweep_runs_each_count_held_to_its_cores(run_python, tmp_path):
    # 1 core always exists; a count above the machine's cores is skipped
    # with a message, not run oversubscribed.
    result = run_python("", env={"JAX_PLATFORMS": "kiln,cpu"},
                        args=(SCRIPT, "--only", "dispatch_scalar_add,f64", "--samples", "2",
                              "--compile-samples", "1", "--threads", "1 4096",
                              "--out", str(tmp_path)))
    assert "threads 4096: skipped" in result.stderr
    one = json.loads((tmp_path / "threads-1" / "results.json").read_text())
    assert one["header"]["threads"] == "KILN_NUM_THREADS=1"
    assert [r["name"] for r in one["results"]] == [
        "dispatch_scalar_add", "matmul_f64_512", "elementwise_chain10_f64_1M"]
    assert all(r["check"] == "ok" for r in one["results"])
    sweep = json.loads((tmp_path / "threads.json").read_text())
    assert sweep["counts"] == [1]
    assert all(row["1"]["kiln_speedup"] == 1.0 for row in sweep["rows"])
    assert "| matmul_f64_512 |" in (tmp_path / "threads.md").read_text()


def test_collectives_bench_reports_both_backends(run_python, tmp_path):
    script = os.path.join(ROOT, "bench", "collectives.py")
    run_python("", args=(script, "--devices", "2", "--sizes", "1K,8K", "--seconds", "0.01",
                         "--out", str(tmp_path)))
    rows = json.loads((tmp_path / "collectives.json").read_text())
    assert sorted((r["op"], r["size"]) for r in rows) == sorted(
        (op, size) for op in ("all_reduce", "all_gather", "reduce_scatter")
        for size in (1024, 8192))
    assert all(r["devices"] == 2 and r["seconds"] > 0 and r["xla_seconds"] > 0 for r in rows)
    assert "| all_gather | 2 | 8 KiB |" in (tmp_path / "collectives.md").read_text()
