"""``doceval compare old.json new.json``: did anything change, beyond noise?

For every suite, system and headline metric (as the newer report's metric specs say) present in
both reports, over the cases both
measured: the paired difference new - old with its seeded bootstrap CI, paired t and Wilcoxon
p-values and Cohen's d_z -- the same statistics a run reports against its baseline. A change is
"worse" only when the whole CI lies beyond ``margin`` in the metric's bad direction.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NotRequired, TypedDict

from pytest_doceval import stats
from pytest_doceval.errors import DocevalError
from pytest_doceval.gates import format_pp
from pytest_doceval.kinds.analyses import values_by_system
from pytest_doceval.metrics.spec import headline, specs_from_section
from pytest_doceval.report.schema import Report
from pytest_doceval.row_file import Rows
from pytest_doceval.rows import FLAG_MARK, describe_flags, flag_reasons
from pytest_doceval.stats.comparisons import verdict
from pytest_doceval.stats.power import paired_mde


class Comparison(TypedDict):
    """One (suite, system, headline metric) of two reports, over the cases both measured."""

    suite: str
    system: str
    metric: str
    direction: str
    n: int
    old_mean: float
    new_mean: float
    mean_diff: float
    ci_low: float | None
    ci_high: float | None
    p_ttest: float
    p_wilcoxon: float
    cohens_d: float
    verdict: str  # worse, better or unchanged
    mde: float
    flagged: NotRequired[dict[str, int]]  # as the newer report flags the system's cases


class CaseChange(TypedDict):
    suite: str
    system: str
    metric: str
    case: str
    old: float
    new: float
    diff: float
    worsening: float  # the change in the metric's bad direction (negative: it improved)


def compare_reports(
    old: Report,
    new: Report,
    *,
    metrics: Iterable[str] | None = None,
    margin: float = 0.0,
    resamples: int = 1000,
    seed: int = 0,
) -> list[Comparison]:
    common = sorted(set(old["suites"]) & set(new["suites"]))
    if not common:
        raise DocevalError("the two reports share no suite")
    wanted = set(metrics) if metrics else None
    rows: list[Comparison] = []
    for suite in common:
        a, b = old["suites"][suite], new["suites"][suite]
        if a.get("scoring_id") != b.get("scoring_id"):
            raise DocevalError(
                f"suite {suite!r}: scoring id {a.get('scoring_id')!r} vs "
                f"{b.get('scoring_id')!r}; numbers scored differently do not compare"
            )
        specs = specs_from_section(b)
        names = [m for m in sorted(headline(specs)) if wanted is None or m in wanted]
        for metric in names:
            before = values_by_system(a["results"], metric)
            after = values_by_system(b["results"], metric)
            # As the newer report flags them.
            flagged = flag_reasons(b["results"], metric, dominance=specs[metric].flag_dominance)
            for system in sorted(set(before) & set(after)):
                cases = sorted(set(before[system]) & set(after[system]))
                if not cases:
                    continue
                result = stats.compare_paired(
                    {c: after[system][c] for c in cases},
                    {c: before[system][c] for c in cases},
                    a="new",
                    b="old",
                    metric=metric,
                    resamples=resamples,
                    seed=seed,
                )
                direction = specs[metric].direction
                mde = paired_mde(
                    [after[system][c] for c in cases],
                    [before[system][c] for c in cases],
                    binary=specs[metric].binary,
                    alpha=0.05,
                )
                row: Comparison = {
                    "suite": suite,
                    "system": system,
                    "metric": metric,
                    "direction": direction,
                    "n": result.n,
                    "old_mean": sum(before[system][c] for c in cases) / len(cases),
                    "new_mean": sum(after[system][c] for c in cases) / len(cases),
                    "mean_diff": result.mean_diff,
                    "ci_low": result.ci_low,
                    "ci_high": result.ci_high,
                    "p_ttest": result.p_ttest,
                    "p_wilcoxon": result.p_wilcoxon,
                    "cohens_d": result.cohens_d,
                    "verdict": verdict(result.ci_low, result.ci_high, direction, margin),
                    "mde": mde,
                }
                if system in flagged:
                    row["flagged"] = flagged[system]
                rows.append(row)
    if not rows:
        raise DocevalError("no (suite, system, metric) was measured on common cases in both")
    return rows


def case_changes(old: Report, new: Report, rows: Iterable[Comparison]) -> list[CaseChange]:
    """Every case whose value moved, for the (suite, system, metric) of `rows`, worst first:
    ``worsening`` is the change in the metric's bad direction (negative for an improvement)."""
    out: list[CaseChange] = []
    values: dict[tuple[str, str], tuple[Any, Any]] = {}  # (suite, metric): both reports' values
    for row in rows:
        suite, system, metric = row["suite"], row["system"], row["metric"]
        if (suite, metric) not in values:
            values[(suite, metric)] = (
                values_by_system(old["suites"][suite]["results"], metric),
                values_by_system(new["suites"][suite]["results"], metric),
            )
        before_all, after_all = values[(suite, metric)]
        before, after = before_all.get(system, {}), after_all.get(system, {})
        for case in sorted(set(before) & set(after)):
            _add_change(
                out, (suite, system, metric, case), before[case], after[case], row["direction"]
            )
    return _worst_first(out)


def baseline_case_changes(report: Report) -> list[CaseChange]:
    """Every measured case whose headline metric moved from its baseline (the row's
    ``baseline``), worst first, in each metric's direction as its suite's specs say."""
    out: list[CaseChange] = []
    for suite, section in report["suites"].items():
        specs = specs_from_section(section)
        names = headline(specs)
        rows = Rows.of(section.get("results", []))
        table = rows.table  # the rows' numbers: nothing decoded
        pairs = [
            (m, table.baseline.get(m), table.metrics.get(m), specs[m].direction) for m in names
        ]
        for i in rows.order:
            if not table.measured(i):
                continue
            for metric, before, after, direction in pairs:
                if before is None or after is None:
                    continue
                old, new = before[i], after[i]
                if old == old and new == new:  # neither is NaN (no value)
                    key = (suite, table.systems[i], metric, table.cases[i])
                    _add_change(out, key, old, new, direction)
    return _worst_first(out)


def _add_change(
    out: list[CaseChange], key: tuple[str, str, str, str], old: float, new: float, direction: str
) -> None:
    """A case's value that moved (beyond float noise; not NaN), as a `CaseChange`."""
    diff = new - old
    if diff != diff or round(diff, 9) == 0:
        return
    suite, system, metric, case = key
    sign = 1.0 if direction == "lower" else -1.0
    out.append(
        {
            "suite": suite,
            "system": system,
            "metric": metric,
            "case": case,
            "old": old,
            "new": new,
            "diff": diff,
            "worsening": sign * diff,
        }
    )


def _worst_first(changes: list[CaseChange]) -> list[CaseChange]:
    return sorted(changes, key=lambda c: (-c["worsening"], c["suite"], c["case"], c["system"]))


def _num(value: float | None) -> str:
    """A signed number, or n/a where there is none (a CI of one case has no width)."""
    return "n/a" if value is None or value != value else f"{value:+.4f}"


def _p(value: float | None) -> str:
    return "n/a" if value is None or value != value else f"{value:.3g}"


def _ci(row: Comparison) -> str:
    low, high = row["ci_low"], row["ci_high"]
    if low is None or high is None or low != low or high != high:
        return "n/a"
    return f"[{_num(low)}, {_num(high)}]"


def _columns(table: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in table]


def format_comparison(
    rows: list[Comparison],
    cases: list[CaseChange] | None = None,
    *,
    show_all: bool = False,
    most_cases: int = 20,
) -> str:
    """The significant changes (worse first) as a table, the unchanged ones in one line (every
    row with `show_all`), then the cases that moved, worst first, at most `most_cases`."""
    order = {"worse": 0, "better": 1, "unchanged": 2}
    shown = sorted(
        (r for r in rows if show_all or r["verdict"] != "unchanged"),
        key=lambda r: order.get(r["verdict"], 3),
    )
    header = ["suite", "system", "metric", "n", "old", "new", "diff", "95% CI"]
    header += ["p(t)", "p(W)", "d", "MDE", "verdict"]
    lines: list[str] = []
    legend: list[str] = []
    if shown:
        table = [header]
        for r in shown:
            mark = FLAG_MARK if r.get("flagged") else ""
            if mark:
                legend.append(
                    f"{FLAG_MARK} {r['suite']} {r['metric']} [{r['system']}]: "
                    f"{describe_flags(r['flagged'])}"
                )
            table.append(
                [
                    r["suite"],
                    r["system"],
                    r["metric"] + mark,
                    str(r["n"]),
                    f"{r['old_mean']:.4f}",
                    f"{r['new_mean']:.4f}",
                    _num(r["mean_diff"]),
                    _ci(r),
                    _p(r["p_ttest"]),
                    _p(r["p_wilcoxon"]),
                    "n/a" if r["cohens_d"] != r["cohens_d"] else f"{r['cohens_d']:.2f}",
                    format_pp(r.get("mde", float("nan"))),
                    r["verdict"].upper() if r["verdict"] == "worse" else r["verdict"],
                ]
            )
        lines += _columns(table)
        lines += legend
    unchanged = sum(r["verdict"] == "unchanged" for r in rows)
    if unchanged and not show_all:
        lines.append(
            f"{unchanged} of {len(rows)} (suite, system, metric) unchanged: no significant "
            "change (--all lists them)"
        )
    if cases is not None:
        lines.append("")
        if not cases:
            lines.append("per case: no case changed value")
        else:
            lines.append(f"per case: {len(cases)} value(s) changed, worst first")
            table = [["suite", "case", "system", "metric", "old", "new", "diff"]]
            for c in cases[:most_cases]:
                table.append(
                    [
                        c["suite"],
                        c["case"],
                        c["system"],
                        c["metric"],
                        f"{c['old']:.4f}",
                        f"{c['new']:.4f}",
                        _num(c["diff"]),
                    ]
                )
            lines += _columns(table)
            if len(cases) > most_cases:
                lines.append(f"... and {len(cases) - most_cases} more (--cases N shows more)")
    return "\n".join(lines)
