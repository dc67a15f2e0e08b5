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


def _run_program(tmp_path, text, *inputs):
    program = tmp_path / "program.mlir"
    program.write_text(text)
    return kiln("run", str(program), *inputs)


_DYNAMIC_PAD = """
func.func @main(%x: tensor<2x3xf32>, %low: tensor<2xi64>, %high: tensor<2xi64>,
                %interior: tensor<2xi64>) -> tensor<4x6xf32> {
  %v = stablehlo.constant dense<-1.0> : tensor<f32>
  %y = stablehlo.dynamic_pad %x, %v, %low, %high, %interior
      : (tensor<2x3xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<4x6xf32>
  func.return %y : tensor<4x6xf32>
}
"""


def test_run_dynamic_pad_with_run_time_padding(tmp_path):
    x = "dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>"
    # low (1, 0), high (1, 1), interior (0, 1): 1+2+1 = 4 rows, 0+3+2+1 = 6 columns.
    result = _run_program(tmp_path, _DYNAMIC_PAD, x, "dense<[1, 0]> : tensor<2xi64>",
                          "dense<[1, 1]> : tensor<2xi64>", "dense<[0, 1]> : tensor<2xi64>")
    assert result.returncode == 0, result.stdout + result.stderr
    expected = np.full((4, 6), -1.0, np.float32)
    expected[1, 0:5:2] = [1, 2, 3]
    expected[2, 0:5:2] = [4, 5, 6]
    assert _values(result.stdout) == expected.ravel().tolist()
    # The same program with paddings that do not give the result type.
    bad = _run_program(tmp_path, _DYNAMIC_PAD, x, "dense<[0, 0]> : tensor<2xi64>",
                       "dense<[1, 1]> : tensor<2xi64>", "dense<[0, 1]> : tensor<2xi64>")
    assert bad.returncode == 1
    assert "INVALID_ARGUMENT" in bad.stdout and "gives 3 elements; the result type has 4" in bad.stdout


def test_run_real_dynamic_slice_with_run_time_bounds(tmp_path):
    text = """
func.func @main(%x: tensor<8xi32>, %start: tensor<1xi32>, %limit: tensor<1xi32>,
                %step: tensor<1xi32>) -> tensor<3xi32> {
  %y = stablehlo.real_dynamic_slice %x, %start, %limit, %step
      : (tensor<8xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
  func.return %y : tensor<3xi32>
}
"""
    x = "dense<[0, 10, 20, 30, 40, 50, 60, 70]> : tensor<8xi32>"
    ok = _run_program(tmp_path, text, x, "dense<[1]> : tensor<1xi32>",
                      "dense<[8]> : tensor<1xi32>", "dense<[3]> : tensor<1xi32>")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.strip() == "dense<[10, 40, 70]> : tensor<3xi32>"
    past_the_end = _run_program(tmp_path, text, x, "dense<[5]> : tensor<1xi32>",
                                "dense<[9]> : tensor<1xi32>", "dense<[1]> : tensor<1xi32>")
    assert past_the_end.returncode == 1
    assert "needs 0 <= start <= limit <= size" in past_the_end.stdout, past_the_end.stdout


def test_run_dynamic_gather_and_conv_with_run_time_operands(tmp_path):
    gather = """
func.func @main(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %sizes: tensor<2xi32>) -> tensor<2x3xf32> {
  %y = "stablehlo.dynamic_gather"(%x, %i, %sizes) {dimension_numbers = #stablehlo.gather<
      offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>}
      : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2xi32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""
    x = "dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]> : tensor<4x3xf32>"
    ok = _run_program(tmp_path, gather, x, "dense<[[2], [0]]> : tensor<2x1xi32>",
                      "dense<[1, 3]> : tensor<2xi32>")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert _values(ok.stdout) == [6, 7, 8, 0, 1, 2]
    wrong = _run_program(tmp_path, gather, x, "dense<[[2], [0]]> : tensor<2x1xi32>",
                         "dense<[1, 2]> : tensor<2xi32>")
    assert wrong.returncode == 1 and "slice_sizes is [1, 2] at run time" in wrong.stdout, wrong.stdout

    conv = """
func.func @main(%x: tensor<1x5x1xf32>, %w: tensor<3x1x1xf32>, %pad: tensor<1x2xi32>) -> tensor<1x5x1xf32> {
  %y = "stablehlo.dynamic_conv"(%x, %w, %pad) {
      dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>,
      batch_group_count = 1 : i64, feature_group_count = 1 : i64}
      : (tensor<1x5x1xf32>, tensor<3x1x1xf32>, tensor<1x2xi32>) -> tensor<1x5x1xf32>
  func.return %y : tensor<1x5x1xf32>
}
"""
    x = "dense<[[[1.0], [2.0], [3.0], [4.0], [5.0]]]> : tensor<1x5x1xf32>"
    w = "dense<[[[1.0]], [[10.0]], [[100.0]]]> : tensor<3x1x1xf32>"
    # Padding (2, 0) and (0, 2) give the same output size and different values.
    left = _run_program(tmp_path, conv, x, w, "dense<[[2, 0]]> : tensor<1x2xi32>")
    right = _run_program(tmp_path, conv, x, w, "dense<[[0, 2]]> : tensor<1x2xi32>")
    assert left.returncode == 0 and right.returncode == 0, left.stdout + right.stdout
    signal = np.array([1, 2, 3, 4, 5], np.float32)
    kernel = np.array([1, 10, 100], np.float32)
    padded_left = np.concatenate([[0, 0], signal])
    padded_right = np.concatenate([signal, [0, 0]])
    for result, padded in ((left, padded_left), (right, padded_right)):
        expected = [float(padded[i:i + 3] @ kernel) for i in range(5)]
        assert _values(result.stdout) == expected
    too_much = _run_program(tmp_path, conv, x, w, "dense<[[2, 2]]> : tensor<1x2xi32>")
    assert too_much.returncode == 1 and "gives 7 output positions" in too_much.stdout


def test_run_checks_shape_operands_against_the_result_type(tmp_path):
    text = """
func.func @main(%x: tensor<3xf32>, %shape: tensor<2xi64>) -> tensor<2x3xf32> {
  %y = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [1]
      : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""
    x = "dense<[1.0, 2.0, 3.0]> : tensor<3xf32>"
    ok = _run_program(tmp_path, text, x, "dense<[2, 3]> : tensor<2xi64>")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert _values(ok.stdout) == [1, 2, 3, 1, 2, 3]
    wrong = _run_program(tmp_path, text, x, "dense<[4, 3]> : tensor<2xi64>")
    assert wrong.returncode == 1
    assert "output shape is [4, 3] at run time; the result type needs [2, 3]" in wrong.stdout


def _values(stdout: str) -> list[float]:
    """The numbers of a printed `dense<...> : tensor<...>` literal, flattened."""
    import re
    body = stdout.strip().split(" : ")[0]
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", body[len("dense<"):])]


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
    assert result.stdout.strip().splitlines()[-1] == "8 cases, 0 failed, 8 checks", result.stdout


def test_run_parallel_collectives():
    result = kiln("run", str(RUN_DATA / "collectives.mlir"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "7 cases, 0 failed, 19 checks", result.stdout


def test_run_parallel_collective_without_its_peer_fails_in_bounded_time(tmp_path):
    program = tmp_path / "lonely.mlir"
    program.write_text("""
func.func @reduce(%x: tensor<i32>) -> tensor<i32> {
  %r = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<i32>) -> tensor<i32>
  func.return %r : tensor<i32>
}
func.func @idle(%x: tensor<i32>) -> tensor<i32> {
  func.return %x : tensor<i32>
}
func.func @main() {
  %a = stablehlo.constant dense<1> : tensor<i32>
  %r:2 = "interpreter.run_parallel"(%a, %a) {programs = [[@reduce], [@idle]]}
      : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
  func.return
}
""")
    script = os.path.join(os.path.dirname(sys.executable), "kiln")
    env = dict(os.environ, KILN_COLLECTIVE_TIMEOUT_SECONDS="1")
    result = subprocess.run([script, "run", str(program)], capture_output=True, text=True,
                            timeout=60, env=env)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "DEADLINE_EXCEEDED" in message and "1 of 2 arrived" in message, message


def test_run_chlo_broadcasting_ops():
    result = kiln("run", str(RUN_DATA / "chlo.mlir"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "6 cases, 0 failed, 8 checks", result.stdout


def test_run_chlo_broadcast_of_clashing_shapes_is_an_error(tmp_path):
    program = tmp_path / "clash.mlir"
    program.write_text("""
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  %c = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}
""")
    result = kiln("run", str(program))
    assert result.returncode != 0
    assert "do not broadcast" in result.stderr + result.stdout, result.stderr


def test_run_quantized_reduction_with_a_one_op_body(tmp_path):
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
    # 0.5 + 1.0 + 1.5 + 2.0 = 5.0, stored as 10 at scale 0.5: the body's
    # quantized add, not the kernels' integer add on storage values.
    result = kiln("run", str(program), "dense<[1, 2, 3, 4]> : tensor<4xi8>")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "dense<10> : tensor<i8>"


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


def test_plan_lists_fused_loops_with_their_reductions(tmp_path):
    # A softmax as JAX lowers it: the sum's reduce folds the loop computing
    # exp(x - max), and no elementwise op is left to run on its own.
    import jax
    import jax.numpy as jnp
    text = jax.jit(jax.nn.softmax).lower(jnp.zeros((256, 100), jnp.float32)).as_text()
    program = tmp_path / "softmax.mlir"
    program.write_text(text)
    result = kiln("plan", str(program))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert any("kiln.fusion [" in line and "exponential => reduce" in line
               for line in lines), result.stdout
    assert not any(" = stablehlo.exponential" in line for line in lines), result.stdout
    assert lines[-1].endswith("bytes") and "nodes" in lines[-1], result.stdout


def test_plan_rejects_a_broken_program(tmp_path):
    program = tmp_path / "broken.mlir"
    program.write_text("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                       "  %y = stablehlo.frobnicate %x : tensor<2xf32>\n"
                       "  func.return %y : tensor<2xf32>\n}\n")
    result = kiln("plan", str(program))
    assert result.returncode == 1
    assert "frobnicate" in result.stderr, result.stderr


def test_plan_times_each_node(tmp_path):
    program = tmp_path / "chain.mlir"
    program.write_text("func.func @main(%x: tensor<1000xf32>) -> tensor<1000xf32> {\n"
                       "  %y = stablehlo.exponential %x : tensor<1000xf32>\n"
                       "  %z = stablehlo.multiply %y, %x : tensor<1000xf32>\n"
                       "  func.return %z : tensor<1000xf32>\n}\n")
    result = kiln("plan", "--time", "5", str(program))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2, result.stdout
    # "(generated code)" follows the members where the machine runs it.
    assert " us " in lines[0] and "%" in lines[0] and "kiln.fusion [exponential, multiply" in lines[0]
    assert "per run (mean of 5)" in lines[1], result.stdout
    bad = kiln("plan", "--time", "0", str(program))
    assert bad.returncode == 2 and "--time takes a number of runs" in bad.stderr, bad.stderr


# The StableHLO interpreter's own conventions (`stablehlo-translate
# --interpret`), which tests/suites/run_stablehlo_interpret.py maps onto
# `kiln run`: inputs as one --args list, results and interpreter.print in the
# interpreter's layout, probes written as .npy files.

def test_run_takes_an_args_list_and_prints_in_the_interpreter_format(tmp_path):
    program = tmp_path / "add.mlir"
    program.write_text("""
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, tensor<i1>) {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  %1 = stablehlo.constant dense<true> : tensor<i1>
  func.return %0, %1 : tensor<2xf32>, tensor<i1>
}
""")
    result = kiln("run", "--args=[dense<[1.0, 2.0]> : tensor<2xf32>, dense<[0.5, -4.0]> : tensor<2xf32>]",
                  "--interpreter-format", str(program))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ("tensor<2xf32> {\n  [1.500000e+00, -2.000000e+00]\n}\n"
                             "tensor<i1> {true}\n")
    bad = kiln("run", "--args=[dense<[1.0, 2.0]> : tensor<2xf32>", str(program))
    assert bad.returncode == 2 and "kiln run:" in bad.stderr, bad.stderr
    unknown = kiln("run", "--no-such-option", str(program))
    assert unknown.returncode == 2 and "--no-such-option" in unknown.stderr, unknown.stderr


_PROBED = """
func.func @main() {
  %0 = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  interpreter.print %0 : tensor<2x2xi32>
  %1 = interpreter.probe %0, probe_id = "p0" : tensor<2x2xi32>
  check.expect_serialized_eq %1, probe_id = "p0" : tensor<2x2xi32>
  func.return
}  // -----
func.func @main() {
  %0 = stablehlo.constant dense<7> : tensor<i8>
  check.expect_eq_const %0, dense<7> : tensor<i8>
  func.return
}
"""


def test_run_prints_probes_and_splits_at_a_marker_after_code(tmp_path):
    program = tmp_path / "probe.mlir"
    program.write_text(_PROBED)
    probes = tmp_path / "probes"
    probes.mkdir()
    result = kiln("run", f"--probe-output-dir={probes}", str(program))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("%0 = tensor<2x2xi32> {\n  [\n    [1, 2],\n    [3, 4]\n  ]\n}\n")
    # The marker after '}' on the same line still splits the cases.
    assert result.stdout.strip().splitlines()[-1] == "2 cases, 0 failed, 2 checks", result.stdout
    index = (probes / "index.csv").read_text().strip().split(",")
    assert index[:2] == ["p0", "tensor<2x2xi32>"]
    np.testing.assert_array_equal(np.load(index[2]), np.array([[1, 2], [3, 4]], np.int32))
    # Without a folder a probe is an error of its case, named.
    no_folder = kiln("run", str(program))
    assert no_folder.returncode == 1
    assert "needs a probe folder (kiln run --probe-output-dir=DIR)" in no_folder.stdout


_DENORMALS = """
func.func @main() {
  %x = stablehlo.constant dense<1.0e-40> : tensor<f32>
  %z = stablehlo.add %x, %x : tensor<f32>
  %n = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %r = stablehlo.reduce_precision %n, format = e5m0 : tensor<f32>
  interpreter.print %z : tensor<f32>
  interpreter.print %r : tensor<f32>
  func.return
}
"""


def test_spec_semantics_keeps_denormals_and_rounds_nan_as_the_spec(tmp_path):
    program = tmp_path / "denormals.mlir"
    program.write_text(_DENORMALS)
    # As XLA's CPU backend: denormals flush to zero; a NaN stays NaN.
    default = kiln("run", str(program))
    assert default.returncode == 0, default.stdout + default.stderr
    assert default.stdout.splitlines()[:2] == ["%1 = tensor<f32> {0.000000e+00}",
                                               "%3 = tensor<f32> {0x7FC00000}"]
    # The spec (and its interpreter): denormals kept; with no mantissa bits
    # a NaN becomes infinity.
    spec = kiln("run", "--spec-semantics", str(program))
    assert spec.returncode == 0, spec.stdout + spec.stderr
    assert spec.stdout.splitlines()[:2] == ["%1 = tensor<f32> {1.999990e-40}",
                                            "%3 = tensor<f32> {0x7F800000}"]


_SCAN = """
func.func @main() {
  %input = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %init = stablehlo.constant dense<0> : tensor<2xi32>
  %0:2 = chlo.scan(%input) inits(%init) dimension=1 attributes {is_reverse = true} {
  ^bb0(%x: tensor<2xi32>, %c: tensor<2xi32>):
    %1 = stablehlo.add %x, %c : tensor<2xi32>
    %2 = stablehlo.multiply %1, %x : tensor<2xi32>
    stablehlo.return %2, %1 : tensor<2xi32>, tensor<2xi32>
  } : (tensor<2x3xi32>, tensor<2xi32>) -> (tensor<2x3xi32>, tensor<2xi32>)
  check.expect_eq_const %0#0, dense<[[6, 10, 9], [60, 55, 36]]> : tensor<2x3xi32>
  check.expect_eq_const %0#1, dense<[6, 15]> : tensor<2xi32>
  func.return
}
"""


def test_run_chlo_scan_along_an_inner_dimension_in_reverse(tmp_path):
    # Suffix sums s of each row, and x * s stacked: a scan whose slices are
    # gathered (the scan dimension is not the outermost).
    program = tmp_path / "scan.mlir"
    program.write_text(_SCAN)
    result = kiln("run", str(program))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "1 cases, 0 failed, 2 checks", result.stdout
    # A body argument of the wrong shape is a verifier error.
    program.write_text(_SCAN.replace("dimension=1", "dimension=0"))
    bad = kiln("run", str(program))
    assert bad.returncode == 1
    assert "body argument #0 must be tensor<3xi32>, found tensor<2xi32>" in bad.stdout + bad.stderr


SHARDED_PROGRAM = """
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %w: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> tensor<16x8xf32> {
    %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0]
        : (tensor<16x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32> loc("model.py":12:3)
    %1 = stablehlo.sine %0 : tensor<16x8xf32>
    return %1 : tensor<16x8xf32>
  }
}
"""


def test_plan_of_a_sharded_program_names_the_op_that_gathers(tmp_path):
    program = tmp_path / "sharded.mlir"
    program.write_text(SHARDED_PROGRAM)
    result = kiln("plan", str(program))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    # Each device multiplies its 4 rows by the whole weight, gathered for
    # the dot, and computes the sine on its tile.
    gathers = [line for line in lines if "kiln.spmd_gather" in line]
    assert len(gathers) == 1, result.stdout
    assert "f32[8,8]" in gathers[0] and "for stablehlo.dot_general at model.py:12" in gathers[0], \
        result.stdout
    assert any("stablehlo.dot_general (%" in line and "f32[4,8]" in line for line in lines), \
        result.stdout


def test_plan_takes_the_device_count_of_an_hlo_program(tmp_path):
    # A program from PyTorch/XLA's SPMD mode names no partition count
    # (KILN_DUMP_DIR keeps its HLO): --partitions says it.
    program = tmp_path / "spmd.mlir"
    program.write_text("""
func.func public @main(%a: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"})
    -> (tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) {
  %0 = stablehlo.sine %a : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
""")
    whole = kiln("plan", str(program))
    assert whole.returncode == 0 and "f32[16,8]" in whole.stdout, whole.stdout + whole.stderr
    tiles = kiln("plan", "--partitions", "4", "--time", "2", str(program))
    assert tiles.returncode == 0, tiles.stderr
    assert "stablehlo.sine" in tiles.stdout and "f32[4,8]" in tiles.stdout, tiles.stdout
    assert "f32[16,8]" not in tiles.stdout, tiles.stdout
    bad = kiln("plan", "--partitions", "x", str(program))
    assert bad.returncode == 2 and "invalid int value: 'x'" in bad.stderr, bad.stderr
    bad = kiln("plan", "--partitions", "0", str(program))
    assert bad.returncode == 2 and "--partitions takes a number of devices" in bad.stderr


def test_plan_of_a_gspmd_program_partitions_it(tmp_path):
    program = tmp_path / "gspmd.mlir"
    program.write_text("""
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%a: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"})
      -> tensor<16x8xf32> {
    %0 = stablehlo.sine %a : tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}
""")
    result = kiln("plan", str(program))
    assert result.returncode == 0, result.stderr
    assert "stablehlo.sine (%0:f32[4,8])" in result.stdout, result.stdout
