"""The facts kind's analysis: pass_rate per system as olmOCR-bench computes it, with breakdowns.

Recomputed from the rows alone (runs, ``doceval merge``, ``doceval report``), through the
engine's `pass_rate_ci` and `breakdown_by_file` (defined in `pytest_doceval.kinds.facts.passrate`):

* ``pass_rate``: the mean over fact files of each file's fraction of facts passed, with the
  bootstrap interval that resamples facts within each file;
* ``baseline_pass_rate``: the same figure from the baseline's verdicts on the facts measured
  now that the baseline has (None without a baseline);
* ``micro_mean``: olmOCR-bench's ``overall_score``, the mean over all facts of each fact's
  fraction of repeats passed -- a second figure, not the headline (`passrate.micro_mean`);
* ``by_file``: each file's fraction (the terms of that mean);
* ``by_type``: per fact type, the mean of each fact's fraction of repeats passed (olmOCR's
  per-type figure, which for a single output is the pass fraction);
* ``flagged``: {reason: facts} of the rows flagged on ``pass`` (a pass to read with care, such
  as a ``present`` pass on an output shorter than its text), empty when none.

A row counts when its fact was decided (outcome passed or failed, metric ``pass``); a skipped
fact is counted as skipped in the breakdowns and left out of pass_rate, as the engine does; an
error row (bad fact, unreadable input) measured nothing and is left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_doceval.config import StatsConfig
from pytest_doceval.rows import is_measured, plain

__all__ = ["PassRateAnalysis"]


@dataclass
class _System:
    by_file: dict[str, list[bool | None]] = field(default_factory=dict)
    by_type: dict[str, list[float | None]] = field(default_factory=dict)
    baseline_by_file: dict[str, list[bool | None]] = field(default_factory=dict)
    flagged: dict[str, int] = field(default_factory=dict)


def _collect(rows: Sequence[Mapping[str, Any]]) -> dict[str, _System]:
    systems: dict[str, _System] = {}
    for row in rows:
        measured = is_measured(row) and (row.get("metrics") or {}).get("pass") is not None
        if not measured and row.get("outcome") != "skipped":
            continue
        labels = row.get("labels") or {}
        system = systems.setdefault(str(row["system"]), _System())
        verdict: bool | None = None
        fraction: float | None = None
        if measured:
            verdict = float(row["metrics"]["pass"]) >= 1.0
            stated = (row.get("details") or {}).get("pass_fraction")
            fraction = float(stated) if isinstance(stated, int | float) else float(verdict)
        file = str(labels.get("file", "?"))
        system.by_file.setdefault(file, []).append(verdict)
        before = (row.get("baseline") or {}).get("pass") if measured else None
        if isinstance(before, int | float):
            system.baseline_by_file.setdefault(file, []).append(float(before) >= 1.0)
        system.by_type.setdefault(str(labels.get("type", "?")), []).append(fraction)
        for reason in (row.get("flags") or {}).get("pass", []) if measured else ():
            system.flagged[str(reason)] = system.flagged.get(str(reason), 0) + 1
    return systems


def _type_group(fractions: list[float | None]) -> dict[str, Any]:
    from pytest_doceval.kinds.facts import Group

    decided = [f for f in fractions if f is not None]
    group = Group(
        mean=sum(decided) / len(decided) if decided else math.nan,
        passed=sum(1 for f in decided if f > 0.5),
        failed=sum(1 for f in decided if f <= 0.5),
        skipped=len(fractions) - len(decided),
    )
    return group.to_dict()


@dataclass(frozen=True)
class PassRateAnalysis:
    """``{system: {pass_rate, ci_low, ci_high, method, n_files, n_facts, confidence,
    micro_mean, by_file: {file: group}, by_type: {type: group}, flagged: {reason: facts}}}``
    (module docstring)."""

    key: str = "pass_rate"

    def __call__(
        self, rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any], stats_config: StatsConfig
    ) -> dict[str, Any]:
        from pytest_doceval.kinds.facts import (
            breakdown_by_file,
            micro_mean,
            pass_rate,
            pass_rate_ci,
        )

        out: dict[str, Any] = {}
        for name, system in sorted(_collect(rows).items()):
            # Files in name order, facts in row order (rows arrive sorted): one resampling order
            # however the rows were produced, so merged shards give the unsharded interval.
            by_file = {f: system.by_file[f] for f in sorted(system.by_file)}
            rate = pass_rate_ci(
                by_file,
                confidence=stats_config.confidence,
                n_resamples=stats_config.resamples,
                seed=stats_config.seed,
            )
            before = {f: system.baseline_by_file[f] for f in sorted(system.baseline_by_file)}
            out[name] = {
                "pass_rate": rate.mean,
                # The baseline's verdicts on the facts measured now that it has: the same
                # figure then, for "what moved" (the suite gate compares facts, paired).
                "baseline_pass_rate": pass_rate(before) if before else None,
                "ci_low": rate.ci_low,
                "ci_high": rate.ci_high,
                "method": rate.method,
                "confidence": rate.confidence,
                "n_files": rate.n_files,
                "n_facts": rate.n_facts,
                "micro_mean": micro_mean(f for fs in system.by_type.values() for f in fs),
                "by_file": {f: g.to_dict() for f, g in breakdown_by_file(by_file).items()},
                "by_type": {t: _type_group(v) for t, v in sorted(system.by_type.items())},
                "flagged": dict(sorted(system.flagged.items())),
            }
        result: dict[str, Any] = plain(out)
        return result
