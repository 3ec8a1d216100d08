"""The controller's work: each finished test's row to disk at once, then, after the tests, rows
-> suite sections -> the report, suite gates, baseline updates. Runs on the controller (or a
plain run) only.

Rows are recorded as they come (`row_file.RowRecord`: a JSON line each, written and flushed):
the run's partial record (`record`, beside the report: ``doceval-report.partial.jsonl``), so a
run killed midway leaves the rows of every test that finished, and no report or baseline half
written. In memory the controller keeps only the rows' numbers (`row_table.RowTable`, about
half a kilobyte a row, where a row dict is about ten), and a test's report carries no row on
(only its metrics while pytest-html writes a report, whose table reads them): pytest keeps
every report to the end of the run. The analyses read the numbers; the report copies the
rows' lines; the record is removed once the report is written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_doceval.config import StatsConfig
from pytest_doceval.errors import DocevalError, relative_paths
from pytest_doceval.kinds import Suite
from pytest_doceval.metrics.spec import ordered_specs
from pytest_doceval.row_file import RowRecord, Rows
from pytest_doceval.rows import Row
from pytest_doceval.run.analysis_cache import AnalysisCache
from pytest_doceval.run.baselines import BaselineChange, NoiseBands, update_baseline
from pytest_doceval.run.case_gates import SuiteBaselines
from pytest_doceval.store import Store

if TYPE_CHECKING:  # the report's modules load on the controller only, when it writes
    from pytest_doceval.report.schema import Report, SuiteMeta, SuiteSection


class Controller:
    def __init__(
        self,
        *,
        suite: Callable[[Path], Suite],
        baselines: SuiteBaselines,
        stats: StatsConfig,
        update: bool,
        root: Path,
        invoked_in: Path,
        prepare_ahead: bool = False,
        analysis: AnalysisCache | None = None,
        record: Path | None = None,
        rows_read_later: bool = False,
    ) -> None:
        self._suite = suite
        # Whether a report keeps each row's metrics to the end (pytest-html's table reads
        # them): without one, 200,000 rows' metrics held hundreds of MB for nothing.
        self._rows_read_later = rows_read_later
        # Suite sections computed before, read back when their rows are the same.
        self.analysis = analysis if analysis is not None else AnalysisCache(Store(None, "off"))
        self.baselines = baselines
        self.stats = stats
        self.update = update
        self.root = root  # report paths are relative to the doceval project's root
        self.invoked_in = invoked_in  # printed paths are relative to where pytest started
        # The rows so far, on disk (`record`, or a temporary file when none is named).
        self.record = RowRecord(record)
        self.summary_lines: list[str] = []
        self.gate_failures: list[str] = []
        self.interrupted = False
        self.report: Report | None = None

        # An xdist controller waits while its workers run the tests. It makes each suite
        # meanwhile (one thread, joined before the report), not after the last test. What
        # the report imports (scipy, a second) it does not import ahead: a warm run reads its
        # analysis back (`analysis`) and needs none of it, and the import took a core from the
        # workers.
        self._ahead = ThreadPoolExecutor(1, "doceval-prepare") if prepare_ahead else None

    def add_row(self, suite_file: Path, row: Row) -> dict[str, Any] | None:
        """Record `row` (a line of the run's record, its numbers in memory); what its test's
        report carries on to the end of the run: the row's metrics when pytest-html's table
        will read them, else nothing."""
        if self.record.add(suite_file, row):
            self.prepare(suite_file)
        return {"metrics": row.get("metrics", {})} if self._rows_read_later else None

    def prepare(self, suite_file: Path) -> None:
        """Have the suite of `suite_file` made ahead of `finish` (an xdist controller only;
        `add_row` asks once a file)."""
        if self._ahead is not None:
            self._ahead.submit(self._prepare, suite_file)

    def prepare_found(self, find: Callable[[], Iterable[Path]]) -> None:
        """Prepare, ahead of the first row, each suite file that `find` names (speculative:
        the files the run's arguments name; one that runs no test costs only this)."""
        if self._ahead is not None:

            def prepare_each() -> None:
                for file in find():
                    self._prepare(file)

            self._ahead.submit(prepare_each)

    def _prepare(self, suite_file: Path) -> None:
        """Make the suite of `suite_file`. An error is left for `finish`, which meets it
        again and reports it."""
        with contextlib.suppress(Exception):
            self._suite(suite_file)

    def _wait_for_preparation(self) -> None:
        if self._ahead is not None:
            self._ahead.shutdown(wait=True)
            self._ahead = None

    def finish(
        self,
        *,
        json_path: Path,
        html_path: Path | None,
        shard: str | None,
        shard_basis: str | None = None,
        empty_shard: str | None = None,
        interrupted: bool = False,
        limit: int | None = None,
    ) -> bool:
        """Aggregate, write report and baselines, apply suite gates. True if a gate failed.

        A run that executed no doceval test (``--co``, a ``-k`` that matched nothing) writes no
        report: it must not replace a complete one with an empty one. A shard that holds none
        of the run's cases (`empty_shard`, the line that says so) is a legitimate share of the
        run: its empty report lets ``doceval merge`` see every shard. An interrupted run's
        report says so, and its baselines are not updated."""
        self._wait_for_preparation()
        self.record.close()
        files = self.record.groups()
        if not files and empty_shard is None:
            self.summary_lines.append("doceval: no evaluation test ran; no report written")
            self.record.discard()
            return False
        if empty_shard is not None:
            self.summary_lines.append(empty_shard)
        self.interrupted = interrupted
        # Imported here, on the controller only: scipy costs every xdist worker seconds.
        from pytest_doceval.report.json_report import build_report, save_report

        sections: dict[str, SuiteSection] = {}
        for file in sorted(files):
            rows = self.record.rows(file)
            try:
                suite = self._suite(file)
            except DocevalError as exc:
                name = file.parent.name
                meta: SuiteMeta = {
                    "kind": None,
                    "path": self._relative(file.parent),
                    "error": self._message(exc),
                }
                sections[name] = self.analysis.section(None, meta, rows, self.stats)
                continue
            try:
                sections[suite.name] = self._suite_section(suite, rows)
            except DocevalError as exc:  # its kind's report keys clash with the report's own
                path = self._relative(suite.spec.path)
                meta = {"kind": suite.kind, "path": path, "error": self._message(exc)}
                sections[suite.name] = self.analysis.section(type(suite), meta, rows, self.stats)
                self.gate_failures.append(f"{suite.name}: {self._message(exc)}")
        report = build_report(
            sections,
            self.stats.to_dict(),
            shard=shard,
            shard_basis=shard_basis,
            interrupted=interrupted,
            limit=limit,
        )
        # The rows are read from the report from here on: the record has served.
        report = save_report(report, json_path)
        self.record.discard()
        self.summary_lines.append(f"doceval report: {self._shown(json_path)}")
        if html_path is not None:
            from pytest_doceval.report.html import write_html

            write_html(report, html_path)
            self.summary_lines.append(f"doceval HTML report: {self._shown(html_path)}")
        self.report = report
        return bool(self.gate_failures)

    def _shown(self, path: Path) -> str:
        """A path as the user can open it from where pytest was started."""
        try:
            return path.relative_to(self.invoked_in).as_posix()
        except ValueError:
            return path.as_posix()

    def _message(self, error: Exception) -> str:
        """An error as the report and terminal show it: paths relative to the project."""
        return relative_paths(str(error), self.root)

    def _relative(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def _suite_section(self, suite: Suite, rows: Rows) -> SuiteSection:
        from pytest_doceval.report.schema import add_kind_keys

        measured = set(rows.table.metrics)
        meta: SuiteMeta = {
            "kind": suite.kind,
            "path": self._relative(suite.spec.path),
            "scoring_id": suite.scoring_id,
            "systems": suite.system_names(),
            "notes": suite.notes(),
            "metrics": {
                name: spec.to_dict()
                for name, spec in ordered_specs(suite.all_metrics(), measured).items()
            },
            "gate_rules": {
                "case": {m: [r.text for r in rules] for m, rules in suite.spec.case_gates.items()},
                "suite": {g.metric: g.text for g in suite.spec.suite_gates},
            },
        }
        add_kind_keys(meta, suite.describe())
        try:
            baseline = self.baselines.of(suite)
        except DocevalError as exc:
            # Every test of the suite already errored with this; the report says it once more.
            meta["error"] = self._message(exc)
            return self.analysis.section(type(suite), meta, rows, self.stats, suite.analyses)
        defined = {ref.key for ref in suite.case_refs()}
        unused = sorted(set(baseline.entries) - defined) if baseline else []
        changes: list[BaselineChange] = []
        baseline_file = self.baselines.file(suite.name)
        measured_rows = rows.sorted().measured()
        if self.update and self.interrupted:
            self.summary_lines.append(
                f"{suite.name}: run interrupted; baseline "
                f"{self._relative(baseline_file)} left as it was"
            )
        elif self.update and not measured_rows:
            # Every test errored or was skipped: an empty baseline would be a file of nothing,
            # and an existing one keeps what it has.
            self.summary_lines.append(
                f"{suite.name}: no test measured anything; baseline "
                f"{self._relative(baseline_file)} "
                + ("left as it was" if baseline_file.exists() else "not written")
            )
        elif self.update:
            changes = update_baseline(
                baseline_file,
                suite=suite.name,
                scoring_id=suite.scoring_id,
                rows=measured_rows,
                defined_keys=defined,
                noise=NoiseBands.of(suite, measured),
            )
            self._summarise_changes(suite.name, changes)
        elif unused:
            self.summary_lines.append(
                f"{suite.name}: unused baseline entries (no such case/system in the suite): "
                f"{', '.join(unused)}"
            )
        section = self.analysis.section(
            type(suite),
            meta,
            rows,
            self.stats,
            suite.analyses,
            unused_baseline=[] if self.update else unused,
            baseline_changes=[str(c) for c in changes],
        )
        for gate in section["gates"]:
            if not gate["passed"]:
                self.gate_failures.append(
                    f"{suite.name}: suite gate {gate['rule']}: {gate['message']}"
                )
        return section

    def _summarise_changes(self, suite: str, changes: list[BaselineChange]) -> None:
        path = self._relative(self.baselines.file(suite))
        if not changes:
            self.summary_lines.append(f"{suite}: baseline {path} unchanged")
            return
        kinds = {k: sum(c.kind == k for c in changes) for k in ("added", "changed", "removed")}
        counts = ", ".join(f"{n} {k}" for k, n in kinds.items() if n)
        self.summary_lines.append(f"{suite}: baseline {path} updated ({counts})")
        self.summary_lines.extend(f"  {change}" for change in changes[:50])
        if len(changes) > 50:
            self.summary_lines.append(f"  ... and {len(changes) - 50} more")


def partial_record(json_path: Path) -> Path:
    """Where a run writing `json_path` records its rows as they come:
    ``doceval-report.json`` -> ``doceval-report.partial.jsonl`` beside it."""
    return json_path.with_name(json_path.stem + ".partial.jsonl")
