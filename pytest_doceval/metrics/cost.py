"""What a (case, system) cost to compute: the metrics every kind's rows carry beside its own.

A test's cost is the sum over the stages its output needs (`Suite.plan`): CPU seconds of its
CPU stages (where they ran: a pool process counts its whole process, a thread itself), wall
seconds of every stage (a model stage's wall time is its requests' latency, concurrent requests
overlapping), and, for model stages, the requests and the input and output tokens the API
reported (``usage``), priced where ``[tool.doceval.models.NAME]`` gives ``price_in`` /
``price_out`` (per million tokens). A stage's cost is measured when its output is computed and
stored with it, so a warm run reports what the output cost cold, not the nothing it cost now.
A stage that several tests need (an OCR'd page shared by the models asked about it) counts in
full for each: the question is what this system's output takes to make.

**Memory**: ``peak_rss_mib``, the peak resident memory of the process that made the output
while it made it (its largest stage's, where a test has several), in MiB: measured where a
process runs one stage at a time (the default process pool) on Linux, which can reset a
process's high-water mark (VmHWM) before each stage (`engine.stages.timed_call`); a program
the parser runs and reports (`engine.stages.child_finished`: Tesseract) counts when its own
peak is larger. It includes what the process already held (the interpreter, the parser's
libraries and models) and what earlier stages left in that worker, another system's models
included (the pool's workers serve every system of a run): compare systems' memory in a run of
one system. Elsewhere (threads, Dask) it is absent.

**Latency** is ``wall_seconds``, per case; the report gives its percentiles beside the mean
(p50, p95, p99 in every aggregate's ``quantiles``), and a suite gate can bound one:
``wall_seconds = "p95:+20%"`` (`gates`).

A test with no stages (a saved output) has no cost metrics: nothing was measured. They are
`MetricSpec.noisy`: what one machine's run cost, not what it made, so the committed baselines
leave them out unless a gate compares them with the baseline (`run.baselines.NoiseBands`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Final

from pytest_doceval.metrics.spec import RATE, MetricSpec

COST_METRICS: Mapping[str, MetricSpec] = {
    "cpu_seconds": MetricSpec(
        "lower",
        headline=False,
        optional=True,
        noisy=True,
        description="CPU seconds of the stages that made the output (parsing, OCR, ...)",
        bounds=RATE,
    ),
    "wall_seconds": MetricSpec(
        "lower",
        headline=False,
        optional=True,
        noisy=True,
        description="wall seconds of those stages, model latency included (machine-dependent)",
        bounds=RATE,
    ),
    "model_requests": MetricSpec(
        "lower",
        headline=False,
        optional=True,
        noisy=True,
        description="model requests the output took",
        bounds=RATE,
    ),
    "tokens_in": MetricSpec(
        "lower",
        headline=False,
        optional=True,
        noisy=True,
        description="input (prompt) tokens, as the API reported them",
        bounds=RATE,
    ),
    "tokens_out": MetricSpec(
        "lower",
        headline=False,
        optional=True,
        noisy=True,
        description="output (completion) tokens, as the API reported",
        bounds=RATE,
    ),
    "usd_per_1000": MetricSpec(
        "lower",
        headline=False,
        optional=True,
        noisy=True,
        description="model cost of 1,000 such cases in US dollars, at the configured prices",
        bounds=RATE,
    ),
    "peak_rss_mib": MetricSpec(
        "lower",
        headline=False,
        optional=True,
        description="peak resident memory (MiB) of the process that made the output, while it "
        "made it (Linux, process pool)",
        bounds=RATE,
        noisy=True,
    ),
}


@dataclass(frozen=True)
class StageCost:
    """What one stage (or a sum of stages) cost. ``usd`` is None where no price is known,
    ``peak_rss_mib`` where memory was not measured; a sum's peak is its stages' largest."""

    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    requests: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    usd: float | None = None
    peak_rss_mib: float | None = None

    def __add__(self, other: StageCost) -> StageCost:
        usd = None if self.usd is None and other.usd is None else (self.usd or 0) + (other.usd or 0)
        peaks = [p for p in (self.peak_rss_mib, other.peak_rss_mib) if p is not None]
        return StageCost(
            self.cpu_seconds + other.cpu_seconds,
            self.wall_seconds + other.wall_seconds,
            self.requests + other.requests,
            self.tokens_in + other.tokens_in,
            self.tokens_out + other.tokens_out,
            usd,
            max(peaks) if peaks else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> StageCost | None:
        """The cost stored with an output (None when absent or not of this shape: an entry
        written before costs were kept)."""
        if not isinstance(data, Mapping):
            return None
        try:
            values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
            cost = cls(**values)
        except TypeError:
            return None
        numbers = (cost.cpu_seconds, cost.wall_seconds, cost.requests, cost.tokens_in)
        if not all(isinstance(n, int | float) for n in (*numbers, cost.tokens_out)):
            return None
        if cost.peak_rss_mib is not None and not isinstance(cost.peak_rss_mib, int | float):
            return None
        return cost

    def metrics(self) -> dict[str, float]:
        """The row metrics of this cost (`COST_METRICS`); model ones only where a model was
        asked, the price only where one is configured."""
        out = {"cpu_seconds": self.cpu_seconds, "wall_seconds": self.wall_seconds}
        if self.requests:
            out |= {
                "model_requests": float(self.requests),
                "tokens_in": float(self.tokens_in),
                "tokens_out": float(self.tokens_out),
            }
        if self.usd is not None:
            out["usd_per_1000"] = self.usd * 1000.0
        if self.peak_rss_mib is not None:
            out["peak_rss_mib"] = self.peak_rss_mib
        return {name: round(value, 6) for name, value in out.items()}


def total(costs: Iterable[StageCost]) -> StageCost:
    summed = StageCost()
    for cost in costs:
        summed = summed + cost
    return summed


def tokens_of(usage: Mapping[str, Any]) -> tuple[int, int]:
    """(input, output) tokens of an OpenAI-style ``usage`` (0 for what the server left out)."""

    def count(*names: str) -> int:
        for name in names:
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        return 0

    return count("prompt_tokens", "input_tokens"), count("completion_tokens", "output_tokens")


def price(
    tokens_in: int, tokens_out: int, price_in: float | None, price_out: float | None
) -> float | None:
    """US dollars for these tokens at per-million-token prices (None if neither is set)."""
    if price_in is None and price_out is None:
        return None
    return (tokens_in * (price_in or 0.0) + tokens_out * (price_out or 0.0)) / 1e6


def cost_columns(aggregates: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """The cost metrics some system of a suite has means of, in `COST_METRICS`' order."""
    return [m for m in COST_METRICS if any(m in per_metric for per_metric in aggregates.values())]


# The cost metrics whose tail the summary shows beside the mean: p50, p95 and p99 of the
# per-case values (the aggregate's ``quantiles``).
LATENCY: Final = ("wall_seconds",)
LATENCY_PERCENTILES: Final = ("p50", "p95", "p99")


def cost_cell(metric: str, entry: Mapping[str, Any] | None) -> str:
    """A system's mean of a cost metric, written as its unit reads ("-" where not measured);
    for latency, with its p50 / p95 / p99 over the cases."""
    mean = entry.get("mean") if entry else None
    if not isinstance(mean, int | float) or mean != mean:
        return "-"
    quantiles = (entry or {}).get("quantiles") or {}
    if metric in LATENCY and all(
        isinstance(quantiles.get(q), int | float) for q in LATENCY_PERCENTILES
    ):
        tail = ", ".join(f"{q} {quantiles[q]:.3f} s" for q in LATENCY_PERCENTILES)
        return f"{mean:.3f} s ({tail})"
    if metric.endswith("seconds"):
        return f"{mean:.3f} s"
    if metric == "peak_rss_mib":
        return f"{mean:,.0f} MiB"
    if metric == "usd_per_1000":
        return f"${mean:,.2f}"
    return f"{mean:,.1f}"
