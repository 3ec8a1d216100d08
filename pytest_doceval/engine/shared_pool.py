"""One process pool for a whole xdist run: owned by the controller, used by every worker.

Each xdist worker plans the stages of its own tests, but their CPU work goes to one pool sized
to the machine (`SharedPool`, in the controller), so a stage planned by any worker runs on any
free core, and a stage two workers need at once runs once (the pool keeps the stage's key
while it runs). Before this, each worker had a pool of its own with its share of the cores, and
work stealing moved tests but not the stages queued in a pool: one worker ground through OCR
pages while the other idled.

The pool is a standard `ProcessPoolExecutor`; what this module adds is only the way in. A
worker's `SharedPoolClient` (a `concurrent.futures.Executor`) sends a stage -- its key and the
pickled call -- over a `multiprocessing.connection` socket that only the run knows (an
authentication key in the workers' input); a thread of the controller hands it to the pool
and sends the pickled answer back. The controller never unpickles a stage or its output (it
would import the kinds' and parsers' code). The pool starts when the first stage arrives: a
warm run starts no process.

A pool process that dies (a parser that crashes its process) breaks the pool: it is replaced
and the stage that was running runs again, alone in a pool of its own, so the one that kills
its process again fails alone (as `Engine` does for its own pool).
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import os
import pickle
import secrets
import tempfile
import threading
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection, Listener
from pathlib import Path
from typing import Any

from pytest_doceval.engine.answers import answer, outcome, returned
from pytest_doceval.engine.stages import timed_call
from pytest_doceval.errors import DocevalError

SCHEME = "shared:"


# The answers a shared pool keeps after their stage ran (`SharedPool._keep`): outputs are texts
# and scores of a few kilobytes, so this holds thousands of stages; the oldest go first.
ANSWERS_KEPT_BYTES = 64 * 1024 * 1024


def run_pickled(payload: bytes) -> bytes:
    """A pool process's work: the pickled ``(call, args)`` run and timed, its outcome encoded
    (`answers.outcome`: its ``(output, cost)`` or the exception it raised). Module-level:
    pickled by name."""
    try:
        call, args = pickle.loads(payload)
        value: Any = timed_call(call, args)
        ran = True
    except BaseException as exc:
        value, ran = exc, False
    try:
        return outcome(ran, value)
    except Exception:  # an output or exception that cannot be pickled: say what it was
        message = repr(value) if ran else f"{type(value).__name__}: {value}"
        return outcome(False, DocevalError(f"not picklable: {message}"[:2000]))


def _alone(payload: bytes) -> bytes:
    from pytest_doceval.engine.executors import process_pool

    with process_pool(1) as pool:
        return pool.submit(run_pickled, payload).result()


class SharedPool:
    """The controller's pool and the socket its workers reach it by (see the module)."""

    def __init__(self, workers: int) -> None:
        from pytest_doceval.engine.executors import ExecutorSlot, ExecutorSpec

        self.slot = ExecutorSlot(ExecutorSpec("processes", workers=workers))
        self._folder = tempfile.mkdtemp(prefix="doceval-pool-")
        self._authkey = secrets.token_bytes(32)
        self._listener = Listener(
            os.path.join(self._folder, "pool"), family="AF_UNIX", authkey=self._authkey
        )
        self._running: dict[str, concurrent.futures.Future[bytes]] = {}
        # Answers given lately, for a worker that asks for a stage another worker had run: it
        # took the test over (work stealing) or queued it before the answer reached the store.
        self._answered: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._answered_bytes = 0
        self._lock = threading.Lock()
        self._closed = False
        self._connections: list[Connection] = []
        threading.Thread(target=self._accept, name="doceval-pool-accept", daemon=True).start()

    @property
    def address(self) -> str:
        """What a worker needs to reach the pool (its executor spec, after ``shared:``)."""
        return f"{self._listener.address}#{self._authkey.hex()}"

    def _accept(self) -> None:
        while not self._closed:
            try:
                connection = self._listener.accept()
            except Exception:
                if self._closed:
                    return
                continue  # a client that failed to authenticate, or hung up half-way
            self._connections.append(connection)
            name = "doceval-pool-serve"
            threading.Thread(target=self._serve, args=(connection,), name=name, daemon=True).start()

    def _serve(self, connection: Connection) -> None:
        with connection:
            while True:
                try:
                    message = connection.recv_bytes()
                except (OSError, EOFError):
                    return  # the worker is done (or gone)
                key, _, payload = message.partition(b"\0")
                try:
                    answered = self._run(key.decode(), payload)
                except BaseException as exc:  # the pool itself failed: the stage fails
                    failed = outcome(False, DocevalError(f"shared pool: {exc}"))
                    answered = answer(failed, for_another=False)
                try:
                    connection.send_bytes(answered)
                except (OSError, EOFError):
                    return

    def _run(self, key: str, payload: bytes) -> bytes:
        """The stage `key`'s answer (`answers.answer`): a stage already running for another
        worker is waited for, and one that ran lately is answered, not run again -- and the
        answer says it ran for another's ask."""
        with self._lock:
            kept = self._answered.get(key)
            if kept is not None:
                return answer(kept, for_another=True)
            executor = self.slot.get()
            future = self._running.get(key)
            for_another = future is not None
            if future is None:
                future = self._running[key] = executor.submit(run_pickled, payload)
                future.add_done_callback(lambda done: self._keep(key, done))
        try:
            return answer(future.result(), for_another=for_another)
        except BrokenProcessPool:
            self.slot.restart(executor)
            return answer(_alone(payload), for_another=False)

    def _keep(self, key: str, done: concurrent.futures.Future[bytes]) -> None:
        """`key` runs no more: its answer is kept (the newest `ANSWERS_KEPT_BYTES`) unless it
        failed, so that a later ask is answered, not run again."""
        with self._lock:
            self._running.pop(key, None)
            if done.cancelled() or done.exception() is not None:
                return
            encoded = done.result()
            if not returned(encoded):
                return  # a stage that raised runs again where it is asked for again
            self._answered[key] = encoded
            self._answered_bytes += len(encoded)
            while self._answered_bytes > ANSWERS_KEPT_BYTES and self._answered:
                _, dropped = self._answered.popitem(last=False)
                self._answered_bytes -= len(dropped)

    def close(self, *, cancel: bool = False) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()
        for connection in self._connections:
            with contextlib.suppress(OSError):
                connection.close()
        self.slot.close(cancel=cancel)
        with contextlib.suppress(OSError):
            Path(self._folder, "pool").unlink(missing_ok=True)
            os.rmdir(self._folder)
