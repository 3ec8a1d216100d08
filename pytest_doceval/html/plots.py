"""Inline SVG plots: per headline metric, each system's mean with its CI whisker and the
baseline mean, on one axis."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup

from pytest_doceval.html.fmt import fmt, mapping, num
from pytest_doceval.html.model import SuiteView, delta_index, direction_label

# (system, mean, ci_low, ci_high, baseline mean)
Point = tuple[str, float | None, float | None, float | None, float | None]


def plots(view: SuiteView) -> Markup:
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
        return Markup()
    return Markup(
        '<h3>Means with {:.0%} CI (◇ baseline mean)</h3><div class="plots">{}</div>'
    ).format(view.confidence, Markup().join(charts))


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


@dataclass(frozen=True)
class RowPlot:
    """The frame of a plot with one row per system on one value axis: its scale, and its
    opening (title, direction, grid) and closing (axis) markup."""

    lo: float
    hi: float
    rows: int
    left: float = 120
    width: float = 230
    row_height: float = 22
    top: float = 26

    def x(self, value: float) -> float:
        return round(self.left + (value - self.lo) * self.width / (self.hi - self.lo), 1)

    def y(self, row: int) -> float:
        """The middle of row `row`."""
        return self.top + self.row_height * row + self.row_height / 2

    @property
    def axis_y(self) -> float:
        return self.top + self.row_height * self.rows

    @staticmethod
    def label(system: str) -> str:
        return system if len(system) <= 18 else system[:17] + "…"

    def opening(
        self, metric: str, direction: str | None, *, what: str, css: str = "plot", room: int = 24
    ) -> Markup:
        """``<svg>`` with the metric's title, its direction and the grid; `room` is the width
        right of the axis."""
        return Markup(
            '<svg class="{css}" width="{width}" height="{height}" role="img" '
            'aria-label="{metric}: {what}"><text class="ptitle" x="4" y="15">{metric}</text>'
            '<text class="pdir" x="{right}" y="15" text-anchor="end">{direction}</text>'
        ).format(
            css=css,
            width=self.left + self.width + room,
            height=self.axis_y + 26,
            metric=metric,
            what=what,
            right=self.left + self.width,
            direction=direction_label(direction),
        )

    def grid(self, values: list[float]) -> Markup:
        _, _, ticks, decimals = axis(values)
        return Markup().join(
            grid_line(self.x(t), self.top, self.axis_y, f"{t:.{decimals}f}") for t in ticks
        )

    def closing(self) -> Markup:
        return axis_line(self.left, self.left + self.width, self.axis_y) + Markup("</svg>")


def row_plot(values: list[float], rows: int) -> RowPlot:
    lo, hi, _, _ = axis(values)
    return RowPlot(lo, hi, rows)


def svg_metric(
    metric: str, direction: str | None, points: list[Point], confidence: float
) -> Markup:
    """Per-system mean (dot) with CI whisker and baseline mean (diamond) on one axis."""
    values = [v for p in points for v in p[1:] if v is not None]
    frame = row_plot(values, len(points))
    out = [frame.opening(metric, direction, what="by system"), frame.grid(values)]
    for row, (system, mean, low, high, base) in enumerate(points):
        tip = (
            f"{system} {metric}: mean {fmt(mean)} [{fmt(low)}, {fmt(high)}] "
            f"{confidence:.0%} CI" + (f", baseline {fmt(base)}" if base is not None else "")
        )
        out.append(
            ci_row(
                frame.x,
                frame.y(row),
                frame.left,
                label=frame.label(system),
                tip=tip,
                mean=mean,
                ci=(low, high),
                base=base,
            )
        )
    out.append(frame.closing())
    return Markup().join(out)


def grid_line(at: float, top: float, axis_y: float, tick: str) -> Markup:
    """A vertical grid line at x = `at` with its tick label under the axis."""
    return Markup(
        '<line class="grid" x1="{at}" x2="{at}" y1="{top}" y2="{axis_y}"/>'
        '<text class="tick" x="{at}" y="{below}" text-anchor="middle">{tick}</text>'
    ).format(at=at, top=top - 4, axis_y=axis_y, below=axis_y + 14, tick=tick)


def axis_line(x1: float, x2: float, y: float) -> Markup:
    return Markup('<line class="axis" x1="{}" x2="{}" y1="{}" y2="{}"/>').format(x1, x2, y, y)


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
) -> Markup:
    """One row of a CI plot: its label, whiskers, the baseline diamond and the mean's dot."""
    low, high = ci
    out = [
        Markup(
            '<g><title>{tip}</title><text class="sys" x="{x}" y="{y}" text-anchor="end">'
            "{label}</text>"
        ).format(tip=tip, x=left - 8, y=y + 4, label=label)
    ]
    if low is not None and high is not None:
        out.append(
            Markup(
                '<line class="whisker" x1="{lo}" x2="{hi}" y1="{y}" y2="{y}"/>'
                '<line class="whisker" x1="{lo}" x2="{lo}" y1="{top}" y2="{bottom}"/>'
                '<line class="whisker" x1="{hi}" x2="{hi}" y1="{top}" y2="{bottom}"/>'
            ).format(lo=x(low), hi=x(high), y=y, top=y - 5, bottom=y + 5)
        )
    if base is not None:
        bx = x(base)
        out.append(
            Markup('<path class="base" d="M{} {}L{} {}L{} {}L{} {}Z"/>').format(
                bx, y - 6, bx + 6, y, bx, y + 6, bx - 6, y
            )
        )
    if mean is not None:
        out.append(Markup('<circle class="dot" cx="{}" cy="{}" r="4"/>').format(x(mean), y))
    out.append(Markup("</g>"))
    return Markup().join(out)
