"""`make test-multiprocess`: a job of four JAX processes of two devices each
(`make test` runs two, tests/python/test_multiprocess.py)."""
import launch


def test_four_processes_agree_with_xla_and_with_one_process():
    results, problems = launch.compare(4)
    assert not problems, "\n".join(problems)
    assert results["topology"][3]["process_index"] == 3
    assert results["topology"][0]["devices"] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_a_killed_process_fails_every_survivor_naming_it():
    reports = launch.run_fault(4, collective_timeout=60)
    assert len(reports) == 3, reports
    for report in reports:
        assert report["error"] is not None
        assert report["error"].startswith(("UNAVAILABLE", "DEADLINE_EXCEEDED")), report
        assert "process 3 is gone" in report["error"], report
        assert report["seconds"] < 60
