"""A suite's analysis is computed once for the rows it is computed from: a warm run whose rows
are the last run's reads the suite's section back from the store instead of analysing again.

A section (`report.analysis.analyse_suite`: aggregates with their intervals, baseline deltas,
gates, the kind's analyses) is a function of the suite's meta, its rows, the statistics
settings and the code that computes it, and nothing else (the `Analysis` contract: recomputed
from the rows by runs, ``doceval merge`` and ``doceval report`` alike). Its key is a SHA-256
over exactly those: the meta, the rows in their one order less each row's ``duration`` (the
only field of a row that differs between two runs of unchanged tests; a digest of each row's
JSON, taken when the row was recorded: `row_file.Rows.digest`), the settings, what the
run says of the baseline, the package's code but its HTML and CLI rooms, the kind's own code,
and the versions of Python and the package's dependencies (numpy and scipy compute it). A
warm run of the shipped suites spent a second importing scipy and most of another in 551
Wilcoxon tests to recompute what it had computed before.

One form of a section, whether computed now or read back: its JSON (key order kept), the form
``doceval report`` and ``doceval merge`` read from a report on disk, so the terminal, the HTML
and the JSON report cannot tell the two apart.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_doceval.row_file import Rows
from pytest_doceval.rows import Row, plain
from pytest_doceval.run.code_digest import analysis_code_digest, environment_digest, json_digest
from pytest_doceval.store import Codec, Store

if TYPE_CHECKING:
    from pytest_doceval.config import StatsConfig
    from pytest_doceval.kinds import Analysis
    from pytest_doceval.report.schema import SuiteMeta, SuiteSection

# Bumped when the key's recipe or a section's stored form changes.
ANALYSIS_VERSION = "doceval-analysis/2"


class SectionCodec(Codec[dict[str, Any]]):
    """A suite section as JSON in its own key order (NaN kept, JSON's extension)."""

    name = "analysis"
    in_table = True

    def encode(self, value: dict[str, Any]) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=plain)

    def decode(self, text: str) -> dict[str, Any]:
        value = json.loads(text)
        if not isinstance(value, dict) or "results" not in value:
            raise ValueError("not a stored suite section")
        return value


SECTION = SectionCodec()


class AnalysisCache:
    """Suite sections kept in `store` (its mode decides whether they are read or kept)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def section(
        self,
        kind: type | None,
        meta: SuiteMeta,
        rows: Sequence[Row],
        stats: StatsConfig,
        analyses: Sequence[Analysis] = (),
        *,
        unused_baseline: Sequence[str] = (),
        baseline_changes: Sequence[str] = (),
    ) -> SuiteSection:
        """`analyse_suite`'s section of `rows`, read back when it was computed before; `kind`
        is the suite's class (None for a suite that could not be made)."""
        # The report's modules load on use: scipy and numpy cost a worker seconds.
        from pytest_doceval.report.analysis import analyse_suite, in_memory

        ordered = Rows.of(rows).sorted()
        key = self._key(kind, meta, ordered, stats, analyses, unused_baseline, baseline_changes)
        stored = None if key is None else self.store.get(key, SECTION)
        if stored is None:
            section = analyse_suite(
                meta,
                ordered,
                stats,
                analyses,
                unused_baseline=unused_baseline,
                baseline_changes=baseline_changes,
            )
            stored = SECTION.decode(SECTION.encode({**section, "results": None}))
            if key is not None:
                self.store.put(key, stored, SECTION)
        stored["results"] = ordered if isinstance(rows, Rows) else in_memory(ordered)
        found: SuiteSection = stored  # type: ignore[assignment]
        return found

    def _key(
        self,
        kind: type | None,
        meta: SuiteMeta,
        rows: Rows,
        stats: StatsConfig,
        analyses: Sequence[Analysis],
        unused_baseline: Sequence[str],
        baseline_changes: Sequence[str],
    ) -> str | None:
        if not (self.store.reads or self.store.writes):
            return None
        code = analysis_code_digest(kind)
        if code is None:
            return None
        payload = {
            "version": ANALYSIS_VERSION,
            "code": code,
            "environment": environment_digest(),
            "kind": _kind_name(kind),
            "meta": meta,
            "rows": rows.digest(),
            "stats": stats.to_dict(),
            "analyses": [a.key for a in analyses],
            "unused_baseline": list(unused_baseline),
            "baseline_changes": list(baseline_changes),
        }
        return json_digest(payload)


@functools.cache
def _kind_name(kind: type | None) -> str | None:
    return None if kind is None else f"{kind.__module__}.{kind.__qualname__}"
