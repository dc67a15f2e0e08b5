"""Writes MLIR bytecode of the StableHLO dialect itself (not VHLO) for the
tests of Kiln's reader of it (src/frontend/stablehlo), with the text each
module reads from.

Generated, never committed: `make test` runs

    .venv/bin/python tests/data/make_stablehlo_bytecode.py --out build/test-data/stablehlo-bytecode

before the C++ tests, which skip (saying so) when the folder is absent.

Each module comes from a program of tests/data/jax_programs.py (lowered with
`jax.jit(f).lower(*args).compiler_ir("stablehlo")`, or through jax.export) or
is one of MODULES below (text for what JAX does not emit: every attribute and
type encoding of the stablehlo, chlo, sdy and builtin dialects, textual
entries, op properties with optional attributes and segment sizes). For each,
jaxlib's own MLIR writer makes

    <name>.mlirbc          bytecode version 6 (what write_bytecode writes today)
    <name>.v<N>.mlirbc     bytecode versions 0 to 5 (attributes in the op's
                           dictionary before 5; segment sizes as an attribute in 5)
    <name>.mlir            jaxlib's print of the module with locations, which
                           src/frontend/stablehlo_bytecode_test.cc reads with the
                           text parser and compares with the bytecode read
    <name>.generic.mlir    the same in MLIR's generic form, whose locations the
                           test compares (the pretty forms of some ops, such as
                           stablehlo.while, print no locations for their
                           regions' arguments)

and `op_schemas.txt`, each op of jaxlib's stablehlo, chlo, func, sdy and
builtin Python bindings with its attributes (`?`: optional), which the test
compares with Kiln's property schemas (ir::InherentAttributes).

    --fixture NAME   prints the C++ literal of MODULES[NAME]'s bytecode (for
                     tests/conformance/programs.cc; only `add` is used)
"""
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse
import io
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

VERSIONS = range(0, 6)  # besides the default (6)

# ---- modules JAX does not emit ------------------------------------------------
# Checked by jaxlib's parser and verifier when generated. Each exercises
# encodings named in its comment.
MODULES = {
    # The conformance suite's program: y = x + x over tensor<2xf32>.
    "add": """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = stablehlo.add %x, %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
""",
    # stablehlo attributes: channel handle, comparison direction and type,
    # transpose, rng distribution and algorithm, fft type; token type;
    # optional properties present and absent (is_host_transfer, compare_type).
    "stablehlo_enums_tokens": """
func.func @main(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %k: tensor<2xui64>, %c: tensor<8xcomplex<f32>>,
                %t: !stablehlo.token) -> (tensor<4x4xi1>, tensor<4x4xf32>, tensor<2x2xf32>, tensor<8xcomplex<f32>>, !stablehlo.token) {
  %0 = stablehlo.compare GE, %a, %b, TOTALORDER : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  %1 = "stablehlo.triangular_solve"(%a, %b) <{left_side = true, lower = true, unit_diagonal = false,
      transpose_a = #stablehlo<transpose ADJOINT>}> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<1.0> : tensor<f32>
  %shape = stablehlo.constant dense<[2, 2]> : tensor<2xi64>
  %2 = stablehlo.rng %lo, %hi, %shape, distribution = NORMAL : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<2x2xf32>
  %3:2 = stablehlo.rng_bit_generator %k, algorithm = PHILOX : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui32>)
  %4 = stablehlo.fft %c, type = IFFT, length = [8] : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
  %5 = "stablehlo.send"(%a, %t) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 2>,
      is_host_transfer = true}> : (tensor<4x4xf32>, !stablehlo.token) -> !stablehlo.token
  %6:2 = "stablehlo.recv"(%5) <{channel_handle = #stablehlo.channel_handle<handle = 6, type = 3>,
      is_host_transfer = true}> : (!stablehlo.token) -> (tensor<4x4xf32>, !stablehlo.token)
  %7:2 = "stablehlo.infeed"(%6#1) <{infeed_config = "cfg", layout = [[0, 1]]}> : (!stablehlo.token) -> (tensor<4x4xf32>, !stablehlo.token)
  %8 = "stablehlo.outfeed"(%7#0, %7#1) <{outfeed_config = ""}> : (tensor<4x4xf32>, !stablehlo.token) -> !stablehlo.token
  %9 = stablehlo.after_all %8, %t : !stablehlo.token
  return %0, %1, %2, %4, %9 : tensor<4x4xi1>, tensor<4x4xf32>, tensor<2x2xf32>, tensor<8xcomplex<f32>>, !stablehlo.token
}
""",
    # Dimension numbers (dot, conv, gather, scatter), dot algorithm, precision,
    # window attributes with every optional property present.
    "stablehlo_dimension_numbers": """
func.func @main(%x: tensor<1x4x4x2xf32>, %w: tensor<3x3x2x2xf32>, %t: tensor<5x3xf32>,
                %i: tensor<2x1xi32>, %u: tensor<2x3xf32>)
    -> (tensor<1x2x4x2xf32>, tensor<2x3xf32>, tensor<5x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>) {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
      window = {stride = [2, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1],
                reverse = [false, true]}
      {batch_group_count = 1 : i64, feature_group_count = 1 : i64,
       precision_config = [#stablehlo<precision HIGH>, #stablehlo<precision HIGHEST>]}
      : (tensor<1x4x4x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x2x4x2xf32>
  %1 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1],
      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
      indices_are_sorted = true, slice_sizes = array<i64: 1, 3>}> : (tensor<5x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
  %2 = "stablehlo.scatter"(%t, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0],
      index_vector_dim = 1>, indices_are_sorted = false, unique_indices = true}> ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  %3 = stablehlo.dot_general %u, %u, batching_dims = [] x [], contracting_dims = [0] x [0],
      precision = [DEFAULT, DEFAULT],
      algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32,
                   lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1,
                   allow_imprecise_accumulation = false>
      : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  %f8 = stablehlo.convert %u : (tensor<2x3xf32>) -> tensor<2x3xf8E4M3FN>
  %g8 = stablehlo.convert %u : (tensor<2x3xf32>) -> tensor<2x3xf8E5M2>
  %4 = stablehlo.dot_general %f8, %g8, contracting_dims = [0] x [0],
      algorithm = <lhs_precision_type = f8E4M3FN, rhs_precision_type = f8E5M2, accumulation_type = f32,
                   lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1,
                   allow_imprecise_accumulation = true>
      : (tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>) -> tensor<3x3xf32>
  return %0, %1, %2, %3, %4 : tensor<1x2x4x2xf32>, tensor<2x3xf32>, tensor<5x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>
}
""",
    # custom_call: output operand aliases, called computations, api version,
    # dictionary backend config, layouts; composite attributes and version;
    # result accuracy (tolerance and highest); cholesky lower; sort with
    # explicit default attributes; reduce_window and select_and_scatter.
    "stablehlo_calls_and_windows": """
func.func private @callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %m: tensor<3x3xf32>, %g: tensor<2x2xf32>) -> (tuple<tensor<4xf32>>, tensor<4xf32>, tensor<4xf32>, tensor<3x3xf32>, tensor<4xf32>, tensor<1x2xf32>, tensor<4x4xf32>) {
  %0 = stablehlo.custom_call @foo(%x) {
      api_version = 2 : i32, backend_config = "opaque", called_computations = [@callee],
      has_side_effect = true, operand_layouts = [dense<0> : tensor<1xindex>],
      result_layouts = [dense<0> : tensor<1xindex>],
      output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0],
                                operand_index = 0, operand_tuple_indices = []>]}
      : (tensor<4xf32>) -> tuple<tensor<4xf32>>
  %1 = stablehlo.custom_call @bar(%x) {api_version = 4 : i32, backend_config = {k = 1 : i64, s = "v"}}
      : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.composite "my.op" %x {composite_attributes = {alpha = 2.5 : f32}, decomposition = @callee,
      version = 3 : i32} : (tensor<4xf32>) -> tensor<4xf32>
  %3 = stablehlo.cholesky %m, lower = true : tensor<3x3xf32>
  %4 = stablehlo.tanh %x {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 3, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<4xf32>
  %5 = stablehlo.sine %4 {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : tensor<4xf32>
  %6 = "stablehlo.sort"(%5) <{dimension = -1 : i64, is_stable = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %7 = "stablehlo.reduce_window"(%m, %init) <{window_dimensions = array<i64: 2, 2>,
      window_strides = array<i64: 2, 2>, base_dilations = array<i64: 1, 1>,
      window_dilations = array<i64: 2, 1>, padding = dense<[[0, 0], [0, 1]]> : tensor<2x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<3x3xf32>, tensor<f32>) -> tensor<1x2xf32>
  %src = stablehlo.constant dense<1.0> : tensor<2x2xf32>
  %big = stablehlo.constant dense<0.0> : tensor<4x4xf32>
  %8 = "stablehlo.select_and_scatter"(%big, %g, %init) <{window_dimensions = array<i64: 2, 2>,
      window_strides = array<i64: 2, 2>, padding = dense<0> : tensor<2x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %0, %1, %2, %3, %6, %7, %8 : tuple<tensor<4xf32>>, tensor<4xf32>, tensor<4xf32>, tensor<3x3xf32>, tensor<4xf32>, tensor<1x2xf32>, tensor<4x4xf32>
}
""",
    # Collectives: replica groups as a tensor and as mesh axes (axis refs with
    # sub-axes, a mesh symbol and an inline mesh with device ids), channel
    # handles, use_global_device_ids, all_to_all, collective_broadcast.
    "stablehlo_collectives": """
module @collectives attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%a: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    %0 = "stablehlo.all_reduce"(%a) <{
        replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh,
            axes = [#stablehlo.axis_ref<name = "x", sub_axis_info = (1)2>, #stablehlo.axis_ref<name = "y">]>,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %s = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = "stablehlo.all_reduce"(%a) <{
        replica_groups = #stablehlo.replica_group_mesh_axes<
            mesh = #stablehlo.mesh<axes = [<name = "x", size = 4>, <name = "y", size = 2>],
                                   device_ids = dense<[7, 6, 5, 4, 3, 2, 1, 0]> : tensor<8xi64>>,
            axes = [#stablehlo.axis_ref<name = "y">]>}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %s = stablehlo.maximum %p, %q : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %2 = "stablehlo.all_to_all"(%a) <{split_dimension = 0 : i64, concat_dimension = 0 : i64,
        split_count = 2 : i64, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %3 = "stablehlo.collective_broadcast"(%a) <{replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 3, type = 0>}> : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0, %1, %2, %3 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
}
""",
    # Bounded dynamic dimensions (a tensor type's #stablehlo.bounds encoding,
    # the type_extensions attribute), dynamic ops, unranked tensors.
    "stablehlo_bounds_dynamic": """
func.func @main(%x: tensor<?x4xf32, #stablehlo.bounds<8, ?>>, %n: tensor<i32>, %s: tensor<2xi64>,
                %u: tensor<*xf32>)
    -> (tensor<?x4xf32, #stablehlo.bounds<8, ?>>, tensor<i32>, tensor<?x?xf32>, tensor<*xf32>) {
  %0 = stablehlo.set_dimension_size %x, %n, dim = 0 : (tensor<?x4xf32, #stablehlo.bounds<8, ?>>, tensor<i32>) -> tensor<?x4xf32, #stablehlo.bounds<8, ?>>
  %1 = stablehlo.get_dimension_size %0, dim = 0 : (tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<i32>
  %r = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %2 = stablehlo.dynamic_broadcast_in_dim %r, %s, dims = [1] {known_expanding_dimensions = array<i64: 0>,
      known_nonexpanding_dimensions = array<i64>} : (tensor<1xi32>, tensor<2xi64>) -> tensor<?x?xi32>
  %3 = stablehlo.convert %2 : (tensor<?x?xi32>) -> tensor<?x?xf32>
  %4 = stablehlo.dynamic_iota %s, dim = 1 : (tensor<2xi64>) -> tensor<?x?xf32>
  %5 = stablehlo.add %3, %4 : tensor<?x?xf32>
  return %0, %1, %5, %u : tensor<?x4xf32, #stablehlo.bounds<8, ?>>, tensor<i32>, tensor<?x?xf32>, tensor<*xf32>
}
""",
    # chlo attributes (comparison direction and type), chlo ops with and
    # without broadcast dimensions, top_k with its default elided, chlo.scan
    # (operand and result segment sizes), ragged_dot (its dimension numbers
    # have no bytecode encoding: stored as text).
    "chlo_ops": """
func.func @main(%a: tensor<4x3xf32>, %b: tensor<3xf32>, %l: tensor<6x4xf32>, %r: tensor<2x4x3xf32>, %g: tensor<2xi64>)
    -> (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x2xf32>, tensor<4x2xi32>, tensor<4x3xf32>, tensor<3xf32>, tensor<6x3xf32>, tensor<4x3xf32>) {
  %0 = chlo.broadcast_compare %a, %b {broadcast_dimensions = array<i64: 1>, comparison_direction = #chlo<comparison_direction LT>,
      compare_type = #chlo<comparison_type FLOAT>} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %1 = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 1>} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %2 = chlo.broadcast_multiply %1, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %values, %indices = chlo.top_k(%2, k = 2) : tensor<4x3xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
  %3:2 = "chlo.top_k"(%a) <{k = 2 : i64, is_stable = false}> : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
  %4 = chlo.erf %a : tensor<4x3xf32> -> tensor<4x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<3xf32>
  %outs, %carry = chlo.scan (%a) inits(%zero) dimension=0 attributes {is_reverse = true} {
  ^bb0(%x: tensor<3xf32>, %c: tensor<3xf32>):
    %s = stablehlo.add %x, %c : tensor<3xf32>
    stablehlo.return %s, %s : tensor<3xf32>, tensor<3xf32>
  } : (tensor<4x3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
  %5 = "chlo.ragged_dot"(%l, %r, %g) <{ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [],
      rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1],
      lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>,
      precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>]}>
      : (tensor<6x4xf32>, tensor<2x4x3xf32>, tensor<2xi64>) -> tensor<6x3xf32>
  return %0, %1, %values, %indices, %4, %carry, %5, %outs : tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x2xf32>, tensor<4x2xi32>, tensor<4x3xf32>, tensor<3xf32>, tensor<6x3xf32>, tensor<4x3xf32>
}
""",
    # Shardy: meshes (with device ids), shardings on arguments and results,
    # sharding constraints, manual computation, sharding rules.
    "sdy_shardings": """
module @sharded attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  sdy.mesh @ids = <["a"=2], device_ids=[1, 0]>
  func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
      -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {}]>}) {
    %0 = sdy.sharding_constraint %a <@mesh, [{"x":(1)2}, {}]> : tensor<8x4xf32>
    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>]
        manual_axes={"x"} (%arg1: tensor<2x4xf32>) {
      %2 = stablehlo.add %arg1, %arg1 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=2, j=4}>} : tensor<2x4xf32>
      sdy.return %2 : tensor<2x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}
""",
    # Builtin attributes and types beyond what programs hold: integers of
    # every width and signedness, floats of every format, strings with a
    # type, nested symbol references, type attributes, unit, dense arrays of
    # every element type, dense elements (i1 packed and splat, complex,
    # sub-byte, f8), dictionaries, fused locations with metadata, call sites,
    # file ranges; function, tuple, none, index, complex and small float types.
    "builtin_attributes": """
module @builtins attributes {
    x.ints = [1 : i1, -8 : i4, 7 : ui4, -128 : i8, 255 : ui8, -32768 : i16, 65535 : ui16,
              -2147483648 : i32, 4294967295 : ui32, -9223372036854775808 : i64, 18446744073709551615 : ui64,
              5 : si32, 9 : index],
    x.floats = [1.5 : f16, -2.0 : bf16, 3.25 : f32, 0.1 : f64, 0.5 : tf32, 448.0 : f8E4M3FN,
                -57344.0 : f8E5M2, 0.25 : f8E4M3FNUZ, 2.0 : f8E5M2FNUZ, 1.0 : f8E4M3B11FNUZ,
                6.0 : f4E2M1FN, 7.5 : f6E2M3FN, 28.0 : f6E3M2FN, 8.0 : f8E8M0FNU, 240.0 : f8E4M3, 15.5 : f8E3M4,
                0x7FC00000 : f32, 0xFF800000 : f32],
    x.strings = ["plain", "with\\0Anewline"],
    x.symbols = [@a, @a::@b::@c],
    x.types = [i1, si8, ui16, index, f8E4M3FN, complex<f64>, complex<f32>, none, tuple<i32, tensor<2xf32>>,
               (i32, f32) -> (), tensor<*xf32>, tensor<?x3xi8>, !stablehlo.token],
    x.unit,
    x.arrays = [array<i1: true, false, true>, array<i8: -1, 2>, array<i16: 300>, array<i32: 1, -2>,
                array<i64>, array<f32: 1.5, -0.0>, array<f64: 2.0>],
    x.dense = [dense<[true, false, true]> : tensor<3xi1>, dense<true> : tensor<9xi1>, dense<false> : tensor<2x2xi1>,
               dense<[true, false, true, true, false, false, true, false, true, true]> : tensor<10xi1>,
               dense<[(1.0, 2.0), (-3.0, 0.5)]> : tensor<2xcomplex<f32>>, dense<[-8, 7, -1]> : tensor<3xi4>,
               dense<[1, 3]> : tensor<2xui2>, dense<[0.5, -2.0]> : tensor<2xf8E4M3FN>, dense<7> : tensor<2x3xi64>,
               dense<[[1, 2], [3, 4]]> : tensor<2x2xui16>, dense<> : tensor<0xf32>, dense<2.5> : tensor<f64>],
    x.dict = {a = 1 : i32, b = {c = "d"}}
} {
  func.func private @decl(tensor<2xf32> {x.arg = 1 : i32}) -> (tensor<2xf32> {x.res = "r"}) loc(fused<"meta">["a.py":1:2, "b.py":3:4 to 5:6])
  func.func @f(%a: tensor<2xf32> loc("x"("a.py":7:8)), %b: tensor<2xf32> {x.arg = "b"}) -> tensor<2xf32> {
    %0 = stablehlo.add %a, %b : tensor<2xf32> loc(callsite("callee"("c.py":1:1) at callsite("d.py":2:2 to :9 at "e.py":3:3)))
    %1 = func.call @decl(%0) : (tensor<2xf32>) -> tensor<2xf32> loc(fused["f.py":1:1, unknown])
    return %1 : tensor<2xf32> loc("g.py":4:4 to 6:7)
  } loc(fused<{k = 1 : i64}>["h.py":9:9])
}
""",
    # Entries of a dialect jaxlib has not loaded, stored as their text (MLIR's
    # fallback) and read with Kiln's text parser.
    "textual_entries": """
module @texts attributes {x.opaque = #foo<"bar" : baz>, x.type = !foo.type<1, 2>} {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> attributes {x.more = #foo.attr<[1, 2]>} {
    return %a : tensor<2xf32>
  }
}
""",
    # Control flow and regions in every bytecode version: while, case, if,
    # map, reduce with several results, optimization_barrier, tuples.
    "regions": """
func.func @main(%x: tensor<3xf32>, %i: tensor<i32>, %p: tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<i32>, tensor<3xf32>) {
  %0:2 = stablehlo.while(%it = %i, %v = %x) : tensor<i32>, tensor<3xf32>
  cond {
    %c = stablehlo.constant dense<3> : tensor<i32>
    %lt = stablehlo.compare LT, %it, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %n = stablehlo.add %it, %one : tensor<i32>
    %w = stablehlo.multiply %v, %v : tensor<3xf32>
    stablehlo.return %n, %w : tensor<i32>, tensor<3xf32>
  }
  %1 = "stablehlo.case"(%i) ({
    stablehlo.return %x : tensor<3xf32>
  }, {
    %n = stablehlo.negate %x : tensor<3xf32>
    stablehlo.return %n : tensor<3xf32>
  }) : (tensor<i32>) -> tensor<3xf32>
  %2 = "stablehlo.if"(%p) ({
    stablehlo.return %1 : tensor<3xf32>
  }, {
    stablehlo.return %0#1 : tensor<3xf32>
  }) : (tensor<i1>) -> tensor<3xf32>
  %3 = "stablehlo.map"(%2, %x) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.subtract %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %iota = stablehlo.iota dim = 0 : tensor<3xi32>
  %4:2 = stablehlo.reduce(%3 init: %zero), (%iota init: %c0) across dimensions = [0] : (tensor<3xf32>, tensor<3xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<i32>, %d: tensor<i32>) {
    %s = stablehlo.add %a, %b : tensor<f32>
    %t = stablehlo.add %c, %d : tensor<i32>
    stablehlo.return %s, %t : tensor<f32>, tensor<i32>
  }
  %5:2 = stablehlo.optimization_barrier %2, %4#1 : tensor<3xf32>, tensor<i32>
  %6 = stablehlo.tuple %5#0, %5#1 : tuple<tensor<3xf32>, tensor<i32>>
  %7 = stablehlo.get_tuple_element %6[0] : (tuple<tensor<3xf32>, tensor<i32>>) -> tensor<3xf32>
  return %7, %3, %4#0, %5#1, %1 : tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<i32>, tensor<3xf32>
}
""",
}


# ---- generation --------------------------------------------------------------
def context():
  from jax._src.interpreters import mlir as jax_mlir
  ctx = jax_mlir.make_ir_context()
  ctx.allow_unregistered_dialects = True  # textual_entries
  return ctx


def jax_modules():
  """(name, module) of every program of jax_programs.py JAX can lower here."""
  import jax
  import jax_programs
  from jax._src.lib.mlir import ir
  for name, prog in jax_programs.PROGRAMS.items():
    try:
      with jax_programs.configured(prog.config or {}):
        options = prog.jit() if callable(prog.jit) else prog.jit or {}
        jitted = jax.jit(prog.fn, **options)
        if prog.export:
          export_options = prog.export if isinstance(prog.export, dict) else {}
          text = jax.export.export(jitted, **export_options)(*prog.args).mlir_module()
          yield name, ir.Module.parse(text, context=context())
        else:
          yield name, jitted.lower(*prog.args).compiler_ir("stablehlo")
    except Exception as error:  # e.g. a program for another platform
      print(f"{name}: skipped ({type(error).__name__}: {str(error)[:120]})", file=sys.stderr)
  for name, text in jax_programs.HANDWRITTEN.items():
    yield name, ir.Module.parse(text, context=context())


def bytecode(module, version=None):
  buffer = io.BytesIO()
  if version is None:
    module.operation.write_bytecode(buffer)
  else:
    module.operation.write_bytecode(buffer, desired_version=version)
  return buffer.getvalue()


def write_module(out, name, module):
  module.operation.verify()
  (out / f"{name}.mlirbc").write_bytes(bytecode(module))
  for version in VERSIONS:
    (out / f"{name}.v{version}.mlirbc").write_bytes(bytecode(module, version))
  (out / f"{name}.mlir").write_text(module.operation.get_asm(enable_debug_info=True))
  (out / f"{name}.generic.mlir").write_text(
      module.operation.get_asm(enable_debug_info=True, print_generic_op_form=True))


def op_schemas():
  """`op attr attr? ...` lines from jaxlib's generated Python op classes: an
  attribute set only when given (`if x is not None`, `if bool(x)`) is optional."""
  from jaxlib.mlir.dialects import stablehlo
  folder = pathlib.Path(stablehlo.__file__).parent
  lines = []
  for dialect in ("stablehlo", "chlo", "func", "sdy", "builtin"):
    text = (folder / f"_{dialect}_ops_gen.py").read_text()
    for match in re.finditer(r"^class \w+\(_ods_ir\.OpView\):(.*?)(?=^class |\Z)", text,
                             re.S | re.M):
      body = match.group(1)
      name = re.search(r'OPERATION_NAME = "([^"]+)"', body).group(1)
      init = re.search(r"def __init__\(.*?\n(.*?)super\(\).__init__", body, re.S)
      attributes = []
      for line in (init.group(1) if init else "").splitlines():
        found = re.search(r'attributes\["(\w+)"\]', line)
        if found:
          optional = "is not None" in line or line.strip().startswith("if bool(")
          attributes.append(found.group(1) + ("?" if optional else ""))
      lines.append(" ".join([name, *sorted(attributes)]))
  return "\n".join(sorted(lines)) + "\n"


def fixture(name):
  from jax._src.lib.mlir import ir
  data = bytecode(ir.Module.parse(MODULES[name], context=context()))
  rows = ['    "' + "".join("\\x%02x" % b for b in data[i:i + 16]) + '"'
          for i in range(0, len(data), 16)]
  print(f"// {len(data)} bytes: tests/data/make_stablehlo_bytecode.py --fixture {name}")
  print("\n".join(rows))


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--out", metavar="DIR", help="where the files go")
  parser.add_argument("--fixture", metavar="NAME", help="print MODULES[NAME] as a C++ literal")
  args = parser.parse_args()
  if args.fixture:
    fixture(args.fixture)
    return
  if not args.out:
    parser.error("--out DIR is required")
  from jax._src.lib.mlir import ir
  out = pathlib.Path(args.out)
  out.mkdir(parents=True, exist_ok=True)
  for old in list(out.glob("*.mlirbc")) + list(out.glob("*.mlir")):
    old.unlink()
  count = 0
  for name, text in MODULES.items():
    write_module(out, name, ir.Module.parse(text, context=context()))
    count += 1
  for name, module in jax_modules():
    write_module(out, name, module)
    count += 1
  (out / "op_schemas.txt").write_text(op_schemas())
  print(f"wrote {count} modules to {out}")


if __name__ == "__main__":
  main()
