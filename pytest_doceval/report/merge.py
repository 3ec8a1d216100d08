"""``doceval merge``: the shards of one run (``--doceval-shard K/N``) into one report.

Shards must describe the same suites (kind, scoring id, systems, gate rules) and the same
statistics settings, must not overlap (a (case, system) in two shards means they are not shards
of one run), and must be complete: every K of N present once. Aggregates, deltas, gates and the
kinds' analyses are recomputed from the union of the rows, so the merged report equals the
report of an unsharded run. The rows stay where the shards' reports hold them (`row_file.Rows`):
only their numbers and keys are in memory, and the merged report copies them line by line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pytest_doceval.config import StatsConfig
from pytest_doceval.errors import DocevalError
from pytest_doceval.kinds.base import Analysis
from pytest_doceval.report.analysis import analyse_suite
from pytest_doceval.report.json_report import build_report
from pytest_doceval.report.schema import (
    HASH_BASIS,
    Report,
    StatsSettings,
    SuiteMeta,
    SuiteSection,
    add_kind_keys,
    kind_keys,
)
from pytest_doceval.row_file import Rows
from pytest_doceval.rows import row_key

DEFINITION_KEYS = ("kind", "scoring_id", "systems", "gate_rules", "path")


def _stats_config(config: StatsSettings | None) -> StatsConfig:
    if config is None:
        return StatsConfig()
    return StatsConfig(
        resamples=int(config.get("bootstrap_resamples", 1000)),
        confidence=float(config.get("confidence", 0.95)),
        seed=int(config.get("seed", 0)),
    )


def definition(section: SuiteSection) -> SuiteMeta:
    """A section without what was computed from its rows: its declared definition keys, then
    the kind's description keys, in the order the run wrote them."""
    meta: SuiteMeta = {"kind": section["kind"], "path": section["path"]}
    if "scoring_id" in section:
        meta["scoring_id"] = section["scoring_id"]
    if "systems" in section:
        meta["systems"] = section["systems"]
    if "notes" in section:
        meta["notes"] = section["notes"]
    if "metrics" in section:
        meta["metrics"] = dict(section["metrics"])
    if "gate_rules" in section:
        meta["gate_rules"] = section["gate_rules"]
    add_kind_keys(meta, kind_keys(section))
    if "error" in section:
        meta["error"] = section["error"]
    return meta


def check_shards(reports: Sequence[Report], names: Sequence[str]) -> None:
    """Every report is a shard of the same N, and every K from 1 to N is there exactly once
    (a report without ``shard`` is a whole run and must be merged alone)."""
    shards = [r.get("shard") for r in reports]
    if all(s is None for s in shards) and len(reports) == 1:
        return
    seen: dict[int, str] = {}
    total: int | None = None
    for shard, name in zip(shards, names, strict=True):
        if not isinstance(shard, str) or "/" not in shard:
            raise DocevalError(f"{name} is not a shard (run with --doceval-shard K/N)")
        k, n = (int(x) for x in shard.split("/"))
        if total is not None and n != total:
            raise DocevalError(f"{name} is shard {shard}, the others are of {total}")
        total = n
        if k in seen:
            raise DocevalError(f"shard {shard} is given twice: {seen[k]} and {name}")
        seen[k] = name
    assert total is not None
    # Shards from an older plugin carry no basis: theirs was the hash.
    bases = {r.get("shard_basis", HASH_BASIS): name for r, name in zip(reports, names, strict=True)}
    if len(bases) > 1:
        described = "; ".join(f"{name}: {basis}" for basis, name in bases.items())
        raise DocevalError(
            f"the shards were split differently ({described}): a case may be in two of them "
            "or in none; run every shard with the same --doceval-shard-durations report"
        )
    missing = [f"{k}/{total}" for k in range(1, total + 1) if k not in seen]
    if missing:
        raise DocevalError(
            f"incomplete set of shards: missing {', '.join(missing)}; a merge of part of a run "
            "would report part of the cases as the whole"
        )


def merge_reports(
    reports: Sequence[Report], *, names: Sequence[str], root: Path | None = None
) -> Report:
    if not reports:
        raise DocevalError("nothing to merge")
    check_shards(reports, names)
    configs = {repr(sorted(r.get("config", {}).items())) for r in reports}
    if len(configs) > 1:
        raise DocevalError(
            "reports were made with different statistics settings (bootstrap resamples, "
            "confidence or seed); re-run the shards with the same settings"
        )
    metas: dict[str, tuple[str, SuiteMeta]] = {}
    rows: dict[str, list[Rows]] = {}
    owners: dict[tuple[str, str], str] = {}
    unused: dict[str, set[str]] = {}
    changes: dict[str, list[str]] = {}
    for report, name in zip(reports, names, strict=True):
        for suite_name, suite in report["suites"].items():
            meta = definition(suite)
            if suite_name in metas:
                _check_same_definition(suite_name, metas[suite_name], (name, meta))
                # Each shard lists the metrics it measured; the union is the run's.
                metas[suite_name][1]["metrics"] = {
                    **metas[suite_name][1].get("metrics", {}),
                    **meta.get("metrics", {}),
                }
            else:
                metas[suite_name] = (name, meta)
            shard_rows = Rows.of(suite.get("results", []))
            table = shard_rows.table
            for i in shard_rows.order:
                key = (suite_name, row_key(table.cases[i], table.systems[i]))
                if key in owners:
                    raise DocevalError(
                        f"overlapping shards: {suite_name}/{key[1]} is in both "
                        f"{owners[key]} and {name}"
                    )
                owners[key] = name
            rows.setdefault(suite_name, []).append(shard_rows)
            unused.setdefault(suite_name, set()).update(suite.get("unused_baseline", []))
            changes.setdefault(suite_name, []).extend(suite.get("baseline_changes", []))
    config = _stats_config(reports[0].get("config"))
    sections: dict[str, SuiteSection] = {}
    for suite_name, (_, meta) in metas.items():
        sections[suite_name] = analyse_suite(
            meta,
            Rows.concat(rows.get(suite_name, [])),
            config,
            _analyses(meta, root),
            unused_baseline=sorted(unused[suite_name]),
            baseline_changes=changes[suite_name],
        )
    limits = {r["limit"] for r in reports if r.get("limit")}
    return build_report(
        sections,
        config.to_dict(),
        interrupted=any(r.get("interrupted") for r in reports),
        limit=max(limits) if limits else None,  # shards of a limited run stay limited
    )


def _analyses(meta: SuiteMeta, root: Path | None) -> Sequence[Analysis]:
    """The analyses of the suite's kind, so they are recomputed over all rows. A kind defined
    in a conftest.py is found by importing the conftest files on the suite's path."""
    from pytest_doceval.kinds.registry import import_conftests, kind_class

    kind = meta.get("kind")
    if not isinstance(kind, str):
        return ()  # a suite that failed to load has rows but no analyses
    try:
        return kind_class(kind).analyses
    except DocevalError:
        if root is not None and isinstance(meta.get("path"), str):
            import_conftests(root, root / meta["path"])
            try:
                return kind_class(kind).analyses
            except DocevalError:
                pass
        raise DocevalError(
            f"suite kind {kind!r} is not installed here; run doceval merge in the project "
            "whose conftest.py or plugin defines it"
        ) from None


def _check_same_definition(
    suite: str, first: tuple[str, Mapping[str, object]], other: tuple[str, Mapping[str, object]]
) -> None:
    (name_a, a), (name_b, b) = first, other
    for key in DEFINITION_KEYS:
        if a.get(key) != b.get(key):
            raise DocevalError(
                f"suite {suite!r} differs between {name_a} and {name_b}: {key} "
                f"{a.get(key)!r} vs {b.get(key)!r}; only shards of one run can be merged"
            )
