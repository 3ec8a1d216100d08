"""The executor slot's window on a process pool (`engine/executors.py`): thousands of stages
handed over at once by a thread that holds a lock their done-callbacks need -- what the engine
does when a 100,000-case run's scores go to the pool -- all come back."""

from __future__ import annotations

import threading

import engine_calls
import pytest

from pytest_doceval.engine import ExecutorSlot, parse_executor
from pytest_doceval.engine import executors as executor_rules

STAGES = 20_000  # past the ~16,000 wake-ups ProcessPoolExecutor's pipe holds


@pytest.mark.slow  # 20,000 stages through a pool: about 15 s
def test_stages_submitted_under_a_lock_their_callbacks_need_all_come_back() -> None:
    """Before the window, every submit woke the pool's manager thread through a pipe; the
    manager thread, stuck in a callback waiting for `engine_lock`, never emptied it, and the
    submitting thread blocked on the full pipe holding that lock: the run hung."""
    slot = ExecutorSlot(parse_executor("processes", workers=2))
    engine_lock = threading.RLock()
    outputs: list[int] = []
    everything = threading.Event()

    def taken(future: object) -> None:
        with engine_lock:
            outputs.append(future.result()[0])  # type: ignore[attr-defined]
            if len(outputs) == STAGES:
                everything.set()

    def submit_all() -> None:
        executor = slot.get()
        with engine_lock:
            for number in range(STAGES):
                slot.submit(
                    executor, f"k{number}", engine_calls.identity, (number,)
                ).add_done_callback(taken)

    submitter = threading.Thread(target=submit_all, daemon=True)
    try:
        submitter.start()
        submitter.join(timeout=300)
        assert not submitter.is_alive(), "submitting hung: the pool's wake-up pipe filled"
        assert everything.wait(timeout=300)
        assert sorted(outputs) == list(range(STAGES))
        window = executor_rules.IN_FLIGHT_PER_PROCESS * 2
        assert slot._window is not None and slot._window.size == window
    finally:
        slot.close(cancel=True)
