"""The ``omnidocbench`` suite's analysis: per system, the numbers OmniDocBench prints for the
pages measured (`scoring.leaderboard`, with Overall where Text Edit, Formula CDM and Table TEDS
all exist), the same numbers per tier (Base, Hard, Full, where the pages' tiers are known) and
per page-attribute group, and what the run did beyond the plain path.

It is recomputed from the report's rows (by a run, ``doceval merge`` and ``doceval report``), so
a page's row carries what `leaderboard` needs: its metrics, and in ``counts`` the sums behind each
edit rate. A page whose test errored (a missing prediction, a bad annotation) has no row to score
and is counted under ``pages_not_scored``, with its reason: the numbers are then over fewer
pages than the benchmark's, and the note says so. ``fallbacks`` and ``deadlines`` count the
pages that took each of the matcher's fallbacks and passed each deadline.

The sums ride on the row as a `MetricSpec.pooled` group, ``counts["<metric>/page"] =
{"matched": Σ edits, "total": Σ max(len)}``, so the generic summary's corpus value beside a
metric's mean is Σ edits / Σ max(len) over every block of every page: OmniDocBench's
``edit_whole``. (``matched`` is the pooled share's name for the numerator.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_doceval.config import StatsConfig
from pytest_doceval.kinds.omnidocbench.scoring import PageScore, leaderboard
from pytest_doceval.kinds.omnidocbench.suite_pages import TIER, attribute_groups
from pytest_doceval.rows import is_measured

COUNTS_SUFFIX = "/page"


def counts_key(metric: str) -> str:
    """The ``counts`` key (and `MetricSpec.pooled` prefix) of `metric`'s sums on a row."""
    return f"{metric}{COUNTS_SUFFIX}"


def row_counts(score: PageScore) -> dict[str, dict[str, float]]:
    """A page's sums as a row's ``counts``: one pooled group per metric."""
    return {
        counts_key(metric): {"matched": float(num), "total": float(den)}
        for metric, (num, den) in score.counts.items()
    }


def page_score_of(row: Mapping[str, Any]) -> PageScore:
    """The part of a page's `PageScore` that `leaderboard` reads, rebuilt from its row."""
    counts = {
        key.removesuffix(COUNTS_SUFFIX): (float(c["matched"]), float(c["total"]))
        for key, c in (row.get("counts") or {}).items()
        if key.endswith(COUNTS_SUFFIX)
    }
    metrics = {str(k): float(v) for k, v in (row.get("metrics") or {}).items()}
    return PageScore(metrics=metrics, counts=counts, blocks=(), notes=())


@dataclass(frozen=True)
class LeaderboardAnalysis:
    """``{system: {"pages", "pages_not_scored", "not_scored", "leaderboard", "by_tier",
    "by_attribute", "fallbacks", "deadlines", "formula_candidates"}}``: the leaderboard's
    numbers over the system's measured pages, per tier (``Base``, ``Hard``, ``Full``; empty
    where no tier is known) and per group of OmniDocBench's page split (``language:
    english``, ``layout: single_column``, each special issue; groups in sorted order, each
    with its page count); the pages not scored with their reasons; pages per fallback, per
    deadline, and per display-formula candidate kept other than the text matcher's own
    (OmniDocBench logs each as ``[formula-match-candidate]``)."""

    key: str = "omnidocbench"

    def __call__(
        self, rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any], stats_config: StatsConfig
    ) -> dict[str, Any]:
        listed = [str(k) for k in meta.get("listed_attributes") or []]
        measured: dict[str, list[Mapping[str, Any]]] = {}
        not_scored: dict[str, dict[str, str]] = {}
        for row in rows:
            system = str(row["system"])
            if is_measured(row):
                measured.setdefault(system, []).append(row)
            else:
                reason = str(row.get("message") or row.get("outcome") or "")
                not_scored.setdefault(system, {})[str(row["case"])] = (
                    reason.splitlines()[0][:300] if reason else ""
                )
        out: dict[str, Any] = {}
        for system in [*measured, *(s for s in not_scored if s not in measured)]:
            pages = sorted(measured.get(system, []), key=lambda r: str(r["case"]))
            groups: dict[str, list[PageScore]] = {}
            tiers: dict[str, list[PageScore]] = {}
            fallbacks: dict[str, int] = {}
            deadlines: dict[str, int] = {}
            candidates: dict[str, int] = {}
            scores = []
            for row in pages:
                score = page_score_of(row)
                scores.append(score)
                labels = dict(row.get("labels") or {})
                if tier := labels.pop(TIER, None):
                    tiers.setdefault(tier, []).append(score)
                for group in attribute_groups(labels, listed)[1:]:
                    groups.setdefault(group, []).append(score)
                details = row.get("details") or {}
                for name in dict.fromkeys(details.get("fallbacks") or []):
                    fallbacks[str(name)] = fallbacks.get(str(name), 0) + 1
                for what in dict.fromkeys(details.get("deadlines") or []):
                    deadlines[str(what)] = deadlines.get(str(what), 0) + 1
                if chosen := details.get("formula_candidate"):
                    candidates[str(chosen)] = candidates.get(str(chosen), 0) + 1
            skipped = not_scored.get(system, {})
            out[system] = {
                "pages": len(scores),
                "pages_not_scored": len(skipped),
                "not_scored": dict(sorted(skipped.items())),
                "leaderboard": leaderboard(scores) if scores else {},
                "by_tier": _tiers(tiers, scores),
                "by_attribute": {
                    group: {"pages": len(members), **leaderboard(members)}
                    for group, members in sorted(groups.items())
                },
                "fallbacks": dict(sorted(fallbacks.items())),
                "deadlines": dict(sorted(deadlines.items())),
                "formula_candidates": dict(sorted(candidates.items())),
            }
        return out


def _tiers(tiers: Mapping[str, list[PageScore]], everything: list[PageScore]) -> dict[str, Any]:
    """Base, Hard and Full (each with its pages) where any page's tier is known."""
    if not tiers:
        return {}
    out = {
        tier.capitalize(): {"pages": len(members), **leaderboard(members)}
        for tier, members in sorted(tiers.items())
    }
    out["Full"] = {"pages": len(everything), **leaderboard(everything)}
    return out
