"""Where progress lines go: pytest's terminal (stacked lines, or one live line on a TTY) and,
under xdist, the workers' published engine states summed by the controller."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from _pytest.terminal import TerminalReporter

from pytest_doceval.engine import Snapshot
from pytest_doceval.run.terminal_lines import TerminalLines, wants_live_line
from pytest_doceval.run.worker_progress import (
    START_WAIT,
    Gatherer,
    Publisher,
    WorkerState,
    read_states,
)
from tests.terminal_screen import render

NODE = "cases/s/suite.toml::c"


def reporter(config: pytest.Config, width: int = 120) -> tuple[TerminalReporter, io.StringIO]:
    out = io.StringIO()
    terminal = TerminalReporter(config, out)
    terminal._tw.fullwidth = width
    terminal._tw.hasmarkup = False
    return terminal, out


def dots(terminal: TerminalReporter, lines: TerminalLines, n: int) -> None:
    """What pytest does for `n` tests of one file: the path once, a letter per test."""
    for i in range(n):
        with lines.pytest_turn():
            terminal.write_fspath_result(f"{NODE}{i}", "")
        with lines.pytest_turn():
            terminal._tw.write(".")


def test_stacked_lines_leave_pytests_dots_going_on_below(pytestconfig: pytest.Config) -> None:
    terminal, out = reporter(pytestconfig)
    lines = TerminalLines(terminal, None, live=False)
    dots(terminal, lines, 2)
    lines.show("doceval: 1/4 stages done")
    lines.show("doceval: 2/4 stages done")
    dots(terminal, lines, 1)
    screen = render(out.getvalue()).strip("\n").splitlines()
    path = str(Path(terminal.config.rootpath / "cases/s/suite.toml").relative_to(Path.cwd()))
    # The file's dots go on below, as on a line pytest wraps: its name is not written again
    # (a CI log would read it as another file after every status line).
    assert screen == [
        f"{path} ..",
        "doceval: 1/4 stages done",
        "doceval: 2/4 stages done",
        ".",
    ]
    assert out.getvalue().count(path) == 1


def test_a_live_line_is_rewritten_in_place_and_erased_before_pytest_writes(
    pytestconfig: pytest.Config,
) -> None:
    terminal, out = reporter(pytestconfig)
    lines = TerminalLines(terminal, None, live=True)
    dots(terminal, lines, 2)
    width = terminal._tw.width_of_current_line
    for n in range(3):
        lines.show(f"doceval: {n}/4 stages done")
    raw = out.getvalue()
    assert raw.count("\n") == 2  # the live line is below pytest's line: one newline, ever
    assert re.findall(r"\r(doceval: \d/4 stages done)\x1b\[K", raw) == [
        f"doceval: {n}/4 stages done" for n in range(1, 3)
    ]
    assert render(raw).splitlines()[-1] == "doceval: 2/4 stages done"
    dots(terminal, lines, 2)
    screen = render(out.getvalue())
    assert "doceval" not in screen
    assert screen.strip("\n").splitlines()[-1].endswith("suite.toml ....")
    # pytest's idea of its line is still true: the live line was written raw.
    assert terminal._tw.width_of_current_line == width + 2


def test_a_live_line_on_an_empty_line_and_after_close(pytestconfig: pytest.Config) -> None:
    terminal, out = reporter(pytestconfig, width=30)
    lines = TerminalLines(terminal, None, live=True)
    lines.show("doceval: 1/4 stages done, requests in flight: none")
    assert out.getvalue() == "\rdoceval: 1/4 stages done, req\x1b[K"  # one screen line
    lines.end()
    assert out.getvalue().endswith("\r\x1b[K")  # no line above to go back to
    lines.write("doceval: start")  # a line that stays
    assert render(out.getvalue()).splitlines() == ["doceval: start"]
    assert out.getvalue().endswith("doceval: start\n")
    lines.close()
    lines.show("doceval: 2/4")
    lines.write("doceval: late")
    assert "2/4" not in out.getvalue() and "late" not in out.getvalue()


def test_no_live_line_off_a_terminal(pytestconfig: pytest.Config) -> None:
    terminal, _ = reporter(pytestconfig)
    assert not wants_live_line(pytestconfig, terminal)


def snap(total: int, done: int, in_flight: dict[str, int] | None = None) -> Snapshot:
    return Snapshot(total, done, 0, 0, in_flight or {}, 1.5, 4.0)


def test_a_worker_state_crosses_as_json(tmp_path: Path) -> None:
    state = WorkerState(snap(4, 1, {"echo": 2}), snap(4, 0), 1, 2, "processes", 1)
    nothing = Publisher(tmp_path / "gw1.json", lambda: None, every=1.0)
    nothing.publish()  # no engine yet: nothing to publish
    Publisher(tmp_path / "gw0.json", lambda: state, every=1.0).publish()
    assert read_states(tmp_path) == [state]
    (tmp_path / "gw2.json").write_text("{not json", encoding="utf-8")
    assert read_states(tmp_path) == [state]  # a bad file is no state


def test_the_controller_waits_for_every_worker_then_sums(tmp_path: Path) -> None:
    now = [0.0]
    kept: list[str] = []
    shown: list[str] = []
    gatherer = Gatherer(kept.append, shown.append, every=2.0, clock=lambda: now[0])
    gatherer.expected = 2
    folder = gatherer.folder

    def publish(worker: str, state: WorkerState) -> None:
        Publisher(folder / f"{worker}.json", lambda: state, every=1.0).publish()

    publish("gw0", WorkerState(snap(4, 0, {"echo": 1}), snap(4, 0), 2, 2, "processes", 1))
    gatherer.look()
    assert kept == []  # gw1 has not planned yet
    now[0] = 30.0  # however long it takes: a condition, not a time, starts the line
    gatherer.look()
    assert kept == []
    # Meanwhile gw0 has finished two stages: the start line still says what it had at start.
    publish("gw0", WorkerState(snap(4, 2, {"echo": 1}), snap(4, 0), 2, 2, "processes", 1))
    publish("gw1", WorkerState(snap(6, 1), snap(6, 1), 2, 3, "processes", 1))
    gatherer.look()
    assert len(kept) == 1 and kept[0].startswith("doceval: 1/10 stages done at start")
    assert "4 CPU stage(s) on processes x1 in each of 2 xdist workers and 5 model" in kept[0]
    gatherer.look()
    assert shown == []  # not due yet
    now[0] = 32.0
    publish("gw0", WorkerState(snap(4, 3, {"echo": 1}), snap(4, 0), 2, 2, "processes", 1))
    gatherer.look()
    assert shown == [
        "doceval: 4/10 stages done, requests in flight: echo 1, 0 error(s), 4 s elapsed, ETA 6 s"
    ]
    gatherer.stop()
    assert not folder.exists()


@pytest.mark.parametrize("finished", [True, False], ids=["went-down", "stuck"])
def test_the_controller_starts_without_a_worker_that_never_plans(
    tmp_path: Path, finished: bool
) -> None:
    now = [0.0]
    kept: list[str] = []
    gatherer = Gatherer(kept.append, kept.append, every=2.0, clock=lambda: now[0])
    gatherer.expected = 2
    Publisher(
        gatherer.folder / "gw0.json",
        lambda: WorkerState(snap(4, 0), snap(4, 0), 2, 2, "threads", 2),
        every=1.0,
    ).publish()
    gatherer.look()
    assert kept == []
    if finished:  # gw1 had no test to run: xdist says it is down
        gatherer.node_down("gw1")
    else:  # gw1 hangs before its first test: the start line does not wait forever
        now[0] = START_WAIT
    gatherer.look()
    assert kept and kept[0].startswith("doceval: 0/4 stages done at start")
    assert "on threads x2 and" in kept[0]  # one worker published: no "in each of"
    gatherer.stop()
