"""``doceval merge``: the shards of one run (``--doceval-shard K/N``) into one report.

Shards must describe the same suites (kind, normalization, systems, gate rules) and the same
statistics settings, and must not overlap: a (case, system) in two shards means they are not
shards of one run. Aggregates, comparisons, deltas and gates are recomputed from the union of
the rows, so the merged report equals the report of an unsharded run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_doceval.config import StatsConfig
from pytest_doceval.errors import DocevalError
from pytest_doceval.report.analysis import COMPUTED_KEYS, analyse_suite
from pytest_doceval.report.json_report import build_report

DEFINITION_KEYS = ("kind", "normalization", "systems", "gate_rules", "language", "path")


def _stats_config(config: Mapping[str, Any]) -> StatsConfig:
    return StatsConfig(
        resamples=int(config.get("bootstrap_resamples", 1000)),
        confidence=float(config.get("confidence", 0.95)),
        seed=int(config.get("seed", 0)),
    )


def merge_reports(reports: Sequence[Mapping[str, Any]], *, names: Sequence[str]) -> dict[str, Any]:
    if not reports:
        raise DocevalError("nothing to merge")
    configs = {repr(sorted(r.get("config", {}).items())) for r in reports}
    if len(configs) > 1:
        raise DocevalError(
            "reports were made with different statistics settings (bootstrap resamples, "
            "confidence or seed); re-run the shards with the same settings"
        )
    metas: dict[str, tuple[str, dict[str, Any]]] = {}
    rows: dict[str, list[dict[str, Any]]] = {}
    owners: dict[tuple[str, str, str], str] = {}
    unused: dict[str, set[str]] = {}
    changes: dict[str, list[str]] = {}
    for report, name in zip(reports, names, strict=True):
        for suite_name, suite in report["suites"].items():
            meta = {k: v for k, v in suite.items() if k not in COMPUTED_KEYS}
            if suite_name in metas:
                _check_same_definition(suite_name, metas[suite_name], (name, meta))
            else:
                metas[suite_name] = (name, meta)
            for row in suite.get("results", []):
                key = (suite_name, str(row["case"]), str(row["system"]))
                if key in owners:
                    raise DocevalError(
                        f"overlapping shards: {suite_name}/{key[1]}[{key[2]}] is in both "
                        f"{owners[key]} and {name}"
                    )
                owners[key] = name
                rows.setdefault(suite_name, []).append(dict(row))
            unused.setdefault(suite_name, set()).update(suite.get("unused_baseline", []))
            changes.setdefault(suite_name, []).extend(suite.get("baseline_changes", []))
    config = _stats_config(reports[0].get("config", {}))
    sections = {}
    for suite_name, (_, meta) in metas.items():
        section = analyse_suite(meta, rows.get(suite_name, []), config)
        section["unused_baseline"] = sorted(unused[suite_name])
        section["baseline_changes"] = changes[suite_name]
        sections[suite_name] = section
    return build_report(sections, config.to_dict())


def _check_same_definition(
    suite: str, first: tuple[str, Mapping[str, Any]], other: tuple[str, Mapping[str, Any]]
) -> None:
    (name_a, a), (name_b, b) = first, other
    for key in DEFINITION_KEYS:
        if a.get(key) != b.get(key):
            raise DocevalError(
                f"suite {suite!r} differs between {name_a} and {name_b}: {key} "
                f"{a.get(key)!r} vs {b.get(key)!r}; only shards of one run can be merged"
            )
