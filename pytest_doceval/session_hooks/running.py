"""Hooks of a process that runs tests: it plans them -- each test's `PlannedTest`, kept on its
item, its stages handed to the process's engine in pytest's order -- says how the stages go
between tests, and stops its engine at the end.

A plain run plans every test once collected; an xdist worker plans the tests it is handed, as
it is handed them (`worker_queue`), and hands its engine's totals to the controller."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_doceval.items import CaseItem
from pytest_doceval.run.planned import PlannedTest
from pytest_doceval.run.stage_run import StageRun
from pytest_doceval.session import DocevalSession


class Running:
    def __init__(self, session: DocevalSession) -> None:
        assert session.stages is not None, "a process that runs tests has an engine"
        self.session = session
        self.stages: StageRun = session.stages

    def plan(self, items: list[pytest.Item], *, announce: bool) -> None:
        """Plan the doceval tests among `items` not planned yet, and hand their stages to the
        engine, which starts them at once."""
        planned: list[PlannedTest] = []
        for item in items:
            if isinstance(item, CaseItem) and item.planned is None:
                planned.append(item.plan())
        self.stages.add(planned, announce=announce)

    @pytest.hookimpl(trylast=True)  # a progress line after pytest's own writes, not on them
    def pytest_runtest_logfinish(self) -> None:
        self.stages.between_tests()  # a progress line, when one is due

    @pytest.hookimpl(tryfirst=True)  # before the report is made (`Reporting`)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.session.close(interrupted=session.exitstatus == pytest.ExitCode.INTERRUPTED)


# Tests a plain run plans ahead of the one running. Enough to keep any pool or model busy (a
# few hundred stages in flight at most), and planning all 200,000 tests of a big run at once held
# every plan -- its stages, keys and inputs -- until its test ran: 0.5 GB at the run's peak.
PLAN_AHEAD = 2000


class PlainRunning(Running):
    def __init__(self, session: DocevalSession) -> None:
        super().__init__(session)
        self._items: list[pytest.Item] = []
        self._planned_to = 0  # the items before this index are planned
        self._running = 0  # tests started so far

    @pytest.hookimpl(trylast=True)  # the start line after pytest's "collected N items"
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.config.getoption("collectonly", False):
            return  # nothing runs: nothing to plan (a plan hashes every test's inputs)
        self._items = session.items
        self.stages.unplanned = sum(isinstance(item, CaseItem) for item in self._items)
        self._plan_ahead(announce=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        self._running += 1
        if self._planned_to - self._running < PLAN_AHEAD // 2:
            self._plan_ahead(announce=False)

    def _plan_ahead(self, *, announce: bool) -> None:
        """Plan the tests up to `PLAN_AHEAD` past the running one; the stage counts of the
        lines are projected over the tests not planned yet."""
        end = min(len(self._items), self._running + PLAN_AHEAD)
        if end <= self._planned_to:
            return
        batch, self._planned_to = self._items[self._planned_to : end], end
        self.stages.unplanned -= sum(isinstance(item, CaseItem) for item in batch)
        self.plan(batch, announce=announce)


class WorkerRunning(Running):
    def __init__(self, session: DocevalSession) -> None:
        super().__init__(session)
        self._queued: set[int] = set()  # queue indices handed to the engine

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        self.plan(worker_queue(item, nextitem, self._queued), announce=False)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        super().pytest_sessionfinish(session)
        workeroutput = getattr(self.session.config, "workeroutput", None)
        if workeroutput is not None:  # the controller sums the workers' totals
            workeroutput["doceval_engine"] = self.stages.totals_dict()
            workeroutput["doceval_stayed_home"] = dict(self.stages.stayed_home())


def worker_queue(item: pytest.Item, nextitem: pytest.Item | None, seen: set[int]) -> list[Any]:
    """An xdist worker's test now, next and what was queued since the last call (xdist's
    queue of item indices; `seen` holds the indices already returned). New tests are appended
    at the queue's end, so it is read from the end back to the first one seen: reading the
    whole queue for every test was quadratic once work stealing gave each worker its whole
    share (35,000 tests) at once."""
    queued: list[pytest.Item] = [item] + ([nextitem] if nextitem is not None else [])
    torun = _xdist_queue(item.config)
    if torun is not None:
        fresh: list[int] = []
        with torun.lock() as indices:
            for index in reversed(indices):
                if index in seen:
                    break
                if isinstance(index, int):
                    fresh.append(index)
        seen.update(fresh)
        items = item.session.items
        queued += [items[i] for i in reversed(fresh)]
    return queued


_XDIST_QUEUE: pytest.StashKey[Any] = pytest.StashKey()


def _xdist_queue(config: pytest.Config) -> Any:
    """xdist's queue of this worker's item indices (its worker plugin's ``torun``), found
    once: looking through every plugin for it, for every test, was a cost of its own."""
    if _XDIST_QUEUE not in config.stash:
        found = None
        for plugin in config.pluginmanager.get_plugins():
            torun = getattr(plugin, "torun", None)
            if torun is not None and hasattr(torun, "lock"):
                found = torun
                break
        config.stash[_XDIST_QUEUE] = found
    return config.stash[_XDIST_QUEUE]
