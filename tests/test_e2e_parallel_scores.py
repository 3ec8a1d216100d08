"""Scores are stages, run where the machine has room, as a user runs them: a plain run's costly
scores go to its process pool once measured, an xdist run's to the one pool its controller owns
(never a process of the tests), a Dask cluster's to the cluster's workers; the numbers are the
same everywhere; a score that raises is its test's error; a kind whose code cannot travel is
scored where the tests run, and the run says so."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.metrics.cost import COST_METRICS
from tests.conftest import read_report
from tests.dask_support import dask_cluster

# A kind whose scoring burns CPU (as TEDS of a large table does) and says which process scored;
# every pytest process of the run (plain, controller, workers) writes its pid to pids.log.
BUSY_KIND = """
import os
import time
from pathlib import Path

from pytest_doceval import CaseRef, CaseResult, CpuStage, MetricSpec, Plan, Suite, suite_kind

PIDS = Path(__file__).parent / "pids.log"


def pytest_configure(config):
    with PIDS.open("a") as log:
        log.write(f"{os.getpid()}\\n")


@suite_kind
class Busy(Suite):
    kind = "busy"
    suite_keys = frozenset({"cases", "seconds"})
    metrics = {"digits": MetricSpec("higher")}
    scoring_id = "busy-v1"

    def case_refs(self):
        return [CaseRef(f"c{n:02d}", "s") for n in range(self.spec.table["cases"])]

    def plan(self, ref):  # a CPU stage: where the run's pool puts it
        where = CpuStage(f"pid of {ref.case}", f"where {ref.case} ran", os.getpid)
        return Plan((where,), {"where": where.key})

    def evaluate(self, ref, results, ctx):
        if ref.case == "c05":
            raise ValueError("c05 cannot be scored: its truth is garbled")
        end = time.process_time() + self.spec.table["seconds"]
        while time.process_time() < end:
            pass
        digits = sum(int(ch) for ch in ref.case if ch.isdigit())
        return CaseResult(
            {"digits": float(digits)}, details={"pid": os.getpid(), "stage": results["where"]}
        )
"""


CASES = [f"c{n:02d}" for n in range(24)]


def busy_project(root: Path, seconds: float = 0.15) -> None:
    (root / "conftest.py").write_text(BUSY_KIND)
    (root / "pyproject.toml").write_text('[tool.doceval]\nsuites = ["cases"]\n')
    suite = root / "cases" / "busy"
    suite.mkdir(parents=True)
    (suite / "suite.toml").write_text(
        f'[suite]\nkind = "busy"\ncases = {len(CASES)}\nseconds = {seconds}\n'
    )


def scored(pytester: pytest.Pytester, *args: str) -> tuple[dict[str, Any], set[int]]:
    """Run; each row's (outcome, metrics, scoring pid, its CPU stage's pid) and the pids of
    the run's pytest processes."""
    (pytester.path / "pids.log").unlink(missing_ok=True)
    result = pytester.runpytest_subprocess(
        "--doceval", "-p", "no:cacheprovider", "--doceval-cache=off", *args, timeout=600
    )
    result.assert_outcomes(passed=len(CASES) - 1, errors=1)
    result.stdout.fnmatch_lines(["*c05*cannot be scored: its truth is garbled*"])
    report = read_report(pytester.path / "doceval-report.json")
    rows = {
        r["case"]: (
            r["outcome"],
            r["metrics"],
            r["details"].get("pid"),
            r["details"].get("stage"),
        )
        for r in report["suites"]["busy"]["results"]
    }
    pids = {int(line) for line in (pytester.path / "pids.log").read_text().split()}
    return rows, pids


def numbers(rows: dict[str, Any]) -> dict[str, Any]:
    """Each row's outcome and quality metrics (what its stages cost depends on where)."""
    return {
        case: (outcome, {m: v for m, v in metrics.items() if m not in COST_METRICS})
        for case, (outcome, metrics, *_) in rows.items()
    }


def test_costly_scores_leave_the_test_process_plain_and_under_xdist(
    pytester: pytest.Pytester,
) -> None:
    busy_project(pytester.path)
    plain, plain_pids = scored(pytester)
    scored_elsewhere = {c for c, (_, _, pid, _) in plain.items() if pid not in plain_pids}
    # The first few are measured where the test runs; then the pool takes the rest.
    assert len(scored_elsewhere - {"c05"}) >= 12, plain
    assert all(stage not in plain_pids for c, (*_, stage) in plain.items() if c != "c05")
    xdist, xdist_pids = scored(pytester, "-n", "2")
    assert len(xdist_pids) == 3  # the controller and two workers
    # Every worker's CPU stages ran in the one pool its controller owns.
    stages = {stage for c, (*_, stage) in xdist.items() if c != "c05"}
    assert stages and not stages & xdist_pids, xdist
    if (os.cpu_count() or 1) <= 2:
        # Two workers on two cores score in parallel themselves: the pool would add nothing.
        assert all(pid in xdist_pids for c, (_, _, pid, _) in xdist.items() if c != "c05")
    assert numbers(plain) == numbers(xdist)


def test_a_dask_cluster_carries_the_scores(pytester: pytest.Pytester) -> None:
    if importlib.util.find_spec("distributed") is None:
        pytest.skip("needs Dask (pip install 'pytest-doceval[dask]')")
    busy_project(pytester.path, seconds=0.0)  # cheap, and still the cluster's: it was given
    here, _ = scored(pytester)
    log = pytester.path / "worker.log"
    with dask_cluster(worker_log=log) as address:
        rows, pids = scored(pytester, f"--doceval-executor=dask:{address}")
    assert all(pid not in pids for case, (_, _, pid, _) in rows.items() if case != "c05")
    assert numbers(rows) == numbers(here)
    # c05's score raised on the cluster: its test's error (`scored`), not the cluster's.
    assert "Compute Failed" not in log.read_text(errors="replace")


DYING_KIND = """
import os

from pytest_doceval import CaseRef, CaseResult, CpuStage, MetricSpec, Plan, Suite, suite_kind


@suite_kind
class Dying(Suite):
    kind = "dying"
    metrics = {"ok": MetricSpec("higher")}
    scoring_id = "dying-v1"

    def case_refs(self):
        return [CaseRef(f"c{n}", "s") for n in range(6)]

    def plan(self, ref):
        # c3's stage kills the process it runs in (a parser that segfaults)
        call, args = (os._exit, (3,)) if ref.case == "c3" else (os.getpid, ())
        stage = CpuStage(f"stage of {ref.case}", f"parse {ref.case}", call, args)
        return Plan((stage,), {"out": stage.key})

    def evaluate(self, ref, results, ctx):
        return CaseResult({"ok": 1.0})
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_pool_process_that_dies_fails_its_test_only(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    (pytester.path / "conftest.py").write_text(DYING_KIND)
    (pytester.path / "pyproject.toml").write_text('[tool.doceval]\nsuites = ["cases"]\n')
    (pytester.path / "cases" / "dying").mkdir(parents=True)
    (pytester.path / "cases" / "dying" / "suite.toml").write_text('[suite]\nkind = "dying"\n')
    result = pytester.runpytest_subprocess(
        "--doceval", "-p", "no:cacheprovider", "--doceval-cache=off", *workers, timeout=600
    )
    result.assert_outcomes(passed=5, errors=1)
    result.stdout.fnmatch_lines(["ERROR *c3[[]s]*"])
    report = read_report(pytester.path / "doceval-report.json")
    rows = report["suites"]["dying"]["results"]
    assert sorted(r["case"] for r in rows) == [f"c{n}" for n in range(6)]  # one row each
