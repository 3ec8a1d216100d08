"""Inline SVG box plots: per metric, each system's per-case values (a mean hides the tail).

Drawn from the aggregates' percentiles (``quantiles``: the report's, so a page of 70,000 rows
draws as fast as one of ten): whiskers from the minimum to the maximum, the box from the first
to the third quartile, a bar at the median, the mean as a dot, and, where the metric has a
threshold (``beyond``), how many cases lie past it, beside the row. One plot per headline
metric, then one per cost metric measured (latency and memory have tails worth seeing).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.fmt import fmt, mapping, num
from pytest_doceval.html.model import SuiteView
from pytest_doceval.html.plots import row_plot

BOX = ("p0", "p25", "p50", "p75", "p100")


def _box(aggregate: Mapping[str, Any]) -> tuple[float, float, float, float, float] | None:
    quantiles = mapping(aggregate.get("quantiles"))
    values = [num(quantiles.get(q)) for q in BOX]
    if any(v is None for v in values):
        return None
    low, q1, median, q3, high = (float(v) for v in values if v is not None)
    return low, q1, median, q3, high


def beyond_text(aggregate: Mapping[str, Any]) -> str:
    """``2/5 > 0.1``: the cases past the metric's threshold, or "" without one."""
    tail = mapping(aggregate.get("beyond"))
    if not tail or num(tail.get("threshold")) is None:
        return ""
    cases, n = (
        f"{v:,}" if isinstance(v, int) else f"{v}" for v in (tail.get("cases"), tail.get("n"))
    )
    return f"{cases}/{n} {tail.get('op')} {num(tail.get('threshold')):g}"


def box_plot(
    metric: str, direction: str | None, rows: list[tuple[str, Mapping[str, Any]]]
) -> Markup:
    """One metric's box per system (module docstring)."""
    boxes = [(system, agg, box) for system, agg in rows if (box := _box(agg)) is not None]
    values = [v for _, _, box in boxes for v in box]
    frame = row_plot(values, len(boxes))
    x = frame.x
    # Right of the axis: room for the longest "16,703/100,000 > 0.08" (11 px digits, ~7 px).
    room = max([80, *(7 * len(beyond_text(agg)) + 12 for _, agg, _ in boxes)])
    out = [
        frame.opening(
            metric, direction, what="per-case values by system", css="plot dist", room=room
        ),
        frame.grid(values),
    ]
    for row, (system, agg, (low, q1, median, q3, high)) in enumerate(boxes):
        y = frame.y(row)
        tail = beyond_text(agg)
        tip = (
            f"{system} {metric}: n {agg.get('n')}, min {fmt(low)}, quartiles {fmt(q1)} / "
            f"{fmt(median)} / {fmt(q3)}, max {fmt(high)}, mean {fmt(agg.get('mean'))}"
            + (f"; beyond the threshold: {tail}" if tail else "")
        )
        out.append(
            Markup(
                '<g><title>{tip}</title><text class="sys" x="{lx}" y="{ty}" text-anchor="end">'
                '{label}</text><line class="whisker" x1="{x0}" x2="{x4}" y1="{y}" y2="{y}"/>'
                '<rect class="box" x="{x1}" y="{top}" width="{bw}" height="12"/>'
                '<line class="median" x1="{x2}" x2="{x2}" y1="{top}" y2="{bottom}"/>'
            ).format(
                tip=tip,
                lx=frame.left - 8,
                ty=y + 4,
                label=frame.label(system),
                x0=x(low),
                x4=x(high),
                y=y,
                x1=x(q1),
                top=y - 6,
                bw=max(round(x(q3) - x(q1), 1), 1.0),
                x2=x(median),
                bottom=y + 6,
            )
        )
        mean = num(agg.get("mean"))
        if mean is not None:
            out.append(Markup('<circle class="dot" cx="{}" cy="{}" r="3"/>').format(x(mean), y))
        if tail:
            out.append(
                Markup('<text class="tail" x="{}" y="{}">{}</text>').format(
                    frame.left + frame.width + 6, y + 4, tail
                )
            )
        out.append(Markup("</g>"))
    out.append(frame.closing())
    return Markup().join(out)


def distributions(view: SuiteView, cost_metrics: list[str]) -> Markup:
    """The box plots of a suite: its headline metrics, then `cost_metrics` (module docstring)."""
    aggregates = mapping(view.data.get("aggregates"))
    charts = []
    for metric in [*view.headline, *(m for m in cost_metrics if m not in view.headline)]:
        rows = [(s, mapping(mapping(aggregates.get(s)).get(metric))) for s in view.systems]
        if any(_box(agg) is not None for _, agg in rows):
            charts.append(box_plot(metric, view.direction(metric), rows))
    if not charts:
        return Markup()
    return Markup(
        '<details class="distributions" open><summary>Distributions of per-case values (box: '
        "quartiles, bar: median, whiskers: min to max, dot: mean; right: cases past the "
        'metric\'s threshold)</summary><div class="plots">{}</div></details>'
    ).format(Markup().join(charts))
