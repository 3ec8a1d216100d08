"""A test's plan, made once: what it scores, how its output and its score are made, and the
baseline it is judged against.

`Planner.plan` makes one `PlannedTest` per test when the run plans it (after collection, or when
an xdist worker is handed the test): the kind's `Plan` of the output's stages, the score stage
appended to it (`run.score_stage`), the suite's comparable baseline entry found once (the score
key, the row, the run context and the gates all read that one entry). A plan that cannot be
made keeps its error, which its test raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_doceval.config import SuiteSpec
from pytest_doceval.engine import CpuStage, Plan, Stage
from pytest_doceval.errors import DocevalError
from pytest_doceval.kinds import CaseRef, RunContext, Suite
from pytest_doceval.run.case_gates import SuiteBaselines
from pytest_doceval.run.score_key import ScoreKeys
from pytest_doceval.run.score_stage import SuiteHandle, score_stage
from pytest_doceval.store import Store, file_digest


@dataclass(frozen=True)
class BaselineEntry:
    """A test's entry in its suite's comparable baseline: the metrics it recorded and the cache
    key of the output they were made from (either may be unknown)."""

    metrics: Mapping[str, float] | None
    cache_key: str | None


NO_BASELINE = BaselineEntry(None, None)


@dataclass(frozen=True)
class PlannedTest:
    """One test, planned: its suite and reference, the stages making its output (`outputs`)
    and the stage scoring it (`score`), its baseline entry -- or why it could not be planned
    (`error`, raised by the test)."""

    suite: Suite
    ref: CaseRef
    row: str  # ``suite/case[system]``, for messages
    baseline: BaselineEntry = NO_BASELINE
    outputs: tuple[Stage, ...] = ()
    score: CpuStage | None = None
    error: DocevalError | None = field(default=None, compare=False)

    @property
    def stages(self) -> tuple[Stage, ...]:
        return self.outputs if self.score is None else (*self.outputs, self.score)

    @property
    def output_keys(self) -> list[str]:
        return [stage.key for stage in self.outputs]


class Planner:
    """Makes each test's `PlannedTest` from the run's parts: its suites (`suite`), their
    baselines, the score keys' recipe and the store."""

    def __init__(
        self,
        *,
        suite: Callable[[Path], Suite],
        baselines: SuiteBaselines,
        score_keys: ScoreKeys,
        store: Store,
        project_root: Path,
        defaults: Callable[[SuiteSpec], Mapping[str, Any]],
    ) -> None:
        self._suite = suite
        self.baselines = baselines
        self.score_keys = score_keys
        self.store = store
        self.project_root = project_root
        self._defaults = defaults
        self._handles: dict[Path, SuiteHandle] = {}

    def plan(self, suite_file: Path, ref: CaseRef) -> PlannedTest:
        """The plan of `ref` in the suite of `suite_file`; a `DocevalError` when the suite
        itself cannot be made (its tests report that, as collection did)."""
        suite = self._suite(suite_file)
        row = f"{suite.name}/{ref.key}"
        try:
            baseline = self._baseline(suite, ref)
            plan = suite.plan(ref)
        except DocevalError as exc:
            return PlannedTest(suite, ref, row, error=exc)
        key = self.score_keys.key(
            suite,
            ref,
            stage_keys=plan.keys,
            previous_cache_key=baseline.cache_key,
            baseline=baseline.metrics,
        )
        ctx = RunContext(self.store, baseline.cache_key, baseline.metrics)
        score = score_stage(self._handle(suite), ref, plan, ctx, key, row)
        return PlannedTest(suite, ref, row, baseline, plan.stages, score)

    def _baseline(self, suite: Suite, ref: CaseRef) -> BaselineEntry:
        found = self.baselines.comparable(suite)  # an unreadable file: the test's error
        if found is None:
            return NO_BASELINE
        entry = found.entry(ref.key)
        if entry is None:
            return NO_BASELINE
        metrics, key = entry.get("metrics"), entry.get("cache_key")
        return BaselineEntry(
            dict(metrics) if isinstance(metrics, dict) else {},
            key if isinstance(key, str) else None,
        )

    def _handle(self, suite: Suite) -> SuiteHandle:
        file = suite.spec.file
        handle = self._handles.get(file)
        if handle is None:
            handle = self._handles[file] = SuiteHandle(
                file=file.resolve(),
                kind=suite.kind,
                project_root=self.project_root,
                store=self.store,
                defaults=dict(self._defaults(suite.spec)),
                digest=file_digest(file),
                local=suite,
            )
        return handle


__all__ = ["NO_BASELINE", "BaselineEntry", "Plan", "PlannedTest", "Planner"]
