"""The heartbeat of long evaluations."""

from __future__ import annotations

import time

from pytest_doceval.progress import heartbeat


def test_a_long_evaluation_says_it_is_still_running() -> None:
    lines: list[str] = []
    with heartbeat("cases/s/suite.toml::c[p]", lines.append, first=0.05, every=0.05):
        time.sleep(0.23)
    assert len(lines) >= 3
    assert lines[0].startswith("doceval: still evaluating cases/s/suite.toml::c[p] (")
    count = len(lines)
    time.sleep(0.12)
    assert len(lines) == count  # it stops with the evaluation


def test_a_short_evaluation_is_silent_and_none_writes_nothing() -> None:
    lines: list[str] = []
    with heartbeat("x", lines.append, first=1.0):
        pass
    with heartbeat("x", None, first=0.0):
        time.sleep(0.01)
    assert lines == []


def test_one_heartbeat_serves_many_tests_with_one_thread() -> None:
    import threading

    from pytest_doceval.progress import Heartbeat

    lines: list[str] = []
    beat = Heartbeat(lines.append, first=0.05, every=10.0)
    before = threading.active_count()
    for number in range(50):
        with beat.track(f"quick{number}"):
            pass
    with beat.track("slow"):
        time.sleep(0.15)
    assert threading.active_count() <= before + 1
    assert lines == [lines[0]] and lines[0].startswith("doceval: still evaluating slow (")
    beat.close()
