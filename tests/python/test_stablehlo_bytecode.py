"""MLIR bytecode of the StableHLO dialect itself (what jaxlib's MLIR bindings
write with `write_bytecode`, and what older exporters stored), not a portable
artifact: Kiln reads it and runs it with JAX's CPU backend's results.

A child Python on JAX's CPU backend lowers each program of PROGRAMS
(`jax.jit(f).lower(*args).compiler_ir("stablehlo")`), writes the module's
bytecode in versions 6 (today's), 5 (the first with properties), 3 and 0,
and saves the arguments and JAX's CPU results. Then, on Kiln:

  * `kiln run FILE ARGS...` (kiln_pjrt's command line) reads each file with
    Kiln's bytecode readers and runs it: results equal JAX's on CPU;
  * JAX's own client compiles the bytecode (`compile_and_load`) and runs it on
    Kiln: results equal too. jaxlib 0.12 turns the module into a portable
    artifact (VHLO) before PJRT_Client_Compile, as the program Kiln was given
    (KILN_DUMP_DIR) shows, so this checks the path JAX users take; the C API
    conformance suite sends the bytecode itself (kiln_conformance_test,
    CompileAndRunStablehloDialectBytecode).
"""

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

# name -> (the function, its arguments' shapes and dtypes)
PROGRAMS = {
    "matmul_sin": ("lambda x, y: jnp.sin(x) @ y + 1", [((2, 3), "float32"), ((3, 4), "float32")]),
    "reductions": ("lambda x: (x.sum(axis=0), jnp.argmax(x, axis=1), x.max())",
                   [((4, 5), "float32")]),
    "while_and_cond": ("lambda x, n: lax.cond(n > 2, jnp.cos, jnp.sin, "
                       "lax.fori_loop(0, n, lambda i, a: a * 0.5 + i, x))",
                       [((5,), "float32"), ((), "int32")]),
    "conv_pool": ("lambda x, w: lax.reduce_window(lax.conv_general_dilated(x, w, (1, 1), 'SAME', "
                  "dimension_numbers=('NHWC', 'HWIO', 'NHWC')), -jnp.inf, lax.max, (1, 2, 2, 1), "
                  "(1, 2, 2, 1), 'VALID')",
                  [((1, 4, 4, 2), "float32"), ((3, 3, 2, 3), "float32")]),
    "gather_scatter": ("lambda t, i: (t[i], t.at[i].add(t[i] * 2))",
                       [((6, 4), "float32"), ((3,), "int32")]),
    "sort_top_k_erf": ("lambda x: (jnp.sort(x, axis=-1), lax.top_k(x, 2)[0], "
                       "jax.scipy.special.erf(x))", [((3, 5), "float32")]),
    "integers": ("lambda a, b: (a // (jnp.abs(b) + 1), a << 2, jnp.cumsum(a), a > b)",
                 [((6,), "int32"), ((6,), "int32")]),
}
VERSIONS = (6, 5, 3, 0)

_GENERATE = r"""
import io, sys, numpy as np, jax, jax.numpy as jnp
from jax import lax
out = sys.argv[1]
programs = eval(sys.argv[2])
versions = eval(sys.argv[3])
rng = np.random.default_rng(0)
for name, (source, specs) in programs.items():
  fn = jax.jit(eval(source))
  args = [rng.integers(-5, 20, shape).astype(dtype) if dtype.startswith("int")
          else rng.standard_normal(shape).astype(dtype) for shape, dtype in specs]
  module = fn.lower(*args).compiler_ir("stablehlo")
  for version in versions:
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer, desired_version=version)
    open(f"{out}/{name}.v{version}.mlirbc", "wb").write(buffer.getvalue())
  results = fn(*args)
  results = results if isinstance(results, tuple) else (results,)
  np.savez(f"{out}/{name}.npz", *args, *[np.asarray(r) for r in results],
           num_args=len(args))
"""


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
  out = tmp_path_factory.mktemp("stablehlo_bytecode")
  env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
  env["JAX_PLATFORMS"] = "cpu"
  command = [sys.executable, "-W", "ignore", "-c", _GENERATE, str(out), repr(PROGRAMS),
             repr(VERSIONS)]
  result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
  if result.returncode != 0:
    pytest.fail(f"generating the programs failed:\n{result.stderr}")
  return out


def arrays(generated, name):
  """(arguments, JAX's CPU results) of a program."""
  saved = np.load(generated / f"{name}.npz")
  count = int(saved["num_args"])
  values = [saved[f"arr_{i}"] for i in range(len(saved.files) - 1)]
  return values[:count], values[count:]


_TYPES = {"float32": "f32", "int32": "i32", "bool": "i1"}


def literal(array):
  """A `dense<...> : tensor<...>` argument for `kiln run`."""
  values = array.tolist()
  text = str(values).replace("True", "true").replace("False", "false")
  shape = "".join(f"{d}x" for d in array.shape)
  return f"dense<{text}> : tensor<{shape}{_TYPES[str(array.dtype)]}>"


def parse_literal(text):
  """A printed `dense<...> : tensor<AxBxT>` as a numpy array (splats broadcast)."""
  match = re.fullmatch(r"dense<(.*)> : tensor<((?:\d+x)*)(\w+)>", text.strip())
  assert match, text
  body, dims, element = match.groups()
  shape = tuple(int(d) for d in dims.split("x") if d)
  dtype = {"f32": np.float32, "i32": np.int32, "i64": np.int64, "i1": np.bool_}[element]
  tokens = re.findall(r"true|false|[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf|nan)", body)
  values = np.array([t == "true" if t in ("true", "false") else float(t) for t in tokens])
  values = values.astype(dtype)
  if values.size == int(np.prod(shape)):
    return values.reshape(shape)
  return np.broadcast_to(values, shape)  # a splat


def kiln_run(path, args):
  script = os.path.join(os.path.dirname(sys.executable), "kiln")
  result = subprocess.run([script, "run", str(path), *map(literal, args)],
                          capture_output=True, text=True, timeout=300)
  assert result.returncode == 0, result.stderr
  return [parse_literal(line) for line in result.stdout.strip().splitlines()]


def assert_same(results, expected):
  assert len(results) == len(expected)
  for actual, want in zip(results, expected):
    np.testing.assert_allclose(actual, want, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_kiln_run_reads_the_bytecode_and_matches_jax_cpu(generated, name, version):
  path = generated / f"{name}.v{version}.mlirbc"
  assert path.read_bytes()[5:9] == b"MLIR"  # MLIR's producer, not "StableHLO_v..."
  args, expected = arrays(generated, name)
  assert_same(kiln_run(path, args), expected)


def test_a_portable_artifact_is_still_read_by_the_vhlo_reader(generated, tmp_path):
  from jax._src.lib import _jax
  from jax._src.lib.mlir import ir
  from jax._src.interpreters import mlir as jax_mlir
  context = jax_mlir.make_ir_context()
  module = ir.Module.parse((generated / "matmul_sin.v6.mlirbc").read_bytes(), context=context)
  artifact = tmp_path / "matmul_sin.artifact.mlirbc"
  artifact.write_bytes(_jax.mlir.serialize_portable_artifact(module, "1.22.0", True))
  args, expected = arrays(generated, "matmul_sin")
  assert_same(kiln_run(artifact, args), expected)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jax_client_compiles_the_bytecode_on_kiln(generated, name, run_python):
  # A fresh process, so KILN_DUMP_DIR is read when the client is created.
  code = f"""
import glob, os, sys, numpy as np, jax
from jax.extend import backend
from jax._src.lib import xla_client
saved = np.load({str(generated / f'{name}.npz')!r})
count = int(saved["num_args"])
values = [saved[f"arr_{{i}}"] for i in range(len(saved.files) - 1)]
device = jax.devices("kiln")[0]
client = backend.get_backend("kiln")
program = open({str(generated / f'{name}.v6.mlirbc')!r}, "rb").read()
executable = client.compile_and_load(program, [device], xla_client.CompileOptions())
results = executable.execute([jax.device_put(v, device) for v in values[:count]])
assert len(results) == len(values) - count, (len(results), len(values) - count)
for actual, want in zip(results, values[count:]):
  np.testing.assert_allclose(np.asarray(actual), want, rtol=2e-6, atol=2e-6)
given = glob.glob(os.path.join(os.environ["KILN_DUMP_DIR"], "*"))
print(open(given[0], "rb").read()[:32])
"""
  dump = generated / f"dump_{name}"
  dump.mkdir(exist_ok=True)
  result = run_python(code, env={"KILN_DUMP_DIR": str(dump)})
  # What PJRT_Client_Compile received: jaxlib's portable artifact of the module.
  assert "StableHLO_v" in result.stdout, result.stdout
