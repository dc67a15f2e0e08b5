"""Launches a job of several JAX processes (tests/multiprocess/job.py) and
collects what each printed.

    python tests/multiprocess/launch.py --count 2 [--cases a,b] [--compare]

--compare runs the job on Kiln and on XLA's CPU backend (Gloo collectives)
and fails unless every case agrees within 1e-5, and unless Kiln's training
losses equal those of one Kiln process with as many devices.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "job.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def join_job(platform, process, count, port, local_devices):
    """In a process that run_script started: makes `platform` JAX's only one,
    with `local_devices` devices (XLA's CPU backend with Gloo collectives
    for "cpu"), joins the job of `count` processes and returns `jax`."""
    os.environ.setdefault("KILN_NUM_DEVICES", str(local_devices))
    os.environ.setdefault("KILN_GLOO_HOSTNAME", "127.0.0.1")
    import jax

    jax.config.update("jax_platforms", platform)
    if platform == "cpu":
        jax.config.update("jax_num_cpu_devices", local_devices)
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    if count > 1:
        jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=count,
                                   process_id=process, initialization_timeout=120)
    return jax


def run_script(script, platform, count, extra_args=(), local_devices=2, timeout=240, env=None,
               may_die=(), process_env=None):
    """Runs `count` processes of `script PLATFORM ID COUNT PORT extra_args...`;
    returns each process's output.

    Raises RuntimeError with every process's output when one fails (other
    than those in `may_die`, which may end by a signal). `process_env`
    maps a process id to extra environment variables for it alone."""
    port = free_port()
    full_env = dict(os.environ, JOB_LOCAL_DEVICES=str(local_devices),
                    KILN_NUM_DEVICES=str(local_devices), **(env or {}))
    full_env.pop("JAX_PLATFORMS", None)
    processes = []
    for i in range(count):
        args = [sys.executable, "-u", script, platform, str(i), str(count), str(port),
                *extra_args]
        own_env = dict(full_env, **(process_env or {}).get(i, {}))
        processes.append(subprocess.Popen(args, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True, env=own_env))
    deadline = time.monotonic() + timeout
    outputs = []
    for process in processes:
        try:
            out, _ = process.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other in processes:
                other.kill()
            out, _ = process.communicate()
            out += f"\n[timed out after {timeout} s]"
        outputs.append(out)
    failed = [i for i, p in enumerate(processes)
              if p.returncode != 0 and not (i in may_die and p.returncode < 0)]
    if failed:
        detail = "\n".join(f"--- process {i} (exit {processes[i].returncode}) ---\n"
                           f"{outputs[i][-4000:]}" for i in range(count))
        raise RuntimeError(f"{platform} job of {count} processes failed in {failed}:\n{detail}")
    return outputs


def run_job(platform, count, cases=None, **options):
    """Runs job.py's `cases` (all but the fault case by default) in `count`
    processes; returns {case: [value per process]}. Options as run_script's."""
    outputs = run_script(JOB, platform, count, [",".join(cases)] if cases else [], **options)
    results = {}
    for out in outputs:
        for line in out.splitlines():
            if line.startswith('{"case"'):
                record = json.loads(line)
                results.setdefault(record["case"], {})[record["process"]] = record["value"]
    return {case: [values[p] for p in sorted(values)] for case, values in results.items()}


def run_fault(count, collective_timeout=20):
    """The fault case: the last process is killed in a collective. Returns
    what each surviving process reported."""
    env = {"KILN_COLLECTIVE_TIMEOUT_SECONDS": str(collective_timeout)}
    results = run_job("kiln", count, ["fault"], env=env, may_die=(count - 1,),
                      timeout=collective_timeout + 120)
    return results.get("fault", [])


def _numeric(values):
    """True for a (nested) list of numbers of one shape."""
    try:
        return np.asarray(values).dtype.kind in "fiub"
    except ValueError:  # ragged
        return False


def differences(a, b, tolerance=1e-5, path="", found=None):
    """Where two nested results differ beyond `tolerance` (relative and absolute)."""
    found = [] if found is None else found
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                found.append(f"{path}/{key}: present on one side only")
            else:
                differences(a[key], b[key], tolerance, f"{path}/{key}", found)
    elif isinstance(a, list) and isinstance(b, list) and not _numeric(a):
        if len(a) != len(b):
            found.append(f"{path}: {len(a)} items against {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, tolerance, f"{path}[{i}]", found)
    else:
        x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if x.shape != y.shape or not np.allclose(x, y, rtol=tolerance, atol=tolerance):
            found.append(f"{path}: {a} against {b}")
    return found


def compare(count, cases=None):
    """Kiln against XLA's CPU backend, and Kiln's training against one process."""
    kiln = run_job("kiln", count, cases)
    cpu = run_job("cpu", count, cases)
    problems = differences(kiln, cpu)
    trained = [case for case in ("training", "transformer") if case in kiln]
    if trained:
        single = run_job("kiln", 1, trained, local_devices=2 * count)
        for case in trained:
            problems += [f"/{case} on one process: {d}" for d in
                         differences(kiln[case][0], single[case][0])]
    return kiln, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2)
    parser.add_argument("--cases", default="")
    parser.add_argument("--platform", default="kiln")
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c] or None
    if args.compare:
        results, problems = compare(args.count, cases)
        for case in results:
            print(f"{case}: {'agrees' if not any(p.startswith('/' + case) for p in problems) else 'DIFFERS'}")
        for problem in problems:
            print("DIFFERS", problem)
        sys.exit(1 if problems else 0)
    for case, values in run_job(args.platform, args.count, cases).items():
        print(case, json.dumps(values)[:300])


if __name__ == "__main__":
    main()
