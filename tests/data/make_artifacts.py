"""Writes StableHLO portable artifacts of a few JAX programs, and for each the
oracle the C++ test VhloArtifactTest compares Kiln's reading with.

They are generated, never committed: `make test` runs

    .venv/bin/python tests/data/make_artifacts.py --out build/test-data/artifacts

before the C++ tests, which skip (saying so) when the folder is absent.

Each program is lowered with `jax.jit(f).lower(*args)` and serialized the way
PJRT does it (`serialize_portable_artifact`, XLA's mlir_to_hlo passes, mixed
sdy serialization) for VHLO 1.22.0, the version Kiln reports as
stablehlo_current_version. One program goes through `jax.export` instead,
which picks its own (older) target version. `<name>.oracle.txt` is jaxlib's
own deserialization of the artifact, dumped in a canonical form that
src/frontend/vhlo_reader_test.cc prints Kiln's module in too.

Other modes, for checks whose inputs are not checked in:

    --oracle-corpus DIR   oracles of ../shared/corpus/vhlo/*.bc into DIR; run the
                          test with KILN_VHLO_ORACLE_DIR=DIR
    --text-programs DIR   every program of make_text_corpus.py as an artifact with
                          its oracle in DIR; run the test with KILN_VHLO_EXTRA_DIR=DIR
    --large PATH          one ~10 MB artifact (a transformer block with its weights
                          as constants) for timing; KILN_VHLO_LARGE_ARTIFACT=PATH
"""
import argparse
import math
import os
import pathlib
import re
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax
from jax._src.lib import _jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy, stablehlo

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE.parent.parent / "build" / "test-data" / "artifacts"
TARGET = "1.22.0"

f32, i32 = jnp.float32, jnp.int32


def spec(shape, dtype=f32):
  return jax.ShapeDtypeStruct(shape, dtype)


# ---- the checked-in programs -------------------------------------------------
PROGRAMS = {}  # name -> (function, args)


def program(name, *args):
  def register(fn):
    PROGRAMS[name] = (fn, args)
    return fn
  return register


_W = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
_MASK = np.array([True, False, True, True, False, False, True, False, True, True])


@program("mlp_locations", spec((3, 8)), spec((10,)))
def _(x, v):
  """Locations, non-splat constants (f32, bit-packed i1), a private function."""
  h = jnp.tanh(x @ _W + 0.5)
  probs = jax.nn.softmax(h, axis=-1)
  picked = jnp.where(_MASK, v, -v)
  return probs, jnp.argmax(probs, axis=-1), picked


@program("dtypes", spec((4,), jnp.bfloat16), spec((4,), jnp.float16), spec((4,), jnp.int4),
         spec((2,), jnp.complex64))
def _(b, h, n, z):
  """Constants and conversions of narrow, unsigned and complex element types."""
  u = jnp.array([1, 200, 3, 250], dtype=jnp.uint8)
  q = jnp.array([-8, 7, -1, 0], dtype=jnp.int4)
  c = jnp.array([1 + 2j, -3.5j], dtype=jnp.complex64)
  e = jnp.array([0.5, -2.0, 448.0, 0.0], dtype=jnp.float8_e4m3fn)
  return (b * jnp.bfloat16(1.5) + h.astype(jnp.bfloat16), u.astype(jnp.float32) + h,
          n + q, z * c, e.astype(jnp.float32), lax.bitcast_convert_type(h, jnp.int16))


@program("control_flow", spec((5,)), spec((), i32))
def _(x, k):
  """while (fori_loop), case (switch), if (cond), scan, sort with two operands."""
  y = lax.fori_loop(0, 3, lambda i, a: a * 2 + i, x)
  y = lax.switch(k, [jnp.sin, jnp.cos, lambda a: -a], y)
  y = lax.cond(k > 1, lambda a: a + 1, lambda a: a - 1, y)
  s, ys = lax.scan(lambda c, e: (c + e, c * e), 0.0, y)
  keys, vals = lax.sort((y, jnp.arange(5, dtype=i32)), num_keys=1)
  return s, ys, keys, vals


@program("conv_gather", spec((1, 3, 8, 8)), spec((4, 3, 3, 3)), spec((6, 4)), spec((3,), i32))
def _(x, w, t, idx):
  """Convolution (NCHW), reduce_window pooling, gather and scatter."""
  y = lax.conv_general_dilated(x, w, (1, 1), "SAME", rhs_dilation=(2, 1),
                               dimension_numbers=("NCHW", "OIHW", "NCHW"))
  pooled = lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
  rows = t[idx]
  updated = t.at[idx].add(rows * 2)
  return pooled, updated, jnp.einsum("bcij,bcjk->bcik", y[:, :, :4, :4], y[:, :, :4, :4])


@program("composites", spec((4,)), spec((3, 6)))
def _(x, m):
  """CHLO ops kept as composites with private decompositions; top_k."""
  from jax.scipy.special import erf
  values, indices = lax.top_k(m, 2)
  return erf(x), jnp.arccosh(x + 2), jnp.sinh(x), values, indices


@program("custom_call_linalg", spec((4, 4)))
def _(a):
  """LAPACK custom calls with typed-FFI dictionary backend configs."""
  spd = a @ a.T + 4 * jnp.eye(4)
  return jnp.linalg.cholesky(spd), jnp.linalg.qr(a)[1]


def _sharded_programs():
  mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))

  def sharded(x, y):
    z = jnp.tanh(x @ y)
    z = lax.with_sharding_constraint(z, NamedSharding(mesh, P("x", None)))
    return z.sum(axis=0)

  @jax.shard_map(mesh=mesh, in_specs=(P("x", "y"),), out_specs=P("x", "y"))
  def collectives(a):
    total = lax.psum(a, "y")
    gathered = lax.all_gather(a, "y", axis=1, tiled=True)
    shifted = lax.ppermute(a, "x", perm=[(0, 1), (1, 0)])
    return total + shifted + gathered[:, : a.shape[1]]

  return {
      "sharded_sdy": (jax.jit(sharded, in_shardings=(NamedSharding(mesh, P("x", "y")),
                                                     NamedSharding(mesh, P()))),
                      (spec((8, 16)), spec((16, 4)))),
      "shard_map_collectives": (jax.jit(collectives), (spec((8, 16)),)),
  }


def _exported_programs():
  from jax import export
  b, = export.symbolic_shape("b")

  def f(x):
    return jnp.cumsum(x, axis=0), jnp.reshape(x, (-1,)), x.shape[0] * jnp.ones(2)

  return {"exported_dynamic": (f, (spec((b, 3)),))}


# ---- serialization -----------------------------------------------------------
def serialize(fn, args, target=TARGET):
  jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
  module = jitted.lower(*args).compiler_ir("stablehlo")
  return _jax.mlir.serialize_portable_artifact(module, target, True)


def serialize_exported(fn, args):
  from jax import export
  return bytes(export.export(jax.jit(fn))(*args).mlir_module_serialized)


# ---- the oracle: jaxlib's deserialization in canonical form ------------------
MAX_ELEMENTS = 256

FLOAT_DTYPES = {
    "bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2,
    "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz, "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
    "f8E4M3B11FNUZ": ml_dtypes.float8_e4m3b11fnuz, "f8E4M3": ml_dtypes.float8_e4m3,
    "f8E3M4": ml_dtypes.float8_e3m4, "f4E2M1FN": ml_dtypes.float4_e2m1fn,
    "f6E2M3FN": ml_dtypes.float6_e2m3fn, "f6E3M2FN": ml_dtypes.float6_e3m2fn,
    "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
}


def quoted(value):
  data = value.encode("utf-8") if isinstance(value, str) else value
  out = []
  for byte in data:
    char = chr(byte)
    if char in '"\\':
      out.append("\\" + char)
    elif 0x20 <= byte < 0x7F:
      out.append(char)
    else:
      out.append("\\%02X" % byte)
  return '"' + "".join(out) + '"'


def number(value):
  if isinstance(value, (bool, np.bool_)):
    return "1" if value else "0"
  if isinstance(value, (int, np.integer)):
    return str(int(value))
  if math.isnan(value):
    return "nan"
  if math.isinf(value):
    return "inf" if value > 0 else "-inf"
  return "%.17g" % value


def dense_values(body, element):
  """The element values of a printed dense literal (MLIR's `dense<...>` body)."""
  part = element[8:-1] if element.startswith("complex<") else element
  if body.startswith('"0x'):
    raw = bytes.fromhex(body[3:-1])
    if part in FLOAT_DTYPES:
      return [float(v) for v in np.frombuffer(raw, dtype=FLOAT_DTYPES[part])]
    match = re.match(r"(u?)i(\d+)", part)
    width = int(match.group(2))
    size = max(1, (width + 7) // 8)
    values = []
    for i in range(0, len(raw), size):
      v = int.from_bytes(raw[i:i + size], "little")
      if not match.group(1) and width > 1 and v >= 1 << (size * 8 - 1):
        v -= 1 << (size * 8)
      values.append(v)
    return values
  values = []
  for token in re.findall(r"true|false|[-+]?(?:inf|nan|0x[0-9A-Fa-f]+|[0-9.]+(?:[eE][-+]?\d+)?)",
                          body):
    if token in ("true", "false"):
      values.append(1 if token == "true" else 0)
    elif "0x" in token.lower():
      dtype = FLOAT_DTYPES[part]
      raw = int(token, 16).to_bytes(np.dtype(dtype).itemsize, "little")
      values.append(float(np.frombuffer(raw, dtype=dtype)[0]))
    elif re.fullmatch(r"[-+]?\d+", token) and part not in FLOAT_DTYPES:
      values.append(int(token))
    else:
      values.append(float(FLOAT_DTYPES[part](float(token))) if part in FLOAT_DTYPES
                    else float(token))
  return values


def canonical_dense(text):
  tensor = text[text.rindex("> : ") + 4:]
  element = re.match(r"tensor<(?:[\d?]+x)*(.*)>", tensor).group(1)
  count = 1
  for dim in re.findall(r"(\d+)x", tensor[: tensor.index(element)]):
    count *= int(dim)
  values = dense_values(text[len("dense<"):text.rindex("> : ")], element)
  per = 2 if element.startswith("complex<") else 1
  if len(values) == per and count > 1:
    return "dense %s splat [%s]" % (tensor, ", ".join(number(v) for v in values))
  if count > MAX_ELEMENTS:
    values = values[:MAX_ELEMENTS * per]
  more = ", ...%d" % count if count > MAX_ELEMENTS else ""
  return "dense %s [%s%s]" % (tensor, ", ".join(number(v) for v in values), more)


def dims(values):
  return "array<i64: %s>" % ", ".join(str(v) for v in values) if len(values) else "array<i64>"


def struct(name, fields):
  return "#%s<%s>" % (name, ", ".join("%s = %s" % field for field in fields))


def i64(value):
  return "int %d:i64" % value


def canonical_stablehlo(a):
  """Canonical form of a StableHLO struct attribute, or None."""
  S = stablehlo
  if S.DotDimensionNumbers.isinstance(a):
    a = S.DotDimensionNumbers(a)
    names = ["lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
             "rhs_contracting_dimensions"]
    return struct("stablehlo.dot", [(n, dims(getattr(a, n))) for n in names if len(getattr(a, n))])
  if S.GatherDimensionNumbers.isinstance(a):
    a = S.GatherDimensionNumbers(a)
    names = ["offset_dims", "collapsed_slice_dims", "operand_batching_dims",
             "start_indices_batching_dims", "start_index_map"]
    fields = [(n, dims(getattr(a, n))) for n in names if len(getattr(a, n))]
    return struct("stablehlo.gather", fields + [("index_vector_dim", i64(a.index_vector_dim))])
  if S.ScatterDimensionNumbers.isinstance(a):
    a = S.ScatterDimensionNumbers(a)
    names = [("update_window_dims",) * 2, ("inserted_window_dims",) * 2,
             ("input_batching_dims",) * 2, ("scatter_indices_batching_dims",) * 2,
             ("scatter_dims_to_operand_dims", "scattered_dims_to_operand_dims")]
    fields = [(n, dims(getattr(a, p))) for n, p in names if len(getattr(a, p))]
    return struct("stablehlo.scatter", fields + [("index_vector_dim", i64(a.index_vector_dim))])
  if S.ConvDimensionNumbers.isinstance(a):
    a = S.ConvDimensionNumbers(a)
    names = ["input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions",
             "kernel_input_feature_dimension", "kernel_output_feature_dimension",
             "kernel_spatial_dimensions", "output_batch_dimension", "output_feature_dimension",
             "output_spatial_dimensions"]
    return struct("stablehlo.conv", [(n, dims(getattr(a, n)) if n.endswith("dimensions")
                                      else i64(getattr(a, n))) for n in names])
  if S.ChannelHandle.isinstance(a):
    a = S.ChannelHandle(a)
    return struct("stablehlo.channel_handle", [("handle", i64(a.handle)),
                                               ("type", i64(a.channel_type))])
  if S.OutputOperandAlias.isinstance(a):
    a = S.OutputOperandAlias(a)
    return struct("stablehlo.output_operand_alias", [
        ("output_tuple_indices", dims(a.output_tuple_indices)),
        ("operand_index", i64(a.operand_index)),
        ("operand_tuple_indices", dims(a.operand_tuple_indices))])
  if S.DotAlgorithm.isinstance(a):
    a = S.DotAlgorithm(a)
    return struct("stablehlo.dot_algorithm", [
        ("lhs_precision_type", "type %s" % a.lhs_precision_type),
        ("rhs_precision_type", "type %s" % a.rhs_precision_type),
        ("accumulation_type", "type %s" % a.accumulation_type),
        ("lhs_component_count", i64(a.lhs_component_count)),
        ("rhs_component_count", i64(a.rhs_component_count)),
        ("num_primitive_operations", i64(a.num_primitive_operations)),
        ("allow_imprecise_accumulation", "true" if a.allow_imprecise_accumulation else "false")])
  if S.ResultAccuracyAttr.isinstance(a):
    a = S.ResultAccuracyAttr(a)
    fields = []
    if a.atol != 0:
      fields.append(("atol", "float %s:f64" % number(a.atol)))
    if a.rtol != 0:
      fields.append(("rtol", "float %s:f64" % number(a.rtol)))
    if a.ulps != 0:
      fields.append(("ulps", i64(a.ulps)))
    fields.append(("mode", "#stablehlo.result_accuracy_mode<%s>" % a.mode))
    return struct("stablehlo.result_accuracy", fields)
  if S.AxisRefAttr.isinstance(a):
    a = S.AxisRefAttr(a)
    fields = [("name", quoted(a.name))]
    if a.sub_axis_info is not None:
      fields.append(("sub_axis_info", canonical(a.sub_axis_info)))
    return struct("stablehlo.axis_ref", fields)
  if S.ReplicaGroupMeshAxesAttr.isinstance(a):
    a = S.ReplicaGroupMeshAxesAttr(a)
    axes = a.axes
    axes_text = ("[%s]" % ", ".join(canonical(x) for x in axes) if isinstance(axes, list)
                 else canonical(axes))
    return struct("stablehlo.replica_group_mesh_axes", [("mesh", canonical(a.mesh)),
                                                        ("axes", axes_text)])
  match = re.fullmatch(r"#stablehlo<sub_axis_info\((-?\d+)\)(-?\d+)>", str(a))
  if match:
    return struct("stablehlo.sub_axis_info", [("pre_size", i64(int(match.group(1)))),
                                              ("size", i64(int(match.group(2))))])
  return None


def named_items(container):
  """(name, attribute) pairs of an op's attributes or a dictionary, sorted.
  Complex dense elements come back as their text: their Python class fails
  to build (and aborts the interpreter when asked to)."""
  items = []
  for i in range(len(container)):
    named = container[i]
    text = str(named)
    value = text[len("NamedAttribute(%s=" % named.name):-1]
    items.append((named.name, value if value.startswith("dense<") and "complex<" in value
                  else named.attr))
  return sorted(items, key=lambda item: item[0])


def canonical(a):
  """One attribute in the canonical form of vhlo_reader_test.cc's CanonicalAttribute."""
  if isinstance(a, str):
    return canonical_dense(a)
  text = canonical_stablehlo(a)
  if text is not None:
    return text
  s = str(a)
  match = re.fullmatch(r"#(\w+)<(\w+) (\w+)>", s)
  if match:  # a dialect enum: #stablehlo<comparison_direction LT>
    return "#%s.%s<%s>" % match.groups()
  if isinstance(a, ir.BoolAttr):
    return "true" if a.value else "false"
  if isinstance(a, ir.IntegerAttr):
    return "int %d:%s" % (a.value, a.type)
  if isinstance(a, ir.FloatAttr):
    return "float %s:%s" % (number(a.value), a.type)
  if isinstance(a, ir.StringAttr):
    return quoted(a.value_bytes)
  if isinstance(a, ir.UnitAttr):
    return "unit"
  if isinstance(a, ir.TypeAttr):
    return "type %s" % a.value
  if isinstance(a, ir.ArrayAttr):
    return "[%s]" % ", ".join(canonical(x) for x in a)
  if isinstance(a, ir.DenseBoolArrayAttr):
    return ("array<i1: %s>" % ", ".join("true" if x else "false" for x in a)) if len(a) else "array<i1>"
  if isinstance(a, (ir.DenseI64ArrayAttr, ir.DenseI32ArrayAttr, ir.DenseI16ArrayAttr,
                    ir.DenseI8ArrayAttr, ir.DenseF32ArrayAttr, ir.DenseF64ArrayAttr)):
    return s
  if isinstance(a, ir.DictAttr):
    return "{%s}" % ", ".join("%s = %s" % (k, canonical(v)) for k, v in named_items(a))
  if isinstance(a, ir.FlatSymbolRefAttr):
    return "@" + a.value
  if isinstance(a, ir.SymbolRefAttr):
    return s
  if s.startswith("dense<"):
    return canonical_dense(s)
  return "opaque " + s


class Dumper:
  """Every op in pre-order: name, location, operands, typed results, sorted
  attributes, regions with typed and located block arguments."""

  def __init__(self):
    self.ids = {}
    self.lines = []

  def number(self, op):
    for result in op.results:
      self.ids[result] = len(self.ids)
    for region in op.regions:
      for block in region.blocks:
        for argument in block.arguments:
          self.ids[argument] = len(self.ids)
        for inner in block.operations:
          self.number(inner.operation)

  def dump(self, op, depth):
    pad = "  " * depth
    self.lines.append("%sop %s loc=%s" % (pad, op.name, op.location))
    if len(op.operands):
      self.lines.append("%s  operands: %s" % (pad, ", ".join("%%%d" % self.ids[v] for v in op.operands)))
    if len(op.results):
      self.lines.append("%s  results: %s" % (
          pad, ", ".join("%%%d:%s" % (self.ids[v], v.type) for v in op.results)))
    for name, value in named_items(op.attributes):
      self.lines.append("%s  attr %s = %s" % (pad, name, canonical(value)))
    for r, region in enumerate(op.regions):
      self.lines.append("%s  region %d" % (pad, r))
      for b, block in enumerate(region.blocks):
        self.lines.append("%s    block %d args: %s" % (pad, b, ", ".join(
            "%%%d:%s@%s" % (self.ids[a], a.type, a.location) for a in block.arguments)))
        for inner in block.operations:
          self.dump(inner.operation, depth + 3)


def oracle(artifact):
  context = ir.Context()
  stablehlo.register_dialect(context)
  sdy.register_dialect(context)
  with context:
    module = stablehlo.deserialize_portable_artifact(context, artifact)
    dumper = Dumper()
    dumper.number(module.operation)
    dumper.dump(module.operation, 0)
    return "\n".join(dumper.lines) + "\n"


# ---- modes -------------------------------------------------------------------
def write(directory, name, artifact):
  (directory / f"{name}.mlir.bc").write_bytes(artifact)
  (directory / f"{name}.oracle.txt").write_text(oracle(artifact))
  print(f"{name}: {len(artifact)} bytes")


def write_test_artifacts(out):
  out.mkdir(parents=True, exist_ok=True)
  for old in list(out.glob("*.mlir.bc")) + list(out.glob("*.oracle.txt")):
    old.unlink()
  for name, (fn, args) in {**PROGRAMS, **_sharded_programs()}.items():
    write(out, name, serialize(fn, args))
  for name, (fn, args) in _exported_programs().items():
    write(out, name, serialize_exported(fn, args))


def write_text_programs(directory):
  sys.path.insert(0, str(HERE))
  import make_text_corpus as corpus
  programs = {name: (fn, args) for name, (fn, args, _) in corpus.PROGRAMS.items()}
  programs.update(corpus._sharded_programs())
  for name, (fn, args) in programs.items():
    write(directory, name, serialize(fn, args))
  for name, (fn, args) in corpus._dynamic_programs().items():
    write(directory, name, serialize_exported(fn, args))


def write_corpus_oracles(directory):
  corpus = HERE.parent.parent.parent / "shared" / "corpus" / "vhlo"
  for path in sorted(corpus.glob("*.bc")):
    name = path.name[: -len(".mlir.bc")]
    try:
      (directory / f"{name}.oracle.txt").write_text(oracle(path.read_bytes()))
    except Exception as error:  # invalid_vhlo_future: jaxlib rejects it too
      print(f"{name}: jaxlib cannot read it ({error})")


def write_large(path):
  """A transformer block whose ~2.5M f32 weights are constants (~10 MB)."""
  rng = np.random.default_rng(0)
  d, ff, heads = 384, 1536, 6
  weights = {k: rng.standard_normal(s).astype(np.float32) * 0.02 for k, s in {
      "qkv": (d, 3 * d), "out": (d, d), "up": (d, ff), "down": (ff, d), "up2": (d, ff),
      "down2": (ff, d)}.items()}

  def block(x):
    def layer(x, up, down):
      q, k, v = jnp.split(x @ weights["qkv"], 3, axis=-1)
      split = lambda t: t.reshape(t.shape[0], heads, d // heads).transpose(1, 0, 2)
      att = jax.nn.softmax(split(q) @ split(k).transpose(0, 2, 1) / 8.0, axis=-1)
      x = x + (att @ split(v)).transpose(1, 0, 2).reshape(x.shape) @ weights["out"]
      return x + jax.nn.gelu(x @ up) @ down
    x = layer(x, weights["up"], weights["down"])
    return layer(x, weights["up2"], weights["down2"])

  artifact = serialize(block, (spec((16, d)),))
  pathlib.Path(path).write_bytes(artifact)
  print(f"{path}: {len(artifact)} bytes")


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--oracle-corpus", metavar="DIR")
  parser.add_argument("--text-programs", metavar="DIR")
  parser.add_argument("--large", metavar="PATH")
  parser.add_argument("--out", metavar="DIR", default=str(OUT),
                      help="where the test artifacts go (default: build/test-data/artifacts)")
  args = parser.parse_args()
  for directory in (args.oracle_corpus, args.text_programs):
    if directory:
      pathlib.Path(directory).mkdir(parents=True, exist_ok=True)
  if args.oracle_corpus:
    write_corpus_oracles(pathlib.Path(args.oracle_corpus))
  if args.text_programs:
    write_text_programs(pathlib.Path(args.text_programs))
  if args.large:
    write_large(args.large)
  if not (args.oracle_corpus or args.text_programs or args.large):
    write_test_artifacts(pathlib.Path(args.out))


if __name__ == "__main__":
  main()
