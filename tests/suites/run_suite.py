"""Runs another project's own test files on Kiln and on that framework's CPU
backend, and reports how many of the tests that pass on the CPU backend pass
on Kiln too.

    python tests/suites/run_suite.py jax   [--files lax_test,api_test] [--jobs 2]
    python tests/suites/run_suite.py torch [--files test_operations]

The test files are read where they lie (../shared/suites/<suite>-tests, never
copied into Kiln). Each file runs twice under pytest, once per platform, with
the same environment but for the platform's own variables, and pytest's
junit XML gives each test's outcome. Per file the report lists:

- judged: tests that pass on the CPU backend and run (are not skipped) on Kiln;
- passed: those of them that pass on Kiln too;
- cpu-only: tests that pass on the CPU backend and that the suite itself skips
  on Kiln (JAX's `run_on_devices("cpu")`, say), reported apart;
- the judged tests that fail on Kiln, each with the first line of its error
  and, where docs/conformance.md explains it, that reason.

The report is printed and written to build/suites/<suite>/report.md and
report.json (each platform's last time per file is kept in timings.json, so a
run of one platform still reports the other's). The exit status is 0 when
every gated file reaches --min-file, the whole --min-total (in percent of
judged tests), and every failing test of a gated file has its reason in
docs/conformance.md; 1 otherwise.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The files of the gate (issue 25). Those marked with a device count run with
# that many devices on both platforms.
JAX_FILES = {
    "lax_test": 1, "lax_numpy_test": 1, "lax_numpy_operators_test": 1,
    "lax_numpy_reducers_test": 1, "lax_numpy_indexing_test": 1,
    "lax_numpy_einsum_test": 1, "lax_control_flow_test": 1, "lax_autodiff_test": 1,
    "lax_vmap_test": 1, "lax_vmap_op_test": 1, "linalg_test": 1, "lax_scipy_test": 1,
    "fft_test": 1, "nn_test": 1, "random_lax_test": 1, "random_test": 1,
    "api_test": 8, "pjit_test": 8, "shard_map_test": 8,
    "debugging_primitives_test": 8, "checkify_test": 8, "export_test": 8,
    "x64_context_test": 1, "dtypes_test": 1,
}
# Reported with the others but outside the gate's ratio: their failures are
# sharding semantics, which the sharding issue (28) owns.
JAX_REPORTED_ONLY = {"pjit_test", "shard_map_test"}

# torch_xla's own test files that run on its CPU client (run_tests.sh's
# run_xla_op_tests1-3 less the TPU/GPU, multi-process and dynamo ones), on
# one device: with run_tests.sh's CPU_NUM_DEVICES=4, test_operations'
# DataParallel tests abort the CPU client itself under pytest.
TORCH_FILES = {name: 1 for name in (
    "test_operations", "test_core_aten_ops", "test_ops", "test_python_ops", "test_data_type",
    "test_while_loop", "scan/test_scan", "test_gru", "test_as_stride_use_slice",
    "test_placeholder", "eager/test_eager", "test_callback", "test_input_output_aliases",
    "test_devices", "test_async_closures", "test_hlo_metadata", "test_xla_graph_execution",
    "test_ops_error_message", "pjrt/test_dtypes", "test_assume_pure",
    "test_dynamic_shapes_detector", "test_operations_hlo", "test_gradient_accumulation",
    "quantized_ops/test_dot_general", "test_inplace_update", "test_mat_mul_precision",
    "test_autocast", "test_metrics")}

# torch_xla's SPMD tests (`xr.use_spmd()`), on 4 devices as run_tests.sh runs
# them; reported beside the gate, outside its ratio (issue 28 owns them).
# Not the TPU-only, multi-process, dynamo or distributed-checkpoint ones, nor
# test_train_spmd_linear_model (a script: under pytest it fails on the CPU
# client too, reading command-line flags it was not given).
TORCH_SPMD_FILES = {name: 4 for name in (
    "spmd/test_xla_sharding", "spmd/test_xla_sharding_hlo", "spmd/test_xla_virtual_device",
    "spmd/test_spmd_debugging", "spmd/test_xla_spmd_python_api_interaction",
    "spmd/test_spmd_parameter_wrapping", "spmd/test_spmd_lowering_context")}


SUITE_DIRS = {"jax": "jax-tests", "torch": "torch-xla-tests"}


def platform_env(suite, platform, devices):
    """The environment of one run: the caller's, plus the platform's variables."""
    env = dict(os.environ)
    for name in ("JAX_PLATFORMS", "PJRT_DEVICE", "KILN_NUM_DEVICES", "XLA_FLAGS",
                 "CPU_NUM_DEVICES"):
        env.pop(name, None)
    env["PYTHONHASHSEED"] = "0"
    if suite == "jax":
        env["JAX_ENABLE_X64"] = "1"
        env["JAX_NUM_GENERATED_CASES"] = "1"
        env["JAX_PLATFORMS"] = platform
        if platform == "kiln":
            env["KILN_NUM_DEVICES"] = str(devices)
        else:
            env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    else:
        # As torch_xla's run_tests.sh sets them. Its tests import their
        # helpers (test_utils, ...) from the folder's top; tests/suites holds
        # the harness plugin (torch_xla_harness.py).
        suite_dir = os.path.normpath(os.path.join(ROOT, "..", "shared", "suites",
                                                  SUITE_DIRS["torch"]))
        env["PYTHONPATH"] = os.pathsep.join(
            [suite_dir, os.path.join(ROOT, "tests", "suites"),
             env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["TORCH_TEST_DEVICES"] = os.path.join(suite_dir, "pytorch_test_base.py")
        env["PYTORCH_TEST_WITH_SLOW"] = "1"
        env["PJRT_DEVICE"] = "KILN" if platform == "kiln" else "CPU"
        if platform == "kiln":
            env["KILN_NUM_DEVICES"] = str(devices)
        else:
            env["CPU_NUM_DEVICES"] = str(devices)
    return env


def outcomes(xml_path):
    """{test id: (outcome, first line of the message)} from a junit XML file."""
    results = {}
    if not os.path.exists(xml_path):
        return results
    try:
        tree = ElementTree.parse(xml_path)
    except ElementTree.ParseError:
        return results
    for case in tree.iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                message = child.get("message") or (child.text or "")
                break
            if child.tag == "skipped":
                outcome = "skipped"
                message = child.get("message") or ""
        lines = [line for line in message.strip().splitlines() if line.strip()]
        results[test_id] = (outcome, lines[0][:300] if lines else "")
    return results


def run_file(args, suite_dir, out_dir, name, devices, platform):
    path = os.path.join(suite_dir, name + ".py")
    stem = name.replace("/", "__")
    xml_path = os.path.join(out_dir, f"{stem}.{platform}.xml")
    log_path = os.path.join(out_dir, f"{stem}.{platform}.log")
    command = [sys.executable, "-m", "pytest", path, "-q", "-p", "no:cacheprovider",
               "-o", "junit_family=xunit1", f"--junitxml={xml_path}",
               f"--timeout={args.timeout}", "-rN"]
    if args.suite == "torch" and platform == "kiln":
        command += ["-p", "torch_xla_harness"]
    if args.jobs > 1:
        command += ["-n", str(args.jobs)]
    if args.keyword:
        command += ["-k", args.keyword]
    env = platform_env(args.suite, platform, devices)
    if "/" in name:
        # Run as scripts, such files import their neighbours (spmd/'s
        # test_xla_sharding_base) from their own folder.
        env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(path), env.get("PYTHONPATH", "")])
    start = time.monotonic()
    with open(log_path, "w") as log:
        subprocess.run(command, cwd=suite_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                       check=False)
    return time.monotonic() - start


def known_reasons(suite):
    """Reasons for known failures, from docs/conformance.md: lines of the form
    `- <file>::<test pattern>: reason` under the suite's heading."""
    reasons = []
    path = os.path.join(ROOT, "docs", "conformance.md")
    if not os.path.exists(path):
        return reasons
    pattern = re.compile(r"^- `([\w.]+)::([^`]+)`: (.+)$")
    for line in open(path):
        match = pattern.match(line.strip())
        if match:
            reasons.append((match.group(1), re.compile(match.group(2)), match.group(3)))
    return reasons


def reason_for(reasons, name, test_id):
    for file_name, pattern, reason in reasons:
        if file_name == name and pattern.search(test_id):
            return reason
    return ""


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", choices=("jax", "torch"))
    parser.add_argument("--files", help="comma-separated file names (default: the gate's)")
    parser.add_argument("--jobs", type=int, default=2, help="pytest-xdist workers per run")
    parser.add_argument("--parallel-files", type=int, default=1,
                        help="files run at once (each with --jobs workers)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per test")
    parser.add_argument("--keyword", help="pytest -k expression")
    parser.add_argument("--platforms", default="cpu,kiln",
                        help="runs to make; a platform left out reuses its last XML")
    parser.add_argument("--min-file", type=float, default=98.0)
    parser.add_argument("--min-total", type=float, default=99.5)
    args = parser.parse_args()

    files = JAX_FILES if args.suite == "jax" else {**TORCH_FILES, **TORCH_SPMD_FILES}
    if args.files:
        chosen = args.files.split(",")
        files = {name: files.get(name, 8 if args.suite == "jax" else 1) for name in chosen}
    suite_dir = os.path.normpath(os.path.join(ROOT, "..", "shared", "suites",
                                              SUITE_DIRS[args.suite]))
    if not os.path.isdir(suite_dir):
        sys.exit(f"error: {suite_dir} does not exist; the suites are read from "
                 "../shared/suites beside the project (see its README)")
    out_dir = os.path.join(ROOT, "build", "suites", args.suite)
    os.makedirs(out_dir, exist_ok=True)

    timings = {}
    jobs = [(name, devices, platform) for name, devices in files.items()
            for platform in args.platforms.split(",") if platform]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.parallel_files) as pool:
        futures = {pool.submit(run_file, args, suite_dir, out_dir, *job): job for job in jobs}
        for future in concurrent.futures.as_completed(futures):
            name, _, platform = futures[future]
            timings[(name, platform)] = future.result()
            print(f"ran {name} on {platform} in {timings[(name, platform)]:.0f} s", flush=True)

    # Each platform's last time per file, kept across runs so that a report
    # made from one platform's run still shows the other's.
    timings_path = os.path.join(out_dir, "timings.json")
    stored = {}
    if os.path.exists(timings_path):
        with open(timings_path) as f:
            stored = json.load(f)
    for (name, platform), seconds in timings.items():
        stored.setdefault(platform, {})[name] = round(seconds, 1)
    with open(timings_path, "w") as f:
        json.dump(stored, f, indent=1, sort_keys=True)

    reasons = known_reasons(args.suite)
    report = {"files": {}}
    lines = [f"# {args.suite} suite on Kiln against the CPU backend", "",
             "| file | judged | passed | % | cpu-only | s on cpu | s on kiln |",
             "|---|---|---|---|---|---|---|"]
    failing_lines = []
    unexplained = 0
    total_judged = total_passed = 0
    ok = True
    for name in files:
        stem = name.replace("/", "__")
        cpu = outcomes(os.path.join(out_dir, f"{stem}.cpu.xml"))
        kiln = outcomes(os.path.join(out_dir, f"{stem}.kiln.xml"))
        judged = [t for t, (o, _) in cpu.items() if o == "passed"
                  and t in kiln and kiln[t][0] != "skipped"]
        # A test that vanished on Kiln (its process died) counts as failed.
        judged += [t for t, (o, _) in cpu.items() if o == "passed" and t not in kiln]
        cpu_only = [t for t, (o, _) in cpu.items() if o == "passed"
                    and t in kiln and kiln[t][0] == "skipped"]
        passed = [t for t in judged if t in kiln and kiln[t][0] == "passed"]
        failing = sorted(set(judged) - set(passed))
        ratio = 100.0 * len(passed) / len(judged) if judged else 100.0
        gated = name not in JAX_REPORTED_ONLY and name not in TORCH_SPMD_FILES
        if gated:
            total_judged += len(judged)
            total_passed += len(passed)
            ok = ok and ratio >= args.min_file
        seconds = [timings.get((name, p), stored.get(p, {}).get(name)) for p in ("cpu", "kiln")]
        seconds = ["" if s is None else f"{s:.0f}" for s in seconds]
        lines.append(f"| {name}{'' if gated else ' (reported only)'} | {len(judged)} | "
                     f"{len(passed)} | {ratio:.1f} | {len(cpu_only)} | {seconds[0]} | "
                     f"{seconds[1]} |")
        report["files"][name] = {
            "judged": len(judged), "passed": len(passed), "cpu_only": len(cpu_only),
            "gated": gated,
            "failing": {t: {"message": kiln.get(t, ("missing", "no result on Kiln"))[1],
                            "reason": reason_for(reasons, name, t)} for t in failing}}
        for t in failing:
            message = kiln.get(t, ("missing", "no result on Kiln (the process died?)"))[1]
            reason = reason_for(reasons, name, t)
            if not reason and gated:
                unexplained += 1
            failing_lines.append(f"- `{name}::{t}`: {reason or 'UNEXPLAINED: ' + message}")
    total_ratio = 100.0 * total_passed / total_judged if total_judged else 100.0
    ok = ok and total_ratio >= args.min_total and unexplained == 0
    lines += ["", f"Gated files: {total_passed} of {total_judged} ({total_ratio:.2f}%); "
              f"failures without a reason in docs/conformance.md: {unexplained}.", ""]
    if failing_lines:
        lines += ["## Failing on Kiln", ""] + failing_lines
    report.update(total_judged=total_judged, total_passed=total_passed,
                  total_ratio=total_ratio, unexplained=unexplained, ok=ok)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
    print(text)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
