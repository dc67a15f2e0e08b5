"""Writes serialized HloModuleProtos of a few JAX programs, with their inputs
and the results JAX's own CPU backend computes, for the C++ test of Kiln's
HLO reader (src/frontend/hlo/hlo_reader_test.cc). PyTorch/XLA hands plugins
programs in this format ("hlo"); JAX produces the same protos, so the reader
is tested in `make test` without installing torch.

Generated, never committed: `make test` runs

    .venv/bin/python tests/data/make_hlo_protos.py --out build/test-data/hlo

and the C++ test skips (saying so) when the folder is absent. For each
program NAME it writes:

    NAME.hlo.pb      the HloModuleProto (jax.jit(f).lower(...).compiler_ir("hlo"))
    NAME.hlo.txt     the same module as HLO text, for reading only
    NAME.in<i>.bin   argument i, raw little-endian bytes in row-major order
    NAME.out<i>.bin  result i as JAX's CPU backend computes it
    NAME.tol         the comparison tolerance (one float: relative and absolute)
"""
import argparse
import os
import pathlib

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

f32, i32 = np.float32, np.int32

PROGRAMS = {}  # name -> (function, arguments, tolerance)


def program(name, *args, tol=1e-5):
  def register(function):
    PROGRAMS[name] = (function, args, tol)
    return function
  return register


def ramp(shape, dtype=f32, scale=0.37, shift=-1.0):
  count = int(np.prod(shape)) if shape else 1
  values = (np.arange(count) * scale + shift) % 7.0 - 3.0
  return values.reshape(shape).astype(dtype)


def ints(shape, low, high):
  count = int(np.prod(shape)) if shape else 1
  return (low + (np.arange(count) * 7) % (high - low)).reshape(shape).astype(i32)


# The smoke test of issue 7: arange(6) as 2x3 times ones(3, 2), plus 1.
@program("smoke", np.arange(6, dtype=f32).reshape(2, 3), np.ones((3, 2), f32))
def _smoke(x, y):
  return x @ y + 1.0


@program("elementwise", ramp((4, 5)), ramp((4, 5), shift=0.5))
def _elementwise(x, y):
  return (jnp.tanh(x) * jnp.exp(-jnp.abs(y)) + jnp.maximum(x, y) - x / (1.0 + y * y),
          jnp.sqrt(jnp.abs(x)) + jnp.floor(y) - jnp.sign(x) * jnp.log1p(jnp.abs(y)))


@program("compare_select", ramp((3, 4)), ramp((3, 4), shift=2.0))
def _compare_select(x, y):
  return jnp.where(x > y, x, y * 2.0), (x <= y).astype(i32), jnp.clip(x, -0.5, 0.5)


@program("broadcast_reshape_transpose", ramp((2, 3, 4)), ramp((4,)))
def _shapes(x, b):
  y = (x + b).transpose(2, 0, 1).reshape(4, 6)
  return y, jnp.broadcast_to(b[:, None], (4, 3)) * 2.0


@program("reductions", ramp((5, 6)))
def _reductions(x):
  return x.sum(axis=0), x.max(axis=1), jnp.mean(x), jnp.argmax(x, axis=1)


@program("softmax", ramp((4, 10)))
def _softmax(x):
  return jax.nn.softmax(x, axis=-1)


@program("slicing", ramp((6, 8)))
def _slicing(x):
  return x[1:5:2, ::3], jnp.concatenate([x[:2], x[-2:]], axis=0), jnp.pad(x[:2, :2], 1)


@program("indexing", ramp((10, 4)), ints((3,), 0, 10))
def _indexing(table, idx):
  rows = table[idx]
  grad = jnp.zeros_like(table).at[idx].add(rows * 2.0)
  return rows, grad


@program("dynamic_slice", ramp((8, 8)), np.array(3, i32))
def _dynamic_slice(x, start):
  piece = lax.dynamic_slice(x, (start, 1), (2, 4))
  return piece, lax.dynamic_update_slice(x, piece * 0.0 + 9.0, (1, start))


@program("iota_convert", ramp((3, 4)))
def _iota_convert(x):
  row = lax.broadcasted_iota(i32, (3, 4), 0)
  return x * row.astype(f32), (x * 10).astype(i32), x.astype(jnp.bfloat16).astype(f32)


@program("dot_general", ramp((2, 3, 4)), ramp((2, 4, 5), shift=0.3))
def _dot_general(a, b):
  return jnp.einsum("bij,bjk->bik", a, b), jnp.einsum("bij,bij->b", a, a)


@program("convolution", ramp((2, 3, 8, 8)), ramp((4, 3, 3, 3), scale=0.11), tol=1e-4)
def _convolution(x, w):
  return lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                  dimension_numbers=("NCHW", "OIHW", "NCHW"))


@program("pooling", ramp((1, 2, 6, 6)))
def _pooling(x):
  window = (1, 1, 2, 2)
  return (lax.reduce_window(x, -jnp.inf, lax.max, window, window, "VALID"),
          lax.reduce_window(x, 0.0, lax.add, window, (1, 1, 1, 1), "SAME"))


@program("while_loop", ramp((4,)))
def _while_loop(x):
  return lax.fori_loop(0, 5, lambda i, acc: acc * 0.5 + jnp.sin(acc) + i, x)


@program("conditional", ramp((4,)), np.array(1, i32))
def _conditional(x, which):
  return lax.switch(which, [jnp.sin, jnp.cos, lambda v: v * 3.0], x)


@program("sort", ramp((3, 7), scale=1.7))
def _sort(x):
  return jnp.sort(x, axis=1), jnp.argsort(x[0])


@program("rng_bit_generator", np.array([1, 2, 3, 4], np.uint32))
def _rng_bit_generator(key):
  state, bits = lax.rng_bit_generator(key, (3, 4), dtype=np.uint32,
                                      algorithm=lax.RandomAlgorithm.RNG_PHILOX)
  return state, bits


@program("fft", ramp((4, 8)), tol=1e-4)
def _fft(x):
  spectrum = jnp.fft.rfft(x, axis=-1)
  return jnp.abs(spectrum), jnp.fft.irfft(spectrum, n=8, axis=-1)


@program("mlp_grad", ramp((8, 4)), ramp((4, 16), scale=0.05), ramp((16, 2), scale=0.07),
         ramp((8, 2), scale=0.3), tol=1e-4)
def _mlp_grad(x, w1, w2, y):
  def loss(w1, w2):
    h = jax.nn.relu(x @ w1)
    return jnp.mean((h @ w2 - y) ** 2)
  return jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)


def write(out: pathlib.Path) -> None:
  out.mkdir(parents=True, exist_ok=True)
  for name, (function, args, tol) in PROGRAMS.items():
    lowered = jax.jit(function).lower(*args)
    computation = lowered.compiler_ir("hlo")
    (out / f"{name}.hlo.pb").write_bytes(computation.as_serialized_hlo_module_proto())
    (out / f"{name}.hlo.txt").write_text(computation.as_hlo_text())
    for i, arg in enumerate(args):
      (out / f"{name}.in{i}.bin").write_bytes(np.ascontiguousarray(arg).tobytes())
    results = jax.tree_util.tree_leaves(jax.jit(function)(*args))
    for i, result in enumerate(results):
      (out / f"{name}.out{i}.bin").write_bytes(np.ascontiguousarray(np.asarray(result)).tobytes())
    (out / f"{name}.tol").write_text(f"{tol}\n")
  print(f"wrote {len(PROGRAMS)} HLO programs to {out}")


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", type=pathlib.Path,
                      default=pathlib.Path(__file__).resolve().parents[2] / "build" / "test-data"
                      / "hlo")
  write(parser.parse_args().out)


if __name__ == "__main__":
  main()
