"""The benchmarks' timed run of ``pytest --doceval`` in a project folder, as a user starts it.

One home for the command, the environment (this checkout first on the path), the failure
rule and the copy of the shipped project, used by the cold-pipeline, prefetch, embeddings,
warm-run and xdist benchmarks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("pyproject.toml", "conftest.py", "cases", "baselines")  # the shipped project


def copy_project(target: Path) -> None:
    """The shipped project (`SHIPPED`) copied into the folder `target`."""
    target.mkdir(parents=True, exist_ok=True)
    for name in SHIPPED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name)
        else:
            shutil.copy2(source, target / name)


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
