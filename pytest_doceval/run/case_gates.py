"""One test's verdict: its suite's committed baseline (read once per suite) and the per-case
gates of ``suite.toml`` checked against it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pytest_doceval.errors import DocevalError
from pytest_doceval.gates import Bound, Rule, check_case
from pytest_doceval.kinds import CaseRef, Suite
from pytest_doceval.results import CaseResult
from pytest_doceval.run.baselines import BaselineFile, baseline_path, load_baseline


class SuiteBaselines:
    """The committed baselines of the run's suites, each read once (errors too)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._found: dict[str, BaselineFile | DocevalError | None] = {}

    def file(self, suite: str) -> Path:
        return baseline_path(self.directory, suite)

    def of(self, suite: Suite) -> BaselineFile | None:
        """The suite's committed baseline (None when there is none); an unreadable file raises
        the same clear error on every test of the suite."""
        if suite.name not in self._found:
            try:
                found: BaselineFile | DocevalError | None = load_baseline(
                    self.file(suite.name), suite=suite.name
                )
            except DocevalError as exc:
                found = exc
            self._found[suite.name] = found
        found = self._found[suite.name]
        if isinstance(found, DocevalError):
            raise found
        return found

    def comparable(self, suite: Suite) -> BaselineFile | None:
        """The baseline when it was made under the suite's scoring id (else nothing compares)."""
        baseline = self.of(suite)
        return (
            baseline if baseline is not None and baseline.scoring_id == suite.scoring_id else None
        )


def case_gate_failures(
    suite: Suite,
    ref: CaseRef,
    result: CaseResult,
    baselines: SuiteBaselines,
    *,
    recorded: Mapping[str, float] | None,
    updating: bool,
) -> list[str]:
    """The kind's own failures and the per-case gate failures against `recorded` (the test's
    entry in its suite's comparable baseline, found when it was planned). While updating
    baselines today's numbers are accepted against every baseline-relative rule (tolerances, and the
    kind's own failures, which are against the baseline too), but an absolute bound
    (``>= 0.9``) says what any run must reach and still fails."""
    if updating:
        return _bound_failures(suite, ref, result)
    if not suite.spec.case_gates:
        return list(result.failures)
    baseline = baselines.of(suite)
    if baseline is not None and baseline.scoring_id != suite.scoring_id:
        return [
            f"baseline {baselines.file(suite.name)} was made under scoring id "
            f"{baseline.scoring_id!r}, the suite now scores under {suite.scoring_id!r}; "
            "run pytest --doceval --doceval-update"
        ]
    previous = recorded or {}
    label = f"{suite.name}/{ref.key}"
    failures: list[str] = []
    for metric, rules in suite.spec.case_gates.items():
        if metric not in result.metrics:
            # Nothing to gate where the metric is absent by nature: the baseline recorded this
            # case without it too (an OmniDocBench page without tables has no TEDS), or the
            # metric is one some rows lack (`MetricSpec.optional`: no tokens without a model)
            # and the baseline has no value of it either.
            absent_before = metric not in previous
            if absent_before and (recorded is not None or suite.metric_spec(metric).optional):
                continue
            failures.append(f"{metric}: gated in suite.toml but not measured ({label})")
            continue
        failures += check_case(
            metric,
            result.metrics[metric],
            previous.get(metric),
            rules,
            direction=suite.metric_spec(metric).direction,
            label=label,
        )
    return [*result.failures, *failures]


def _bound_failures(suite: Suite, ref: CaseRef, result: CaseResult) -> list[str]:
    label = f"{suite.name}/{ref.key}"
    failures: list[str] = []
    for metric, rules in suite.spec.case_gates.items():
        bounds: list[Rule] = [rule for rule in rules if isinstance(rule, Bound)]
        if bounds and metric in result.metrics:
            failures += check_case(
                metric,
                result.metrics[metric],
                None,
                bounds,
                direction=suite.metric_spec(metric).direction,
                label=label,
            )
    return failures
