"""Times jaxlib's own reader on a portable artifact, for comparison with
kiln_bench_read (bench/README.md).

    JAX_PLATFORMS=cpu .venv/bin/python bench/jaxlib_deserialize.py [--repeats N] FILE

Each run deserializes the bytes with `stablehlo.deserialize_portable_artifact`
(VHLO -> StableHLO, as a PJRT plugin built on MLIR does) into a fresh MLIR
context with the StableHLO and Shardy dialects registered: MLIR uniques
attributes per context, so a reused context would find the constants of the
previous run and skip their allocation. Only the call is timed; creating the
context and freeing the module are not. Prints min and median, and the growth
of the process's peak resident memory over the first run.
"""
import argparse
import pathlib
import resource
import statistics
import time

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy, stablehlo


def fresh_context():
  context = ir.Context()
  stablehlo.register_dialect(context)
  sdy.register_dialect(context)
  return context


def deserialize(artifact):
  """Seconds one deserialization takes; the module is dropped afterwards."""
  context = fresh_context()
  with context:
    start = time.perf_counter()
    module = stablehlo.deserialize_portable_artifact(context, artifact)
    took = time.perf_counter() - start
    del module
  return took


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--repeats", type=int, default=10)
  parser.add_argument("file")
  args = parser.parse_args()
  artifact = pathlib.Path(args.file).read_bytes()

  peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
  times = [deserialize(artifact)]
  peak_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - peak_before
  times += [deserialize(artifact) for _ in range(max(0, args.repeats - 1))]

  milliseconds = sorted(t * 1e3 for t in times)
  median = statistics.median(milliseconds)
  print(f"{args.file}: {len(artifact)} bytes; {len(times)} runs")
  print(f"jaxlib     min {milliseconds[0]:8.3f} ms  median {median:8.3f} ms  "
        f"({len(artifact) / median / 1e3:.0f} MB/s of input at the median)")
  print(f"jaxlib     peak resident +{peak_growth / 1e6:7.1f} MB over the first run "
        f"({peak_growth / len(artifact):.2f}x the file)")


if __name__ == "__main__":
  main()
