"""JAX's own multi-process tests (../shared/suites/jax-tests/multiprocess/)
on Kiln and on XLA's CPU backend with Gloo, launched the way
jax/_src/test_multiprocess.py launches them: each file is run once per
platform with --num_processes=2, and it starts its two worker processes.

    python tests/suites/run_multiprocess_suite.py [--files all_reduce_test,pmap_test]

Per file and platform the report gives process 0's unittest summary (tests
run, failures, errors, skipped) and the tests that passed; it is printed and
written to build/suites/jax-multiprocess/report.md. Exit status 0 unless a
file passes fewer tests on Kiln than on the CPU backend.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUITE = os.path.join(ROOT, "..", "shared", "suites", "jax-tests", "multiprocess")
# TPU- and GPU-only files: nothing of them runs on CPUs.
SKIPPED = {"tpu_device_test"}

SUMMARY = re.compile(r"Process 0, ret: (-?\d+).*?; (Ran (\d+) tests? in [\d.]+s; (.*))?$",
                     re.MULTILINE)


def run_file(path, platform, timeout):
    env = dict(os.environ, JAX_PLATFORMS=platform, KILN_NUM_DEVICES="2",
               JAX_NUM_CPU_DEVICES="2", KILN_GLOO_HOSTNAME="127.0.0.1",
               TEST_UNDECLARED_OUTPUTS_DIR=os.path.join(ROOT, "build", "suites",
                                                        "jax-multiprocess", platform))
    os.makedirs(env["TEST_UNDECLARED_OUTPUTS_DIR"], exist_ok=True)
    args = [sys.executable, path, "--num_processes=2", "--initialization_timeout=60",
            "--heartbeat_timeout=60"]
    if platform == "cpu":
        args.append("--cpu_collectives_implementation=gloo")
    try:
        result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout,
                                cwd=SUITE)
        output = result.stdout + result.stderr
    except subprocess.TimeoutExpired as expired:
        output = (expired.stdout or "") if isinstance(expired.stdout, str) else ""
        return {"ran": 0, "failed": 0, "errors": 0, "skipped": 0, "passed": 0,
                "note": f"timed out after {timeout} s"}
    match = SUMMARY.search(output)
    if not match or not match.group(2):
        return {"ran": 0, "failed": 0, "errors": 0, "skipped": 0, "passed": 0,
                "note": "crashed: " + (output.strip().splitlines() or ["no output"])[-1][:200]}
    ran = int(match.group(3))
    verdict = match.group(4)
    counts = {key: int(value) for key, value in re.findall(r"(failures|errors|skipped)=(\d+)",
                                                            verdict)}
    failed, errors, skipped = (counts.get("failures", 0), counts.get("errors", 0),
                               counts.get("skipped", 0))
    return {"ran": ran, "failed": failed, "errors": errors, "skipped": skipped,
            "passed": ran - failed - errors - skipped, "note": verdict[:120]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="")
    parser.add_argument("--timeout", type=int, default=900)
    args = parser.parse_args()
    names = [n for n in args.files.split(",") if n] or sorted(
        f[:-3] for f in os.listdir(SUITE) if f.endswith("_test.py") and f[:-3] not in SKIPPED)
    lines = ["| file | CPU passed / ran (skipped) | Kiln passed / ran (skipped) | Kiln note |",
             "|---|---|---|---|"]
    total = {"cpu": 0, "kiln": 0}
    worse = []
    for name in names:
        path = os.path.join(SUITE, name + ".py")
        results = {platform: run_file(path, platform, args.timeout) for platform in ("cpu", "kiln")}
        for platform, result in results.items():
            total[platform] += result["passed"]
        if results["kiln"]["passed"] < results["cpu"]["passed"]:
            worse.append(name)
        cpu, kiln = results["cpu"], results["kiln"]
        lines.append(f"| {name} | {cpu['passed']} / {cpu['ran']} ({cpu['skipped']}) "
                     f"| {kiln['passed']} / {kiln['ran']} ({kiln['skipped']}) "
                     f"| {kiln['note'] if kiln['passed'] < cpu['passed'] else ''} |")
        print(lines[-1], flush=True)
    lines.append(f"| total | {total['cpu']} | {total['kiln']} | |")
    text = "# JAX's multi-process tests, 2 processes x 2 devices\n\n" + "\n".join(lines) + "\n"
    out = os.path.join(ROOT, "build", "suites", "jax-multiprocess")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "report.md"), "w") as report:
        report.write(text)
    print(text)
    sys.exit(1 if worse else 0)


if __name__ == "__main__":
    main()
