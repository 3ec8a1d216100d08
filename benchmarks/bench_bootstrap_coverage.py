"""Coverage of every interval method in `pytest_doceval.stats`, by simulation.

Draws many simulated suites of per-case values from distributions with a known mean, builds a
95% interval of each suite's mean (or mean paired difference) with every method, and counts how
often it contains the truth. A calibrated 95% interval covers ~95% of the time. Printed per
distribution and method, for n = 5, 10, 20, 50 cases:

* coverage, and how the misses split: ``lo`` = whole interval below the truth, ``hi`` = above
  (right-skewed data mostly miss ``lo``: the sample rarely shows the long right tail);
* the mean width, and its ratio to the t interval's mean width (``x1.00`` = as wide as t);
* for ``default`` (`mean_interval` / `paired_interval` with no method), which method it chose.

Means: symmetric 0.2 * Beta(8, 8), skewed Beta(2, 30) (per-case CER), heavy-tailed
LogNormal(ln 0.05, 1), zero-inflated CER (half the pages exactly 0) and 0/1 Bernoulli(0.7)
(for which only the methods meant for a rate are shown: percentile, t and Wilson).
Paired differences (current - baseline): mostly unchanged pages (70% exactly 0), a
multiplicative change of a heavy-tailed CER, and 0/1 outcomes. The figures quoted in
`pytest_doceval.stats.intervals` come from this script with its defaults: about 110 s of CPU,
so about a minute on 2 idle cores with --jobs 2 (the figures do not depend on --jobs).

    python benchmarks/bench_bootstrap_coverage.py [--suites 2000] [--paired-suites 1000] [--jobs 2]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

try:
    from pytest_doceval import stats
except ModuleNotFoundError:  # run from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pytest_doceval import stats

SIZES = (5, 10, 20, 50)
Draw = Callable[[np.random.Generator, int], np.ndarray]


@dataclass(frozen=True)
class Scenario:
    name: str
    true_mean: float
    draw: Draw
    binary: bool = False


LN_MU, LN_SIGMA = math.log(0.05), 1.0
LN_MEAN = math.exp(LN_MU + LN_SIGMA**2 / 2)
CHANGE_MU, CHANGE_SIGMA = 0.1, 0.5  # log of the current/baseline CER ratio, per page


def _zero_inflated(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.where(rng.random(n) < 0.5, 0.0, rng.beta(2, 30, size=n))


def _mostly_unchanged(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.where(rng.random(n) < 0.7, 0.0, rng.normal(0.01, 0.02, size=n))


def _multiplicative_change(rng: np.random.Generator, n: int) -> np.ndarray:
    baseline = rng.lognormal(LN_MU, LN_SIGMA, size=n)
    return baseline * (np.exp(rng.normal(CHANGE_MU, CHANGE_SIGMA, size=n)) - 1.0)


def _discordant(rng: np.random.Generator, n: int) -> np.ndarray:
    u = rng.random(n)  # +1: only current right (15%), -1: only baseline right (5%)
    return np.where(u < 0.15, 1.0, np.where(u < 0.20, -1.0, 0.0))


MEANS = [
    Scenario("symmetric: 0.2 * Beta(8, 8)", 0.1, lambda rng, n: 0.2 * rng.beta(8, 8, size=n)),
    Scenario("skewed: Beta(2, 30)", 2 / 32, lambda rng, n: rng.beta(2, 30, size=n)),
    Scenario(
        "heavy right tail: LogNormal(ln 0.05, 1)",
        LN_MEAN,
        lambda rng, n: rng.lognormal(LN_MU, LN_SIGMA, size=n),
    ),
    Scenario("zero-inflated: 50% 0, else Beta(2, 30)", 0.5 * 2 / 32, _zero_inflated),
    Scenario(
        "0/1: Bernoulli(0.7)",
        0.7,
        lambda rng, n: (rng.random(n) < 0.7).astype(float),
        binary=True,
    ),
]
# Paired scenarios draw the per-case difference current - baseline directly.
PAIRED = [
    Scenario("paired, mostly unchanged: 70% 0, else N(0.01, 0.02)", 0.3 * 0.01, _mostly_unchanged),
    Scenario(
        "paired, multiplicative change of LogNormal CER",
        LN_MEAN * (math.exp(CHANGE_MU + CHANGE_SIGMA**2 / 2) - 1.0),
        _multiplicative_change,
    ),
    Scenario("paired 0/1: +1 (15%), -1 (5%), else 0", 0.10, _discordant),
]

MEAN_METHODS = ("percentile-bootstrap", "bca", "t", "bootstrap-t")
BINARY_METHODS = ("percentile-bootstrap", "t", "wilson")


@dataclass
class Tally:
    lows: list[float]
    highs: list[float]
    chosen: Counter[str]


def _simulate(
    paired: bool, k: int, n: int, suites: int, resamples: int, confidence: float, seed: int
) -> tuple[dict[str, Tally], float]:
    """One cell (scenario k, n cases); arguments are plain values so a worker process can run
    it. Each cell has its own data seed, so the figures do not depend on --jobs."""
    started = time.process_time()
    scenario = (PAIRED if paired else MEANS)[k]
    methods = BINARY_METHODS if scenario.binary else MEAN_METHODS
    tallies = {name: Tally([], [], Counter()) for name in (*methods, "default")}
    rng = np.random.default_rng([seed, k, n, int(paired)])
    r, c = resamples, confidence
    zeros = np.zeros(n)
    for i in range(suites):
        values = scenario.draw(rng, n)
        if paired:
            default = stats.paired_interval(values, zeros, seed=i, resamples=r, confidence=c)
        else:
            default = stats.mean_interval(
                values, binary=scenario.binary, seed=i, resamples=r, confidence=c
            )
        results = {"default": default}
        for method in methods:
            if method == default.method:
                results[method] = default  # same method and seed: the same interval
            elif paired:
                results[method] = stats.paired_interval(
                    values, zeros, method=method, seed=i, resamples=r, confidence=c
                )
            else:
                results[method] = stats.mean_interval(
                    values, method=method, seed=i, resamples=r, confidence=c
                )
        for name, interval in results.items():
            tallies[name].lows.append(interval.ci_low)
            tallies[name].highs.append(interval.ci_high)
            tallies[name].chosen[interval.method] += 1
    return tallies, time.process_time() - started


def _cell(tally: Tally, truth: float, t_width: float) -> tuple[str, float, float]:
    low, high = np.array(tally.lows), np.array(tally.highs)
    valid = ~(np.isnan(low) | np.isnan(high))  # NaN bounds: no interval, counted as a miss
    total = low.size
    covered = np.count_nonzero(valid & (low <= truth) & (truth <= high)) / total
    miss_low = np.count_nonzero(valid & (high < truth)) / total
    miss_high = np.count_nonzero(valid & (low > truth)) / total
    width = float(np.mean((high - low)[valid])) if valid.any() else math.nan
    ratio = width / t_width if t_width > 0 else math.nan
    text = f"{100 * covered:5.1f} ({100 * miss_low:4.1f}/{100 * miss_high:3.1f}) x{ratio:4.2f}"
    return text, covered, width


def _table(
    scenarios: list[Scenario],
    suites: int,
    cells: dict[tuple[int, int], tuple[dict[str, Tally], float]],
    paired: bool,
) -> list[tuple[str, int, float]]:
    """Print one block per scenario; return (scenario, n, default coverage) for the summary."""
    summary = []
    for k, scenario in enumerate(scenarios):
        by_n = {n: cells[k, n][0] for n in SIZES}
        seconds = sum(cells[k, n][1] for n in SIZES)
        print(
            f"\n{scenario.name}  (true {'mean diff' if paired else 'mean'} "
            f"{scenario.true_mean:.4f}, {seconds:.0f}s of CPU)"
        )
        print(f"  {'method':<21}" + "".join(f"{'n = ' + str(n):<26}" for n in SIZES))
        reference = "t"
        t_widths = {}
        for n in SIZES:
            ref = by_n[n][reference]
            low, high = np.array(ref.lows), np.array(ref.highs)
            t_widths[n] = float(np.nanmean(high - low))
        for name in by_n[SIZES[0]]:
            row = []
            for n in SIZES:
                text, covered, _ = _cell(by_n[n][name], scenario.true_mean, t_widths[n])
                row.append(f"{text:<26}")
                if name == "default":
                    summary.append((scenario.name, n, covered))
            print(f"  {name:<21}" + "".join(row))
        mean_widths = "".join(f"{'t width ' + format(t_widths[n], '.4f'):<26}" for n in SIZES)
        print(f"  {'':<21}" + mean_widths)
        choices = []
        for n in SIZES:
            chosen = by_n[n]["default"].chosen
            share = ", ".join(f"{m} {100 * c / suites:.0f}%" for m, c in chosen.most_common())
            choices.append(f"{share:<26}")
        print(f"  {'default chose':<21}" + "".join(choices))
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", type=int, default=2000, help="simulated suites per mean cell")
    parser.add_argument(
        "--paired-suites", type=int, default=1000, help="simulated suites per paired cell"
    )
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (1: no pool)")
    args = parser.parse_args()

    sections = (
        ("MEANS: stats.mean_interval(values, method=...)", MEANS, args.suites, False),
        (
            "PAIRED DIFFERENCES: stats.paired_interval(a, b, method=...)",
            PAIRED,
            args.paired_suites,
            True,
        ),
    )
    started = time.perf_counter()
    jobs = {
        (paired, k, n): (paired, k, n, suites, args.resamples, args.confidence, args.seed)
        for _, scenarios, suites, paired in sections
        for k in range(len(scenarios))
        for n in SIZES
    }
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            futures = {key: pool.submit(_simulate, *job) for key, job in jobs.items()}
            results = {key: future.result() for key, future in futures.items()}
    else:
        results = {key: _simulate(*job) for key, job in jobs.items()}

    nominal = 100 * args.confidence
    for title, scenarios, suites, paired in sections:
        se = 100 * math.sqrt(args.confidence * (1 - args.confidence) / suites)
        print(
            f"\n=== {title}: {suites} suites per cell, {args.resamples} resamples, nominal "
            f"{nominal:g}%, Monte Carlo SE of a coverage ~{se:.2f} pp"
        )
        print(
            "    cell = coverage % (miss lo / miss hi %) x(mean width / t interval's mean width);"
            "\n    (coverage + misses < 100 when some intervals had no bounds: NaN is not covered)"
        )
        cells = {(k, n): results[paired, k, n] for k in range(len(scenarios)) for n in SIZES}
        summary = _table(scenarios, suites, cells, paired)
        worst = [(name, n, c) for name, n, c in summary if n >= 10]
        name, n, cover = min(worst, key=lambda item: item[2])
        print(
            f"\n  default, n >= 10: lowest coverage {100 * cover:.1f}% ({name}, n = {n}); "
            f"nominal {nominal:g}%, ratio {cover / args.confidence:.3f}"
        )
    print(f"\ntotal wall time {time.perf_counter() - started:.0f}s with --jobs {args.jobs}")


if __name__ == "__main__":
    main()
