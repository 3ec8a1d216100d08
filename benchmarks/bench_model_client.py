"""Model requests end to end: the hub against a local server that answers after 100 ms.

    python benchmarks/bench_model_client.py [--requests 400] [--latency 0.1] [--concurrency 16]
                                            [--processes 2] [--tmp DIR]

Starts ``tests/model_server.py`` in its own process (so the server does not share the client's
interpreter), then measures three runs of `--requests` distinct requests at `--concurrency`:

* plain: one process, `Hub.prefetch` into an empty cache, then every answer read back as the
  tests would (``complete_sync``); the target is 400 requests within 4 s end to end;
* shared: `--processes` processes on one cache folder, each prefetching all the requests with an
  equal share of the concurrency (as xdist workers would); claims must split the work;
* warm: one process again, everything now answered from the cache.

After each, the server's counts say whether every request arrived exactly once. The ideal time
is requests / concurrency x latency.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from served_model import server_stats, start_server

from pytest_doceval.models.client import ModelClient
from pytest_doceval.models.config import ModelConfig
from pytest_doceval.models.hub import Hub
from pytest_doceval.models.requests import ChatRequest, message
from pytest_doceval.store import Store


def cpu_and_queue() -> tuple[float, float]:
    """Seconds this process's threads ran, and waited runnable for a CPU (Linux schedstat):
    the second says how much of a wall time was a busy machine rather than this code."""
    run = wait = 0
    for stat in Path("/proc/self/task").glob("*/schedstat"):
        try:
            fields = stat.read_text().split()
        except OSError:
            continue
        run, wait = run + int(fields[0]), wait + int(fields[1])
    return run / 1e9, wait / 1e9


def make_requests(config: ModelConfig, n: int, tag: str) -> list[ChatRequest]:
    return [
        ChatRequest.build(config, [message("user", f"{tag} request {i}")], case=f"case-{i}")
        for i in range(n)
    ]


def run_hub(
    base_url: str, cache_dir: str, n: int, concurrency: int, share: int, run_id: str, tag: str
) -> dict[str, Any]:
    """Prefetch then read back every answer; wall-clock start and end for the shared run."""
    config = ModelConfig.from_table(
        "bench",
        {"base_url": base_url, "model": "echo", "max_concurrency": concurrency, "timeout": 30},
        source="benchmark",
    )
    client = ModelClient({"bench": config}, concurrency_share=share)
    requests = make_requests(config, n, tag)
    with Hub(client, Store(Path(cache_dir), "rw", run_id=run_id)) as hub:
        cpu0, queue0 = cpu_and_queue()
        start = time.time()
        summary = hub.prefetch(requests)
        prefetched = time.time()
        answers = [hub.complete_sync(r, timeout=60).text for r in requests]
        end = time.time()
        cpu1, queue1 = cpu_and_queue()
    assert answers == [f"user: {tag} request {i}" for i in range(n)]
    return {
        "summary": summary.to_dict(),
        "start": start,
        "prefetched": prefetched,
        "end": end,
        "cpu": cpu1 - cpu0,
        "queue": queue1 - queue0,
    }


def shared_child(args: tuple[str, str, int, int, int, str, str, str, int]) -> dict[str, Any]:
    base_url, cache_dir, n, concurrency, share, run_id, tag, barrier, parties = args
    folder = Path(barrier)
    (folder / f"ready-{os.getpid()}").touch()
    deadline = time.monotonic() + 60
    while len(list(folder.glob("ready-*"))) < parties and time.monotonic() < deadline:
        time.sleep(0.002)
    return run_hub(base_url, cache_dir, n, concurrency, share, run_id, tag)


def check(stats: dict[str, Any], n: int) -> str:
    once = stats["total"] == n and stats["distinct"] == n and stats["max_per_body"] == 1
    return (
        f"server saw {stats['total']} requests, {stats['distinct']} distinct, at most "
        f"{stats['max_per_body']} per body, peak {stats['peak_active']} at once -> "
        + ("each exactly once" if once else "NOT each exactly once")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument(
        "--tmp",
        default=None,
        help="folder for the caches (default: the system's temporary folder); put it on the "
        "file system the project's .doceval-cache lives on, since file creation costs differ",
    )
    args = parser.parse_args()
    n, conc = args.requests, args.concurrency
    ideal = n / conc * args.latency
    print(f"{n} distinct requests, server latency {args.latency * 1000:.0f} ms, ", end="")
    print(f"max_concurrency {conc}: ideal {ideal:.2f} s")

    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        print(f"caches under {tmp}")
        proc, base_url = start_server(args.latency)
        try:
            cache = str(Path(tmp) / "plain")
            plain = run_hub(base_url, cache, n, conc, 1, uuid.uuid4().hex, "plain")
            total = plain["end"] - plain["start"]
            prefetch = plain["prefetched"] - plain["start"]
            print(
                f"plain : {total:.2f} s end to end (prefetch {prefetch:.2f} s, read back "
                f"{plain['end'] - plain['prefetched']:.3f} s), "
                f"{n / total:.0f} requests/s, {'within' if total <= 4.0 else 'OVER'} the 4 s target"
            )
            print(f"        {load(plain)}")
            print(f"        {check(server_stats(base_url), n)}")
            warm = run_hub(base_url, cache, n, conc, 1, uuid.uuid4().hex, "plain")
            print(
                f"warm  : {warm['end'] - warm['start']:.3f} s end to end, "
                f"{warm['summary']['cached']} of {n} from the cache; server total still "
                f"{server_stats(base_url)['total']}"
            )
        finally:
            proc.terminate()
            proc.wait()

        proc, base_url = start_server(args.latency)
        try:
            parties = args.processes
            barrier = Path(tmp) / "barrier"
            barrier.mkdir()
            shared = str(Path(tmp) / "shared")
            job = (base_url, shared, n, conc, parties, uuid.uuid4().hex, "shared", str(barrier))
            with multiprocessing.get_context("spawn").Pool(parties) as pool:
                results = pool.map(shared_child, [(*job, parties)] * parties)
            total = max(r["end"] for r in results) - min(r["start"] for r in results)
            print(
                f"shared: {parties} processes on one cache folder, {conc // parties} slots each, "
                f"{total:.2f} s end to end"
            )
            for i, r in enumerate(results):
                s = r["summary"]
                print(
                    f"        process {i}: {s['sent']} sent, {s['from_peers']} from the other, "
                    f"{s['failed']} failed; {load(r)}"
                )
            print(f"        {check(server_stats(base_url), n)}")
        finally:
            proc.terminate()
            proc.wait()


def load(result: dict[str, Any]) -> str:
    return (
        f"client CPU {result['cpu']:.2f} s, waited {result['queue']:.2f} s for a CPU "
        f"(load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )


if __name__ == "__main__":
    main()
