"""A Dask ``LocalCluster`` in a process of its own, for `bench_scale`'s ``dask`` mode.

    python benchmarks/dask_cluster.py

starts a cluster of `WORKERS` worker processes of one thread each on 127.0.0.1 (no dashboard),
prints one JSON line, ``{"address": "tcp://127.0.0.1:PORT", "workers": [PID, ...]}``, and runs
until its stdin closes (or it is sent SIGTERM); then it prints ``{"tasks": N}``, the doceval
stages (tasks keyed ``doceval-...``) its workers ran or failed, and closes the cluster. The
scheduler (and the workers' nannies) run in this process, each worker in a child process of
it, so the cluster is a process tree apart from pytest's: `Cluster` measures its members' CPU
time and peak RSS while pytest runs with ``--doceval-executor=dask:ADDRESS``. The cluster's
log (stderr) goes to a temporary file, shown only when the cluster does not start: its workers
log every stage that raises, and a skipped fact raises on purpose.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import psutil

WORKERS = 2
START_TIMEOUT = 120  # seconds for the cluster to print its address (two workers start)
STOP_TIMEOUT = 30  # seconds for it to close once its stdin is closed


def serve() -> None:
    """The child process: the cluster, its address and worker PIDs printed, until stdin ends."""
    from distributed import Client, LocalCluster
    from distributed.diagnostics.plugin import SchedulerPlugin

    class CountStages(SchedulerPlugin):
        """Counts the doceval stages the workers finish (the proof that they carried them)."""

        def __init__(self) -> None:
            self.finished = 0

        def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
            if start == "processing" and finish in ("memory", "erred"):
                self.finished += str(key).startswith("doceval-")

    # SIGTERM leaves through the `with` below, so the workers are closed, not orphaned.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=WORKERS,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        host="127.0.0.1",
    ) as cluster:
        with Client(cluster, set_as_default=False) as client:  # type: ignore[no-untyped-call]
            pids = client.run(os.getpid)  # worker address -> the PID of its process
        counter = CountStages()
        cluster.scheduler.add_plugin(counter)
        line = {"address": cluster.scheduler_address, "workers": sorted(pids.values())}
        print(json.dumps(line), flush=True)
        sys.stdin.read()
        print(json.dumps({"tasks": counter.finished}), flush=True)


@dataclass
class Cluster:
    """The cluster's process (scheduler) and its workers, seen from the benchmark."""

    process: psutil.Popen
    address: str
    workers: list[psutil.Process]
    log: IO[str]  # the cluster's stderr
    started_in: float  # seconds from the command to the address
    peaks: dict[str, int] = field(default_factory=dict)  # member -> peak RSS in bytes

    @classmethod
    def start(cls) -> Cluster:
        """Start `serve` in a child process and wait for its address."""
        started = time.perf_counter()
        log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - kept open until `stop`
        process = psutil.Popen(
            [sys.executable, str(Path(__file__).resolve())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        try:
            line = _line(process, START_TIMEOUT)  # "" when it died or hangs
            if not line:
                log.seek(0)
                print(log.read()[-4000:], file=sys.stderr)
                raise SystemExit(f"the Dask cluster did not start (exit code {process.poll()})")
            found = json.loads(line)
        except BaseException:
            _end(process, log)
            raise
        workers = [psutil.Process(pid) for pid in found["workers"]]
        return cls(process, found["address"], workers, log, time.perf_counter() - started)

    def members(self) -> dict[str, psutil.Process]:
        """Each member by its role: ``scheduler`` (with the nannies), ``worker 1``, ..."""
        named = {f"worker {n}": worker for n, worker in enumerate(self.workers, 1)}
        return {"scheduler": self.process} | named

    def cpu(self) -> dict[str, float]:
        """CPU seconds (user + system) each member has used so far."""
        used = {}
        for role, member in self.members().items():
            times = member.cpu_times()
            used[role] = times.user + times.system
        return used

    def sample(self) -> None:
        """Note each member's RSS now (called while pytest runs)."""
        for role, member in self.members().items():
            try:
                rss = member.memory_info().rss
            except psutil.Error:
                continue
            self.peaks[role] = max(self.peaks.get(role, 0), rss)

    def peaks_mb(self) -> dict[str, float]:
        return {role: rss / 2**20 for role, rss in self.peaks.items()}

    def stop(self) -> int | None:
        """Close the cluster (its stdin closed, it closes its workers and exits); the doceval
        stages its workers finished, None when it did not say."""
        return _end(self.process, self.log, self.workers)


def _line(process: psutil.Popen, timeout: float) -> str:
    """The next line `process` prints, or "" when it exits or `timeout` passes first."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            return ""
    return str(process.stdout.readline())


def _end(
    process: psutil.Popen, log: IO[str], workers: list[psutil.Process] | None = None
) -> int | None:
    """Close `process`'s stdin and read its count of stages; terminate it, then kill it and
    `workers`, if it hangs. The count, None when it did not print one."""
    tasks = None
    try:
        if process.stdin is not None:
            process.stdin.close()
        line = _line(process, STOP_TIMEOUT)
        tasks = int(json.loads(line)["tasks"]) if line else None
        process.wait(STOP_TIMEOUT)
    except psutil.TimeoutExpired:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT)
        except psutil.TimeoutExpired:
            process.kill()
    for worker in workers or []:  # a worker left behind by a cluster that did not close
        with contextlib.suppress(psutil.Error):
            worker.kill()
    if process.stdout is not None:
        process.stdout.close()
    log.close()
    return tasks


if __name__ == "__main__":
    serve()
