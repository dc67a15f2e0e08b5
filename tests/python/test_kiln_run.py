"""`kiln run`: compile and run a program on the host, print its results, and
run StableHLO conformance tests (check ops, `// -----` cases)."""

import os
import pathlib
import subprocess
import sys

import numpy as np

RUN_DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "run"


def kiln(*args: str) -> subprocess.CompletedProcess:
    script = os.path.join(os.path.dirname(sys.executable), "kiln")
    return subprocess.run([script, *args], capture_output=True, text=True, timeout=300)


def test_run_prints_the_results():
    result = kiln("run", str(RUN_DATA / "add.mlir"), "dense<[1.0, 2.0]> : tensor<2xf32>",
                  "dense<[0.5, -4.0]> : tensor<2xf32>")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>"


def test_run_reports_each_case_and_fails_when_a_check_fails():
    result = kiln("run", str(RUN_DATA / "checks.mlir"))
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "case 1: PASS (1 checks)"
    assert lines[1] == "case 2: PASS (2 checks)"
    assert lines[2].startswith("case 3: FAIL ") and "element 1: expected 2, found -2" in lines[2]
    assert lines[-1] == "3 cases, 1 failed, 4 checks"


def test_run_takes_tuples_apart():
    result = kiln("run", str(RUN_DATA / "tuples.mlir"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "2 cases, 0 failed, 3 checks", result.stdout


def test_run_lowers_dynamic_ops_with_static_results():
    result = kiln("run", str(RUN_DATA / "dynamic.mlir"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "7 cases, 0 failed, 7 checks", result.stdout


def test_run_dynamic_pad_needs_constant_padding(tmp_path):
    program = tmp_path / "dynamic_pad_argument.mlir"
    program.write_text("""
func.func @main(%x: tensor<2xf32>, %low: tensor<1xi64>) -> tensor<3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %none = stablehlo.constant dense<0> : tensor<1xi64>
  %y = stablehlo.dynamic_pad %x, %zero, %low, %none, %none
      : (tensor<2xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
""")
    result = kiln("run", str(program), "dense<[1.0, 2.0]> : tensor<2xf32>",
                  "dense<[1]> : tensor<1xi64>")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "UNIMPLEMENTED" in output and "edge_padding_low must be known" in output, output


def test_run_dynamic_slice_bounds_are_verified(tmp_path):
    # Constant bounds that do not match the result type: the static form's
    # verifier says so, instead of a kernel reading out of bounds.
    program = tmp_path / "bad_bounds.mlir"
    program.write_text("""
func.func @main(%x: tensor<4xf32>) -> tensor<2xf32> {
  %start = stablehlo.constant dense<[3]> : tensor<1xi64>
  %limit = stablehlo.constant dense<[9]> : tensor<1xi64>
  %step = stablehlo.constant dense<[1]> : tensor<1xi64>
  %y = stablehlo.real_dynamic_slice %x, %start, %limit, %step
      : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
""")
    result = kiln("run", str(program), "dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "INVALID_ARGUMENT" in output and "stablehlo.slice" in output, output


def test_run_bitcasts_between_bit_widths_and_complex_atan2():
    result = kiln("run", str(RUN_DATA / "bitcast.mlir"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "6 cases, 0 failed, 7 checks", result.stdout


def test_run_rejects_a_tuple_it_cannot_take_apart(tmp_path):
    program = tmp_path / "tuple_argument.mlir"
    program.write_text("""
func.func @main(%t: tuple<tensor<f32>, tensor<f32>>) -> tensor<f32> {
  %x = stablehlo.get_tuple_element %t[0] : (tuple<tensor<f32>, tensor<f32>>) -> tensor<f32>
  func.return %x : tensor<f32>
}
""")
    result = kiln("run", str(program))
    assert result.returncode != 0
    assert "UNIMPLEMENTED" in result.stdout + result.stderr, result.stdout + result.stderr


def test_run_rejects_wrong_inputs():
    result = kiln("run", str(RUN_DATA / "add.mlir"), "dense<[1.0]> : tensor<1xf32>")
    assert result.returncode == 1
    assert "takes 2 arguments, 1 inputs were given" in result.stdout, result.stdout


def test_run_a_jax_artifact(run_python, tmp_path):
    artifact = tmp_path / "f.mlir.bc"
    run_python(f"""
import jax, jax.numpy as jnp
from jax._src.lib import _jax
module = jax.jit(lambda x: jnp.sin(x) * 2).lower(jnp.zeros(3, jnp.float32)).compiler_ir("stablehlo")
open({str(artifact)!r}, "wb").write(_jax.mlir.serialize_portable_artifact(module, "1.22.0", True))
""", env={"JAX_PLATFORMS": "cpu"})
    result = kiln("run", str(artifact), "dense<[0.0, 0.5, -1.0]> : tensor<3xf32>")
    assert result.returncode == 0, result.stdout + result.stderr
    text = result.stdout.strip()
    assert text.startswith("dense<[") and text.endswith("]> : tensor<3xf32>"), text
    values = [float(v) for v in text[len("dense<["):-len("]> : tensor<3xf32>")].split(",")]
    np.testing.assert_allclose(values, np.sin([0.0, 0.5, -1.0]) * 2, rtol=1e-6)


def test_run_quantized_programs():
    result = kiln("run", str(RUN_DATA / "quantized.mlir"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "6 cases, 0 failed, 6 checks", result.stdout


def test_run_refuses_a_quantized_reduction_by_name(tmp_path):
    program = tmp_path / "quantized_reduce.mlir"
    program.write_text("""
func.func @main(%x: tensor<4xi8>) -> tensor<i8> {
  %q = stablehlo.bitcast_convert %x : (tensor<4xi8>) -> tensor<4x!quant.uniform<i8:f32, 0.5>>
  %zero = stablehlo.constant dense<0> : tensor<i8>
  %init = stablehlo.bitcast_convert %zero : (tensor<i8>) -> tensor<!quant.uniform<i8:f32, 0.5>>
  %sum = stablehlo.reduce(%q init: %init) applies stablehlo.add across dimensions = [0]
      : (tensor<4x!quant.uniform<i8:f32, 0.5>>, tensor<!quant.uniform<i8:f32, 0.5>>)
      -> tensor<!quant.uniform<i8:f32, 0.5>>
  %out = stablehlo.bitcast_convert %sum : (tensor<!quant.uniform<i8:f32, 0.5>>) -> tensor<i8>
  func.return %out : tensor<i8>
}
""")
    result = kiln("run", str(program), "dense<[1, 2, 3, 4]> : tensor<4xi8>")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "UNIMPLEMENTED" in output and "stablehlo.reduce on quantized tensors" in output, output


def test_run_feeds_the_infeed_and_prints_the_outfeed():
    result = kiln("run", "--infeed", "dense<[10, 20]> : tensor<2xi32>",
                  "--infeed", "dense<2.5> : tensor<f32>; dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>",
                  str(RUN_DATA / "feeds.mlir"), "dense<[1, 2]> : tensor<2xi32>")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines() == [
        "dense<[11, 22]> : tensor<2xi32>",
        "dense<2.500000e+00> : tensor<f32>",
        # Sent on a channel between devices and received back, then doubled.
        "dense<[[2.000000e+00, 4.000000e+00], [6.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>",
        "outfeed: dense<[11, 22]> : tensor<2xi32>",
        "outfeed: dense<2.500000e+00> : tensor<f32>",
    ]


def test_run_reports_an_empty_or_mismatched_infeed():
    empty = kiln("run", str(RUN_DATA / "feeds.mlir"), "dense<[1, 2]> : tensor<2xi32>")
    assert empty.returncode == 1
    assert "DEADLINE_EXCEEDED" in empty.stdout and "infeed of device 0" in empty.stdout, empty.stdout
    wrong = kiln("run", "--infeed", "dense<[1, 2, 3]> : tensor<3xi32>",
                 str(RUN_DATA / "feeds.mlir"), "dense<[1, 2]> : tensor<2xi32>")
    assert wrong.returncode == 1
    assert "si32[3], the op expects si32[2]" in wrong.stdout, wrong.stdout
