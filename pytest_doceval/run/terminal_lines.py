"""Where progress lines go: pytest's terminal, written so that capture never swallows them and
they never land inside pytest's own output.

Not on a TTY (a CI log, a pipe) every line stays, on a line of its own. On a TTY with markup
(``--color=no``, ``NO_COLOR`` or ``TERM=dumb`` turn it off, and so do ``-s`` and live logging,
whose output could land on it) status lines are one *live* line: written below pytest's current
line and rewritten in place (``\\r`` and erase-to-end-of-line). Before pytest writes again
(`TerminalTurns`) the live line is erased and the cursor put back at the end of pytest's line,
so pytest's output reads as if the live line had never been there. A line that stays ends
pytest's line of dots, which goes on below it as a line pytest wraps does, without the file's
name again. Lines that stay (the start
line) are written as lines. Writes come from the main thread (a plain run) or from the xdist
controller's progress thread; one lock orders them with pytest's own writes.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

ERASE_TO_END = "\x1b[K"
CURSOR_UP = "\x1b[A"


def _cursor_right(columns: int) -> str:
    return f"\x1b[{columns}C"


class TerminalLines:
    """doceval's lines on pytest's terminal reporter; `live` rewrites status lines in place."""

    def __init__(self, reporter: Any, capture: Any, *, live: bool) -> None:
        self.reporter = reporter
        self.capture = capture
        self.live = live
        self.lock = threading.RLock()
        self._shown = False  # a live line is on the screen
        self._back_to = 0  # the width of pytest's line above the live line
        self._closed = False
        self._resume: Path | None = None  # the file whose line of dots our lines broke

    def write(self, line: str) -> None:
        """A line that stays."""
        with self.lock, self._uncaptured():
            if self._closed:
                return
            self._erase()
            # pytest's line in progress (a file's dots) is ended, once: `ensure_newline` ends
            # a line pytest started with a path; under -q the dots have none.
            fspath = getattr(self.reporter, "currentfspath", None)
            self.reporter.ensure_newline()
            if self._line_width():
                self.reporter.write("\n")
            self.reporter.write_line(line)
            self.reporter.flush()
            if isinstance(fspath, Path):
                self._resume = fspath

    def show(self, line: str) -> None:
        """A status line: rewrites the live line on a TTY, else a line that stays."""
        if not self.live:
            self.write(line)
            return
        with self.lock, self._uncaptured():
            if self._closed:
                return
            text = line[: max(10, self._screen_width() - 1)]  # one screen line, never wrapped
            if self._shown:
                self.reporter.write_raw(f"\r{text}{ERASE_TO_END}", flush=True)
                return
            # Below pytest's line, written raw: pytest's record of its own line stays true.
            self._back_to = self._line_width()
            start = "\n" if self._back_to else "\r"
            self.reporter.write_raw(f"{start}{text}{ERASE_TO_END}", flush=True)
            self._shown = True

    def end(self) -> None:
        """pytest is about to write: the live line goes."""
        with self.lock:
            self._erase()

    def close(self) -> None:
        """The tests are over: no more progress lines (the totals come in the summary)."""
        with self.lock:
            self._erase()
            self._closed = True

    @contextlib.contextmanager
    def pytest_turn(self) -> Iterator[None]:
        """Held while one of pytest's hooks writes: no line of ours starts meanwhile."""
        with self.lock:
            self._erase()
            if self._resume is not None:
                # The file's dots go on below our lines as on a line pytest wraps at the
                # terminal's width: without the file's name again. Written again, a CI log read
                # as one more file after every status line.
                fspath, self._resume = self._resume, None
                self.reporter.currentfspath = fspath
            yield

    def _erase(self) -> None:
        if not self._shown:
            return
        back = f"{CURSOR_UP}{_cursor_right(self._back_to)}" if self._back_to else ""
        self.reporter.write_raw(f"\r{ERASE_TO_END}{back}", flush=True)
        self._shown = False

    def _line_width(self) -> int:
        writer = getattr(self.reporter, "_tw", None)
        return int(getattr(writer, "width_of_current_line", 0))

    def _screen_width(self) -> int:
        writer = getattr(self.reporter, "_tw", None)
        width = getattr(writer, "fullwidth", None)
        return int(width) if width else shutil.get_terminal_size().columns

    def _uncaptured(self) -> contextlib.AbstractContextManager[Any]:
        # During a test pytest captures the main thread's output; as its live logging does,
        # suspend capture around the write. The xdist controller's thread runs no test and
        # never captures (and capture is not the thread's to touch).
        if self.capture is None or threading.current_thread() is not threading.main_thread():
            return contextlib.nullcontext()
        return self.capture.global_and_fixture_disabled()  # type: ignore[no-any-return]


def wants_live_line(config: pytest.Config, reporter: Any) -> bool:
    """A TTY with markup, whose output only pytest writes (no ``-s``, no live logging)."""
    writer = getattr(reporter, "_tw", None)
    if not (reporter.isatty() and getattr(writer, "hasmarkup", False)):
        return False
    if config.getoption("capture", "fd") not in ("fd", "sys"):
        return False
    return not (config.getoption("log_cli_level", None) is not None or config.getini("log_cli"))


def terminal_lines(config: pytest.Config) -> TerminalLines | None:
    """The terminal of a plain run or of the xdist controller; None in an xdist worker, whose
    output is not shown, or without a terminal reporter."""
    if hasattr(config, "workerinput"):
        return None
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return None
    capture = config.pluginmanager.get_plugin("capturemanager")
    return TerminalLines(reporter, capture, live=wants_live_line(config, reporter))


class TerminalTurns:
    """Hooks around pytest's terminal writes during the tests: the live line is erased first
    and our lines wait (outermost wrappers, before the terminal reporter writes)."""

    def __init__(self, lines: TerminalLines) -> None:
        self.lines = lines

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logstart(self) -> Generator[None, object, object]:
        with self.lines.pytest_turn():
            return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logreport(self) -> Generator[None, object, object]:
        with self.lines.pytest_turn():
            return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logfinish(self) -> Generator[None, object, object]:
        with self.lines.pytest_turn():
            return (yield)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self) -> Generator[None, object, object]:
        # Innermost: closed before the terminal reporter writes its final "[100%]".
        try:
            return (yield)
        finally:
            self.lines.close()
