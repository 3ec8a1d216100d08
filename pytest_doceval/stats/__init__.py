"""Seeded, case-level statistics for comparing document-AI systems.

Every function here treats the *case* (one document, page or question) as the unit of
analysis: callers pass one value per case, and the bootstrap resamples cases, never tokens or
characters inside a case. Characters within one page are strongly correlated, so resampling them
would produce intervals that are far too narrow; resampling whole cases is the cluster bootstrap
(Davison & Hinkley 1997, section 3.8; Field & Welsh 2007, "Bootstrapping clustered data").

Conventions shared by the whole package:

* Randomness comes only from ``numpy.random.default_rng(seed)`` with ``seed=0`` by default, so the
  same inputs always give the same intervals (a report must not change between two runs).
* Results are plain Python ``float``/``int``/``bool``/``str`` values (never numpy scalars),
  because they travel through pytest-xdist's serialiser, which rejects numpy types. Every result
  dataclass is frozen and has ``to_dict()`` returning builtins only.
* Every interval says which method made it (`Interval.method`, one of `INTERVAL_METHODS`) and
  whether it rests on fewer than `SMALL_N` cases (`Interval.small_n`). Reports get their
  intervals from `mean_interval` and `paired_interval`, which choose the method.
* A quantity that is undefined for the data (a p-value from fewer than two cases, a variance
  ratio of 0/0, ...) is ``nan``, never an exception; each function documents when. NaN inputs
  propagate to NaN outputs: drop cases whose metric is undefined before calling.
* Invalid *arguments* (mismatched lengths, confidence outside (0, 1), an unknown direction or
  method) raise ``ValueError``.

Modules: `interval` (the result type, method names, SMALL_N), `resampling` (seeded, chunked
case resampling, within strata too), `bootstrap` (percentile, BCa, bootstrap-t, the stratified
percentile interval of a mean over fixed groups), `closed_form` (t, Wilson), `intervals` (the
entry points and the choice of method), `pooled` (seed 004's corpus field accuracy: a weighted
mean of pooled shares), `paired_tests` (t-test, Wilcoxon, Cohen's d), `contingency` (McNemar,
binomial), `anova` (the additive Type II ANOVA with a block),
`comparisons` (`paired_change`, the one home of a paired difference; system pairs; Bonferroni;
the verdict of a change), `power` (minimum detectable effects), `gate` (the suite-level
regression gate). No module here imports this facade: each imports the modules it needs.
"""

from __future__ import annotations

from pytest_doceval.stats.anova import AdditiveAnova, additive_anova
from pytest_doceval.stats.bootstrap import (
    bca_interval,
    bootstrap_mean_ci,
    bootstrap_ratio_ci,
    bootstrap_t_interval,
    paired_bootstrap_ci,
    stratified_bootstrap_ci,
)
from pytest_doceval.stats.closed_form import t_interval, wilson_interval
from pytest_doceval.stats.comparisons import (
    PairedChange,
    PairedComparison,
    bonferroni,
    compare_paired,
    paired_change,
    pairwise_comparisons,
    verdict,
)
from pytest_doceval.stats.contingency import McNemarResult, binomial_test_p, mcnemar_exact
from pytest_doceval.stats.gate import GateDecision, significant_regression
from pytest_doceval.stats.interval import INTERVAL_METHODS, SMALL_N, Interval
from pytest_doceval.stats.intervals import mean_interval, paired_interval
from pytest_doceval.stats.paired_tests import (
    cohens_d_paired,
    paired_ttest_p,
    wilcoxon_p,
)
from pytest_doceval.stats.pooled import pooled_share

__all__ = [
    "INTERVAL_METHODS",
    "SMALL_N",
    "AdditiveAnova",
    "GateDecision",
    "Interval",
    "McNemarResult",
    "PairedChange",
    "PairedComparison",
    "additive_anova",
    "bca_interval",
    "binomial_test_p",
    "bonferroni",
    "bootstrap_mean_ci",
    "bootstrap_ratio_ci",
    "bootstrap_t_interval",
    "cohens_d_paired",
    "compare_paired",
    "mcnemar_exact",
    "mean_interval",
    "paired_bootstrap_ci",
    "paired_change",
    "paired_interval",
    "paired_ttest_p",
    "pairwise_comparisons",
    "pooled_share",
    "significant_regression",
    "stratified_bootstrap_ci",
    "t_interval",
    "verdict",
    "wilcoxon_p",
    "wilson_interval",
]
