"""Paper tables: ``doceval report R.json --format latex|markdown`` writes the tables the seeds
specify, from a report's numbers, so nobody types them by hand. Each suite's tables come from
its kind's builders (``Suite.paper_tables``), found through the kind registry as ``doceval
merge`` finds analyses; a kind without builders gets no table. The run's bootstrap settings ride
in each section, for the seeds' intervals (`pytest_doceval.paper.seed_interval`). The tables
themselves and their renderings are `pytest_doceval.paper`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_doceval.errors import DocevalError
from pytest_doceval.paper import PaperTable, TableBuilder, render
from pytest_doceval.report.schema import Report, SuiteSection

__all__ = ["builders_for", "render", "report_tables"]


def builders_for(kind: str) -> Sequence[TableBuilder]:
    """The table builders of `kind` (none for a kind that declares none)."""
    from pytest_doceval.kinds.registry import kind_class

    return tuple(getattr(kind_class(kind), "paper_tables", ()))


def report_tables(report: Report, suite: str | None = None) -> list[PaperTable]:
    """Every table of every suite (or of `suite`), in the report's suite order."""
    suites: Mapping[str, SuiteSection] = report.get("suites", {})
    config = report.get("config") or {}
    run_stats = {
        "confidence": config.get("confidence", 0.95),
        "bootstrap_resamples": config.get("bootstrap_resamples", 1000),
        "seed": config.get("seed", 0),
    }
    if suite is not None and suite not in suites:
        raise DocevalError(
            f"no suite {suite!r} in the report (it has: {', '.join(suites) or 'none'})"
        )
    tables: list[PaperTable] = []
    for name, section in suites.items():
        if suite is not None and name != suite:
            continue
        kind = section.get("kind")
        if not isinstance(kind, str) or section.get("error"):
            continue  # a suite that failed to load has no numbers to print
        try:
            builders = builders_for(kind)
        except DocevalError:
            if suite is not None:
                raise
            continue  # a kind defined in some project's conftest.py, not installed here
        for build in builders:
            for table in build({**section, **run_stats}):
                table.title = f"{table.title} ({name})"
                table.label = table.label or f"tab:{name}-{len(tables) + 1}"
                tables.append(table)
    return tables
