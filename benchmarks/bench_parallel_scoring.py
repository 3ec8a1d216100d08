"""A scoring-bound suite on every core: plain, pinned to one core, and ``-n 2``.

    python benchmarks/bench_parallel_scoring.py [--cases 200] [--rows 20] [--cols 8] [--repeat 3]

The suite: `--cases` precomputed ``documents`` cases whose truth and output each hold a
`--rows` x `--cols` markdown table (the output's cells edited here and there), so a test's
work is its scoring (TEDS of a large table: tens of milliseconds), not reading its output.
Stored scores are off (``--doceval-cache=off``): every run scores every case.

Targets (issue 33): plain on this machine's cores <= 0.6 x the same run pinned to one core
(``taskset -c 0``: the score stages then run where the tests run, as before scores were
stages); ``-n 2`` <= 1.05 x plain. Fastest of `--repeat` runs each, interleaved; the machine's
load is printed (compare within one run only).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def table(rows: int, cols: int, rng: random.Random, edits: float) -> str:
    header = "| " + " | ".join(f"h{c}" for c in range(cols)) + " |"
    rule = "|" + "---|" * cols
    lines = [header, rule]
    for r in range(rows):
        cells = []
        for c in range(cols):
            cell = f"{r * cols + c:05d} {rng.choice(['tide', 'basin', 'pump', 'flow'])}"
            if rng.random() < edits:
                cell = cell[::-1]
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_project(folder: Path, cases: int, rows: int, cols: int) -> None:
    rng = random.Random(33)
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text('[tool.doceval]\nsuites = ["cases"]\n')
    suite = folder / "cases" / "wide-tables"
    suite.mkdir(parents=True)
    (suite / "suite.toml").write_text('[suite]\nkind = "documents"\nsystems = ["saved"]\n')
    for n in range(cases):
        case = suite / f"t{n:04d}"
        (case / "outputs").mkdir(parents=True)
        seed = rng.random()
        truth = f"# Table {n}\n\nMeasured flows.\n\n" + table(rows, cols, random.Random(seed), 0)
        output = f"# Table {n}\n\nMeasured flows.\n\n" + table(rows, cols, random.Random(seed), 0.1)
        (case / "truth.md").write_text(truth + "\n")
        (case / "outputs" / "saved.md").write_text(output + "\n")


def timed(project: Path, options: list[str], prefix: tuple[str, ...] = ()) -> float:
    command = [*prefix, sys.executable, "-m", "pytest", "--doceval", "-q", "-p", "no:cacheprovider"]
    command += ["--doceval-cache=off", "--doceval-html=", *options]
    started = time.perf_counter()
    result = subprocess.run(
        command,
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    wall = time.perf_counter() - started
    if result.returncode not in (0, 1):  # no baselines: gates may fail, the run must finish
        print(result.stdout[-3000:], result.stderr[-3000:])
        raise SystemExit(f"pytest failed with exit code {result.returncode}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--rows", type=int, default=20)
    parser.add_argument("--cols", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("taskset") is None:
        raise SystemExit("needs taskset (util-linux)")
    temp = Path(tempfile.mkdtemp(prefix="doceval-bench-scoring-"))
    try:
        project = temp / "project"
        write_project(project, args.cases, args.rows, args.cols)
        runs: dict[str, list[float]] = {"plain": [], "one core": [], "-n 2": []}
        for _ in range(args.repeat):
            runs["plain"].append(timed(project, []))
            runs["one core"].append(timed(project, [], ("taskset", "-c", "0")))
            runs["-n 2"].append(timed(project, ["-n", "2"]))
        best = {name: min(times) for name, times in runs.items()}
        print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
        print(
            f"{args.cases} precomputed cases, a {args.rows}x{args.cols} table each, "
            f"scores not stored (fastest of {args.repeat})"
        )
        for name, times in runs.items():
            shown = "/".join(f"{t:.1f}" for t in times)
            print(f"  {name:9} {best[name]:7.2f} s   (runs {shown})")
        print(f"plain / one core:  {best['plain'] / best['one core']:.2f}  (target <= 0.60)")
        print(f"-n 2 / plain:      {best['-n 2'] / best['plain']:.2f}  (target <= 1.05)")
    finally:
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
