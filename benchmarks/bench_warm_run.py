"""A warm run costs what changed: the shipped suites' main job, warm, against its floor.

    python benchmarks/bench_warm_run.py [--repeat 3] [--project DIR]

The shipped project (pyproject.toml, conftest.py, cases/, baselines/) is copied to a temporary
folder (or `--project` names one already copied, to reuse its store) and run cold once, which
fills its store with outputs and results. Then, `--repeat` times each, median wall seconds:

* warm: ``pytest --doceval`` plain and with ``-n 2`` (nothing changed: every result is read
  from the store, nothing is parsed, embedded or scored);
* reference: plain pytest running the same number of trivial tests (``assert True``) whose
  session then writes the report from the warm run's rows -- analyses recomputed from the
  rows, JSON and HTML written, as ``doceval merge`` does -- in the same process.

Target (issue 27, item 7): warm plain within the reference, and at least 3x faster than the
15.2 s the main job took warm before the score cache. Both sides run with Python's bytecode
cache on (``PYTHONDONTWRITEBYTECODE`` is dropped for them), as on a user's machine: without
it every run compiles the package and pytest rewrites its asserts again (seconds).
The machine's load (``os.getloadavg``) is printed: quote figures from a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from doceval_run import ROOT, copy_project, run_doceval

BEFORE = 15.2  # the main job warm before the score cache (issue 27, quiet machine)

REFERENCE_CONFTEST = '''
import json
from pathlib import Path

RUN_REPORT = Path({report!r})


def pytest_sessionfinish(session):
    """Write the report of the warm run from its rows, as a run writes its own."""
    from pytest_doceval.report.html import write_html
    from pytest_doceval.report.json_report import load_report, write_report
    from pytest_doceval.report.merge import merge_reports

    report = merge_reports([load_report(RUN_REPORT)], names=[str(RUN_REPORT)], root=Path({root!r}))
    write_report(report, Path("reference-report.json"))
    write_html(report, Path("reference-report.html"))
'''

REFERENCE_TESTS = """
import pytest


@pytest.mark.parametrize("i", range({n}))
def test_trivial(i):
    assert True
"""


def tests_in(output: str) -> int:
    """The number of tests a run reported (passed, failed, skipped, errors)."""
    last = output.strip().splitlines()[-1]
    return sum(int(n) for n in re.findall(r"(\d+) (?:passed|failed|skipped|errors?)", last))


def timed_reference(folder: Path, n: int, report: Path, project: Path) -> float:
    folder.mkdir(exist_ok=True)
    (folder / "conftest.py").write_text(
        REFERENCE_CONFTEST.format(report=str(report), root=str(project))
    )
    (folder / "test_trivial.py").write_text(REFERENCE_TESTS.format(n=n))
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    wall = time.perf_counter() - started
    if result.returncode != 0 or not (folder / "reference-report.html").is_file():
        print(result.stdout[-3000:], result.stderr[-3000:])
        raise SystemExit("the reference run failed")
    return wall


def median_of(repeat: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--project", type=Path, help="a copied project to reuse (kept)")
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    temp = Path(tempfile.mkdtemp(prefix="bench-warm-"))
    project = args.project or temp / "project"
    if not (project / "cases").is_dir():
        project.mkdir(parents=True, exist_ok=True)
        copy_project(project)
    try:
        # The shipped baselines may be older than the code: failed gates are fine here.
        cold, result = run_doceval(project, [], failed_tests_ok=True)
        n = tests_in(result.stdout)
        warm = median_of(args.repeat, lambda: run_doceval(project, [], failed_tests_ok=True)[0])
        warm_xdist = median_of(
            args.repeat, lambda: run_doceval(project, ["-n", "2"], failed_tests_ok=True)[0]
        )
        # The plain warm run's report is the one the reference writes again.
        run_doceval(project, [], failed_tests_ok=True)
        report = project / "doceval-report.json"
        reference = median_of(
            args.repeat, lambda: timed_reference(temp / "reference", n, report, project)
        )
    finally:
        if args.project is None:
            shutil.rmtree(temp, ignore_errors=True)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"shipped suites, {n} tests; load average {load}; {os.cpu_count()} cores")
    print(f"first run (cold, or warm if --project was warm): {cold:6.2f} s")
    print(f"warm, plain:                                     {warm:6.2f} s")
    print(f"warm, -n 2:                                      {warm_xdist:6.2f} s")
    print(f"reference ({n} trivial tests + the report):      {reference:6.2f} s")
    print(f"warm plain / reference: {warm / reference:5.2f}  (target <= 1.00)")
    print(f"warm -n 2 / warm plain: {warm_xdist / warm:5.2f}")
    print(f"{BEFORE} s before / warm plain: {BEFORE / warm:5.2f}x  (target >= 3x)")


if __name__ == "__main__":
    main()
