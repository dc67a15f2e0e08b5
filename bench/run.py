"""Times every workload of bench/workloads.py on Kiln and on JAX's CPU backend
in one process, interleaved, and reports medians, Kiln/XLA ratios and their
geometric mean as a markdown table and a JSON file.

    .venv/bin/python bench/run.py                   # everything (`make bench`)
    .venv/bin/python bench/run.py --only sort_1M    # one workload (or a comma list)
    .venv/bin/python bench/run.py --list
    .venv/bin/python bench/run.py --threads "1 2 4"  # a thread sweep (`make bench THREADS=...`)

Per workload and backend: the inputs are copied to the backend's device; the
program is lowered once per compile sample and `Lowered.compile()` is timed
(from lowered module to executable); the compiled program's memory analysis
gives its peak (arguments + outputs + temporaries - aliased); after warm-up,
samples alternate between the backends (the order flips every round) and
each sample is `calls_per_sample` calls, each waited for with
`block_until_ready`, so a figure is the latency of one call. The outputs of
both backends are compared, so a fast wrong answer shows. A first call (JAX's
caches cleared: trace, lower, compile, run) is timed apart, the median of
`--compile-samples`. `--threads` runs everything again per thread count in a
child held to that many cores and reports each backend's speedup over its
own single-core time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "kiln,cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as wl  # noqa: E402

BACKENDS = ("kiln", "cpu")


def _peak_bytes(compiled) -> int | None:
    try:
        stats = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - a backend may not report it
        return None
    if stats is None:
        return None
    return (stats.argument_size_in_bytes + stats.output_size_in_bytes
            + stats.temp_size_in_bytes - stats.alias_size_in_bytes)


def _compile_seconds(fn, args, samples: int) -> tuple[float, object]:
    times, compiled = [], None
    for _ in range(samples):
        jax.clear_caches()  # else JAX hands back the executable it compiled before
        lowered = jax.jit(fn).lower(*args)
        start = time.perf_counter()
        compiled = lowered.compile()
        times.append(time.perf_counter() - start)
    return statistics.median(times), compiled


def _first_call_seconds(fn, args, samples: int) -> float:
    # What a user waits for the first call of a new program: trace, lower,
    # compile and run.
    times = []
    for _ in range(samples):
        jax.clear_caches()
        start = time.perf_counter()
        jax.block_until_ready(jax.jit(fn)(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _one_sample(call, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        jax.block_until_ready(call())
    return (time.perf_counter() - start) / calls


def _compare(kiln_out, cpu_out, canonical=None) -> str:
    if canonical is not None:
        kiln_out, cpu_out = canonical(kiln_out), canonical(cpu_out)
    kiln_leaves = jax.tree_util.tree_leaves(kiln_out)
    cpu_leaves = jax.tree_util.tree_leaves(cpu_out)
    worst = 0.0
    for a, b in zip(kiln_leaves, cpu_leaves):
        a, b = np.asarray(a), np.asarray(b)
        wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
        a, b = a.astype(wide), b.astype(wide)
        if a.shape != b.shape:
            return f"shape {a.shape} vs {b.shape}"
        scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
        if a.size:
            worst = max(worst, float(np.max(np.abs(a - b))) / scale)
    return "ok" if worst < 2e-2 else f"DIFFERS (max rel. error {worst:.2g})"


def run_workload(work: wl.Workload, args: argparse.Namespace) -> dict:
    with jax.enable_x64(work.x64):
        return _run_workload(work, args)


def _run_workload(work: wl.Workload, args: argparse.Namespace) -> dict:
    rng = np.random.default_rng(0)
    host_inputs = work.make_inputs(rng)
    result = {"name": work.name, "group": work.group}
    calls, outputs = {}, {}
    for backend in BACKENDS:
        device = jax.devices(backend)[0]
        inputs = jax.device_put(host_inputs, device)
        result[f"{backend}_first_call_s"] = _first_call_seconds(work.fn, inputs,
                                                                args.compile_samples)
        seconds, compiled = _compile_seconds(work.fn, inputs, args.compile_samples)
        result[f"{backend}_compile_s"] = seconds
        result[f"{backend}_peak_bytes"] = _peak_bytes(compiled)
        calls[backend] = (lambda c=compiled, i=inputs: c(*i))
        outputs[backend] = jax.block_until_ready(calls[backend]())
    result["check"] = _compare(outputs["kiln"], outputs["cpu"], work.canonical)
    del outputs

    # Warm up, and size the run from the warm-up's speed.
    per_call = {}
    for backend in BACKENDS:
        _one_sample(calls[backend], work.calls_per_sample)
        per_call[backend] = _one_sample(calls[backend], work.calls_per_sample)
    sample_s = work.calls_per_sample * max(per_call.values())
    rounds = args.samples or int(min(args.max_samples,
                                     max(args.min_samples, args.seconds / max(sample_s, 1e-9))))
    samples = {backend: [] for backend in BACKENDS}
    for round_index in range(rounds):
        order = BACKENDS if round_index % 2 == 0 else BACKENDS[::-1]
        for backend in order:
            samples[backend].append(_one_sample(calls[backend], work.calls_per_sample))
    for backend in BACKENDS:
        result[f"{backend}_median_s"] = statistics.median(samples[backend])
        result[f"{backend}_min_s"] = min(samples[backend])
    result["samples"] = rounds
    result["ratio"] = result["kiln_median_s"] / result["cpu_median_s"]
    result["compile_ratio"] = result["kiln_compile_s"] / result["cpu_compile_s"]
    result["first_call_ratio"] = result["kiln_first_call_s"] / result["cpu_first_call_s"]
    return result


def _time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def _mib(value) -> str:
    return "—" if value is None else f"{value / 2**20:.1f}"


def _geomean(values) -> float:
    values = list(values)
    return math.exp(statistics.mean(math.log(v) for v in values)) if values else float("nan")


def markdown(results: list[dict], header: dict) -> str:
    lines = [f"Kiln vs XLA CPU, {header['date']}, {header['machine']}, "
             f"jax {header['jax']}, {header['threads']}, {header.get('backend', 'KILN_BACKEND=host')}",
             "",
             "| workload | Kiln | XLA CPU | Kiln/XLA | compile Kiln | compile XLA | compile ratio "
             "| first call Kiln | first call XLA | first-call ratio "
             "| peak MiB Kiln | peak MiB XLA | check |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(
            f"| {r['name']} | {_time(r['kiln_median_s'])} | {_time(r['cpu_median_s'])} "
            f"| {r['ratio']:.2f} | {_time(r['kiln_compile_s'])} | {_time(r['cpu_compile_s'])} "
            f"| {r['compile_ratio']:.3f} | {_time(r['kiln_first_call_s'])} "
            f"| {_time(r['cpu_first_call_s'])} | {r['first_call_ratio']:.2f} "
            f"| {_mib(r['kiln_peak_bytes'])} | {_mib(r['cpu_peak_bytes'])} | {r['check']} |")
    if results:
        worst = max(results, key=lambda r: r["ratio"])
        over = [r["name"] for r in results if r["ratio"] > 1.2]
        lines += ["", f"Geometric mean of Kiln/XLA runtime ratios: "
                  f"**{_geomean(r['ratio'] for r in results):.2f}** "
                  f"(worst: {worst['name']} {worst['ratio']:.2f}; above 1.2: "
                  f"{', '.join(over) if over else 'none'}); "
                  f"of compile-time ratios: {_geomean(r['compile_ratio'] for r in results):.3f}; "
                  f"of first-call ratios: {_geomean(r['first_call_ratio'] for r in results):.2f}."]
    return "\n".join(lines) + "\n"


def _sweep(args: argparse.Namespace, argv: list[str]) -> int:
    """Runs the chosen workloads once per thread count, each run in a child
    process held to the first N cores (`taskset`) with KILN_NUM_THREADS=N (XLA's
    CPU client sizes its pool from the cores it may run on), and reports each
    backend's speedup over its own single-core time."""
    counts = [int(n) for n in args.threads.replace(",", " ").split()]
    cores = len(os.sched_getaffinity(0))
    runs = {}
    for n in counts:
        if n > cores:
            print(f"threads {n}: skipped, this machine lets the bench use {cores} cores",
                  file=sys.stderr)
            continue
        out = os.path.join(args.out, f"threads-{n}")
        child = [a for a in argv if a != "--threads" and a != args.threads
                 and not a.startswith("--threads=")]
        command = ["taskset", "-c", f"0-{n - 1}", sys.executable, os.path.abspath(__file__),
                   *child, "--out", out]
        print(f"threads {n}: {' '.join(command)}", flush=True)
        env = dict(os.environ, KILN_NUM_THREADS=str(n))
        if subprocess.run(command, env=env).returncode != 0:
            return 1
        with open(os.path.join(out, "results.json")) as f:
            runs[n] = {r["name"]: r for r in json.load(f)["results"]}
    if not runs:
        return 1
    ns = sorted(runs)
    base = ns[0]
    lines = [f"Thread sweep, {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} cores; speedup = time on {base} core(s) / time on N (each backend "
             "against itself); ratio = Kiln/XLA at N", "",
             "| workload | " + " | ".join(f"Kiln x{n} | XLA x{n} | ratio {n}" for n in ns) + " |",
             "|---|" + "---|---|---|" * len(ns)]
    names = [name for name in runs[base] if all(name in runs[n] for n in ns)]
    table = []
    for name in names:
        cells, row = [], {"name": name}
        for n in ns:
            r, first = runs[n][name], runs[base][name]
            kiln = first["kiln_median_s"] / r["kiln_median_s"]
            xla = first["cpu_median_s"] / r["cpu_median_s"]
            row[n] = {"kiln_speedup": kiln, "xla_speedup": xla, "ratio": r["ratio"]}
            cells.append(f"{kiln:.2f} | {xla:.2f} | {r['ratio']:.2f}")
        table.append(row)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    top = ns[-1]
    behind = [row["name"] for row in table if row[top]["kiln_speedup"] < row[top]["xla_speedup"]]
    lines += ["", f"At {top} cores: Kiln/XLA geometric mean "
              f"{_geomean(row[top]['ratio'] for row in table):.2f}; Kiln scales less than XLA on "
              f"{len(behind)} of {len(table)}" + (f" ({', '.join(behind)})" if behind else "") + "."]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    with open(os.path.join(args.out, "threads.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "threads.json"), "w") as f:
        json.dump({"counts": ns, "rows": table}, f, indent=1)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated workload names or groups")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="aim for about this much timed work per backend and workload")
    parser.add_argument("--samples", type=int, default=0, help="fixed number of samples")
    parser.add_argument("--min-samples", type=int, default=7)
    parser.add_argument("--max-samples", type=int, default=60)
    parser.add_argument("--compile-samples", type=int, default=3)
    parser.add_argument("--out", default="build/bench", help="directory for results.{md,json}")
    parser.add_argument("--threads", help="a thread sweep: thread counts, e.g. '1 2 4 8 16'")
    args = parser.parse_args()
    if args.threads:
        return _sweep(args, sys.argv[1:])

    chosen = wl.WORKLOADS
    if args.only:
        wanted = set(args.only.split(","))
        chosen = [w for w in wl.WORKLOADS if w.name in wanted or w.group in wanted]
        unknown = wanted - {w.name for w in chosen} - {w.group for w in chosen}
        if unknown:
            print(f"unknown workloads: {', '.join(sorted(unknown))}; see --list", file=sys.stderr)
            return 2
    if args.list:
        for w in wl.WORKLOADS:
            print(f"{w.group:12} {w.name}")
        return 0

    header = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}",
        "jax": jax.__version__,
        "threads": f"KILN_NUM_THREADS={os.environ.get('KILN_NUM_THREADS', 'default')}",
        # The devices Kiln ran on (issue 31): its virtual CPUs, or an OpenCL device.
        "backend": f"KILN_BACKEND={os.environ.get('KILN_BACKEND') or 'host'}",
    }
    results = []
    for work in chosen:
        result = run_workload(work, args)
        results.append(result)
        print(f"{work.name:28} kiln {_time(result['kiln_median_s']):>10}  "
              f"xla {_time(result['cpu_median_s']):>10}  ratio {result['ratio']:5.2f}  "
              f"compile {result['compile_ratio']:.3f}  first call {result['first_call_ratio']:.2f}  "
              f"{result['check']}", flush=True)
    table = markdown(results, header)
    print()
    print(table)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(table)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"header": header, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
