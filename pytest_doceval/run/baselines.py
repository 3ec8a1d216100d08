"""Committed baselines: ``baselines/<suite>.json``, one entry per (case, system).

The file is stable JSON (sorted keys, floats rounded to 6 decimals; one number a line, or an
entry a line past 2,000 entries: `baseline_file`) so a pull request's diff of it reads as
"which number moved". Each file records the normalisation profile
its numbers were made under (the kind's ``scoring_id``: for documents, the normalisation
profile); a baseline made under another one is never compared. Each entry keeps the cache key of
the output it was made from, so a later run can show what its output changed.

Noisy metrics (`MetricSpec.noisy`: what computing an output cost, in seconds, requests, tokens
and dollars) differ on every machine and every cold run; written into the file, a fresh CI
runner's ``--doceval-update`` would "change" every entry. They stay out of it, unless a gate
compares one with the baseline (a tolerance such as ``cpu_seconds = "+50%"``, or a suite gate;
an absolute bound such as ``"<= 30"`` needs no baseline): then the entry keeps its recorded
value until today's leaves that gate's tolerance of it (`NoiseBands`), so an entry is never
changed by noise alone.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.gates import Tolerance, rounded
from pytest_doceval.kinds import Suite
from pytest_doceval.metrics.spec import find_spec
from pytest_doceval.rows import row_key
from pytest_doceval.run.baseline_file import (
    BaselineEntries,
    entry_text,
    read_baseline,
    write_baseline,
)

BASELINE_SCHEMA = "doceval-baseline/1"


@dataclass
class BaselineFile:
    suite: str
    scoring_id: str
    entries: BaselineEntries  # each parsed when a test asks for it (`baseline_file`)

    def entry(self, key: str) -> dict[str, Any] | None:
        """The entry of `key`: its recorded ``metrics``, ``cache_key``, ``fingerprint``."""
        return self.entries.get(key)


def baseline_path(directory: Path, suite: str) -> Path:
    return directory / f"{suite}.json"


def load_baseline(path: Path, *, suite: str) -> BaselineFile | None:
    """The baseline at `path`, None when absent; a clear error when unreadable."""
    if not path.is_file():
        return None
    header, entries = read_baseline(path)
    if header.get("schema") != BASELINE_SCHEMA:
        raise SuiteConfigError(f"{path}: not a {BASELINE_SCHEMA} file")
    # Files written before kinds had scoring ids call it "normalization".
    scoring_id = header.get("scoring_id", header.get("normalization", ""))
    return BaselineFile(suite, str(scoring_id), entries)


@dataclass(frozen=True)
class BaselineChange:
    key: str
    kind: str  # "added" | "changed" | "removed"
    details: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.key}" + (f": {self.details}" if self.details else "")


@dataclass(frozen=True)
class NoiseBands:
    """A suite's noisy metrics (`MetricSpec.noisy`) and, for each a gate compares with the
    baseline, the tolerances of those gates: how far today's value may be from the
    recorded one and still be the same number, noise."""

    noisy: frozenset[str] = frozenset()  # noisy metrics the rows carry (names, not patterns)
    gated: Mapping[str, tuple[Tolerance, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, suite: Suite, metrics: Iterable[str]) -> NoiseBands:
        """The bands of `suite` for the metrics its rows carry (`metrics`)."""
        specs = suite.all_metrics()
        noisy = frozenset(m for m in metrics if (spec := find_spec(specs, m)) and spec.noisy)
        tolerances: dict[str, list[Tolerance]] = {}
        for metric, rules in suite.spec.case_gates.items():
            tolerances.setdefault(metric, []).extend(r for r in rules if isinstance(r, Tolerance))
        for gate in suite.spec.suite_gates:
            tolerances.setdefault(gate.metric, []).append(gate.tolerance)
        gated = {m: tuple(t) for m, t in tolerances.items() if t and m in noisy}
        return cls(noisy, gated)

    def kept(self, metric: str) -> bool:
        """Whether the baseline records `metric`: every metric but a noisy one no gate
        compares with the baseline."""
        return metric not in self.noisy or metric in self.gated

    def same(self, metric: str, recorded: float, today: float) -> bool:
        """Whether today's value of a gated noisy metric is the recorded one up to noise:
        within the narrowest of its gates' tolerances of it, either way."""
        allowed = min(_allowance(t, recorded) for t in self.gated[metric])
        return abs(rounded(today) - rounded(recorded)) <= rounded(allowed)


def _allowance(tolerance: Tolerance, recorded: float) -> float:
    return abs(recorded) * tolerance.amount if tolerance.relative else tolerance.amount


def _entry(row: Mapping[str, Any], today: str, noise: NoiseBands) -> dict[str, Any]:
    entry = {
        "metrics": {k: rounded(v) for k, v in sorted(row["metrics"].items()) if noise.kept(k)},
        "fingerprint": row.get("fingerprint", {}),
        "updated": today,
    }
    if row.get("cache_key"):
        entry["cache_key"] = row["cache_key"]
    return entry


def _describe(old: Mapping[str, float], new: Mapping[str, float]) -> str:
    moved = [
        f"{m} {old[m]:.4f}->{new[m]:.4f}" for m in sorted(new) if m in old and old[m] != new[m]
    ]
    moved += [f"{m} new" for m in sorted(set(new) - set(old))]
    moved += [f"{m} dropped" for m in sorted(set(old) - set(new))]
    return ", ".join(moved[:6]) + (f" (+{len(moved) - 6} more)" if len(moved) > 6 else "")


def _keep_recorded_noise(
    recorded: Mapping[str, float], today: dict[str, float], noise: NoiseBands
) -> None:
    """A gated noisy metric keeps its recorded value in `today` while today's is the same
    number up to noise (`NoiseBands.same`)."""
    for metric in noise.gated:
        old, new = recorded.get(metric), today.get(metric)
        if isinstance(old, int | float) and new is not None and noise.same(metric, old, new):
            today[metric] = old


def update_baseline(
    path: Path,
    *,
    suite: str,
    scoring_id: str,
    rows: Iterable[Mapping[str, Any]],
    defined_keys: set[str],
    today: str | None = None,
    noise: NoiseBands | None = None,
) -> list[BaselineChange]:
    """Write today's numbers for `rows` into the baseline at `path` (atomically) and drop the
    entries whose (case, system) no longer exists in the suite. Entries of tests that did not
    run (deselected, errored) are kept. A scoring-id change replaces the whole file. `noise`
    (`NoiseBands.of` the suite) keeps noisy metrics out, or at their recorded value while
    within their gates' tolerance; without it every metric is recorded as it is."""
    today = today or dt.date.today().isoformat()
    noise = noise or NoiseBands()
    old = load_baseline(path, suite=suite)
    kept = old.entries.texts if old and old.scoring_id == scoring_id else {}
    entries = {k: v for k, v in kept.items() if k in defined_keys}
    changes = [BaselineChange(k, "removed") for k in sorted(set(kept) - set(entries))]
    if old and old.scoring_id != scoring_id:
        changes.append(
            BaselineChange("*", "changed", f"scoring id {old.scoring_id} -> {scoring_id}")
        )
    for row in sorted(rows, key=lambda r: (r["case"], r["system"])):
        key = row_key(row["case"], row["system"])
        new = _entry(row, today, noise)
        previous = old.entry(key) if old is not None and key in entries else None
        if previous is not None:
            _keep_recorded_noise(previous.get("metrics", {}), new["metrics"], noise)
        if previous is None:
            changes.append(BaselineChange(key, "added"))
        elif previous.get("metrics") != new["metrics"]:
            changes.append(
                BaselineChange(key, "changed", _describe(previous["metrics"], new["metrics"]))
            )
        elif previous.get("fingerprint") != new["fingerprint"] or previous.get(
            "cache_key"
        ) != new.get("cache_key"):
            # Same numbers from another system version or output: worth a line in the PR diff.
            changes.append(BaselineChange(key, "changed", "same numbers, new output or system"))
        else:
            new["updated"] = previous.get("updated", today)  # unchanged numbers keep their date
        entries[key] = entry_text(new)
    header = {"schema": BASELINE_SCHEMA, "suite": suite, "scoring_id": scoring_id}
    if old is None or changes or old.entries.texts != entries:
        write_baseline(path, header, entries)
    return changes
