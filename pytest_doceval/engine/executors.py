"""Where CPU stages run: ``processes`` (default), ``threads`` or ``dask:tcp://HOST:PORT``; an
xdist worker's ``processes`` is the controller's pool (``shared:ADDRESS``, `shared_pool`).

Every executor is a `concurrent.futures.Executor`, so the engine treats them alike and every
executor gives the same numbers. ``processes`` is a process pool with one worker per core
(started with ``forkserver``: forking a process that already runs the model client's thread is
not safe); a pool broken by a dying worker is replaced (`ExecutorSlot.restart`), and the engine
resubmits the stages that were in it. ``dask:`` needs the optional extra ``dask``
(``pip install pytest-doceval[dask]``) and a running scheduler whose workers can import
pytest_doceval.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_doceval.engine.stages import count_whole_process, timed_call
from pytest_doceval.errors import SuiteConfigError

DEFAULT_EXECUTOR = "processes"


# How the xdist controller's one pool is named to the user (never by its address).
SHARED_POOL = "processes (shared)"


@dataclass(frozen=True)
class ExecutorSpec:
    kind: str  # processes | threads | dask
    address: str | None = None
    workers: int = 0  # 0: one per core

    @property
    def text(self) -> str:
        if self.kind == "shared":
            return SHARED_POOL  # the address holds a secret: never printed
        return f"dask:{self.address}" if self.kind == "dask" else self.kind


def caught_call(call: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    """``(True, timed_call(call, args))``, or ``(False, the exception)`` it raised: how a Dask
    worker runs a stage. A stage that raises (a corrupt PDF, a skipped fact, a score the kind
    refuses) is its test's outcome, not the cluster's failure, and a raising task would be
    logged by every worker as "Compute Failed", with its traceback."""
    try:
        return True, timed_call(call, args)
    except Exception as exc:
        return False, exc


def _unwrapped(
    caught: concurrent.futures.Future[tuple[bool, Any]],
) -> concurrent.futures.Future[Any]:
    """A future of `caught_call`'s outcome as if the stage had run where it was asked for: its
    result, or its exception raised."""

    def read(outcome: tuple[bool, Any]) -> Any:
        ran, value = outcome
        if not ran:
            raise value
        return value

    outcome: concurrent.futures.Future[Any] = concurrent.futures.Future()
    _relay(caught, outcome, read)
    return outcome


def _relay(
    inner: concurrent.futures.Future[Any],
    outer: concurrent.futures.Future[Any],
    read: Callable[[Any], Any] = lambda value: value,
) -> None:
    """Settle `outer` as `inner` settles (its result through `read`, which may raise);
    cancelling `outer` cancels `inner`."""

    def settle(done: concurrent.futures.Future[Any]) -> None:
        try:
            if done.cancelled():
                outer.cancel()
                return
            try:
                value = read(done.result())
            except BaseException as exc:
                outer.set_exception(exc)
                return
            outer.set_result(value)
        except concurrent.futures.InvalidStateError:
            pass  # `outer` was cancelled meanwhile: nobody waits for it

    def cancel_inner(mine: concurrent.futures.Future[Any]) -> None:
        if mine.cancelled():
            inner.cancel()

    outer.add_done_callback(cancel_inner)
    inner.add_done_callback(settle)


# Stages on a process pool at once, per process: enough to keep each busy, and no more. The
# rest wait in the slot, in order. ProcessPoolExecutor wakes its manager thread through a pipe
# on every submit; 200,000 submits at once filled it while the manager thread, the one that
# empties it, waited in a stage's done-callback for the lock the submitting thread held (a
# 100,000-case run hung). A bounded window never fills it.
IN_FLIGHT_PER_PROCESS = 4


class _Window:
    """At most `size` stages on the pool at once (`IN_FLIGHT_PER_PROCESS`); each that comes
    back lets the next waiting one in. A waiting stage goes to the pool the slot has then
    (one that broke meanwhile has been replaced)."""

    def __init__(self, slot: ExecutorSlot, size: int) -> None:
        self.slot, self.size = slot, size
        self._lock = threading.Lock()
        self._on_pool = 0
        self._waiting: deque[tuple[Callable[..., Any], tuple[Any, ...], Any]] = deque()

    def submit(
        self, executor: concurrent.futures.Executor, call: Callable[..., Any], args: tuple[Any, ...]
    ) -> concurrent.futures.Future[Any]:
        outer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._lock:
            if self._on_pool >= self.size:
                self._waiting.append((call, args, outer))
                return outer
            self._on_pool += 1
        self._start(executor, call, args, outer)
        return outer

    def _start(
        self,
        executor: concurrent.futures.Executor,
        call: Callable[..., Any],
        args: tuple[Any, ...],
        outer: concurrent.futures.Future[Any],
    ) -> None:
        while True:
            try:
                inner = executor.submit(timed_call, call, args)
            except BaseException as exc:  # a broken pool, one shut down: the stage's failure
                with contextlib.suppress(concurrent.futures.InvalidStateError):
                    outer.set_exception(exc)
                following = self._next()
                if following is None:
                    return
                (call, args, outer), executor = following, self.slot.get()
                continue
            inner.add_done_callback(self._came_back)  # before `_relay`: the next goes in first
            _relay(inner, outer)
            return

    def _came_back(self, _: concurrent.futures.Future[Any]) -> None:
        following = self._next()
        if following is not None:
            self._start(self.slot.get(), *following)

    def _next(self) -> tuple[Callable[..., Any], tuple[Any, ...], Any] | None:
        """The next waiting stage not cancelled, its place on the pool kept; None (and the
        place given back) when none waits."""
        with self._lock:
            while self._waiting:
                following = self._waiting.popleft()
                if not following[2].cancelled():
                    return following
            self._on_pool -= 1
            return None


def parse_executor(text: str, *, workers: int = 0) -> ExecutorSpec:
    """``processes``, ``threads`` or ``dask:tcp://HOST:PORT``; anything else is an error."""
    value = text.strip()
    if value in ("processes", "threads"):
        return ExecutorSpec(value, workers=workers)
    if value.startswith("dask:") and "://" in value[5:]:
        return ExecutorSpec("dask", value[5:])  # the cluster says how many workers
    if value.startswith("shared:") and "#" in value:  # set by the xdist controller, not a user
        return ExecutorSpec("shared", value[7:], workers=workers)
    raise SuiteConfigError(
        f"executor {text!r}: expected processes, threads or dask:tcp://HOST:PORT"
    )


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def quiet_worker() -> None:
    """A pool process's output goes nowhere: pytest captures what a parser prints in its own
    process, and a worker's would otherwise land in the middle of pytest's progress line
    (RapidOCR logs every model it loads). Failures still reach the tests as exceptions.
    It runs one stage at a time, so a stage's CPU time is its whole process's."""
    count_whole_process()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)


# What the forkserver imports once, before it forks each pool process: importing PyMuPDF
# (which loads its layout models when ``pymupdf_layout`` is installed) cost every pool process
# 0.7 s of CPU before its first stage. ``__main__`` stays first, as multiprocessing's default:
# without it each process would run pytest's own script again.
FORKSERVER_PRELOAD = ("__main__", "pytest_doceval.engine.stages", "pymupdf")


def process_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """A process pool of `workers`, started by ``forkserver`` (see the module docstring)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(FORKSERVER_PRELOAD))  # used when it first starts
    return concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=context, initializer=quiet_worker
    )


@dataclass
class ExecutorSlot:
    """The run's executor, made on first use and remade when a process pool breaks."""

    spec: ExecutorSpec
    _executor: concurrent.futures.Executor | None = None
    _client: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _window: _Window | None = None
    restarts: int = 0

    @property
    def workers(self) -> int:
        if self.spec.workers:
            return self.spec.workers
        if self.spec.kind == "dask" and self._client is not None:
            return max(1, int(sum(self._client.nthreads().values())))
        return cpu_count()

    @property
    def started(self) -> bool:
        """Whether the executor runs already (a pool started costs nothing more to use)."""
        return self._executor is not None

    def get(self) -> concurrent.futures.Executor:
        with self._lock:
            if self._executor is None:
                self._executor = self._make()
            return self._executor

    def submit(
        self,
        executor: concurrent.futures.Executor,
        key: str,
        call: Callable[..., Any],
        args: tuple[Any, ...],
    ) -> concurrent.futures.Future[Any]:
        """``timed_call(call, args)`` on `executor` (one this slot gave), keyed by the stage's
        `key` where the executor can use a key: the shared pool and a Dask cluster run a key
        that two processes send at once only once."""
        from pytest_doceval.engine.pool_client import SharedPoolClient

        if isinstance(executor, SharedPoolClient):
            return executor.submit_keyed(key, call, args)
        if self._client is not None:  # Dask's executor passes the key on to its client
            keyed: Any = executor
            return _unwrapped(keyed.submit(caught_call, call, args, key=f"doceval-{key}"))
        if isinstance(executor, concurrent.futures.ProcessPoolExecutor):
            with self._lock:
                if self._window is None:
                    self._window = _Window(self, IN_FLIGHT_PER_PROCESS * self.workers)
            return self._window.submit(executor, call, args)
        return executor.submit(timed_call, call, args)

    def _make(self) -> concurrent.futures.Executor:
        if self.spec.kind == "threads":
            return concurrent.futures.ThreadPoolExecutor(
                self.workers, thread_name_prefix="doceval-cpu"
            )
        if self.spec.kind == "shared":
            from pytest_doceval.engine.pool_client import SharedPoolClient

            return SharedPoolClient(self.spec.address or "", self.workers)
        if self.spec.kind == "dask":
            try:
                from distributed import Client
            except ImportError:
                raise SuiteConfigError(
                    f"executor {self.spec.text!r} needs Dask: pip install 'pytest-doceval[dask]'"
                ) from None
            self._client = Client(  # type: ignore[no-untyped-call]
                self.spec.address, timeout=30, set_as_default=False
            )
            executor: concurrent.futures.Executor = self._client.get_executor(pure=False)
            return executor
        return process_pool(self.workers)

    def restart(self, broken: concurrent.futures.Executor) -> None:
        """Replace `broken` (a process pool whose worker died) unless already replaced."""
        with self._lock:
            if self._executor is not broken:
                return
            self._executor = None
            self.restarts += 1
        broken.shutdown(wait=False, cancel_futures=True)

    def close(self, *, cancel: bool = False) -> None:
        with self._lock:
            executor, client = self._executor, self._client
            self._executor = self._client = None
        if client is not None and executor is not None:
            executor.shutdown(wait=not cancel)  # Dask's: without wait, it cancels the rest
        elif executor is not None:
            processes = list((getattr(executor, "_processes", None) or {}).values())
            # Queued stages are dropped either way (the tests that needed them are over).
            executor.shutdown(wait=not cancel, cancel_futures=True)
            if cancel:  # Ctrl-C: a parse still running must not hold the exit for minutes
                for process in processes:
                    process.terminate()
        if client is not None:
            client.close()
