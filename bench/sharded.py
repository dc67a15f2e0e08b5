"""`make bench-sharded`: sharded training steps on 8 devices, Kiln beside
XLA's CPU backend with 8 devices (issue 28): the MLP and the transformer
block of bench/workloads.py, each data-parallel (batch split), tensor-
parallel (Megatron column and row splits of the weights; the transformer's
over a 2 x 4 mesh, batch over the first axis) and fully sharded (FSDP:
every weight split on its first dimension, batch split).

    .venv/bin/python bench/sharded.py [--devices 8] [--seconds 2]

For each: the median step time, the per-device memory of the compiled step
(memory_analysis: arguments + outputs + temporaries), the same for the
program on one device (unsharded), and on Kiln the measured peak of live
bytes on a device (XLA's CPU client reports no memory stats). Writes
build/bench/sharded.md and prints it.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from multiprocess import cpu_name  # noqa: E402

WORKER = r'''
import json, os, sys, time
sys.path.insert(0, HERE)
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import workloads as w

n = jax.device_count()
devices = np.array(jax.devices())
line = Mesh(devices, ("d",))
grid = Mesh(devices.reshape(2, n // 2), ("dp", "tp"))
seconds = float(os.environ.get("BENCH_SECONDS", "2"))


def mlp():
    rng = np.random.default_rng(0)
    params, x, y = w._mlp_inputs(rng)
    x = np.concatenate([x] * 2)  # 256 rows: 32 per device
    y = np.concatenate([y] * 2)
    rep = P()
    setups = {
        "dp": (line, [rep] * 6, P("d"), P("d")),
        # Megatron: the first layer's columns, the second's rows.
        "tp": (line, [P(None, "d"), P("d"), P("d", None), rep, rep, rep], rep, rep),
        # FSDP: every weight split on its first dimension (the last bias,
        # 10 wide, stays whole).
        "fsdp": (line, [P("d"), P("d"), P("d"), P("d"), P("d"), rep], P("d"), P("d")),
    }
    return w._sgd(w._mlp_loss), params, (x, y), setups


def transformer():
    rng = np.random.default_rng(1)
    params, x = w._transformer_inputs(rng)
    target = rng.normal(size=x.shape).astype(np.float32)
    rep = P()
    col, row = P(None, "tp"), P("tp", None)
    setups = {
        "dp": (line, [rep] * 10, P("d"), P("d")),
        # Megatron over "tp" (4 heads, one per device), batch over "dp".
        "tp": (grid, [col, col, col, row, col, P("tp"), row, rep, rep, rep], P("dp"), P("dp")),
        "fsdp": (line, [P("d")] * 10, P("d"), P("d")),
    }
    return w._sgd(w._transformer_loss, lr=0.05), params, (x, target), setups


def timed(step, args):
    out = step(*args)
    jax.block_until_ready(out)
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < seconds and len(times) < 200):
        t0 = time.perf_counter()
        jax.block_until_ready(step(*args))
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def memory(compiled):
    m = compiled.memory_analysis()
    if m is None:
        return None
    return int(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes -
               m.alias_size_in_bytes)


results = []
only = os.environ["BENCH_CASE"].split("/")
for name, make in (("mlp", mlp), ("transformer", transformer)):
    if name != only[0]:
        continue
    step, params, batch, setups = make()
    one = jax.jit(step)
    single = one.lower(params, *batch).compile()
    for setup, (mesh, param_specs, *batch_specs) in setups.items():
        if setup != only[1]:
            continue
        shardings = [NamedSharding(mesh, s) for s in param_specs]
        placed = [jax.device_put(p, s) for p, s in zip(params, shardings)]
        inputs = [jax.device_put(b, NamedSharding(mesh, s)) for b, s in zip(batch, batch_specs)]
        # The updated weights keep their shardings, as a training loop needs.
        jitted = jax.jit(step, out_shardings=(shardings, NamedSharding(mesh, P())))
        compiled = jitted.lower(placed, *inputs).compile()
        seconds_per_step = timed(jitted, (placed, *inputs))
        peak = None
        stats = jax.devices()[0].memory_stats()
        if stats:
            peak = max(d.memory_stats()["peak_bytes_in_use"] for d in jax.devices())
        results.append({"workload": name, "setup": setup, "seconds": seconds_per_step,
                        "memory": memory(compiled), "unsharded": memory(single),
                        "peak": peak})
print("RESULTS " + json.dumps(results))
'''


CASES = [(workload, setup) for workload in ("mlp", "transformer")
         for setup in ("dp", "tp", "fsdp")]


def run(platform_name, devices, seconds):
    """{(workload, setup): result}, each case in a process of its own (so
    that Kiln's measured peak is the case's)."""
    results = {}
    for case in CASES:
        results.update(run_case(platform_name, devices, seconds, case))
    return results


def run_case(platform_name, devices, seconds, case):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    env.update(JAX_PLATFORMS=platform_name, BENCH_SECONDS=str(seconds),
               BENCH_CASE="/".join(case))
    if platform_name == "cpu":
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    else:
        env["KILN_NUM_DEVICES"] = str(devices)
    code = f"HERE = {HERE!r}\n" + WORKER
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"{platform_name} failed:\n{done.stderr[-4000:]}")
    for line in done.stdout.splitlines():
        if line.startswith("RESULTS "):
            return {(r["workload"], r["setup"]): r for r in json.loads(line[8:])}
    raise SystemExit(f"{platform_name} printed no results:\n{done.stdout[-2000:]}")


def mib(value):
    return "-" if value is None else f"{value / (1 << 20):.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    kiln = run("kiln", args.devices, args.seconds)
    xla = run("cpu", args.devices, args.seconds)
    lines = [f"# Sharded training steps on {args.devices} devices", "",
             f"CPU: {cpu_name()}, {os.cpu_count()} cores. Medians of up to {args.seconds:g} s "
             "of steps; memory per device in MiB (memory_analysis: arguments + outputs + "
             "temporaries - aliased; `unsharded`: the same step compiled for one device; "
             "`Kiln peak`: the highest peak of live bytes on any device, measured in a process "
             "running that case alone).", "",
             "| workload | setup | Kiln ms | XLA ms | Kiln/XLA | Kiln MiB | XLA MiB | "
             "Kiln/XLA mem | unsharded MiB | Kiln peak MiB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    ratios = []
    for key, k in kiln.items():
        x = xla[key]
        ratio = k["seconds"] / x["seconds"]
        ratios.append(ratio)
        mem_ratio = (f"{k['memory'] / x['memory']:.2f}" if k["memory"] and x["memory"]
                     else "-")
        lines.append(f"| {key[0]} | {key[1]} | {k['seconds'] * 1e3:.2f} | "
                     f"{x['seconds'] * 1e3:.2f} | {ratio:.2f} | {mib(k['memory'])} | "
                     f"{mib(x['memory'])} | {mem_ratio} | {mib(k['unsharded'])} | "
                     f"{mib(k['peak'])} |")
    geomean = 1.0
    for ratio in ratios:
        geomean *= ratio
    geomean **= 1.0 / len(ratios)
    lines += ["", f"Geometric mean of Kiln/XLA step times: {geomean:.2f}."]
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.join(HERE, "..", "build", "bench"), exist_ok=True)
    with open(os.path.join(HERE, "..", "build", "bench", "sharded.md"), "w") as out:
        out.write(text)
    print(text)


if __name__ == "__main__":
    main()
