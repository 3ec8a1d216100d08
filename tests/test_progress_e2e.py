"""Progress lines as a user sees them: a plain run, an xdist run (the controller sums the
workers' engines) and a TTY (one live line rewritten in place); pytest's own output stays
intact in each."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from model_server import ModelServer

from pytest_doceval.run.progress import EVERY_VARIABLE
from tests.conftest import TRUTH, WORKERS, write_suite
from tests.terminal_screen import render

PAGE = "Tides\nTidal storage moves water between two basins.\n- pumps\n- turbines"
CASES = 4  # under -n 2, xdist sends all four at once: each worker plans two at its start
STAGES = 3 * CASES  # a parse, a model request and the score, per case
STATUS = re.compile(r"doceval: (\d+)/(\d+) stages done, requests in flight: ")
# On the wire, then the rest of what the stages wait for (models/counts.py).
IN_FLIGHT = re.compile(r"requests in flight: echo (\d+)(?: \(\+(\d+) queued\))?")


@pytest.fixture
def slow_server() -> Iterator[ModelServer]:
    with ModelServer(latency=1.0) as running:
        yield running


@pytest.fixture
def slow_project(pytester: pytest.Pytester, slow_server: ModelServer) -> Path:
    """Four cold two-stage cases against a model that answers one request a second."""
    pytester.makepyprojecttoml(
        '[tool.doceval]\nsuites = ["cases"]\nvlm = "echo"\n\n[tool.doceval.models.echo]\n'
        f'base_url = "{slow_server.base_url}"\nmodel = "echo-1"\nmax_concurrency = 1\n'
    )
    pages = {
        f"c{i:02d}": {"truth": TRUTH, "pdf": PAGE.replace("Tides", f"Tides {i}")}
        for i in range(CASES)
    }
    return write_suite(pytester.path, "tides", pages, systems=["pymupdf+vlm"], gates="")


def status_lines(out: str) -> list[tuple[int, int]]:
    return [(int(done), int(total)) for done, total in STATUS.findall(out)]


def test_a_plain_run_shows_status_lines_and_keeps_pytests_output(
    pytester: pytest.Pytester,
    slow_project: Path,
    slow_server: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(EVERY_VARIABLE, "0.5")
    result = pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=CASES)
    out = result.stdout.str()
    assert re.search(rf"^doceval: 0/{STAGES} stages done at start", out, re.M), out
    statuses = status_lines(out)
    assert statuses, out
    assert all(total == STAGES and done < total for done, total in statuses), statuses
    # Each status line is a line of its own, and pytest's dots are all there.
    assert all(line.startswith("doceval: ") for line in out.splitlines() if "stages done" in line)
    # pytest's dots go on below a status line without the file's name again (a CI log read
    # it as one more file after every status line): the name once, the dots all there.
    assert out.count("cases/tides/suite.toml") == 1, out
    dots = "".join(re.findall(r"^(?:cases/tides/suite\.toml )?(\.+)", out, re.M))
    assert dots == "." * CASES, out
    assert re.search(r"\[100%\]$", out, re.M), out
    assert re.search(rf"^doceval: {STAGES}/{STAGES} stages \(0 from the cache", out, re.M), out
    assert re.search(rf"={{3,}} {CASES} passed in", out), out
    # One count: in flight is what the server sees (max_concurrency 1), the rest is queued;
    # every request was sent once and answered.
    flights = [(int(n), int(q or 0)) for n, q in IN_FLIGHT.findall(out)]
    assert all(n <= 1 and n + q <= CASES for n, q in flights), flights
    assert f"model requests: {CASES} sent, {CASES} answered, 0 failed" in out, out
    assert slow_server.peak_active == 1


@pytest.mark.slow
def test_an_xdist_run_shows_the_workers_summed(
    pytester: pytest.Pytester, slow_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(EVERY_VARIABLE, "0.5")
    # Where the run makes its folders: a short path (a process pool's socket lives there too).
    temporary = Path(tempfile.mkdtemp(prefix="dp-"))
    monkeypatch.setenv("TMPDIR", str(temporary))
    result = pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(passed=CASES)
    out = result.stdout.str()
    # The start line counts both workers' stages (each planned two cases: 4 stages).
    start = re.search(rf"^doceval: 0/{STAGES} stages done at start.*$", out, re.M)
    assert start is not None, out
    assert "(one pool shared by 2 xdist workers)" in start.group(0)
    assert f"{2 * CASES} CPU stage(s)" in start.group(0), start.group(0)  # parses and scores
    statuses = status_lines(out)
    assert statuses, out
    assert {total for _, total in statuses} == {STAGES}, statuses
    assert all(line.startswith("doceval: ") for line in out.splitlines() if "stages done" in line)
    assert re.search(r"\[100%\]$", out, re.M), out
    assert re.search(rf"^doceval: {STAGES}/{STAGES} stages \(0 from the cache", out, re.M), out
    assert re.search(rf"={{3,}} {CASES} passed in", out), out
    # Each worker holds one slot of max_concurrency 1 (a share of at least one).
    flights = [int(n) for n, _ in IN_FLIGHT.findall(out)]
    assert all(n <= 2 for n in flights), flights
    assert f"model requests: {CASES} sent, {CASES} answered, 0 failed" in out, out
    # The folder the workers published to is gone.
    assert not list(temporary.glob("doceval-progress-*")), list(temporary.iterdir())
    shutil.rmtree(temporary, ignore_errors=True)


def run_on_a_tty(cwd: Path, *args: str, env: dict[str, str]) -> str:
    """Run pytest with a pseudo-terminal as its stdout; all it wrote, raw."""
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        env=env,
    )
    os.close(secondary)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([primary], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(primary, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            elif process.poll() is not None:
                break
    finally:
        process.wait(timeout=30)
        os.close(primary)
    return b"".join(chunks).decode("utf-8", "replace")


MARKUP = re.compile(r"\x1b\[[0-9;]*m")  # colours (the cursor and erase codes are kept)


@pytest.mark.parametrize("workers", WORKERS)
def test_a_tty_shows_one_live_line_and_pytests_output_intact(
    pytester: pytest.Pytester, slow_project: Path, workers: list[str]
) -> None:
    env = {**os.environ, EVERY_VARIABLE: "10", "TERM": "xterm", "COLUMNS": "200"}
    for name in ("NO_COLOR", "PY_COLORS", "FORCE_COLOR", "PYTEST_ADDOPTS"):
        env.pop(name, None)
    raw = run_on_a_tty(pytester.path, "--doceval", "-p", "no:cacheprovider", *workers, env=env)
    text = MARKUP.sub("", raw)
    # Status lines come about once a second, each drawn as the live line (cleared to the end,
    # never ended by a newline) and erased when pytest writes. Two at least: the run lasts a
    # few seconds, and on a busy machine each may come right after one of pytest's dots.
    live = re.findall(r"(doceval: \d+/\d+ stages done[^\r\n\x1b]*)\x1b\[K", text)
    assert len(live) >= 2, repr(text)
    assert not re.search(r"stages done, requests in flight[^\r\x1b]*\n", text), repr(text)
    # Read as a terminal shows it, pytest's output is intact and no status line is left.
    screen = render(text)
    assert "stages done, requests in flight" not in screen, screen
    dots = r"\.{4}" if workers else r"cases/tides/suite\.toml \.{4}"  # xdist shows no path
    assert re.search(rf"^{dots} +\[100%\]$", screen, re.M), screen
    assert re.search(rf"^doceval: 0/{STAGES} stages done at start", screen, re.M), screen
    assert re.search(rf"={{3,}} {CASES} passed in", screen), screen


def test_a_bad_interval_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    monkeypatch.setenv(EVERY_VARIABLE, "soon")
    result = pytester.runpytest("--doceval", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{EVERY_VARIABLE}='soon': expected a positive number*"])
