"""In-process pytester runs with a ``processes`` pool leave the multiprocessing machinery as
they found it: one resource tracker for the whole test session. A second copy of
``multiprocessing.resource_tracker`` (pytester drops modules first imported during a run)
would start a second tracker that never saw the pool's semaphores, and every semaphore's
finalizer would print a ``KeyError`` traceback from it at exit (see tests/conftest.py)."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import TRUTH, read_report, write_suite

PAGE = "Tides\nTidal storage moves water between two basins.\n- pumps\n- turbines"


def test_in_process_runs_keep_one_resource_tracker(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    pages = {f"c{i}": {"truth": TRUTH, "pdf": PAGE} for i in range(2)}
    write_suite(pytester.path, "tides", pages, systems=["pymupdf"], gates="")
    tracker_module = sys.modules["multiprocessing.resource_tracker"]
    pool_module = sys.modules["concurrent.futures.process"]
    for run in range(2):  # the second run used to fail to pickle the pool's worker function
        result = pytester.runpytest("--doceval", "-p", "no:cacheprovider", "--doceval-cache=off")
        result.assert_outcomes(passed=2)
        report = read_report(pytester.path / "doceval-report.json")
        assert report["suites"], f"run {run} wrote no suite"
    assert sys.modules["multiprocessing.resource_tracker"] is tracker_module
    assert sys.modules["concurrent.futures.process"] is pool_module
    # Every semaphore a pool made was registered with, and unregisters through, this one.
    tracker = tracker_module._resource_tracker  # type: ignore[attr-defined]
    assert tracker._fd is not None and tracker._check_alive()
