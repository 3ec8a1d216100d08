"""A report, or the comparison of two, as GitHub-flavoured markdown for a CI step summary or a
pull-request comment (``doceval compare --format markdown``, ``doceval report --format
summary``): what failed, the significant changes worse first, then the cases that moved most,
each linking to its row in the HTML report when its address is given (``--link``).

Generic: no metric is named here. Which way is worse comes from each suite's metric specs
(``direction``), through the comparisons and case changes `report/compare.py` computes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_doceval.html.fmt import fmt, fmt_ci, fmt_p, fmt_signed
from pytest_doceval.html.model import FAILING, case_anchor
from pytest_doceval.report.compare import CaseChange, Comparison
from pytest_doceval.report.schema import Report

# A CI summary is read at a glance: the rest is in the HTML report.
MOST_FAILURES = 20
MOST_CASES = 10
MESSAGE_CHARS = 200
# Significant changes first, worse before better; within each, the largest effect first.
_ORDER = {"worse": 0, "better": 1, "unchanged": 2}


def cell(value: object) -> str:
    """Text safe in a GFM table cell: one line, pipes escaped, markup characters literal."""
    text = " ".join(str(value).split())
    for char in "\\|*_`[]<>":
        text = text.replace(char, f"\\{char}")
    return text


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A GFM table; number columns (all but the text ones) are right-aligned by the caller's
    header: a header ending in ``:`` is a number column."""
    names = [h.rstrip(":") for h in header]
    align = ["---:" if h.endswith(":") else "---" for h in header]
    lines = [f"| {' | '.join(names)} |", f"| {' | '.join(align)} |"]
    lines += [f"| {' | '.join(row)} |" for row in rows]
    return lines


def _link(text: str, href: str | None) -> str:
    return f"[{text}]({href})" if href else text


def _effect(row: Mapping[str, Any]) -> float:
    """How far a significant change stands out of its cases' spread: |Cohen's d_z|. A
    significant change without a finite d moved every case alike (no spread: the clearest of
    all), written as null; a row without the key at all (an older report) ranks last."""
    if "cohens_d" not in row:
        return 0.0
    d = row["cohens_d"]
    return abs(d) if isinstance(d, int | float) and math.isfinite(d) else math.inf


def _size(row: Mapping[str, Any]) -> float:
    diff = row.get("mean_diff")
    return abs(diff) if isinstance(diff, int | float) and math.isfinite(diff) else 0.0


def significant_first(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Worse, then better; within each the largest effect first (`_effect`, then the size of
    the mean change); unchanged rows left out."""
    moved = [r for r in rows if r.get("verdict") in ("worse", "better")]
    return sorted(moved, key=lambda r: (_ORDER[str(r["verdict"])], -_effect(r), -_size(r)))


def _anchors(report: Report) -> dict[tuple[str, str, str], str]:
    """(suite, case, system) -> its row's anchor in the HTML report of `report`."""
    out: dict[tuple[str, str, str], str] = {}
    for s, (suite, section) in enumerate(report["suites"].items()):
        for r, row in enumerate(section.get("results", [])):
            out[(suite, str(row["case"]), str(row["system"]))] = case_anchor(s, r)
    return out


class Links:
    """Each case row's address in the HTML report at `base` (none without a base)."""

    def __init__(self, report: Report, base: str | None) -> None:
        self.base = base
        self.anchors = _anchors(report) if base else {}

    def __call__(self, suite: str, case: str, system: str) -> str | None:
        anchor = self.anchors.get((suite, case, system))
        return f"{self.base}#{anchor}" if self.base and anchor else None


def failures(report: Report, links: Links) -> list[str]:
    """What failed: suites that could not load, failed suite gates, then failed and errored
    tests (errors first) with their cause."""
    lines: list[str] = []
    for suite, section in report["suites"].items():
        if section.get("error"):
            lines.append(f"- **{cell(suite)}**: suite error: {cell(section['error'])}")
        for gate in section.get("gates", []):
            if not gate["passed"]:
                lines.append(
                    f"- **{cell(suite)}** suite gate `{gate['metric']} {gate['rule']}` "
                    f"[{cell(gate['system'])}]: {cell(gate['message'])}"
                )
    tests = [
        (suite, row)
        for suite, section in report["suites"].items()
        for row in section.get("results", [])
        if row["outcome"] in FAILING
    ]
    tests.sort(key=lambda t: FAILING.index(t[1]["outcome"]))
    for suite, row in tests[:MOST_FAILURES]:
        message = " ".join(str(row.get("message") or "").split())
        if len(message) > MESSAGE_CHARS:
            message = message[: MESSAGE_CHARS - 1] + "…"
        name = _link(
            f"{cell(row['case'])} [{cell(row['system'])}]", links(suite, row["case"], row["system"])
        )
        lines.append(
            f"- {row['outcome']}: **{cell(suite)}** {name}"
            + (f": {cell(message)}" if message else "")
        )
    if len(tests) > MOST_FAILURES:
        lines.append(f"- … and {len(tests) - MOST_FAILURES} more tests that did not pass")
    return lines


def changes_table(rows: Sequence[Mapping[str, Any]], *, old: str, new: str) -> list[str]:
    """Comparison rows (or baseline deltas: keys `old`, `new` name their means)."""
    header = ["verdict", "suite", "system", "metric", "n:", f"{old}:", f"{new}:", "Δ:"]
    header += ["95% CI:", "p (t):"]
    body = [
        [
            "**WORSE**" if r["verdict"] == "worse" else "better",
            cell(r.get("suite", "")),
            cell(r["system"]),
            cell(r["metric"]),
            str(r["n"]),
            fmt(r.get(f"{old}_mean")),
            fmt(r.get(f"{new}_mean")),
            fmt_signed(r.get("mean_diff")),
            fmt_ci(r),
            fmt_p(r.get("p_ttest")),
        ]
        for r in rows
    ]
    return table(header, body)


def cases_table(cases: Sequence[CaseChange], links: Links, *, old: str, new: str) -> list[str]:
    header = ["case", "suite", "system", "metric", f"{old}:", f"{new}:", "Δ:"]
    body = [
        [
            _link(cell(c["case"]), links(c["suite"], c["case"], c["system"])),
            cell(c["suite"]),
            cell(c["system"]),
            cell(c["metric"]),
            fmt(c["old"]),
            fmt(c["new"]),
            fmt_signed(c["diff"]),
        ]
        for c in cases
    ]
    return table(header, body)


def _sections(
    title: str,
    report: Report,
    moved: Sequence[Mapping[str, Any]],
    unchanged: int,
    cases: Sequence[CaseChange],
    *,
    old: str,
    new: str,
    link: str | None,
    most_cases: int,
) -> str:
    links = Links(report, link)
    lines = [f"## {title}", ""]
    failed = failures(report, links)
    lines += ["### What failed", ""] + (failed or ["Nothing failed."]) + [""]
    worse = sum(r["verdict"] == "worse" for r in moved)
    lines += [f"### Significant changes ({worse} worse, {len(moved) - worse} better)", ""]
    lines += changes_table(moved, old=old, new=new) if moved else ["No significant change."]
    if unchanged:
        lines += ["", f"{unchanged} (suite, system, metric) without a significant change."]
    lines += ["", f"### Cases that moved most ({len(cases)} value(s) changed)", ""]
    if cases:
        lines += cases_table(cases[:most_cases], links, old=old, new=new)
        if len(cases) > most_cases:
            lines += ["", f"… and {len(cases) - most_cases} more."]
    else:
        lines.append("No case changed value.")
    return "\n".join(lines) + "\n"


def comparison_markdown(
    new: Report,
    rows: Sequence[Comparison],
    cases: Sequence[CaseChange],
    *,
    link: str | None = None,
    most_cases: int = MOST_CASES,
) -> str:
    """``doceval compare --format markdown``: the newer report's failures, then what moved
    from the older to the newer."""
    moved = significant_first(rows)
    worse = sum(r["verdict"] == "worse" for r in rows)
    title = (
        f"doceval: {worse} significant regression(s)"
        if worse
        else "doceval: no significant regression"
    )
    unchanged = len(rows) - len(moved)
    return _sections(
        title, new, moved, unchanged, cases, old="old", new="new", link=link, most_cases=most_cases
    )


def summary_markdown(
    report: Report,
    cases: Sequence[CaseChange],
    *,
    link: str | None = None,
    most_cases: int = MOST_CASES,
) -> str:
    """``doceval report --format summary``: one report's failures, its significant changes
    against the baselines and the cases that moved most against theirs."""
    deltas = [
        {**delta, "suite": suite}
        for suite, section in report["suites"].items()
        for delta in section.get("baseline_deltas", [])
    ]
    moved = significant_first(deltas)
    failing = sum(
        n
        for s in report["suites"].values()
        for o, n in s.get("outcomes", {}).items()
        if o in FAILING
    )
    gates = sum(not g["passed"] for s in report["suites"].values() for g in s.get("gates", []))
    title = f"doceval: {failing} test(s) did not pass, {gates} suite gate(s) failed"
    if report.get("shard"):
        title += f" (shard {report['shard']})"
    if report.get("limit"):
        title += f" (limited: the first {report['limit']} case(s) of each suite)"
    return _sections(
        title,
        report,
        moved,
        len(deltas) - len(moved),
        cases,
        old="baseline",
        new="current",
        link=link,
        most_cases=most_cases,
    )
