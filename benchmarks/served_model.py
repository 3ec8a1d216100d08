"""The benchmarks' model server: tests/model_server.py in a process of its own, on 127.0.0.1.

One home for starting it and reading its counters (requests in all, distinct bodies, the most
sent of one body, the peak in flight), used by the model benchmarks.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

SERVER = Path(__file__).resolve().parents[1] / "tests" / "model_server.py"


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    """The server process and its base URL (it prints the URL once it listens)."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def server_stats(base_url: str) -> dict[str, Any]:
    """The server's counters since it started."""
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_stats", timeout=10) as reply:
        stats: dict[str, Any] = json.load(reply)
    return stats
