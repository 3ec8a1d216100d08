"""Baselines at scale: writing, updating and reading ``baselines/<suite>.json`` of N cases.

    python benchmarks/bench_baselines.py [--cases 100000] [--metrics 27]

Rows as a documents suite makes them (two systems, `--metrics` metrics each, a fingerprint and
a cache key), N cases, so 2 N entries. It times `update_baseline` writing the file new, then
again with the same numbers (what ``--doceval-update`` on an unchanged run does), then with one
case in a hundred moved; then, each in a fresh process, `load_baseline` (wall time and the RSS
it adds) and a test's lookup of its entry. The same file written in the indented layout (what
every baseline was before an entry a line: `INDENTED_ENTRIES` set past N), read the same way, is
the reference.

Issue 35's aim: a 100,000-case baseline that stays diff-friendly and loads fast.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_doceval.run import baseline_file
from pytest_doceval.run.baselines import update_baseline

SYSTEMS = ("clean", "noisy")

# Run in a fresh process: the RSS a loaded baseline adds, its load time and a lookup's.
_LOAD = """
import json, sys, time, psutil
from pathlib import Path
from pytest_doceval.run.baselines import load_baseline
process = psutil.Process()
before = process.memory_info().rss
started = time.perf_counter()
baseline = load_baseline(Path(sys.argv[1]), suite="suite")
load = time.perf_counter() - started
keys = list(baseline.entries)[:: max(1, len(baseline.entries) // 5000)]
started = time.perf_counter()
for key in keys:
    baseline.entry(key)
lookup = (time.perf_counter() - started) / len(keys)
added = (process.memory_info().rss - before) / 1e6
print(json.dumps({"load": load, "mb": added, "lookup": lookup}))
"""


def make_rows(cases: int, metrics: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    names = [f"metric_{n:02d}" for n in range(metrics)]
    return [
        {
            "case": f"folder{n // 1000:03d}/case-{n:06d}",
            "system": system,
            "metrics": {name: rng.random() for name in names},
            "fingerprint": {"system": system, "revision": 1},
            "cache_key": f"{rng.getrandbits(256):064x}",
        }
        for n in range(cases)
        for system in SYSTEMS
    ]


def timed(call: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def load_in_fresh_process(path: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _LOAD, str(path)], check=True, capture_output=True, text=True
    )
    return dict(json.loads(out.stdout))


def layout(label: str, path: Path, rows: list[dict[str, Any]], indented_up_to: int) -> None:
    baseline_file.INDENTED_ENTRIES = indented_up_to
    keys = {f"{r['case']}[{r['system']}]" for r in rows}

    def update(with_rows: list[dict[str, Any]]) -> int:
        return len(
            update_baseline(path, suite="suite", scoring_id="x", rows=with_rows, defined_keys=keys)
        )

    new, _ = timed(lambda: update(rows))
    size = path.stat().st_size / 1e6
    with path.open(encoding="utf-8") as lines:
        count = sum(1 for _ in lines)
    same, changes = timed(lambda: update(rows))
    assert changes == 0, changes
    moved = [
        dict(r, metrics={**r["metrics"], "metric_00": 0.5}) if n % 100 == 0 else r
        for n, r in enumerate(rows)
    ]
    some, changed = timed(lambda: update(moved))
    loaded = load_in_fresh_process(path)
    print(
        f"{label}: {size:,.0f} MB, {count:,} lines; write new {new:,.1f} s, update unchanged "
        f"{same:,.1f} s, update with {changed:,} entries moved {some:,.1f} s; load (fresh "
        f"process) {loaded['load']:,.2f} s, +{loaded['mb']:,.0f} MB RSS; a test's lookup "
        f"{loaded['lookup'] * 1e6:,.0f} us",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--metrics", type=int, default=27, help="metrics an entry records")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = make_rows(args.cases, args.metrics, args.seed)
    print(
        f"bench_baselines: {args.cases:,} cases x {len(SYSTEMS)} systems = {len(rows):,} "
        f"entries of {args.metrics} metrics",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-baselines-") as tmp:
        layout("an entry a line", Path(tmp, "lines.json"), rows, baseline_file.INDENTED_ENTRIES)
        layout("indented (reference)", Path(tmp, "indented.json"), rows, len(rows) + 1)


if __name__ == "__main__":
    main()
