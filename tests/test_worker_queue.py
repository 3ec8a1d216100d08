"""An xdist worker hands its engine the tests queued since it last looked, reading xdist's
queue from its end: work stealing gives a worker its whole share at once, and reading the
whole queue for every test was quadratic (211 s instead of 74 s for 70,000 facts)."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_doceval.session_hooks.running import worker_queue as _worker_queue


class Queue:
    """xdist's worker queue: indices of session.items, under a lock."""

    def __init__(self, indices: list[int]) -> None:
        self.indices: deque[Any] = deque(indices)
        self.reads = 0

    @contextlib.contextmanager
    def lock(self) -> Iterator[deque[Any]]:
        self.reads += 1
        yield self.indices


def fake_item(name: str, session: Any) -> Any:
    return SimpleNamespace(name=name, session=session, config=session.config)


LOOKS: list[int] = []  # how many times the plugins were looked through


def setup(queue: Queue, count: int) -> list[Any]:
    plugins = [SimpleNamespace(), SimpleNamespace(torun=queue)]

    def get_plugins() -> list[Any]:
        LOOKS.append(1)
        return plugins

    config = SimpleNamespace(
        pluginmanager=SimpleNamespace(get_plugins=get_plugins), stash=pytest.Stash()
    )
    session = SimpleNamespace(config=config, items=[])
    session.items = [fake_item(f"t{i}", session) for i in range(count)]
    return session.items  # type: ignore[no-any-return]


def names(items: list[Any]) -> list[str]:
    return [item.name for item in items]


def test_each_queued_test_is_handed_over_once_and_new_ones_are_found_at_the_end() -> None:
    queue = Queue(list(range(2, 6)))
    items = setup(queue, 10)
    seen: set[int] = set()
    first = _worker_queue(items[0], items[1], seen)
    assert names(first) == ["t0", "t1", "t2", "t3", "t4", "t5"]
    queue.indices.popleft()  # t2 runs
    assert names(_worker_queue(items[2], items[3], seen)) == ["t2", "t3"]  # nothing new queued
    queue.indices.extend([8, 9, "shutdown"])  # a stolen batch, then xdist's end marker
    assert names(_worker_queue(items[3], items[4], seen)) == ["t3", "t4", "t8", "t9"]
    queue.indices.pop()
    queue.indices.pop()  # a peer stole t9 back: nothing new
    assert names(_worker_queue(items[4], items[5], seen)) == ["t4", "t5"]


def test_reading_stops_at_the_first_index_seen() -> None:
    class Counting(deque[Any]):
        visited = 0

        def __reversed__(self) -> Iterator[Any]:
            for value in super().__reversed__():
                Counting.visited += 1
                yield value

    queue = Queue([])
    queue.indices = Counting(range(1, 5001))
    items = setup(queue, 5001)
    seen: set[int] = set()
    _worker_queue(items[0], None, seen)
    Counting.visited = 0
    for _ in range(100):
        _worker_queue(items[0], None, seen)
    assert Counting.visited == 100  # one look per call, not 5,000


def test_the_queue_is_found_once() -> None:
    items = setup(Queue([1, 2]), 3)
    LOOKS.clear()
    seen: set[int] = set()
    for item in items:
        _worker_queue(item, None, seen)
    assert len(LOOKS) == 1  # not every plugin looked at for every test
