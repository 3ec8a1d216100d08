"""Plugin overhead per case: a suite of precomputed-output cases run through `pytest --doceval`,
its wall time per case minus the time the metrics themselves take.

    python benchmarks/bench_plugin_overhead.py [--cases 1000] [--chars 2000] [--workers 0]

Builds the suite in a temporary folder (truth + one precomputed output per case, ~`--chars`
characters each), runs `pytest --doceval` on it in a subprocess (so start-up is counted once, as
a user pays it), then times `score_document` alone on the same pairs in-process. Overhead per
case = (run time - start-up - metric time) / cases, where start-up is the time of the same
command on a one-case suite. Prints all parts.
"""

from __future__ import annotations

import argparse
import random
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_doceval.suites.documents import score_document


def write_suite(root: Path, cases: int, chars: int, rng: random.Random) -> list[tuple[str, str]]:
    suite = root / "cases" / "bench"
    suite.mkdir(parents=True)
    (suite / "suite.toml").write_text(
        '[suite]\nkind = "documents"\nsystems = ["saved"]\n', encoding="utf-8"
    )
    (root / "pyproject.toml").write_text("[tool.doceval]\nsuites = ['cases']\n")
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(500)]
    pairs = []
    for i in range(cases):
        body = " ".join(rng.choice(words) for _ in range(chars // 6))
        truth = f"# Case {i}\n\n{body}\n\n- first item\n- second item\n"
        output = truth.replace("e", "c", 3).replace("# ", "", 1)
        folder = suite / f"case{i:05d}"
        (folder / "outputs").mkdir(parents=True)
        (folder / "truth.md").write_text(truth, encoding="utf-8")
        (folder / "outputs" / "saved.md").write_text(output, encoding="utf-8")
        pairs.append((truth, output))
    return pairs


def run(root: Path, workers: int) -> float:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "--doceval",
        "-q",
        "-p",
        "no:cacheprovider",
        "--doceval-html=",
        "--doceval-update",
    ]
    if workers:
        cmd += ["-n", str(workers)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
        raise SystemExit("benchmark run failed")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--chars", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=0, help="pytest-xdist workers (0: none)")
    args = parser.parse_args()
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as big, tempfile.TemporaryDirectory() as small:
        pairs = write_suite(Path(big), args.cases, args.chars, rng)
        write_suite(Path(small), 1, args.chars, rng)
        startup = run(Path(small), args.workers)
        total = run(Path(big), args.workers)
        start = time.perf_counter()
        for truth, output in pairs:
            score_document(truth, output, language="en", normalization="fair-v1")
        metric = time.perf_counter() - start
    n = args.cases
    overhead = (total - startup - metric) / n
    print(f"{n} precomputed cases of ~{args.chars} characters, workers={args.workers}")
    print(f"  pytest --doceval wall time      {total:8.2f} s  ({total / n * 1e3:.2f} ms/case)")
    print(f"  start-up (one-case suite)       {startup:8.2f} s")
    print(f"  metrics alone (score_document)  {metric:8.2f} s  ({metric / n * 1e3:.2f} ms/case)")
    print(
        f"  plugin overhead per case        {overhead * 1e3:8.2f} ms  "
        f"(wall - start-up - metrics) / cases"
    )


if __name__ == "__main__":
    main()
