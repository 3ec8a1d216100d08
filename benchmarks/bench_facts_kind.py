"""The facts kind end to end: 10,000 olmOCR-bench facts over 1,000 page outputs, under
``pytest --doceval``, as a user runs it.

Builds a facts suite in a temporary folder from `bench_facts`'s seeded generator (1,000 markdown
pages of ~3,000 characters with tables and math, 10,000 facts in olmOCR-bench's mix, spread over
seven fact files) with one precomputed system holding ``doc<N>_pg1_repeat1.md``, then times
``pytest --doceval`` in a subprocess (start-up, collection, 10,000 tests, report and analysis):
a first run without baselines (failing facts fail), ``--doceval-update``, then runs with the
baselines (failing facts are known failures), plain and with ``-n 2``, with and without the HTML
report. The start-up of the same command on a two-fact suite is printed beside it.

    python benchmarks/bench_facts_kind.py [--pages 1000] [--facts 10000] [--workers 0 2]

Target: the 10,000 facts scored within 30 s on 2 cores.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_facts import make_facts, make_page

FILES = ["arxiv_math", "headers_footers", "long_tiny_text", "multi_column", "old_scans", "tables"]


def write_suite(root: Path, pages: int, facts: int, seed: int) -> None:
    rng = random.Random(seed)
    suite = root / "cases" / "bench"
    (suite / "saved").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.doceval]\nsuites = ['cases']\n")
    (suite / "suite.toml").write_text('[suite]\nkind = "facts"\nsystems = ["saved"]\n')
    infos = []
    for index in range(pages):
        text, info = make_page(rng, index)
        (suite / "saved" / f"doc{index}_pg1_repeat1.md").write_text(text, encoding="utf-8")
        infos.append(info)
    by_file: dict[str, list[str]] = {name: [] for name in [*FILES, "baselines"]}
    for fact in make_facts(rng, infos, facts):
        name = "baselines" if fact["type"] == "baseline" else rng.choice(FILES)
        by_file[name].append(json.dumps(fact))
    for name, lines in by_file.items():
        (suite / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(root: Path, *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--doceval", "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
    return elapsed, tail


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    options = parser.parse_args()
    label = f"{options.facts:,} facts, {options.pages:,} pages"
    no_html = ["--doceval-html", ""]
    with tempfile.TemporaryDirectory(prefix="bench-facts-kind-") as tmp:
        small, big = Path(tmp, "small"), Path(tmp, "big")
        write_suite(small, 1, 2, options.seed)
        write_suite(big, options.pages, options.facts, options.seed)
        startup, _ = run(small, *no_html)
        print(f"start-up (a 2-fact suite): {startup:.1f} s")
        # Without baselines every failing fact fails its test, and pytest's own report of
        # failures costs time per failure; with baselines they are known failures and pass.
        for title, args in [
            ("first run, no baseline", no_html),
            ("--doceval-update", ["--doceval-update", *no_html]),
        ]:
            elapsed, tail = run(big, *args)
            print(f"{label} ({title}): {elapsed:.1f} s  [{tail}]")
        for workers in options.workers:
            for html in (False, True):
                extra = (["-n", str(workers)] if workers else []) + ([] if html else no_html)
                mode = (
                    f"-n {workers}" if workers else "plain"
                ) + f", HTML {'on' if html else 'off'}"
                elapsed, tail = run(big, *extra)
                print(f"{label} (with baselines, {mode}): {elapsed:.1f} s  [{tail}]")


if __name__ == "__main__":
    main()
