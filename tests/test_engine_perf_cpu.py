"""A stage's time is the CPU seconds it used where it ran, not wall time: waiting (for a
core, for a sleep) is not work, and in a pool process the threads a library starts for itself
count too. The run's "CPU stage time" (and the cold-run benchmark's ideal) sums these."""

from __future__ import annotations

import threading
import time

from pytest_doceval.engine.executors import process_pool
from pytest_doceval.engine.stages import timed_call
from pytest_doceval.run.progress import Totals, summary_line


def spin(seconds: float) -> int:
    """Burn `seconds` of this thread's CPU time."""
    started, loops = time.thread_time(), 0
    while time.thread_time() - started < seconds:
        loops += 1
    return loops


def spin_in_threads(threads: int, seconds: float) -> int:
    """What onnxruntime does: the work runs on threads the call starts itself."""
    workers = [threading.Thread(target=spin, args=(seconds,)) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return threads


def test_waiting_is_not_cpu_time() -> None:
    output, cost = timed_call(time.sleep, (0.3,))
    assert output is None
    assert cost.cpu_seconds < 0.1
    assert cost.wall_seconds >= 0.29  # the wall clock did run


def test_work_in_this_thread_is_counted() -> None:
    _, cost = timed_call(spin, (0.2,))
    assert 0.19 <= cost.cpu_seconds < 1.0


def test_a_thread_counts_only_its_own_work() -> None:
    """On the threads executor other stages run beside it: their CPU is theirs."""
    other = threading.Thread(target=spin, args=(0.3,))
    other.start()
    _, cost = timed_call(time.sleep, (0.3,))
    other.join()
    assert cost.cpu_seconds < 0.1


def test_a_pool_process_counts_the_threads_a_library_starts() -> None:
    with process_pool(1) as pool:
        threads, cost = pool.submit(timed_call, spin_in_threads, (2, 0.2)).result()
        _, waited = pool.submit(timed_call, time.sleep, (0.3,)).result()
    assert threads == 2
    assert 0.39 <= cost.cpu_seconds < 2.0
    assert waited.cpu_seconds < 0.1


def test_workers_totals_add_up() -> None:
    totals = Totals()
    totals.add(Totals(stages=3, finished=3, cpu_seconds=1.5, requests={"model": 2}).to_dict())
    totals.add(Totals(stages=2, finished=1, failed=1, cpu_seconds=0.5).to_dict())
    assert (totals.stages, totals.finished, totals.failed) == (5, 4, 1)
    assert totals.cpu_seconds == 2.0
    assert totals.requests == {"model": 2}


def test_a_stage_run_once_for_two_workers_is_counted_once_and_said() -> None:
    """The shared pool answered worker 2 with the run it made for worker 1: worker 1's CPU
    stage time holds it, worker 2's does not, and the summary says why the count is lower."""
    totals = Totals()
    totals.add(Totals(stages=2, finished=2, cpu_seconds=3.0).to_dict())
    totals.add(Totals(stages=2, finished=2, cpu_seconds=0.0, ran_for_another=1).to_dict())
    line = summary_line(totals)
    assert totals.ran_for_another == 1 and "CPU stage time 3.0 s" in line
    assert "1 stage(s) run once for two workers, counted once" in line
    assert "run once" not in summary_line(Totals(stages=1, finished=1, cpu_seconds=1.0))


def test_pool_processes_start_with_pymupdf_imported() -> None:
    """The forkserver imports PyMuPDF once and forks each pool process from there: importing
    it (with its layout models) cost each process ~0.7 s of CPU before its first stage."""
    import pymupdf

    with process_pool(2) as pool:
        rect = pool.submit(pymupdf.Rect, 0, 0, 2, 3).result()  # needs pymupdf over there
        spent = pool.submit(time.process_time).result()  # CPU since it was forked
    assert (rect.width, rect.height) == (2, 3)
    assert spent < 0.4
