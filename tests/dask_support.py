"""A Dask cluster for the tests that run stages on one: a scheduler and a worker in processes of
their own, on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def dask_cluster(worker_log: Path | None = None) -> Iterator[str]:
    """A Dask scheduler and one worker (2 threads) on 127.0.0.1, in processes of their own:
    distributed imported into this test process disturbs later in-process pytest runs. The
    worker's log goes to `worker_log` when given."""
    address = f"tcp://127.0.0.1:{free_port()}"
    port = address.rsplit(":", 1)[1]
    cli = [sys.executable, "-m"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen(
        [
            *cli,
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            port,
            "--dashboard-address",
            ":0",
        ],
        **quiet,
    )
    log = worker_log.open("wb") if worker_log is not None else None
    worker = subprocess.Popen(
        [
            *cli,
            "distributed.cli.dask_worker",
            address,
            "--nthreads",
            "2",
            "--nworkers",
            "1",
            "--host",
            "127.0.0.1",
            "--dashboard-address",
            ":0",
        ],
        **(quiet if log is None else {"stdout": log, "stderr": log}),
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield address
    finally:
        for process in (worker, scheduler):
            process.terminate()
            process.wait(timeout=30)
        if log is not None:
            log.close()
