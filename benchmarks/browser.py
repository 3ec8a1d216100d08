"""Headless Chromium driven over the DevTools protocol on a pipe (no driver, no package): the
benchmarks' way to time the HTML report in a real browser, in real time.

``chromium --remote-debugging-pipe`` reads protocol messages on its file descriptor 3 and
writes on 4, each a JSON object ended by a NUL byte. `Browser.open` loads a page in a fresh
tab and waits, polling the page, for the numbers the report's script records on ``<html>``:
``data-ready-ms`` (the page drawn, ``performance.now()`` since navigation), ``data-rows-ms``
(every case table has all its rows) and, under ``#selftest``, ``data-selftest`` and
``data-open-ms`` (a case's row clicked until its details are drawn). Unlike ``--dump-dom``
with ``--virtual-time-budget``, the page's clocks run in real time here.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
TIMEOUT = 300.0


class Browser:
    """One headless Chromium, a fresh profile, pages opened one tab at a time."""

    @staticmethod
    def available() -> bool:
        return Path(CHROMIUM).exists()

    def __init__(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="bench-chromium-")
        to_child, self._write = os.pipe()
        self._read, from_child = os.pipe()

        def descriptors() -> None:  # the child's fds 3 (commands) and 4 (replies)
            commands, replies = os.dup(to_child), os.dup(from_child)
            os.dup2(commands, 3)
            os.dup2(replies, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=descriptors,  # before any thread of the benchmark starts
        )
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next = 0

    def call(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" in self._buffer:
                line, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(line)
                if reply.get("id") == self._next:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self._buffer += chunk

    def _tab(self, width: int = 1400, height: int = 1000) -> tuple[str, str]:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        sid = session["sessionId"]
        self.call("Page.enable", session=sid)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=sid,
        )
        return target, sid

    def _attribute(self, sid: str, name: str) -> str | None:
        found = self.call(
            "Runtime.evaluate",
            {"expression": f"document.documentElement.dataset.{name} || ''", "returnByValue": True},
            session=sid,
        )
        value = found.get("result", {}).get("value")
        return value or None

    def _wait(self, sid: str, name: str) -> str:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            value = self._attribute(sid, name)
            if value is not None:
                return value
            time.sleep(0.02)
        raise TimeoutError(f"the page set no data-{name} in {TIMEOUT:.0f} s")

    def open(self, page: Path, fragment: str = "#selftest", runs: int = 3) -> dict[str, Any]:
        """The fastest of `runs` loads of `page` in a new tab each: seconds to interactive,
        to every row of the case tables, and for a row to open (``#selftest``)."""
        best: dict[str, Any] = {}
        for _ in range(runs):
            target, sid = self._tab()
            self.call("Page.navigate", {"url": page.as_uri() + fragment}, session=sid)
            selftest = self._wait(sid, "selftest")
            found = {
                "ready_s": float(self._wait(sid, "readyMs")) / 1000,
                "rows_s": float(self._wait(sid, "rowsMs")) / 1000,
                "open_s": float(self._attribute(sid, "openMs") or "nan") / 1000,
                "selftest": selftest,
            }
            self.call("Target.closeTarget", {"targetId": target})
            if not best or found["ready_s"] < best["ready_s"]:
                best = found
        return {**best, "runs": runs}

    def screenshot(self, page: Path, out: Path, fragment: str = "#selftest") -> None:
        """`page` as drawn in a 1400 x 2400 px window, once its self-test opened a row."""
        target, sid = self._tab(1400, 2400)
        self.call("Page.navigate", {"url": page.as_uri() + fragment}, session=sid)
        self._wait(sid, "selftest")
        shot = self.call("Page.captureScreenshot", {"format": "png"}, session=sid)
        out.write_bytes(base64.b64decode(shot["data"]))
        self.call("Target.closeTarget", {"targetId": target})

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        os.close(self._read)
        os.close(self._write)
        shutil.rmtree(self.profile, ignore_errors=True)
