"""`make bench-collectives`: collectives between the devices of one process,
Kiln beside XLA's CPU backend (issue 29): all-reduce (psum), all-gather and
reduce-scatter (psum_scatter) inside shard_map, over 2, 4 and 8 devices,
from 1 KiB to 64 MiB per device.

    .venv/bin/python bench/collectives.py [--devices 2,4,8] [--sizes 1K,64M] [--seconds 1]

Size: each device's input for all-reduce and reduce-scatter, each device's
result for all-gather (its input is size / devices). Each backend runs in a
child process of its own (Kiln with KILN_NUM_DEVICES=8, XLA's CPU backend
with --xla_force_host_platform_device_count=8); a figure is the median of
calls each waited for. Bandwidth is the size over the time (algorithm
bandwidth, as nccl-tests call it). Writes build/bench/collectives.md and
.json and prints the table.
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
import json, os, statistics, sys, time
from functools import partial
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

config = json.loads(sys.argv[1])
seconds = config["seconds"]
results = []
for n in config["devices"]:
    mesh = Mesh(np.array(jax.devices()[:n]), ("d",))
    for op in ("all_reduce", "all_gather", "reduce_scatter"):
        for size in config["sizes"]:
            per_device = size // 4 if op != "all_gather" else size // 4 // n
            if op == "reduce_scatter":
                per_device -= per_device % n
            if per_device < 1:
                continue
            if op == "all_reduce":
                body = lambda x: jax.lax.psum(x, "d")
                out_spec = P("d")
            elif op == "all_gather":
                body = lambda x: jax.lax.all_gather(x, "d", tiled=True)
                out_spec = P("d")
            else:
                body = lambda x: jax.lax.psum_scatter(x, "d", tiled=True)
                out_spec = P("d")
            f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("d"), out_specs=out_spec))
            x = jax.device_put(np.ones((n * per_device,), np.float32),
                               jax.sharding.NamedSharding(mesh, P("d")))
            jax.block_until_ready(f(x))
            times, spent = [], 0.0
            while len(times) < 5 or (spent < seconds and len(times) < 200):
                start = time.perf_counter()
                jax.block_until_ready(f(x))
                times.append(time.perf_counter() - start)
                spent += times[-1]
            results.append({"op": op, "devices": n, "size": size,
                            "seconds": statistics.median(times)})
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
print(json.dumps(results))
'''


def _size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def _label(size: int) -> str:
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def run(backend: str, config: dict) -> list[dict]:
    env = dict(os.environ, JAX_PLATFORMS=backend)
    top = max(config["devices"])
    if backend == "kiln":
        env["KILN_NUM_DEVICES"] = str(top)
    else:
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                            f" --xla_force_host_platform_device_count={top}").strip()
    done = subprocess.run([sys.executable, "-c", WORKER, json.dumps(config)], env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{backend} worker failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", default="2,4,8")
    parser.add_argument("--sizes", default="1K,16K,256K,4M,16M,64M")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--out", default="build/bench")
    args = parser.parse_args()
    config = {"devices": [int(n) for n in args.devices.split(",")],
              "sizes": [_size(s) for s in args.sizes.split(",")], "seconds": args.seconds}
    runs = {backend: run(backend, config) for backend in ("kiln", "cpu")}
    xla = {(r["op"], r["devices"], r["size"]): r["seconds"] for r in runs["cpu"]}
    lines = [f"Collectives in one process, {cpu_name()}, {os.cpu_count()} cores; time per call "
             "(median) and algorithm bandwidth (size / time)", "",
             "| op | devices | size | Kiln | XLA | Kiln GB/s | XLA GB/s | Kiln/XLA time |",
             "|---|---|---|---|---|---|---|---|"]
    rows = []
    for r in runs["kiln"]:
        key = (r["op"], r["devices"], r["size"])
        if key not in xla:
            continue
        kiln_s, xla_s = r["seconds"], xla[key]
        rows.append({**r, "xla_seconds": xla_s, "ratio": kiln_s / xla_s})
        lines.append(f"| {r['op']} | {r['devices']} | {_label(r['size'])} | {kiln_s * 1e6:.1f} us "
                     f"| {xla_s * 1e6:.1f} us | {r['size'] / kiln_s / 1e9:.2f} "
                     f"| {r['size'] / xla_s / 1e9:.2f} | {kiln_s / xla_s:.2f} |")
    slower = [f"{r['op']} x{r['devices']} {_label(r['size'])} ({r['ratio']:.2f})"
              for r in rows if r["ratio"] > 1.0]
    lines += ["", "Slower than XLA: " + (", ".join(slower) if slower else "none") + "."]
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "collectives.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "collectives.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
