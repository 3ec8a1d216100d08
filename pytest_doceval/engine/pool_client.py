"""An xdist worker's way to the controller's shared process pool (`engine.shared_pool`): an
executor whose stages cross a `multiprocessing.connection` socket, pickled, and come back as the
pool's answers."""

from __future__ import annotations

import concurrent.futures
import contextlib
import pickle
import secrets
import threading
from collections.abc import Callable
from multiprocessing.connection import Client, Connection
from typing import Any

from pytest_doceval.engine.answers import read_answer
from pytest_doceval.engine.stages import timed_call
from pytest_doceval.errors import DocevalError


class SharedPoolClient(concurrent.futures.Executor):
    """An xdist worker's way to the controller's `SharedPool`: `submit_keyed` sends a stage and
    gives a future of its ``(output, cost)``; `threads` stages are in flight at once (enough
    to keep the whole pool busy by itself)."""

    def __init__(self, address: str, threads: int) -> None:
        path, _, key = address.partition("#")
        self._path, self._authkey = path, bytes.fromhex(key)
        self._local = threading.local()
        self._connections: list[Connection] = []
        self._lock = threading.Lock()
        self._threads = concurrent.futures.ThreadPoolExecutor(
            threads, thread_name_prefix="doceval-shared"
        )

    def submit_keyed(
        self, key: str, call: Callable[..., Any], args: tuple[Any, ...]
    ) -> concurrent.futures.Future[Any]:
        payload = key.encode() + b"\0" + pickle.dumps((call, args))
        return self._threads.submit(self._ask, payload)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """A stage sent without a key (`timed_call(call, args)` only): keyed by its payload."""
        if fn is not timed_call or kwargs or len(args) != 2:
            raise TypeError("the shared pool runs stages: submit(timed_call, call, args)")
        payload = pickle.dumps((args[0], args[1]))
        return self._threads.submit(self._ask, secrets.token_hex(16).encode() + b"\0" + payload)

    def _ask(self, payload: bytes) -> Any:
        connection = self._connection()
        try:
            connection.send_bytes(payload)
            answer = connection.recv_bytes()
        except (OSError, EOFError) as exc:
            raise DocevalError(f"the xdist controller's shared pool is gone ({exc})") from exc
        return read_answer(answer)

    def _connection(self) -> Connection:
        connection: Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = Client(self._path, family="AF_UNIX", authkey=self._authkey)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._threads.shutdown(wait=wait, cancel_futures=cancel_futures)
        with self._lock:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.close()
            self._connections.clear()
