"""Progress lines of the engine."""

from __future__ import annotations

import pytest

from pytest_doceval.engine import Snapshot
from pytest_doceval.run.progress import (
    DEFAULT_EVERY,
    EVERY_VARIABLE,
    Eta,
    Progress,
    Totals,
    progress_every,
    start_line,
    status_line,
    summary_line,
    summed,
)


def snap(**changes: object) -> Snapshot:
    values: dict[str, object] = {
        "total": 120,
        "done": 30,
        "cached": 0,
        "failed": 0,
        "in_flight": {"echo": 16},
        "cpu_seconds": 4.0,
        "elapsed": 10.0,
    }
    values.update(changes)
    return Snapshot(**values)  # type: ignore[arg-type]


def test_status_line_says_done_total_in_flight_errors_elapsed_and_eta() -> None:
    line = status_line(snap(failed=2), eta=Eta()(snap(failed=2)))
    assert line.startswith("doceval: 32/120 stages done")
    assert "requests in flight: echo 16" in line
    assert "2 error(s)" in line and "10 s elapsed" in line
    # 32 finished in 10 s, 88 left: 27.5 s
    assert "ETA 28 s" in line


def test_eta_leaves_out_what_the_cache_answered() -> None:
    assert snap(done=60, cached=60).eta() is None  # nothing worked yet: no rate to go by
    assert status_line(snap(done=120)).endswith("elapsed")  # nothing left: no ETA


def test_a_line_every_interval_and_none_when_all_is_done() -> None:
    now = [0.0]
    lines: list[str] = []
    progress = Progress(lines.append, every=10.0, clock=lambda: now[0])
    progress.tick(snap())
    assert lines == []
    now[0] = 10.0
    progress.tick(snap())
    progress.tick(snap())
    assert len(lines) == 1
    now[0] = 25.0
    progress.tick(snap(done=120))
    assert len(lines) == 1
    # Nothing was left to say: the next look is an interval away, not at every test (each
    # look is a snapshot of every stage of the run).
    assert progress.until_due() == 10.0
    now[0] = 30.0
    progress.tick(snap())
    assert len(lines) == 1
    now[0] = 35.0
    progress.tick(snap())
    assert len(lines) == 2


def test_start_and_summary_lines() -> None:
    start = start_line(snap(done=10, cached=10), cpu=60, model=50, executor="processes", workers=2)
    assert start.startswith("doceval: 10/120") and "processes x2" in start
    totals = Totals.of(snap(done=120), {"sent": 63, "model": 60, "cache": 2, "failed": 1})
    summary = summary_line(totals)
    assert summary.startswith("doceval: 120/120 stages (0 from the cache, 0 failed)")
    # Sent counts HTTP attempts (a failed request's retries too); the rest distinct requests.
    assert (
        "model requests: 63 sent, 60 answered, 1 failed, 2 from the cache, 0 from other workers"
        in summary
    )
    assert "CPU stage time 4.0 s" in summary


def test_totals_of_workers_add_up() -> None:
    totals = Totals()
    totals.add(Totals.of(snap(done=60, total=60), {"model": 30}).to_dict())
    totals.add(Totals.of(snap(done=50, failed=10, total=60), {"model": 30, "peer": 2}).to_dict())
    assert (totals.stages, totals.finished, totals.failed) == (120, 120, 10)
    assert totals.requests == {"model": 60, "peer": 2} and totals.cpu_seconds == 8.0


def test_snapshots_of_workers_sum_to_one() -> None:
    one = snap(total=60, done=20, cached=5, failed=1, in_flight={"echo": 3}, elapsed=8.0)
    two = snap(
        total=40, done=10, cached=0, failed=2, in_flight={"echo": 1, "qwen": 2}, queued={"qwen": 5}
    )
    whole = summed([one, two])
    assert (whole.total, whole.done, whole.cached, whole.failed) == (100, 30, 5, 3)
    assert whole.in_flight == {"echo": 4, "qwen": 2} and whole.queued == {"qwen": 5}
    assert whole.cpu_seconds == 8.0 and whole.elapsed == 10.0  # the longest
    # The run's rate: 28 stages worked (33 finished, 5 from the cache) in 10 s, 67 left.
    assert whole.eta() == pytest.approx(10.0 / 28 * 67)
    assert status_line(whole).startswith("doceval: 33/100 stages done")
    assert "requests in flight: echo 4, qwen 2 (+5 queued)" in status_line(whole)
    assert summed([]).total == 0


def test_the_interval_comes_from_one_variable() -> None:
    assert progress_every({}) == DEFAULT_EVERY == 10.0
    assert progress_every({EVERY_VARIABLE: " 0.5 "}) == 0.5
    for bad in ("0", "-1", "soon", "inf", "nan"):
        with pytest.raises(pytest.UsageError, match=f"{EVERY_VARIABLE}="):
            progress_every({EVERY_VARIABLE: bad})


def test_status_lines_go_to_show_and_the_start_line_to_write() -> None:
    now = [0.0]
    kept: list[str] = []
    live: list[str] = []
    progress = Progress(kept.append, show=live.append, every=1.0, clock=lambda: now[0])
    progress.say("doceval: start")
    now[0] = 1.0
    progress.tick(snap())
    assert kept == ["doceval: start"] and len(live) == 1
    assert Progress(None).show is None  # nowhere to show: ticks are silent
    Progress(None, every=0.0).tick(snap())


def test_the_start_line_under_xdist_names_the_workers() -> None:
    line = start_line(snap(done=0), cpu=4, model=4, executor="processes", workers=1, nodes=2)
    assert "4 CPU stage(s) on processes x1 in each of 2 xdist workers and 4 model" in line


def test_a_live_status_line_puts_what_a_narrow_terminal_cuts_last() -> None:
    busy = snap(failed=2, in_flight={"echo": 16, "qwen": 4})
    line = status_line(busy, live=True, eta=busy.eta())
    assert line == (
        "doceval: 32/120 stages done, ETA 28 s, 2 error(s), 10 s elapsed, "
        "requests in flight: echo 16, qwen 4"
    )
    assert len(line[: line.index(", requests")]) < 80
    now = [0.0]
    shown: list[str] = []
    progress = Progress(None, show=shown.append, every=1.0, clock=lambda: now[0], live=True)
    progress.tick(snap())
    assert shown == []
    now[0] = 1.0
    progress.tick(snap())
    assert shown and shown[0].startswith("doceval: 30/120 stages done, ETA")


def test_the_eta_counts_down_while_one_long_stage_runs() -> None:
    """30 of 120 stages took 10 s: 30 s to go. While the next one runs for a minute nothing
    finishes, and re-reading the rate (elapsed / worked x left) would say 32 s, 40 s, 60 s, ...:
    the ETA counts down from its estimate instead, and is estimated again when a stage ends."""
    eta = Eta()
    assert eta(snap(done=30, elapsed=10.0)) == pytest.approx(30.0)
    shown = [eta(snap(done=30, elapsed=t)) for t in (12.0, 20.0, 35.0, 70.0)]
    assert shown == [pytest.approx(28.0), pytest.approx(20.0), pytest.approx(5.0), 0.0]
    assert snap(done=30, elapsed=70.0).eta() == pytest.approx(210.0)  # what it said before
    assert eta(snap(done=31, elapsed=71.0)) == pytest.approx(71.0 / 31 * 89)


def test_progress_lines_never_show_a_growing_eta() -> None:
    now = [0.0]
    shown: list[str] = []
    progress = Progress(None, show=shown.append, every=1.0, clock=lambda: now[0])
    for second in range(11, 40, 2):
        now[0] = float(second)
        progress.tick(snap(done=30, elapsed=float(second)))
    etas = [int(line.rsplit("ETA ", 1)[1].split()[0]) for line in shown]
    assert len(etas) == 15 and etas == sorted(etas, reverse=True), etas


def test_a_running_cpu_stage_is_not_none() -> None:
    line = status_line(snap(done=4, total=6, in_flight={}))
    assert "CPU stages at work (2 left)" in line and "none" not in line
    assert "requests in flight: echo 16" in status_line(snap())


def test_the_last_line_agrees_with_the_start_line() -> None:
    """Under xdist a worker that takes over tests plans their stages after the start line: the
    last line counts them and says how many, so its total reads from the start line's."""
    totals = Totals()
    totals.add(Totals.of(snap(done=60, total=60), {}, start=snap(done=0, total=50)).to_dict())
    totals.add(Totals.of(snap(done=60, total=60), {}, start=snap(done=0, total=60)).to_dict())
    line = summary_line(totals)
    assert line.startswith("doceval: 120/120 stages (110 counted at the start, 10 planned later;")
    plain = summary_line(Totals.of(snap(done=120), {}, start=snap(done=0)))
    assert plain.startswith("doceval: 120/120 stages (0 from the cache, 0 failed)")
