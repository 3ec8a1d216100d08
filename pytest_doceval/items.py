"""pytest nodes: a ``suite.toml`` file collects one item per (case, system).

A test's plan is made once (`run.planned.PlannedTest`: when the run plans it, or at its setup if
it was not), and kept on its item. ``setup`` takes its score from the engine and builds its
row, ``runtest`` gates it: bad input (a corrupt PDF, a missing truth file) shows as an ERROR --
nothing could be measured -- while a regression against the baseline shows as a FAILED test
with the rule that failed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_doceval.errors import DocevalError, SystemUnavailable
from pytest_doceval.kinds import CaseRef, case_row
from pytest_doceval.results import CaseResult
from pytest_doceval.rows import Row
from pytest_doceval.run.case_gates import case_gate_failures
from pytest_doceval.run.planned import PlannedTest
from pytest_doceval.session import SESSION_KEY, DocevalSession


class GateFailure(DocevalError):
    """A measured case that broke a per-case gate."""


class SuiteFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        session = self.config.stash[SESSION_KEY]
        try:
            suite = session.catalog.suite(self.path)
        except DocevalError as exc:
            # An item, not a collection error: pytest would stop the whole run on the latter,
            # and a broken suite must not keep the other suites from running.
            yield SuiteErrorItem.from_parent(self, name=self.path.parent.name, error=exc)
            return
        # Every case is collected; a shard run deselects the other shards' (session_hooks.py).
        for ref in suite.case_refs():
            yield CaseItem.from_parent(self, name=ref.key, ref=ref)


class SuiteErrorItem(pytest.Item):
    """Stands for a suite that could not be loaded; fails with the cause."""

    is_doceval_item = True

    def __init__(self, *, error: DocevalError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise self.error

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"suite {self.name}"


class CaseItem(pytest.Item):
    """One (case, system) of a suite."""

    is_doceval_item = True

    def __init__(self, *, ref: CaseRef, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ref = ref
        self.suite_name = self.path.parent.name
        self.planned: PlannedTest | None = None  # made when the run plans the test
        self.result: CaseResult | None = None
        self._row: Row | None = None
        self._done = False

    @property
    def doceval_row(self) -> Row | None:
        """This test's row, made when first asked for, and None once the test is over: its
        report carries it to the controller. A row made at collection for each of 70,000
        items, and every result kept to the end, were hundreds of MB in every process."""
        if self._row is None and not self._done:
            self._row = case_row(self.suite_name, self.ref, nodeid=self.report_nodeid)
        return self._row

    @doceval_row.setter
    def doceval_row(self, row: Row) -> None:
        self._row = row

    @property
    def _session(self) -> DocevalSession:
        return self.config.stash[SESSION_KEY]

    @property
    def report_nodeid(self) -> str:
        """The test's id in the report: its suite file relative to the doceval project root.
        pytest's own node id is relative to its rootdir, and a suite of another project run
        from here lost its folder there (``suite.toml::case[system]``)."""
        try:
            path = self.path.relative_to(self._session.rootpath).as_posix()
        except ValueError:
            return self.nodeid
        return f"{path}::{self.name}"

    def plan(self) -> PlannedTest:
        """This test's plan, made once (the suite of a broken suite file raises its error)."""
        if self.planned is None:
            self.planned = self._session.plan(self.path, self.ref)
        return self.planned

    def setup(self) -> None:
        session = self._session
        started = time.perf_counter()
        planned = self.plan()
        stages = session.stages
        assert stages is not None, "a process that runs tests has an engine"
        try:
            self.result = stages.score(planned)
        except SystemUnavailable as exc:
            pytest.skip(str(exc))
        row = case_row(self.suite_name, self.ref, self.result, nodeid=self.report_nodeid)
        row["duration"] = round(time.perf_counter() - started, 4)
        row["baseline"] = (
            None if planned.baseline.metrics is None else dict(planned.baseline.metrics)
        )
        self.doceval_row = row

    def runtest(self) -> None:
        planned, result = self.plan(), self.result
        assert result is not None
        session = self._session
        failures = case_gate_failures(
            planned.suite,
            self.ref,
            result,
            session.baselines,
            recorded=planned.baseline.metrics,
            updating=session.options.update,
        )
        if failures:
            raise GateFailure("\n".join(failures))

    def teardown(self) -> None:
        # The metrics become properties only now: the teardown report is the one junitxml reads
        # them from, and each report goes to the xdist controller with the item's properties
        # (three copies a test were a tenth of a warm worker's time).
        if self.result is not None and self._session.options.metrics_as_properties:
            for metric, value in sorted(self.result.metrics.items()):
                self.user_properties.append((metric, round(float(value), 6)))
        # The setup and call reports (made before this) hold what the controller needs; the
        # plan is done with (a run of 100,000 tests keeps its items to the end), and so are
        # the stages only this test needed.
        stages = self._session.stages
        if self.planned is not None and stages is not None:
            stages.done(self.planned)
        self.result, self._row, self._done, self.planned = None, None, True, None

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.suite_name}/{self.name}"

    def _repr_failure_py(self, excinfo: Any, style: Any = None) -> Any:
        # A doceval error or gate failure is reported by its cause (the plugin's makereport
        # replaces this with the cause first, and adds a parser's own traceback under
        # --tb=long), so pytest need not format a traceback nobody reads: it parses the source
        # of every frame, ~0.2 s a failure, minutes for a facts suite with thousands failing.
        if isinstance(excinfo.value, DocevalError):
            return str(excinfo.value)
        return super()._repr_failure_py(excinfo, style)
