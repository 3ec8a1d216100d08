"""The doceval session: one object from configure to sessionfinish, kept in ``config.stash``.

Workers (pytest-xdist) and a plain run evaluate items through it; only the controller (or the
plain run) aggregates rows, writes the report and the baselines, and applies suite gates. Rows
reach the controller on the test reports, as builtin types only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_doceval.config import ProjectConfig, StatsConfig, load_suite_spec
from pytest_doceval.engine.store import Store
from pytest_doceval.errors import DocevalError, SuiteConfigError
from pytest_doceval.gates import Bound, Rule, check_case
from pytest_doceval.kinds import CaseRef, RunContext, Suite
from pytest_doceval.kinds.registry import make_suite
from pytest_doceval.metrics.spec import ordered_specs
from pytest_doceval.models.runtime import ModelRuntime
from pytest_doceval.progress import Progress, Totals, start_line, summary_line
from pytest_doceval.results import MEASURED, CaseResult
from pytest_doceval.run.baselines import (
    BaselineChange,
    BaselineFile,
    baseline_path,
    load_baseline,
    update_baseline,
)
from pytest_doceval.systems import SystemRegistry, build_registry

if TYPE_CHECKING:
    from pytest_doceval.engine import Engine

SESSION_KEY: pytest.StashKey[DocevalSession] = pytest.StashKey()


@dataclass(frozen=True)
class Options:
    """Command-line options of a doceval run."""

    update: bool
    json_path: Path
    html_path: Path | None
    cache_dir: Path | None
    cache_mode: str
    executor: str
    stats: StatsConfig
    shard: tuple[int, int] | None


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--doceval-shard {text!r}: expected K/N, e.g. 1/4") from None
    if not 1 <= k <= n:
        raise pytest.UsageError(f"--doceval-shard {text!r}: need 1 <= K <= N")
    return k, n


def in_shard(suite: str, case: str, shard: tuple[int, int]) -> bool:
    """Whole cases go to one shard (every system of a case together), by a stable hash."""
    digest = hashlib.sha256(f"{suite}/{case}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % shard[1] == shard[0] - 1


class DocevalSession:
    def __init__(
        self, config: pytest.Config, project: ProjectConfig, options: Options, *, root: Path
    ) -> None:
        self.config = config
        self.project = project
        self.options = options
        self.rootpath = root  # the doceval project's root: baselines and cache live here
        self._registry: SystemRegistry | None = None
        self._suites: dict[Path, Suite | DocevalError] = {}
        self._resolved: dict[Path, Path] = {}  # resolving costs syscalls on every test
        self._names: dict[str, Path] = {}
        self._baselines: dict[str, BaselineFile | DocevalError | None] = {}
        workerinput = getattr(config, "workerinput", None)
        # One store for outputs, responses and embeddings; xdist workers share the run id.
        run_id = workerinput["testrunuid"] if workerinput else None
        self.cache = Store(options.cache_dir, options.cache_mode, run_id=run_id)
        self.models = _model_runtime(config, root, self.cache)
        self.collected: dict[Path, list[dict[str, Any]]] = {}
        self.summary_lines: list[str] = []
        self.gate_failures: list[str] = []
        self._columns: list[str] | None = None
        self.interrupted = False
        self._engine: Engine | None = None
        self._stage_keys: dict[str, list[str]] = {}  # node id -> the keys its test waits for
        self._progress: Progress | None = None
        self.totals = Totals()

    # -- systems and suites -------------------------------------------------------------------

    @property
    def registry(self) -> SystemRegistry:
        if self._registry is None:
            hook = self.config.hook

            def from_conftest(registry: SystemRegistry) -> None:
                hook.pytest_doceval_register_systems(registry=registry)

            self._registry = build_registry([from_conftest])
        return self._registry

    def suite(self, file: Path) -> Suite:
        """The suite defined by `file` (cached, errors too: a bad suite fails the same way
        every time it is asked for)."""
        file = self._resolved.get(file) or self._resolved.setdefault(file, file.resolve())
        if file not in self._suites:
            try:
                spec = load_suite_spec(file)
                # What a suite's systems may fall back on: its own [suite] vlm, else the project's.
                vlm = spec.table.get("vlm") or self.project.vlm
                defaults = {"vlm": vlm, "embedder": self.project.embedder}
                suite = make_suite(spec, self.registry, self.models, defaults)
                other = self._names.setdefault(suite.name, file)
                if other != file:
                    raise SuiteConfigError(
                        f"{file}: suite name {suite.name!r} is already used by {other}; "
                        "suite names (folder names) share one baselines folder and must differ"
                    )
                self._suites[file] = suite
            except DocevalError as exc:
                self._suites[file] = exc
        found = self._suites[file]
        if isinstance(found, DocevalError):
            raise found
        return found

    def headline_columns(self) -> list[str]:
        """Headline metrics of the kinds of the suites this run will collect (pytest-html
        builds its table header before collection, so they are read from the suite files)."""
        if self._columns is None:
            from pytest_doceval.kinds.registry import kind_class

            columns: dict[str, None] = {}
            for file in self._suite_files():
                try:
                    kind = load_suite_spec(file).kind
                    metrics = kind_class(kind).metrics
                except DocevalError:
                    continue  # a broken suite reports itself as an error item
                for name, spec in metrics.items():
                    if spec.headline and not any(ch in name for ch in "*?["):
                        columns.setdefault(name)
            self._columns = list(columns)
        return self._columns

    def _suite_files(self) -> list[Path]:
        files: list[Path] = []
        for arg in self.config.args:
            path = Path(arg.split("::")[0])
            path = path if path.is_absolute() else Path(self.config.invocation_params.dir) / path
            if path.name == "suite.toml":
                files.append(path)
            elif path.is_dir():
                files.extend(sorted(path.rglob("suite.toml")))
        return files

    def progress_writer(self) -> Callable[[str], None] | None:
        """Where progress lines go: the terminal of a plain run, written with capture
        suspended (as pytest's live logging writes); nowhere in an xdist worker, whose output
        is not shown."""
        if hasattr(self.config, "workerinput"):
            return None
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return None
        capture = self.config.pluginmanager.get_plugin("capturemanager")

        def emit(line: str) -> None:
            # Under -q the dots line has no path, and write_line would not start a new line.
            if getattr(reporter, "_width_of_current_line", 0):
                reporter.write("\n")
            reporter.write_line(line)

        def write(line: str) -> None:
            if capture is None:
                emit(line)
                return
            with capture.global_and_fixture_disabled():
                emit(line)

        return write

    def baseline_file(self, suite: str) -> Path:
        return baseline_path(self.rootpath / self.project.baselines, suite)

    def baseline(self, suite: Suite) -> BaselineFile | None:
        """The suite's committed baseline (None when there is none); an unreadable file raises
        the same clear error on every test of the suite."""
        if suite.name not in self._baselines:
            try:
                found: BaselineFile | DocevalError | None = load_baseline(
                    self.baseline_file(suite.name), suite=suite.name
                )
            except DocevalError as exc:
                found = exc
            self._baselines[suite.name] = found
        found = self._baselines[suite.name]
        if isinstance(found, DocevalError):
            raise found
        return found

    # -- model requests -----------------------------------------------------------------------

    @property
    def engine(self) -> Engine:
        """The process's stage engine (made on first use)."""
        if self._engine is None:
            from pytest_doceval.engine import Engine, ExecutorSlot, parse_executor
            from pytest_doceval.engine.executors import cpu_count

            # xdist workers share the machine's cores: each pool takes its share of them.
            workers = max(1, cpu_count() // self.models.workers)
            slot = ExecutorSlot(parse_executor(self.options.executor, workers=workers))
            self._engine = Engine(slot, self.cache, hub=self.models.hub)
        return self._engine

    def plan(self, items: Sequence[pytest.Item], *, announce: bool = True) -> None:
        """Hand the stages of `items` (in their order) to the engine, which starts them at
        once; tests not planned yet only. A suite or case whose stages cannot be declared
        plans none: its test reports the cause."""
        for item in items:
            ref = getattr(item, "ref", None)
            if not isinstance(ref, CaseRef) or item.nodeid in self._stage_keys:
                continue
            try:
                stages = self.suite(item.path).stages(ref, RunContext(self.cache))
            except DocevalError:
                stages = ()
            self._stage_keys[item.nodeid] = []
            if stages:
                self._stage_keys[item.nodeid] = self.engine.add(stages)
        if not announce or self._engine is None:
            return
        cpu, model = self._engine.to_run()
        if cpu or model:
            slot = self._engine.slot
            snapshot = self._engine.snapshot()
            self.progress().say(
                start_line(
                    snapshot, cpu=cpu, model=model, executor=slot.spec.text, workers=slot.workers
                )
            )

    def progress(self) -> Progress:
        if self._progress is None:
            self._progress = Progress(self.progress_writer())
        return self._progress

    def wait_for_stages(self, nodeid: str) -> None:
        """Wait for the stages of test `nodeid`, saying how the run goes every few seconds."""
        keys = self._stage_keys.get(nodeid)
        if not keys or self._engine is None:
            return
        progress = self.progress()
        while not self._engine.wait(keys, timeout=max(0.05, progress.until_due())):
            progress.tick(self._engine.snapshot())

    def between_tests(self) -> None:
        if self._engine is not None:
            self.progress().tick(self._engine.snapshot())

    def close_models(self) -> None:
        """Stop the engine (what is still queued or in flight is no longer needed: the tests
        are over, or the run was interrupted) and the models; one line of totals."""
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.close(cancel=True)
            self.totals.add(Totals.of(engine.snapshot(), self.models.request_counts()).to_dict())
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # the controller sums the workers' (`add_worker_totals`)
            workeroutput["doceval_engine"] = self.totals.to_dict()
        elif self.totals.stages:
            self.summary_lines.append(summary_line(self.totals))
        self.models.close()

    def add_worker_totals(self, totals: Mapping[str, Any]) -> None:
        self.totals.add(totals)

    # -- one test -----------------------------------------------------------------------------

    def evaluate(self, suite: Suite, ref: CaseRef) -> CaseResult:
        baseline = self._comparable_baseline(suite)
        previous = baseline.cache_key(ref.key) if baseline is not None else None
        metrics = baseline.metrics(ref.key) if baseline is not None else None
        ctx = RunContext(
            self.cache, previous_cache_key=previous, baseline=metrics, engine=self._engine
        )
        result = suite.evaluate(ref, ctx)
        for metric in result.metrics:
            suite.metric_spec(metric)  # a kind must declare what it measures
        return result

    def _comparable_baseline(self, suite: Suite) -> BaselineFile | None:
        baseline = self.baseline(suite)
        return (
            baseline if baseline is not None and baseline.scoring_id == suite.scoring_id else None
        )

    def baseline_metrics(self, suite: Suite, ref: CaseRef) -> dict[str, float] | None:
        baseline = self._comparable_baseline(suite)
        return None if baseline is None else baseline.metrics(ref.key)

    def gate_failures_for(self, suite: Suite, result: CaseResult) -> list[str]:
        """The kind's own failures and the per-case gate failures. While updating baselines
        today's numbers are accepted against every baseline-relative rule (tolerances, and the
        kind's own failures, which are against the baseline too), but an absolute bound
        (``>= 0.9``) says what any run must reach and still fails."""
        if self.options.update:
            return self._bound_failures(suite, result)
        if not suite.spec.case_gates:
            return list(result.failures)
        baseline = self.baseline(suite)
        if baseline is not None and baseline.scoring_id != suite.scoring_id:
            return [
                f"baseline {self.baseline_file(suite.name)} was made under scoring id "
                f"{baseline.scoring_id!r}, the suite now scores under {suite.scoring_id!r}; "
                "run pytest --doceval --doceval-update"
            ]
        previous = self.baseline_metrics(suite, CaseRef(result.case, result.system)) or {}
        label = f"{suite.name}/{result.key}"
        failures: list[str] = []
        for metric, rules in suite.spec.case_gates.items():
            if metric not in result.metrics:
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

    def _bound_failures(self, suite: Suite, result: CaseResult) -> list[str]:
        label = f"{suite.name}/{result.key}"
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

    # -- the controller -----------------------------------------------------------------------

    def add_row(self, suite_file: Path, row: Mapping[str, Any]) -> None:
        self.collected.setdefault(suite_file, []).append(dict(row))

    def finish(self, *, interrupted: bool = False) -> bool:
        """Aggregate, write report and baselines, apply suite gates. True if a gate failed.

        A run that executed no doceval test (``--co``, a ``-k`` that matched nothing) writes no
        report: it must not replace a complete one with an empty one. An interrupted run's
        report says so, and its baselines are not updated."""
        if not self.collected:
            self.summary_lines.append("doceval: no evaluation test ran; no report written")
            return False
        self.interrupted = interrupted
        # Imported here, on the controller only: scipy costs every xdist worker seconds.
        from pytest_doceval.report.analysis import analyse_suite
        from pytest_doceval.report.json_report import build_report, write_report

        sections: dict[str, Any] = {}
        for file in sorted(self.collected):
            rows = self.collected[file]
            try:
                suite = self.suite(file)
            except DocevalError as exc:
                name = file.parent.name
                meta = {"kind": None, "path": self._relative(file.parent), "error": str(exc)}
                sections[name] = analyse_suite(meta, rows, self.options.stats)
                continue
            sections[suite.name] = self._suite_section(suite, rows)
        shard = self.options.shard
        report = build_report(
            sections,
            self.options.stats.to_dict(),
            shard=None if shard is None else f"{shard[0]}/{shard[1]}",
            interrupted=interrupted,
        )
        write_report(report, self.options.json_path)
        self.summary_lines.append(f"doceval report: {self._shown(self.options.json_path)}")
        if self.options.html_path is not None:
            from pytest_doceval.report.html import write_html

            write_html(report, self.options.html_path)
            self.summary_lines.append(f"doceval HTML report: {self._shown(self.options.html_path)}")
        self.report = report
        return bool(self.gate_failures)

    def _shown(self, path: Path) -> str:
        """A path as the user can open it from where pytest was started."""
        try:
            return path.relative_to(self.config.invocation_params.dir).as_posix()
        except ValueError:
            return path.as_posix()

    def _relative(self, path: Path) -> str:
        try:
            return path.relative_to(self.rootpath).as_posix()
        except ValueError:
            return path.as_posix()

    def _suite_section(self, suite: Suite, rows: list[dict[str, Any]]) -> dict[str, Any]:
        from pytest_doceval.report.analysis import analyse_suite

        measured = {m for row in rows for m in row.get("metrics", {})}
        meta: dict[str, Any] = {
            "kind": suite.kind,
            "path": self._relative(suite.spec.path),
            "scoring_id": suite.scoring_id,
            "systems": suite.system_names(),
            "notes": suite.notes(),
            "metrics": {
                name: spec.to_dict()
                for name, spec in ordered_specs(suite.metrics, measured).items()
            },
            "gate_rules": {
                "case": {m: [r.text for r in rules] for m, rules in suite.spec.case_gates.items()},
                "suite": {g.metric: g.text for g in suite.spec.suite_gates},
            },
            **suite.describe(),
        }
        try:
            baseline = self.baseline(suite)
        except DocevalError as exc:
            # Every test of the suite already errored with this; the report says it once more.
            meta["error"] = str(exc)
            return analyse_suite(meta, rows, self.options.stats, suite.analyses)
        defined = {ref.key for ref in suite.case_refs()}
        unused = sorted(set(baseline.entries) - defined) if baseline else []
        changes: list[BaselineChange] = []
        if self.options.update and self.interrupted:
            self.summary_lines.append(
                f"{suite.name}: run interrupted; baseline {self.baseline_file(suite.name)} "
                "left as it was"
            )
        elif self.options.update:
            changes = update_baseline(
                self.baseline_file(suite.name),
                suite=suite.name,
                scoring_id=suite.scoring_id,
                rows=[r for r in rows if r.get("outcome") in MEASURED],
                defined_keys=defined,
            )
            self._summarise_changes(suite.name, changes)
        elif unused:
            self.summary_lines.append(
                f"{suite.name}: unused baseline entries (no such case/system in the suite): "
                f"{', '.join(unused)}"
            )
        section = analyse_suite(meta, rows, self.options.stats, suite.analyses)
        section["unused_baseline"] = [] if self.options.update else unused
        section["baseline_changes"] = [str(c) for c in changes]
        for gate in section["gates"]:
            if not gate["passed"]:
                self.gate_failures.append(
                    f"{suite.name}: suite gate {gate['rule']}: {gate['message']}"
                )
        return section

    def _summarise_changes(self, suite: str, changes: list[BaselineChange]) -> None:
        path = self._relative(self.baseline_file(suite))
        if not changes:
            self.summary_lines.append(f"{suite}: baseline {path} unchanged")
            return
        kinds = {k: sum(c.kind == k for c in changes) for k in ("added", "changed", "removed")}
        counts = ", ".join(f"{n} {k}" for k, n in kinds.items() if n)
        self.summary_lines.append(f"{suite}: baseline {path} updated ({counts})")
        self.summary_lines.extend(f"  {change}" for change in changes[:50])
        if len(changes) > 50:
            self.summary_lines.append(f"  ... and {len(changes) - 50} more")


def _model_runtime(config: pytest.Config, root: Path, store: Store) -> ModelRuntime:
    """The run's models from ``[tool.doceval.models.*]`` (a bad table stops the run at once)."""
    from pytest_doceval.models.config import load_models

    pyproject = root / "pyproject.toml"
    try:
        configs = load_models(pyproject)
    except DocevalError as exc:
        raise pytest.UsageError(str(exc)) from None
    workerinput = getattr(config, "workerinput", None)
    return ModelRuntime(
        configs,
        store=store,
        workers=int(workerinput["workercount"]) if workerinput else 1,
        source=str(pyproject),
    )
