"""``doceval compare old.json new.json``: did anything change, beyond noise?

For every suite, system and headline metric (as the newer report's metric specs say) present in
both reports, over the cases both
measured: the paired difference new - old with its seeded bootstrap CI, paired t and Wilcoxon
p-values and Cohen's d_z -- the same statistics a run reports against its baseline. A change is
"worse" only when the whole CI lies beyond ``margin`` in the metric's bad direction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_doceval import stats
from pytest_doceval.analyses import values_by_system
from pytest_doceval.errors import DocevalError
from pytest_doceval.gates import format_pp
from pytest_doceval.metrics.spec import headline, specs_from_section
from pytest_doceval.report.analysis import verdict
from pytest_doceval.rows import FLAG_MARK, describe_flags, flag_reasons
from pytest_doceval.stats.power import paired_mde


def compare_reports(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    metrics: Iterable[str] | None = None,
    margin: float = 0.0,
    resamples: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    common = sorted(set(old["suites"]) & set(new["suites"]))
    if not common:
        raise DocevalError("the two reports share no suite")
    wanted = set(metrics) if metrics else None
    rows: list[dict[str, Any]] = []
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
            flagged = flag_reasons(b["results"], metric)  # as the newer report flags them
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
                rows.append(
                    {
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
                        **({"flagged": flagged[system]} if system in flagged else {}),
                    }
                )
    if not rows:
        raise DocevalError("no (suite, system, metric) was measured on common cases in both")
    return rows


def _num(value: float) -> str:
    return "nan" if value != value else f"{value:+.4f}"


def format_comparison(rows: list[dict[str, Any]]) -> str:
    header = [
        "suite",
        "system",
        "metric",
        "n",
        "old",
        "new",
        "diff",
        "95% CI",
        "p(t)",
        "p(W)",
        "d",
        "MDE",
        "verdict",
    ]
    table = [header]
    legend = []
    for r in rows:
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
                f"[{_num(r['ci_low'])}, {_num(r['ci_high'])}]",
                f"{r['p_ttest']:.3g}",
                f"{r['p_wilcoxon']:.3g}",
                f"{r['cohens_d']:.2f}",
                format_pp(r.get("mde", float("nan"))),
                r["verdict"].upper() if r["verdict"] == "worse" else r["verdict"],
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in table]
    return "\n".join([*lines, *legend])
