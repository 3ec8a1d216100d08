"""Inline SVG plots: per headline metric, each system's mean with its CI whisker and the
baseline mean, on one axis."""

from __future__ import annotations

import math
from collections.abc import Callable

from pytest_doceval.html.fmt import esc, fmt, mapping, num
from pytest_doceval.html.model import SuiteView, delta_index, direction_label

# (system, mean, ci_low, ci_high, baseline mean)
Point = tuple[str, float | None, float | None, float | None, float | None]


def plots(view: SuiteView) -> str:
    aggregates = mapping(view.data.get("aggregates"))
    deltas = delta_index(view)
    charts = []
    for metric in view.headline:
        points: list[Point] = []
        for system in view.systems:
            agg = mapping(mapping(aggregates.get(system)).get(metric))
            base = num(mapping(deltas.get((system, metric))).get("baseline_mean"))
            points.append(
                (
                    system,
                    num(agg.get("mean")),
                    num(agg.get("ci_low")),
                    num(agg.get("ci_high")),
                    base,
                )
            )
        if any(p[1] is not None for p in points):
            charts.append(svg_metric(metric, view.direction(metric), points, view.confidence))
    if not charts:
        return ""
    return (
        f"<h3>Means with {view.confidence:.0%} CI (◇ baseline mean)</h3>"
        f'<div class="plots">{"".join(charts)}</div>'
    )


def _nice_step(span: float, count: int = 4) -> float:
    raw = span / count
    magnitude = 10.0 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * 0.999)


def axis(values: list[float]) -> tuple[float, float, list[float], int]:
    """Domain (lo, hi), tick positions and tick decimals for `values`."""
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        pad = abs(lo) * 0.1 or 0.01
        lo, hi = lo - pad, hi + pad
    step = _nice_step(hi - lo)
    start, stop = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    ticks = [k * step for k in range(start, stop + 1)]
    decimals = 0
    while decimals < 12 and abs(round(step, decimals) - step) > step * 1e-6:
        decimals += 1
    return ticks[0], ticks[-1], ticks, decimals


def svg_metric(metric: str, direction: str | None, points: list[Point], confidence: float) -> str:
    """Per-system mean (dot) with CI whisker and baseline mean (diamond) on one axis."""
    values = [v for p in points for v in p[1:] if v is not None]
    lo, hi, ticks, decimals = axis(values)
    left, width, row_h, top = 120, 230, 22, 26
    height = top + row_h * len(points) + 26
    scale = width / (hi - lo)

    def x(v: float) -> float:
        return round(left + (v - lo) * scale, 1)

    out = [
        f'<svg class="plot" width="{left + width + 24}" height="{height}" role="img" '
        f'aria-label="{esc(metric)} by system">',
        f'<text class="ptitle" x="4" y="15">{esc(metric)}</text>'
        f'<text class="pdir" x="{left + width}" y="15" text-anchor="end">'
        f"{esc(direction_label(direction))}</text>",
    ]
    axis_y = top + row_h * len(points)
    for t in ticks:
        out.append(
            f'<line class="grid" x1="{x(t)}" x2="{x(t)}" y1="{top - 4}" y2="{axis_y}"/>'
            f'<text class="tick" x="{x(t)}" y="{axis_y + 14}" text-anchor="middle">'
            f"{t:.{decimals}f}</text>"
        )
    for row, (system, mean, low, high, base) in enumerate(points):
        y = top + row_h * row + row_h / 2
        label = system if len(system) <= 18 else system[:17] + "…"
        tip = (
            f"{system} {metric}: mean {fmt(mean)} [{fmt(low)}, {fmt(high)}] "
            f"{confidence:.0%} CI" + (f", baseline {fmt(base)}" if base is not None else "")
        )
        out.append(ci_row(x, y, left, label=label, tip=tip, mean=mean, ci=(low, high), base=base))
    out.append(
        f'<line class="axis" x1="{left}" x2="{left + width}" y1="{axis_y}" y2="{axis_y}"/></svg>'
    )
    return "".join(out)


def ci_row(
    x: Callable[[float], float],
    y: float,
    left: float,
    *,
    label: str,
    tip: str,
    mean: float | None,
    ci: tuple[float | None, float | None],
    base: float | None = None,
) -> str:
    """One row of a CI plot: its label, whiskers, the baseline diamond and the mean's dot."""
    low, high = ci
    out = [
        f"<g><title>{esc(tip)}</title>"
        f'<text class="sys" x="{left - 8}" y="{y + 4}" text-anchor="end">{esc(label)}</text>'
    ]
    if low is not None and high is not None:
        out.append(
            f'<line class="whisker" x1="{x(low)}" x2="{x(high)}" y1="{y}" y2="{y}"/>'
            f'<line class="whisker" x1="{x(low)}" x2="{x(low)}" y1="{y - 5}" y2="{y + 5}"/>'
            f'<line class="whisker" x1="{x(high)}" x2="{x(high)}" y1="{y - 5}" y2="{y + 5}"/>'
        )
    if base is not None:
        bx = x(base)
        out.append(
            f'<path class="base" d="M{bx} {y - 6}L{bx + 6} {y}L{bx} {y + 6}L{bx - 6} {y}Z"/>'
        )
    if mean is not None:
        out.append(f'<circle class="dot" cx="{x(mean)}" cy="{y}" r="4"/>')
    out.append("</g>")
    return "".join(out)
