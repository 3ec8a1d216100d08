"""False-alarm rate and power of the suite-level gate `stats.significant_regression`.

Simulates a suite of per-case CER values measured twice (baseline and current run) and asks
how often the ``significant:+0.5pp`` gate fails:

* no real change (current = baseline + per-case noise): a false alarm; target <= 5%;
* a true change exactly at the margin (+0.5pp): the worst case the gate should still pass;
  about 2.5% expected, since a 95% two-sided CI bound is a one-sided 2.5% test;
* a true regression of +2pp (current = baseline + 0.02 + noise): power; target >= 80%.

Noise model: baseline CER per case ~ Beta(2, 30) (mean 0.0625, skewed like real CER), and
current = baseline + shift + e, e ~ Normal(0, sd) independently per case (run-to-run change of a
system on one document); a heavy-tailed variant uses e ~ sd * t(3) / sqrt(3) (same sd). The
"normal theory" column is the rate a z-test on the mean difference would give,
Phi((shift - margin) / (sd / sqrt(n)) - 1.96), as a cross-check.

    python benchmarks/bench_suite_gate.py [--sims 1000] [--cases 50] [--margin 0.005]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable

import numpy as np
from scipy.stats import norm

try:
    from pytest_doceval import stats
except ModuleNotFoundError:  # run from a checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pytest_doceval import stats

Noise = Callable[[np.random.Generator, int], np.ndarray]


def gaussian(sd: float) -> Noise:
    return lambda rng, n: rng.normal(0.0, sd, size=n)


def student_t3(sd: float) -> Noise:
    # t(3) has variance 3; dividing by sqrt(3) gives the same sd as the Gaussian rows.
    return lambda rng, n: sd * rng.standard_t(3, size=n) / math.sqrt(3)


def failure_rate(
    shift: float, noise: Noise, *, sims: int, cases: int, margin: float, seed: int
) -> float:
    rng = np.random.default_rng(seed)
    ids = [f"case{i:03d}" for i in range(cases)]
    failed = 0
    for _ in range(sims):
        baseline = rng.beta(2, 30, size=cases)
        current = baseline + shift + noise(rng, cases)
        decision = stats.significant_regression(
            dict(zip(ids, current.tolist(), strict=True)),
            dict(zip(ids, baseline.tolist(), strict=True)),
            metric="cer",
            direction="lower",
            margin=margin,
        )
        failed += decision.failed
    return failed / sims


def normal_theory(shift: float, sd: float, cases: int, margin: float) -> float:
    return float(norm.cdf((shift - margin) / (sd / math.sqrt(cases)) - norm.ppf(0.975)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000, help="simulated suites per row")
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--margin", type=float, default=0.005)
    parser.add_argument("--regression", type=float, default=0.02, help="true shift for power")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    print(
        f"significant_regression gate: margin {args.margin:+.3f}, {args.cases} cases, "
        f"{args.sims} simulated suites per row, 1000 resamples, 95% CI"
    )
    print(
        "noise model: baseline ~ Beta(2, 30) per case; current = baseline + shift + e, "
        "e ~ N(0, sd) (or sd * t3/sqrt(3)) per case"
    )
    header = f"{'scenario':<30} {'noise':<12} {'fail rate':>9} {'normal theory':>13} {'target':>8}"
    print(header)
    print("-" * len(header))
    scenarios = [
        ("no change (false alarm)", 0.0, "<= 5%"),
        (f"change = margin ({args.margin:+.3f})", args.margin, "~2.5%"),
        (f"true regression ({args.regression:+.3f})", args.regression, ">= 80%"),
    ]
    noises: list[tuple[str, float, Noise]] = [
        ("N(0, 0.010)", 0.010, gaussian(0.010)),
        ("N(0, 0.015)", 0.015, gaussian(0.015)),
        ("N(0, 0.020)", 0.020, gaussian(0.020)),
        ("t3, sd 0.020", 0.020, student_t3(0.020)),
        ("N(0, 0.040)", 0.040, gaussian(0.040)),
    ]
    started = time.perf_counter()
    for s, (label, shift, target) in enumerate(scenarios):
        for k, (noise_label, sd, noise) in enumerate(noises):
            rate = failure_rate(
                shift,
                noise,
                sims=args.sims,
                cases=args.cases,
                margin=args.margin,
                seed=args.seed * 1000 + 10 * s + k,
            )
            theory = normal_theory(shift, sd, args.cases, args.margin)
            print(
                f"{label:<30} {noise_label:<12} {100 * rate:>8.1f}% {100 * theory:>12.1f}% "
                f"{target:>8}"
            )
    print(f"total wall time {time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    main()
