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
