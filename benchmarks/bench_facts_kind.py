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
        [--systems 1]

Target: the 10,000 facts scored within 30 s on 2 cores.

With ``--systems N`` the suite has N precomputed systems: the first holds the pages above, each
other one the same pages with its own seeded OCR noise, so every fact is checked N times (one
test per fact and system). Issue 16's scale, olmOCR-bench's size x 10 systems:

    python benchmarks/bench_facts_kind.py --pages 700 --facts 7000 --systems 10 --workers 0 2

Target: 70,000 facts within 90 s and 2 GB peak memory on 2 cores. Every run prints its wall
time, CPU time (user + system of the process tree) and peak RSS of the pytest process tree
(the sum over pytest and its xdist workers, sampled every 50 ms).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_facts import make_facts, make_page, ocr_noise

FILES = ["arxiv_math", "headers_footers", "long_tiny_text", "multi_column", "old_scans", "tables"]


def system_names(systems: int) -> list[str]:
    return ["saved", *(f"saved{i}" for i in range(1, systems))]


def write_suite(root: Path, pages: int, facts: int, seed: int, systems: int = 1) -> None:
    rng = random.Random(seed)
    suite = root / "cases" / "bench"
    names = system_names(systems)
    for name in names:
        (suite / name).mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.doceval]\nsuites = ['cases']\n")
    (suite / "suite.toml").write_text(f'[suite]\nkind = "facts"\nsystems = {json.dumps(names)}\n')
    infos = []
    for index in range(pages):
        text, info = make_page(rng, index)
        for number, name in enumerate(names):
            page = text if number == 0 else ocr_noise(rng, text, rng.randint(0, 30))
            (suite / name / f"doc{index}_pg1_repeat1.md").write_text(page, encoding="utf-8")
        infos.append(info)
    by_file: dict[str, list[str]] = {name: [] for name in [*FILES, "baselines"]}
    for fact in make_facts(rng, infos, facts):
        name = "baselines" if fact["type"] == "baseline" else rng.choice(FILES)
        by_file[name].append(json.dumps(fact))
    for name, lines in by_file.items():
        (suite / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(root: Path, *args: str) -> tuple[float, str]:
    """Wall seconds and the last line of one run; prints CPU time and peak RSS beside."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = psutil.Popen(
            [sys.executable, "-m", "pytest", "--doceval", "-q", "-p", "no:cacheprovider", *args],
            cwd=root,
            stdout=out,
            stderr=err,
            text=True,
        )
        peak = 0
        each: dict[int, int] = {}  # peak RSS of each process of the tree
        while proc.poll() is None:
            peak = max(peak, tree_rss(proc, each))
            time.sleep(0.05)
        elapsed = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    # ru_maxrss of the children: the largest single process, a floor when sampling missed it.
    peak = max(peak, after.ru_maxrss * 1024)
    tail = stdout.strip().splitlines()[-1] if stdout.strip() else stderr[-500:]
    main_peak = each.pop(proc.pid, 0)
    workers = " + ".join(f"{rss / 2**20:,.0f}" for rss in each.values() if rss > 50 * 2**20)
    return elapsed, (
        f"{tail}] [CPU {cpu:.1f} s, peak RSS {peak / 2**20:,.0f} MB (pytest "
        f"{main_peak / 2**20:,.0f} MB{f', workers {workers} MB' if workers else ''})"
    )


def tree_rss(proc: psutil.Process, each: dict[int, int]) -> int:
    """Resident memory of a process and all its descendants (pytest and its xdist workers);
    `each` keeps each process's peak."""
    total = 0
    try:
        family = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    for member in family:
        try:
            rss = member.memory_info().rss
        except psutil.Error:
            continue
        total += rss
        each[member.pid] = max(each.get(member.pid, 0), rss)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--systems", type=int, default=1, help="precomputed systems")
    parser.add_argument(
        "--target-only",
        action="store_true",
        help="only record baselines and time `pytest --doceval -q -p no:cacheprovider` "
        "(HTML on) per --workers: issue 16's 70,000-fact measurement",
    )
    options = parser.parse_args()
    label = f"{options.facts:,} facts, {options.pages:,} pages, {options.systems} system(s)"
    no_html = ["--doceval-html", ""]
    with tempfile.TemporaryDirectory(prefix="bench-facts-kind-") as tmp:
        small, big = Path(tmp, "small"), Path(tmp, "big")
        write_suite(small, 1, 2, options.seed)
        write_suite(big, options.pages, options.facts, options.seed, options.systems)
        startup, _ = run(small, *no_html)
        print(f"start-up (a 2-fact suite): {startup:.1f} s")
        if options.target_only:
            elapsed, tail = run(big, "--doceval-update", *no_html)
            print(f"{label} (--doceval-update): {elapsed:.1f} s  [{tail}]")
            for workers in options.workers:
                extra = ["-n", str(workers)] if workers else []
                elapsed, tail = run(big, *extra)
                mode = f"-n {workers}" if workers else "plain"
                print(f"{label} (with baselines, {mode}, HTML on): {elapsed:.1f} s  [{tail}]")
            return
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
