"""The interface every suite kind implements.

A kind turns a parsed ``suite.toml`` into an ordered list of `CaseRef` -- one test each -- and
evaluates one reference into a `CaseResult`. It declares what its metrics mean (``metrics``:
name or family pattern -> `MetricSpec`), which suite-level analyses its report section needs
(``analyses``), and what makes two runs' numbers comparable (``scoring_id``). Collection order
must be deterministic (pytest-xdist compares it across workers), so kinds sort what they list.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.html.analysis import AnalysisRenderer
from pytest_doceval.html.views import ViewRenderer
from pytest_doceval.metrics.cost import COST_METRICS
from pytest_doceval.metrics.spec import MetricSpec, find_spec
from pytest_doceval.registry import did_you_mean
from pytest_doceval.rows import Row, new_row, row_key

if TYPE_CHECKING:
    from pytest_doceval.config import StatsConfig, SuiteSpec
    from pytest_doceval.engine import Plan, StageResults
    from pytest_doceval.results import CaseResult
    from pytest_doceval.store import Store
    from pytest_doceval.systems import SystemEnv


@dataclass(frozen=True)
class CaseRef:
    """One test: a case of a suite run by one system (the id part: ``pymupdf``,
    ``qwen-A``, ``ministral-raw``), with the labels its row is grouped by."""

    case: str
    system: str
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return row_key(self.case, self.system)


@dataclass(frozen=True)
class RunContext:
    """What scoring needs from the session besides the plan's results: the run's store and the
    cache key of the output the baseline was made from (None when unknown), for "what
    changed" views (`kinds.views.output_change`), and the baseline's metrics of this (case,
    system) when a comparable baseline has them."""

    cache: Store = field(default_factory=lambda: _no_store())
    previous_cache_key: str | None = None
    baseline: Mapping[str, float] | None = None


def _no_store() -> Store:
    from pytest_doceval.store import Store

    return Store(None, "off")


def case_row(
    suite: str, ref: CaseRef, result: CaseResult | None = None, *, nodeid: str = ""
) -> Row:
    """The report row of `ref`: an error row until `result` is given, then what it measured.
    The one place a row is built from a test: the labels a kind put on the `CaseRef` come
    first and win, labels the evaluation found (`CaseResult.labels`) follow."""
    row = new_row(suite, ref.case, ref.system, labels=ref.labels, nodeid=nodeid)
    return row if result is None else result.fill_row(row)


def evaluate_alone(
    suite: Suite, ref: CaseRef, ctx: RunContext | None = None, *, store: Store | None = None
) -> CaseResult:
    """One test planned, run and scored outside a run (a unit test, a notebook): its plan's
    stages in an engine of their own (`run_plan`), outputs kept in `store` (default: none),
    model stages through the suite's model runtime."""
    from pytest_doceval.engine import run_plan

    ctx = ctx or RunContext(store or _no_store())
    models = getattr(suite.systems_env, "models", None)
    results = run_plan(
        suite.plan(ref),
        store or ctx.cache,
        case=f"{suite.name}/{ref.key}",
        hub=None if models is None else models.hub,
    )
    return suite.evaluate(ref, results, ctx)


class Analysis(Protocol):
    """A suite-level analysis: its result (builtin types) lands in the suite's report section
    under ``key``. Runs, ``doceval merge`` and ``doceval report`` recompute it from the rows."""

    @property
    def key(self) -> str: ...

    def __call__(
        self,
        rows: Sequence[Mapping[str, Any]],
        meta: Mapping[str, Any],
        stats_config: StatsConfig,
    ) -> Any: ...


def system_list(value: object, file: object) -> list[str]:
    """``[suite] systems``: a non-empty list of distinct names, or a `SuiteConfigError`."""
    if not isinstance(value, list) or not value or not all(isinstance(s, str) and s for s in value):
        raise SuiteConfigError(f"{file}: [suite] systems must be a non-empty list of names")
    duplicates = sorted({s for s in value if value.count(s) > 1})
    if duplicates:
        raise SuiteConfigError(f"{file}: systems listed twice: {', '.join(duplicates)}")
    return list(value)


def check_system_settings(settings: Mapping[str, object], systems: list[str], file: object) -> None:
    """Every ``[systems.NAME]`` table must configure a system the suite lists: a table for a
    system that does not run is a typo, and its settings would be silently ignored."""
    extra = sorted(set(settings) - set(systems))
    if extra:
        raise SuiteConfigError(
            f"{file}: [systems.{extra[0]}] configures a system not in [suite] systems"
            f"{did_you_mean(extra[0], systems)}"
        )


class Suite(ABC):
    """A suite of one kind, built from its `SuiteSpec` (raises `SuiteConfigError` if unusable).

    ``self.spec.path`` is the suite's folder, ``self.spec.table`` its ``[suite]`` table and
    ``self.systems_env`` builds the systems it names.
    """

    kind: ClassVar[str]
    metrics: ClassVar[Mapping[str, MetricSpec]]
    analyses: ClassVar[Sequence[Analysis]] = ()
    # The kind's paper tables (`pytest_doceval.paper`): each builder turns a report section
    # into tables.
    paper_tables: ClassVar[Sequence[Callable[[Mapping[str, Any]], list[Any]]]] = ()
    # Lines the terminal summary prints under the suite's table, from its report section
    # (a leaderboard row the generic table cannot draw).
    terminal_lines: ClassVar[Sequence[Callable[[Mapping[str, Any]], list[str]]]] = ()
    # How the HTML report draws the kind's row views and analyses (`pytest_doceval.html`):
    # view name -> ViewRenderer, analysis key -> AnalysisRenderer; others are drawn generically.
    html_views: ClassVar[Mapping[str, ViewRenderer]] = {}
    html_analyses: ClassVar[Mapping[str, AnalysisRenderer]] = {}
    # The keys the kind reads from ``[suite]`` (``kind`` is always accepted): any other key is
    # an error when the suite loads, naming it and these, so a misspelled option (``sytems``)
    # never passes as its default. A kind that reads a key declares it here.
    suite_keys: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, spec: SuiteSpec, systems_env: SystemEnv) -> None:
        self.spec = spec
        self.systems_env = systems_env

    @classmethod
    def check_suite_keys(cls, spec: SuiteSpec) -> None:
        """A `SuiteConfigError` naming each ``[suite]`` key the kind does not declare."""
        spec.check_keys({"kind", *cls.suite_keys})

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def store(self) -> Store | None:
        """The run's one store (outputs, model responses, embeddings), for stages that keep
        what they compute per item (sentence vectors); None outside a run."""
        models = getattr(self.systems_env, "models", None)
        return None if models is None else models.store

    @property
    @abstractmethod
    def scoring_id(self) -> str:
        """What makes two runs' numbers comparable (a normalisation profile, an answer parser
        plus prompt hash, ...); baselines and reports made under another one never compare."""

    @abstractmethod
    def case_refs(self) -> list[CaseRef]:
        """Every (case, system) of the suite, in a deterministic order."""

    def plan(self, ref: CaseRef) -> Plan:
        """How `ref`'s output is made (`pytest_doceval.engine.plan`): its stages, each after
        the ones it needs, and the results `evaluate` scores, by name. The framework runs it --
        the run's engine, before and while the tests run, or `evaluate_alone` -- and never
        anything else. Raise a `DocevalError` naming the file and cause when the output cannot
        be planned (a missing PDF): it is the test's error. Default: no stages."""
        from pytest_doceval.engine import Plan

        return Plan()

    @abstractmethod
    def evaluate(self, ref: CaseRef, results: StageResults, ctx: RunContext) -> CaseResult:
        """Score one reference from its plan's finished `results`; compute no output here.
        Raise a `DocevalError` naming the file and cause on bad input."""

    def system_names(self) -> list[str]:
        """The suite's systems, for the report (default: as the case references name them)."""
        return list(dict.fromkeys(ref.system for ref in self.case_refs()))

    def describe(self) -> dict[str, object]:
        """Suite-level facts for the report (language, normalisation, ...)."""
        return {}

    def notes(self) -> list[str]:
        return []

    @classmethod
    def all_metrics(cls) -> dict[str, MetricSpec]:
        """What rows of this kind may carry: the kind's metrics, then what computing an output
        cost (`pytest_doceval.metrics.cost`, on the rows of tests that have stages)."""
        return {**cls.metrics, **COST_METRICS}

    def metric_spec(self, metric: str) -> MetricSpec:
        """The declared spec of `metric`; a `SuiteConfigError` for a metric the kind does not
        declare (a typo in a gate, or a kind that forgot to declare what it measures)."""
        # Asked for every metric of every test: remembered (a kind need not call our __init__).
        known: dict[str, MetricSpec | None] = self.__dict__.setdefault("_metric_specs", {})
        if metric not in known:
            known[metric] = find_spec(self.all_metrics(), metric)
        spec = known[metric]
        if spec is None:
            raise SuiteConfigError(
                f"{self.spec.file}: {metric!r} is not a metric of kind {self.kind!r} "
                f"(declared: {', '.join(self.all_metrics())})"
            )
        return spec

    def check_gates(self) -> None:
        """Every gated metric must be one the kind declares, and every tolerance's sign must
        point that metric's bad way."""
        from pytest_doceval.gates import Tolerance

        rules = [(m, r) for m, rs in self.spec.case_gates.items() for r in rs]
        rules += [(g.metric, g.tolerance) for g in self.spec.suite_gates]
        for metric, rule in rules:
            spec = find_spec(self.all_metrics(), metric)
            if spec is None:
                raise SuiteConfigError(
                    f"{self.spec.file}: [gates] names {metric!r}, which kind {self.kind!r} "
                    f"does not measure (metrics: {', '.join(self.all_metrics())})"
                )
            if isinstance(rule, Tolerance):
                try:
                    rule.check_sign(metric, spec.direction)
                except SuiteConfigError as exc:
                    raise SuiteConfigError(f"{self.spec.file}: {exc}") from None
