"""`make bench-ffi`: the cost of calling a user's XLA FFI handler (jax.ffi),
Kiln beside XLA's CPU backend in one process (issue 30).

    .venv/bin/python bench/ffi.py [--library build/cpp/tests/ffi/libkiln_ffi_test_handlers.so]

The handlers are tests/ffi/handlers.cc's, registered for both platforms:
- `noop call`: a jitted program whose only op is a no-op handler on f32[1],
  called and waited for each time (dispatch, the call frame, the handler);
- `noop x1000 in a loop`: one call of a program running the no-op handler
  1000 times in a lax.fori_loop, per handler call (the call frame alone);
- `rms_norm 1024x1024`: a handler doing real work, for scale.
Each figure is the median of interleaved samples (the two backends take
turns). Writes build/bench/ffi.md and prints it.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "ffi"))
os.environ.setdefault("JAX_PLATFORMS", "kiln,cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import ffi_targets  # noqa: E402
from multiprocess import cpu_name  # noqa: E402


def workloads():
    def noop(x):
        return jax.ffi.ffi_call("kiln_test_noop", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    def loop(x):
        return jax.lax.fori_loop(0, 1000, lambda i, v: noop(v), x)

    def rms(x):
        return jax.ffi.ffi_call("kiln_test_rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype),
                                vmap_method="broadcast_all")(x, eps=np.float32(1e-5))

    small = np.ones((1,), np.float32)
    big = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    return [("noop call", noop, small, 1), ("noop x1000 in a loop", loop, small, 1000),
            ("rms_norm 1024x1024", rms, big, 1)]


def sample(fn, x, calls):
    start = time.perf_counter()
    for _ in range(calls):
        jax.block_until_ready(fn(x))
    return (time.perf_counter() - start) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", default=ffi_targets.library_path())
    parser.add_argument("--samples", type=int, default=15)
    args = parser.parse_args()
    library = ffi_targets.load(args.library)
    for platform in ("cpu", "kiln"):
        jax.devices(platform)
        ffi_targets.register(library, [platform])
    rows = []
    for name, fn, x, per in workloads():
        jitted, placed, times = {}, {}, {}
        for platform in ("kiln", "cpu"):
            device = jax.devices(platform)[0]
            placed[platform] = jax.device_put(x, device)
            jitted[platform] = jax.jit(fn)
            jax.block_until_ready(jitted[platform](placed[platform]))
            times[platform] = []
        once = sample(jitted["kiln"], placed["kiln"], 3)
        calls = max(1, min(2000, int(0.05 / max(once, 1e-7))))
        for _ in range(args.samples):
            for platform in ("kiln", "cpu"):
                times[platform].append(sample(jitted[platform], placed[platform], calls) / per)
        kiln, cpu = (statistics.median(times[p]) for p in ("kiln", "cpu"))
        rows.append((name, kiln, cpu))
    lines = [f"FFI handler calls on {cpu_name()}, {os.cpu_count()} CPUs, jax {jax.__version__}",
             "", "| workload | Kiln | XLA CPU | Kiln/XLA |", "|---|---|---|---|"]
    for name, kiln, cpu in rows:
        lines.append(f"| {name} | {kiln * 1e6:.2f} us | {cpu * 1e6:.2f} us | {kiln / cpu:.2f} |")
    text = "\n".join(lines) + "\n"
    out_dir = os.path.join(REPO, "build", "bench")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "ffi.md"), "w") as out:
        out.write(text)
    print(text)


if __name__ == "__main__":
    main()
