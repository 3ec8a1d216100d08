"""Hooks of every role: what pytest collects of a suite, the shard a run keeps, and the garbage
collector's work on what a big run keeps alive to its end."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from pytest_doceval.session import DocevalSession

# Tests between two freezes of what is alive (see `Collecting.pytest_runtest_logfinish`).
FREEZE_EVERY = 1000


def freeze_gc() -> None:
    """At the end of a run pytest collects garbage five times over (to surface unraisable
    exceptions), and each pass walks every live object: the items, reports and rows of a big
    suite, ~0.7 ms a test. One collection here frees what is garbage (its unraisable
    exceptions still reach pytest's hook); freezing the survivors makes pytest's passes skip
    them. Undone after pytest's clean-up, so an in-process run (pytester) leaks nothing."""
    gc.collect()
    gc.freeze()


class Collecting:
    def __init__(self, session: DocevalSession) -> None:
        self.session = session
        self._is_suite_dir: dict[Path, bool] = {}
        self._tests = 0

    def _holds_suite(self, folder: Path) -> bool:
        found = self._is_suite_dir.get(folder)
        if found is None:
            found = self._is_suite_dir[folder] = (folder / "suite.toml").is_file()
        return found

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        """A suite's folders (its cases, their outputs, a system's saved pages) are data the
        suite reads, not tests: pytest need not walk them. Walking thousands of case folders
        was most of the collection time of a big suite."""
        if self._holds_suite(collection_path.parent) and collection_path.is_dir():
            return True
        return None

    # First: the split is of every case, before -k or -m deselect any (the same in every shard).
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if self.session.options.limit is not None:  # a smoke run: the first N cases of each suite
            from pytest_doceval.run.limit import first_cases

            kept, limited = first_cases(items, case_of, self.session.options.limit)
            if limited:
                config.hook.pytest_deselected(items=limited)
                items[:] = kept
        shard = self.session.options.shard
        if shard is None:
            return
        from pytest_doceval.run.shards import select

        kept, dropped, plan = select(items, case_of, shard, self.session.shard_durations)
        self.session.shard_plan = plan
        workeroutput = getattr(config, "workeroutput", None)
        if workeroutput is not None:  # the xdist controller collects nothing: it is told
            workeroutput["doceval_shard"] = plan.to_dict()
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self) -> None:
        gc.freeze()  # see pytest_runtest_logfinish

    def pytest_runtest_logfinish(self) -> None:
        """Freeze what is alive every FREEZE_EVERY tests. A big suite keeps every item, row
        and report to the end, and Python's full garbage collections, each a walk over all of
        them, ran every time the heap grew by a quarter: about a third of the run time of
        7,000 facts. Frozen objects are skipped by the collector (cycles among them that die
        are freed after the run, when the plugin's `_unfreeze_gc` thaws them)."""
        self._tests += 1
        if self._tests % FREEZE_EVERY == 0:
            gc.freeze()

    def pytest_unconfigure(self) -> None:
        freeze_gc()


def case_of(item: pytest.Item) -> tuple[str, str] | None:
    """The (suite, case) an item belongs to, for shards: a case's every system together; a
    broken suite's error item is a case of its own."""
    ref = getattr(item, "ref", None)
    if getattr(item, "is_doceval_item", False):
        return (item.path.parent.name, ref.case if ref is not None else "")
    return None
