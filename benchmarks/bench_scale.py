"""doceval at scale: N generated precomputed cases, run plain, as 4 shards merged, -n 2, on Dask.

    python benchmarks/bench_scale.py --cases N [--kinds documents facts] [--reference 1000]
        [--modes plain shards xdist dask] [--keep DIR] [--screenshot PNG]

Builds, in a temporary folder, a `documents` suite of N cases (a short truth each, ~`--chars`
characters, and two precomputed systems: ``clean`` with a few substitutions and ``noisy`` with
OCR-like edits and a dropped heading) and a `facts` variant (N facts over N / 10 pages, two
precomputed systems as `bench_facts_kind` writes them; both in `scale_suites`), so each kind runs
2 N tests. Every run is cold (a fresh store, no baselines, no report left over) and runs
``pytest --doceval -q`` in a subprocess as a user starts it. Per kind it prints:

* start-up: the same command on a one-case suite (the fastest of three);
* the reference: the same suite at ``--reference`` cases (default 1,000), run plain;
* plain: wall time, tests/s, peak RSS of the controller (and of pytest itself running as many
  tests that do nothing), report sizes (JSON; the HTML's first
  page and its data files), the HTML in headless Chromium (time to interactive, measured in the
  page, and the time to open a case's row), and doceval's cost per case at N against the
  reference: (wall - start-up) / tests; for documents also less the kind's metrics, timed
  in-process on a sample of the cases as `bench_plugin_overhead` times them;
* shards: the N cases as 4 shards (``--doceval-shard K/4``, one after another), then
  ``doceval merge`` timed with its peak RSS, and whether the merged numbers equal the plain
  run's (aggregates, deltas, gates, the kind's analyses);
* xdist: ``-n 2``: wall time and the peak RSS of the controller and of each worker;
* dask: the run carried by a Dask ``LocalCluster`` of 2 worker processes of one thread each,
  started in a process of its own (`dask_cluster`) before the run and closed after it, with
  ``--doceval-executor=dask:ADDRESS``: wall time; CPU time of pytest's processes and of the
  cluster's members during the run (every score runs on the cluster, so its workers' CPU time
  grows: the line says by how much, and how many doceval stages the workers ran -- none fails the
  benchmark); the cluster's start-up; the peak RSS of the controller (pytest), the scheduler and
  each worker; and whether its numbers equal the plain run's. Without ``distributed`` the mode
  says it is skipped (``pip install 'pytest-doceval[dask]'``);
* compare: ``doceval compare`` of the plain report against the merged one (two N-case reports).

Peak RSS is sampled every 50 ms over the process tree with psutil: the controller is the pytest
process, each xdist worker a child of it (its own process pool, if any, is counted apart); the
Dask cluster's scheduler and workers are sampled alongside.
``--screenshot`` saves the HTML as headless Chromium draws it (1400 x 2400 px) after opening
the first failing case's row.

Targets (issue 35, at N = 100,000 on 2 cores): the plain run completes with doceval's cost per
case within 1.2 x its cost at 1,000; controller peak RSS <= 2 GB; the HTML's first page <= 10 MB
and interactive in <= 2 s; a case's row opens in <= 1 s; merge of the 4 shards <= 60 s and
<= 2 GB; compare of two 100,000-case reports <= 30 s.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_plugin_overhead import score_metrics
from browser import Browser
from dask_cluster import WORKERS as DASK_WORKERS
from dask_cluster import Cluster
from scale_suites import write_suite

from pytest_doceval.report.html import data_folder
from pytest_doceval.report.json_report import load_report

SHARDS = 4
SAMPLE_EVERY = 0.05  # seconds between RSS samples
TARGETS = {"cost": 1.2, "rss_mb": 2048, "page_mb": 10, "ready_s": 2, "open_s": 1}
TARGETS |= {"merge_s": 60, "compare_s": 30}


# --------------------------------------------------------------------------- one command


@dataclass
class Measured:
    """One command's wall and CPU seconds, peak RSS of its processes, and its output."""

    wall: float
    cpu: float
    controller_mb: float
    workers_mb: list[float] = field(default_factory=list)
    pool_mb: list[float] = field(default_factory=list)
    tail: str = ""
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average before and after


def measure(
    command: list[str],
    cwd: Path,
    *,
    workers: bool = False,
    during: Callable[[], None] | None = None,
) -> Measured:
    """Run `command` in `cwd`, sampling the RSS of its process tree every `SAMPLE_EVERY`:
    the process itself (the controller), its direct children (xdist workers when `workers`,
    else its process pool) and their children (the workers' pools). `during` is called at
    each sample too (to sample processes outside the tree: a Dask cluster's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = psutil.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, text=True)
        peaks: dict[int, int] = {}
        depth: dict[int, int] = {}
        while proc.poll() is None:
            _sample(proc, peaks, depth)
            if during is not None:
                during()
            time.sleep(SAMPLE_EVERY)
        wall = time.perf_counter() - started
        out.seek(0)
        text = out.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if proc.returncode not in (0, 1):
        print(text[-4000:])
        raise SystemExit(f"{' '.join(command[:4])} ... failed with exit code {proc.returncode}")
    mb = {pid: rss / 2**20 for pid, rss in peaks.items()}
    children = [mb[p] for p, d in depth.items() if d == 1 and mb[p] > 30]
    deeper = [mb[p] for p, d in depth.items() if d > 1 and mb[p] > 30]
    return Measured(
        wall=wall,
        cpu=cpu,
        controller_mb=mb.get(proc.pid, 0.0),
        workers_mb=children if workers else [],
        pool_mb=deeper if workers else children + deeper,
        tail=text.strip().splitlines()[-1] if text.strip() else "",
        load=(load, os.getloadavg()[0]),
    )


def _sample(proc: psutil.Process, peaks: dict[int, int], depth: dict[int, int]) -> None:
    try:
        family = [(proc, 0)]
        for child in proc.children():
            family.append((child, 1))
            family += [(grandchild, 2) for grandchild in child.children(recursive=True)]
    except psutil.Error:
        return
    for member, level in family:
        try:
            rss = member.memory_info().rss
        except psutil.Error:
            continue
        peaks[member.pid] = max(peaks.get(member.pid, 0), rss)
        depth.setdefault(member.pid, level)


def pytest_command(*options: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "--doceval", "-q", "-p", "no:cacheprovider", *options]


def doceval_command(*arguments: str) -> list[str]:
    """The ``doceval`` command of this Python."""
    run = "from pytest_doceval.cli import main; raise SystemExit(main())"
    return [sys.executable, "-c", run, *arguments]


def fresh(project: Path) -> None:
    """Cold: no store, no baselines, no reports of an earlier run."""
    for name in (".doceval-cache", "baselines", "reports"):
        shutil.rmtree(project / name, ignore_errors=True)
    for leftover in project.glob("doceval-report*"):
        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()


def run_pytest(
    project: Path,
    *options: str,
    workers: bool = False,
    during: Callable[[], None] | None = None,
) -> Measured:
    fresh(project)
    return measure(pytest_command(*options), project, workers=workers, during=during)


# --------------------------------------------------------------------------- the modes


@dataclass
class Scale:
    """What one kind's runs measured, for the closing lines."""

    kind: str
    tests: int
    reference_tests: int
    startup: Measured  # a one-case suite: what every run pays once
    reference: Measured
    lines: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        print(line, flush=True)
        self.lines.append(line)


def cost_line(scale: Scale, label: str, run: Measured, metric_per_test: float | None) -> None:
    """Doceval's cost per test at N against the reference's, from wall time and from CPU time
    (user + system of the process tree, which other load on the machine disturbs less), each
    less the start-up's."""
    start, ref_run = scale.startup, scale.reference
    per = (run.wall - start.wall) / scale.tests
    ref = (ref_run.wall - start.wall) / scale.reference_tests
    cpu = (run.cpu - start.cpu) / scale.tests
    ref_cpu = (ref_run.cpu - start.cpu) / scale.reference_tests
    verdict = "OK" if min(per / ref, cpu / ref_cpu) <= TARGETS["cost"] else "OVER"
    scale.say(
        f"  {label}: cost per test, less the start-up: wall {per * 1e3:.2f} ms = "
        f"{per / ref:.2f} x {ref * 1e3:.2f} ms at {scale.reference_tests:,} tests; CPU "
        f"{cpu * 1e3:.2f} ms = {cpu / ref_cpu:.2f} x {ref_cpu * 1e3:.2f} ms "
        f"(target <= {TARGETS['cost']} x: {verdict})"
    )
    if metric_per_test is not None:
        own, ref_own = cpu - metric_per_test, ref_cpu - metric_per_test
        scale.say(
            f"  {label}: CPU less the kind's metrics ({metric_per_test * 1e3:.2f} ms a test, "
            f"timed in-process): {own * 1e3:.2f} ms = {own / ref_own:.2f} x {ref_own * 1e3:.2f} ms"
        )


def rss_line(run: Measured) -> str:
    workers = ", ".join(f"{mb:,.0f}" for mb in run.workers_mb)
    pool = ", ".join(f"{mb:,.0f}" for mb in run.pool_mb)
    verdict = "OK" if run.controller_mb <= TARGETS["rss_mb"] else "OVER"
    return (
        f"peak RSS controller {run.controller_mb:,.0f} MB (target <= 2 GB: {verdict})"
        + (f", xdist workers {workers} MB" if workers else "")
        + (f", process pools {pool} MB" if pool else "")
    )


def run_plain(scale: Scale, project: Path, browser: Browser | None, keep: Path) -> Path:
    run = run_pytest(project)
    scale.say(
        f"plain: {run.wall:,.1f} s, {scale.tests / run.wall:,.0f} tests/s, CPU {run.cpu:,.1f} s "
        f"(load {run.load[0]:.1f} -> {run.load[1]:.1f}) [{run.tail}]"
    )
    cost_line(scale, "plain", run, scale_metric(scale))
    scale.say(f"  {rss_line(run)}")
    alone = pytest_alone(scale.tests, project.parent / f"{scale.kind}-pytest-alone")
    scale.say(
        f"  pytest itself, {scale.tests:,} parametrized tests that do nothing: {alone.wall:,.1f} s,"
        f" peak RSS {alone.controller_mb:,.0f} MB (doceval's run: "
        f"+{run.controller_mb - alone.controller_mb:,.0f} MB)"
    )
    report = keep / f"{scale.kind}-plain.json"
    shutil.copy(project / "doceval-report.json", report)
    html_lines(scale, project / "doceval-report.html", browser, keep)
    return report


def pytest_alone(tests: int, folder: Path) -> Measured:
    """pytest without doceval, `tests` tests that do nothing: what pytest itself keeps of that
    many tests (each item and its three reports, to the end of the run)."""
    folder.mkdir(exist_ok=True)
    (folder / "test_many.py").write_text(
        "import pytest\n\n\n"
        f"@pytest.mark.parametrize('number', range({tests}))\n"
        "def test_nothing(number):\n    pass\n"
    )
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:doceval"]
    return measure([*command, "test_many.py"], folder)


def run_shards(scale: Scale, project: Path, keep: Path, plain: Path | None) -> Path:
    fresh(project)
    walls = []
    for k in range(1, SHARDS + 1):
        out = keep / f"{scale.kind}-shard{k}.json"
        run = measure(
            pytest_command(
                f"--doceval-shard={k}/{SHARDS}", f"--doceval-json={out}", "--doceval-html="
            ),
            project,
        )
        walls.append(run.wall)
    merged = keep / f"{scale.kind}-merged.json"
    shards = [str(keep / f"{scale.kind}-shard{k}.json") for k in range(1, SHARDS + 1)]
    merge = measure(doceval_command("merge", *shards, "-o", str(merged)), project)
    scale.say(
        f"{SHARDS} shards, one after another: {', '.join(f'{w:,.1f}' for w in walls)} s "
        f"(sum {sum(walls):,.1f} s)"
    )
    ok = "OK" if merge.wall <= TARGETS["merge_s"] and merge.controller_mb <= 2048 else "OVER"
    equal = equal_to_plain(scale, "merged", plain, merged)
    scale.say(
        f"  doceval merge: {merge.wall:,.1f} s, peak RSS {merge.controller_mb:,.0f} MB "
        f"(targets <= 60 s, <= 2 GB: {ok}){'; ' + equal if equal else ''}"
    )
    return merged


def run_xdist(scale: Scale, project: Path) -> None:
    run = run_pytest(project, "-n", "2", "--doceval-html=", workers=True)
    scale.say(
        f"-n 2: {run.wall:,.1f} s, {scale.tests / run.wall:,.0f} tests/s, CPU {run.cpu:,.1f} s "
        f"(load {run.load[0]:.1f} -> {run.load[1]:.1f}) [{run.tail}]"
    )
    cost_line(scale, "-n 2", run, None)
    scale.say(f"  {rss_line(run)}")


def run_dask(scale: Scale, project: Path, keep: Path, plain: Path | None) -> None:
    """The run on a Dask LocalCluster of its own (`dask_cluster`), started before the run and
    closed after it; its CPU time counted from its members' CPU times before and after."""
    if importlib.util.find_spec("distributed") is None:
        scale.say("dask: skipped, Dask is not installed: pip install 'pytest-doceval[dask]'")
        return
    cluster = Cluster.start()
    try:
        before = cluster.cpu()
        executor = f"--doceval-executor=dask:{cluster.address}"
        run = run_pytest(project, "--doceval-html=", executor, during=cluster.sample)
        used = {role: seconds - before[role] for role, seconds in cluster.cpu().items()}
    finally:
        stages = cluster.stop()
    if not stages:  # the scores went elsewhere: the mode would measure something else
        FAILED.append(f"{scale.kind}, dask: {stages} doceval stages ran on the cluster")
    pytest_cpu = run.cpu
    run = dataclasses.replace(run, cpu=run.cpu + sum(used.values()))
    label = f"dask ({DASK_WORKERS} workers x 1 thread)"
    on_workers = ", ".join(
        f"{seconds:,.1f}" for role, seconds in used.items() if role != "scheduler"
    )
    scale.say(
        f"{label}: {run.wall:,.1f} s, {scale.tests / run.wall:,.0f} tests/s, CPU {run.cpu:,.1f} s "
        f"= pytest {pytest_cpu:,.1f} s + scheduler {used['scheduler']:,.1f} s + workers "
        f"{on_workers} s (load {run.load[0]:.1f} -> {run.load[1]:.1f}) [{run.tail}]"
    )
    scale.say(
        f"  cluster: started in {cluster.started_in:.1f} s; its workers ran {stages} doceval "
        f"stages (a Dask task each)"
    )
    cost_line(scale, "dask", run, None)
    peaks = cluster.peaks_mb()
    on_workers = ", ".join(f"{mb:,.0f}" for role, mb in peaks.items() if role != "scheduler")
    scale.say(
        f"  {rss_line(run)}, scheduler {peaks.get('scheduler', 0.0):,.0f} MB, "
        f"dask workers {on_workers} MB"
    )
    report = keep / f"{scale.kind}-dask.json"
    shutil.copy(project / "doceval-report.json", report)
    equal = equal_to_plain(scale, "the dask run's", plain, report)
    if equal:
        scale.say(f"  {equal}")


MODES = ("plain", "shards", "xdist", "dask")


def run_compare(scale: Scale, old: Path, new: Path) -> None:
    compare = measure(doceval_command("compare", str(old), str(new)), old.parent)
    verdict = "OK" if compare.wall <= TARGETS["compare_s"] else "OVER"
    scale.say(
        f"doceval compare of two {scale.tests:,}-test reports: {compare.wall:,.1f} s, peak RSS "
        f"{compare.controller_mb:,.0f} MB (target <= 30 s: {verdict})"
    )


# Runs (merged shards, dask) that did not give the plain run's numbers, and a dask run whose
# stages did not run on the cluster: the benchmark fails (CI runs it).
FAILED: list[str] = []


def equal_to_plain(scale: Scale, what: str, plain: Path | None, report: Path) -> str:
    """Whether `report` (`what`: "merged", "the dask run's") holds the plain run's numbers, as
    a line's phrase ("" without a plain run); a difference is noted in `FAILED`."""
    if plain is None:
        return ""
    verdict = same(plain, report)
    if verdict != "yes":
        FAILED.append(f"{scale.kind}, {what} numbers equal the plain run's: {verdict}")
    return f"{what} numbers equal the plain run's: {verdict}"


def same(a: Path, b: Path) -> str:
    """Whether two reports hold the same numbers: every section less its rows and its
    durations, and every row's metrics (by case and system)."""
    left, right = load_report(a), load_report(b)
    for name, section in left["suites"].items():
        other = right["suites"].get(name)
        if other is None:
            return f"no (suite {name} missing)"
        for key in set(section) | set(other):
            if key != "results" and section.get(key) != other.get(key):
                return f"no ({name}: {key} differs)"
        rows_a, rows_b = section["results"], other["results"]
        ta, tb = rows_a.table, rows_b.table  # type: ignore[attr-defined]
        if sorted(zip(ta.cases, ta.systems, strict=True)) != sorted(
            zip(tb.cases, tb.systems, strict=True)
        ):
            return f"no ({name}: other cases)"
        for metric, column in ta.metrics.items():
            mine = {(c, s): v for c, s, v in zip(ta.cases, ta.systems, column, strict=True)}
            theirs = {
                (c, s): v for c, s, v in zip(tb.cases, tb.systems, tb.metrics[metric], strict=True)
            }
            if {k: repr(v) for k, v in mine.items()} != {k: repr(v) for k, v in theirs.items()}:
                return f"no ({name}: {metric} differs)"
    return "yes"


# --------------------------------------------------------------------------- the HTML


def html_lines(scale: Scale, page: Path, browser: Browser | None, keep: Path) -> None:
    folder = data_folder(page)
    files = list(folder.glob("*.js")) if folder.is_dir() else []
    data_mb = sum(f.stat().st_size for f in files) / 1e6
    page_mb = page.stat().st_size / 1e6
    json_mb = (page.parent / "doceval-report.json").stat().st_size / 1e6
    verdict = "OK" if page_mb <= TARGETS["page_mb"] else "OVER"
    scale.say(
        f"  report sizes: JSON {json_mb:,.1f} MB; HTML first page {page_mb:,.2f} MB "
        f"(target <= 10 MB: {verdict})"
        + (
            f" + {data_mb:,.1f} MB of data in {len(files):,} files"
            if files
            else " (self-contained)"
        )
    )
    if browser is None:
        return
    shown = keep / f"{scale.kind}-html"
    shutil.rmtree(shown, ignore_errors=True)
    shutil.copytree(
        page.parent,
        shown,
        # Only the page and its data folder, with everything in that folder (the filter is
        # asked in every folder copytree enters: it emptied the data folder of a big page).
        ignore=lambda d, names: [
            n
            for n in names
            if Path(d) == page.parent
            and not (n.startswith("doceval-report.html") or n.startswith("doceval-report.data"))
        ],
    )
    opened = browser.open(shown / "doceval-report.html", "#selftest")
    ok = (
        "OK"
        if opened["ready_s"] <= TARGETS["ready_s"] and opened["open_s"] <= TARGETS["open_s"]
        else "OVER"
    )
    scale.say(
        f"  HTML in headless Chromium (fastest of {opened['runs']}): interactive "
        f"{opened['ready_s']:.2f} s (target <= 2 s), every case in the table "
        f"{opened['rows_s']:.2f} s, a case's row opens in {opened['open_s']:.2f} s "
        f"(target <= 1 s): {ok}; self-test {opened['selftest']}"
    )


def scale_metric(scale: Scale) -> float | None:
    return METRIC_TIME.get(scale.kind)


METRIC_TIME: dict[str, float] = {}


def metric_time(pairs: list[tuple[str, str]]) -> float:
    """CPU seconds a test of the documents kind spends in its metrics, in-process, fastest of
    3 passes over `pairs` (after a warm-up), as `bench_plugin_overhead` times them."""
    for truth, output in pairs[:20]:
        score_metrics(truth, output)
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for truth, output in pairs:
            score_metrics(truth, output)
        best = min(best, time.process_time() - started)
    return best / len(pairs)


# --------------------------------------------------------------------------- main


def bench_kind(kind: str, args: argparse.Namespace, work: Path, browser: Browser | None) -> None:
    tests = 2 * args.cases
    print(f"\n== {kind}: {args.cases:,} cases x 2 systems = {tests:,} tests", flush=True)
    one, reference, big = work / f"{kind}-one", work / f"{kind}-reference", work / f"{kind}-big"
    write_suite(kind, one, 1, args.chars, args.seed)
    write_suite(kind, reference, args.reference, args.chars, args.seed)
    started = time.perf_counter()
    sample = write_suite(kind, big, args.cases, args.chars, args.seed)
    print(f"suite written in {time.perf_counter() - started:,.1f} s", flush=True)
    if sample:
        METRIC_TIME[kind] = metric_time(sample)
    run_pytest(one, "--doceval-html=")  # the bytecode cache and the first start-up
    startup = min((run_pytest(one, "--doceval-html=") for _ in range(3)), key=lambda m: m.wall)
    ref = min(
        (run_pytest(reference, "--doceval-html=") for _ in range(args.repeat)),
        key=lambda m: m.wall,
    )
    scale = Scale(kind, tests, 2 * args.reference, startup, ref)
    scale.say(
        f"start-up (a one-case suite, fastest of 3): {startup.wall:.2f} s, CPU {startup.cpu:.2f} s"
    )
    scale.say(
        f"reference ({args.reference:,} cases, plain, fastest of {args.repeat}): "
        f"{ref.wall:.1f} s, CPU {ref.cpu:.1f} s, {rss_line(ref)}"
    )
    keep = args.keep or work / "kept"
    keep.mkdir(parents=True, exist_ok=True)
    plain = merged = None
    if "plain" in args.modes:
        plain = run_plain(scale, big, browser, keep)
        if args.screenshot and browser is not None:
            shot = args.screenshot.with_name(f"{args.screenshot.stem}-{kind}.png")
            browser.screenshot(keep / f"{kind}-html" / "doceval-report.html", shot)
            print(f"  screenshot: {shot}")
    if "shards" in args.modes:
        merged = run_shards(scale, big, keep, plain)
    if "xdist" in args.modes:
        run_xdist(scale, big)
    if "dask" in args.modes:
        run_dask(scale, big, keep, plain)
    if plain is not None and merged is not None:
        run_compare(scale, plain, merged)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--reference", type=int, default=1000, help="the cases of the reference")
    parser.add_argument(
        "--kinds", nargs="+", choices=("documents", "facts"), default=["documents", "facts"]
    )
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--chars", type=int, default=400, help="characters of a truth")
    parser.add_argument("--repeat", type=int, default=2, help="runs of the reference")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="keep the reports and pages here")
    parser.add_argument("--screenshot", type=Path, help="save the HTML as Chromium draws it")
    parser.add_argument("--no-browser", action="store_true", help="skip Chromium")
    args = parser.parse_args()
    print(
        f"bench_scale: {args.cases:,} cases, {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}, {psutil.virtual_memory().total / 2**30:.0f} GB"
    )
    browser = None if args.no_browser or not Browser.available() else Browser()
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        try:
            for kind in args.kinds:
                bench_kind(kind, args, Path(tmp), browser)
        finally:
            if browser is not None:
                browser.close()
    if FAILED:
        raise SystemExit(f"bench_scale failed: {'; '.join(FAILED)}")


if __name__ == "__main__":
    main()
