"""A job of two JAX processes on Kiln (jax.distributed, collectives on Gloo).

Each test launches its own processes (tests/multiprocess/launch.py); the
four-process cases are in `make test-multiprocess`.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "multiprocess"))
import launch  # noqa: E402


def test_two_processes_agree_with_xla_and_with_one_process():
    # Every case of job.py on Kiln against XLA's CPU backend (Gloo), and
    # Kiln's 10 training losses against one Kiln process of 4 devices.
    results, problems = launch.compare(2)
    assert not problems, "\n".join(problems)
    assert set(results) >= {"topology", "global_array", "shard_map", "collectives",
                            "jit_sharded", "pmap", "elsewhere", "training", "transformer"}
    assert results["elsewhere"][0] == []  # process 0 runs the program on no device
    assert results["fingerprint"][0] == {"present": True, "same": True}
    assert "subset" in results and "group_orders" in results
    topology = results["topology"]
    assert [t["process_index"] for t in topology] == [0, 1]
    assert topology[0]["devices"] == [0, 0, 1, 1]
    assert topology[1]["local"] == [2, 3]


def test_a_killed_process_fails_the_others_collective_without_a_hang():
    reports = launch.run_fault(2, collective_timeout=30)
    assert len(reports) == 1, reports  # process 1 was killed
    error = reports[0]["error"]
    assert error is not None, "the psum succeeded without process 1"
    assert error.startswith(("UNAVAILABLE", "DEADLINE_EXCEEDED")), error
    assert "process 1 is gone" in error, error
    assert "all_reduce" in error, error
    assert reports[0]["seconds"] < 30


@pytest.mark.parametrize("variable, value, expected", [
    ("KILN_NUM_DEVICES", "3", "has 3 Kiln devices but process"),
    ("KILN_TESTING_BUILD_ID", "another-build", "runs Kiln build"),
])
def test_processes_that_disagree_fail_at_initialization(variable, value, expected):
    extra = {variable: value, "KILN_TESTING_FAULTS": "1"}
    with pytest.raises(RuntimeError) as failure:
        launch.run_job("kiln", 2, ["topology"], process_env={1: extra}, timeout=120)
    assert expected in str(failure.value), str(failure.value)[-3000:]
