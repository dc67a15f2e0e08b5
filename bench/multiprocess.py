"""`make bench-multiprocess`: collectives and a data-parallel training step
across 2 and 4 processes (2 devices each), Kiln beside XLA's CPU backend
with Gloo in the same setup, and the same on one process of 4 devices
(cliques inside one process).

    .venv/bin/python bench/multiprocess.py [--counts 1,2,4] [--sizes 1024,1048576]

Writes build/bench/multiprocess.md and prints it.
"""
import argparse
import json
import os
import platform
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "multiprocess"))
import launch  # noqa: E402

WORKER = os.path.join(HERE, "multiprocess_worker.py")


def cpu_name():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def measure(platform_name, count, local, env):
    """{(what, bytes): seconds} from process 0 of a job."""
    outputs = launch.run_script(WORKER, platform_name, count, local_devices=local, env=env,
                                timeout=1800)
    results = {}
    for line in outputs[0].splitlines():
        if line.startswith('{"what"'):
            record = json.loads(line)
            results[(record["what"], record["bytes"])] = record["seconds"]
    return results


def human(size):
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} B"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="1,2,4",
                        help="process counts (1: one process of 4 devices)")
    parser.add_argument("--sizes", default="")
    parser.add_argument("--seconds", default="1.0")
    args = parser.parse_args()
    env = {"BENCH_SECONDS": args.seconds}
    if args.sizes:
        env["BENCH_SIZES"] = args.sizes
    lines = [f"# Collectives across processes ({cpu_name()}, {os.cpu_count()} cores)", ""]
    for count in [int(c) for c in args.counts.split(",")]:
        local = 4 if count == 1 else 2
        kiln = measure("kiln", count, local, env)
        xla = measure("cpu", count, local, env)
        title = (f"## one process of {local} devices" if count == 1 else
                 f"## {count} processes x {local} devices")
        lines += [title, "", "| what | size | Kiln ms | XLA ms | Kiln/XLA |", "|---|---|---|---|---|"]
        for key in sorted(kiln, key=lambda k: (k[0], k[1])):
            if key not in xla:
                continue
            what, size = key
            ratio = kiln[key] / xla[key]
            lines.append(f"| {what} | {human(size) if not what.startswith('mlp_step') else f'batch {size}'} "
                         f"| {kiln[key] * 1e3:.3f} | {xla[key] * 1e3:.3f} | {ratio:.2f} |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    os.makedirs(os.path.join(HERE, "..", "build", "bench"), exist_ok=True)
    with open(os.path.join(HERE, "..", "build", "bench", "multiprocess.md"), "w") as out:
        out.write(text + "\n")


if __name__ == "__main__":
    main()
