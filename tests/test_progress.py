"""Progress lines of the engine."""

from __future__ import annotations

from pytest_doceval.engine import Snapshot
from pytest_doceval.run.progress import Progress, Totals, start_line, status_line, summary_line


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
    line = status_line(snap(failed=2))
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
    assert progress.until_due() == 0.0


def test_start_and_summary_lines() -> None:
    start = start_line(snap(done=10, cached=10), cpu=60, model=50, executor="processes", workers=2)
    assert start.startswith("doceval: 10/120") and "processes x2" in start
    totals = Totals.of(snap(done=120), {"model": 60, "cache": 2, "failed": 1})
    summary = summary_line(totals)
    assert summary.startswith("doceval: 120/120 stages (0 from the cache, 0 failed)")
    assert "60 sent, 2 answered from the cache, 0 from other workers, 1 failed" in summary
    assert "CPU stage time 4.0 s" in summary


def test_totals_of_workers_add_up() -> None:
    totals = Totals()
    totals.add(Totals.of(snap(done=60, total=60), {"model": 30}).to_dict())
    totals.add(Totals.of(snap(done=50, failed=10, total=60), {"model": 30, "peer": 2}).to_dict())
    assert (totals.stages, totals.finished, totals.failed) == (120, 120, 10)
    assert totals.requests == {"model": 60, "peer": 2} and totals.cpu_seconds == 8.0
