"""Plain against ``-n 2``, cold and warm: the shipped suites and a 1,000-case precomputed suite.

    python benchmarks/bench_xdist_warm.py [--repeat 3] [--cases 1000] [--only shipped|precomputed]

Each project is a temporary copy (the shipped project's pyproject.toml, conftest.py, cases/ and
baselines/; the precomputed suite of `bench_plugin_overhead.write_suite`). Every run names its
store (``--doceval-cache-dir``): a cold run gets an empty one, a warm run the one its cold run
filled, so plain and ``-n 2`` are warm on the same stored outputs and results. Median wall
seconds of `--repeat` warm runs, one cold run each; plain and ``-n 2`` interleaved.

Target (issue 27, item 3): warm ``-n 2`` costs no more than warm plain + one worker's start-up,
where a worker's start-up is what ``-n 1`` adds to a plain run of a one-case suite (xdist starts
the worker, which imports pytest, the plugin and its kind, and builds its session; the two
workers of ``-n 2`` start side by side on two cores). Bytecode cache on, as on a user's
machine. The machine's load is printed: quote figures from a quiet machine, and compare within
one run only.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench_plugin_overhead import write_suite
from doceval_run import copy_project, run_doceval

XDIST = ["-n", "2"]


def timed(project: Path, store: Path, workers: list[str]) -> float:
    # The shipped baselines may be older than the code: failed gates are fine here.
    options = [f"--doceval-cache-dir={store}", "--doceval-html=", *workers]
    return run_doceval(project, options, failed_tests_ok=True)[0]


def median_of(repeat: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(repeat))


def worker_start_up(temp: Path, repeat: int) -> tuple[float, float, float]:
    """(plain, -n 1, what -n 1 adds) on a one-case suite, warm: one worker's start-up."""
    project = temp / "one-case"
    write_suite(project, 1, 2000, random.Random(1))
    store = temp / "one-case-store"
    timed(project, store, [])  # fills the store and the bytecode cache
    timed(project, store, ["-n", "1"])
    plain, single = [], []
    for _ in range(repeat):
        plain.append(timed(project, store, []))
        single.append(timed(project, store, ["-n", "1"]))
    # The fastest: the least disturbed by other load on the machine.
    return min(plain), min(single), min(single) - min(plain)


def measure(name: str, project: Path, temp: Path, repeat: int, start_up: float) -> None:
    stores = {"plain": temp / f"{name}-store-plain", "-n 2": temp / f"{name}-store-xdist"}
    cold = {
        "plain": timed(project, stores["plain"], []),
        "-n 2": timed(project, stores["-n 2"], XDIST),
    }
    warm_runs: dict[str, list[float]] = {"plain": [], "-n 2": []}
    for _ in range(repeat):
        warm_runs["plain"].append(timed(project, stores["plain"], []))
        warm_runs["-n 2"].append(timed(project, stores["-n 2"], XDIST))
    warm = {label: statistics.median(runs) for label, runs in warm_runs.items()}
    target = warm["plain"] + start_up
    print(f"{name}:")
    print(f"  cold  plain {cold['plain']:7.2f} s   -n 2 {cold['-n 2']:7.2f} s")
    print(
        f"  warm  plain {warm['plain']:7.2f} s   -n 2 {warm['-n 2']:7.2f} s   "
        f"(median of {repeat}; runs plain {fmt(warm_runs['plain'])}, -n 2 {fmt(warm_runs['-n 2'])})"
    )
    print(
        f"  warm -n 2 / (warm plain + one worker's start-up {start_up:.2f} s) = "
        f"{warm['-n 2'] / target:.2f}  (target <= 1.00)"
    )


def fmt(runs: list[float]) -> str:
    return "/".join(f"{r:.1f}" for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--only", choices=("shipped", "precomputed"))
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    temp = Path(tempfile.mkdtemp(prefix="bench-xdist-"))
    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"load average {load} at the start; {os.cpu_count()} cores")
        plain, single, start_up = worker_start_up(temp, args.repeat)
        print(
            f"one worker's start-up: one-case suite, -n 1 {single:.2f} s against plain "
            f"{plain:.2f} s: {start_up:.2f} s (fastest of {args.repeat})"
        )
        if args.only in (None, "precomputed"):
            project = temp / "precomputed"
            write_suite(project, args.cases, 2000, random.Random(0))
            measure(f"{args.cases} precomputed cases", project, temp, args.repeat, start_up)
        if args.only in (None, "shipped"):
            project = temp / "shipped"
            copy_project(project)
            measure("shipped suites", project, temp, args.repeat, start_up)
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"load average {load} at the end")
    finally:
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
