"""The benchmarks' timed run of ``pytest --doceval`` in a project folder, as a user starts it.

One home for the command, the environment (this checkout first on the path) and the failure
rule, used by the cold-pipeline, prefetch and embeddings benchmarks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_doceval(
    project: Path, workers: list[str], *, failed_tests_ok: bool = False
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall seconds and the finished process of ``pytest --doceval -q`` in `project`. Exits
    the benchmark when pytest does not finish its run (a usage error, a crash) or, unless
    `failed_tests_ok`, when a test failed."""
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--doceval", "-q", "-p", "no:cacheprovider", *workers],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    wall = time.perf_counter() - started
    allowed = (0, 1) if failed_tests_ok else (0,)
    last = result.stdout.splitlines()[-1] if result.stdout else ""
    if result.returncode not in allowed or " error" in last:
        print(result.stdout[-3000:], result.stderr[-3000:])
        raise SystemExit(f"pytest failed with exit code {result.returncode}")
    return wall, result
