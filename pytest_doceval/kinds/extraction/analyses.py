"""The extraction kind's suite-level analyses, recomputed from the rows by runs, ``doceval
merge`` and ``doceval report``.

Rows carry ``labels["extractor"]`` and ``labels["variant"]``; the suite's section carries
``reference_variant``, ``variants`` and ``extractors`` (the kind's ``describe``), so nothing here
parses a system name.

* `OcrRobustness` (``ocr_robustness``), seed 003's question: how much does extraction lose when
  the OCR text gets worse? Per extractor, per variant other than the reference (the corrected
  text) and per headline metric: the mean paired difference variant - reference over the pages
  both were measured on, its confidence interval (`stats.paired_interval`, the t interval of
  the differences), the paired t-test and Wilcoxon p-values, and a verdict (``worse`` when the
  whole interval lies on the metric's bad side, ``better`` on its good side).
* `VerdictCounts` (``verdict_counts``): per (extractor, variant), the field verdicts summed over
  pages (fields mode), or the entry counts (entries mode: matched pairs, missing, spurious).
* `ExtractorPairs` (``comparisons``, the documents kind's shape, so it renders the same): every
  pair of extractors on the same variant, on every headline metric, Bonferroni per family.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_doceval.config import StatsConfig
from pytest_doceval.metrics.spec import headline, specs_from_section
from pytest_doceval.rows import is_measured

Rows = Sequence[Mapping[str, Any]]


def _label(row: Mapping[str, Any], name: str) -> str:
    return str((row.get("labels") or {}).get(name, ""))


def _order(meta: Mapping[str, Any], rows: Rows, key: str, label: str) -> list[str]:
    """Extractors or variants in the suite's order, then any others the rows name (a merged
    report of an older suite definition), sorted."""
    listed = [str(v) for v in (meta.get(key) or [])]
    seen = {_label(r, label) for r in rows if is_measured(r)}
    return [v for v in listed if v in seen] + sorted(seen - set(listed))


def by_page(rows: Rows, metric: str, extractor: str, variant: str) -> dict[str, float]:
    """{page: value} of one extractor on one variant, measured rows with the metric only."""
    out: dict[str, float] = {}
    for row in rows:
        value = (row.get("metrics") or {}).get(metric)
        if (
            is_measured(row)
            and value is not None
            and _label(row, "extractor") == extractor
            and _label(row, "variant") == variant
        ):
            out[str(row["case"])] = float(value)
    return out


@dataclass(frozen=True)
class OcrRobustness:
    key: str = "ocr_robustness"

    def __call__(self, rows: Rows, meta: Mapping[str, Any], stats_config: StatsConfig) -> list[Any]:
        from pytest_doceval.kinds.analyses import paired_change_row

        specs = specs_from_section(meta)
        reference = str(meta.get("reference_variant") or "")
        out: list[dict[str, Any]] = []
        for extractor in _order(meta, rows, "extractors", "extractor"):
            for variant in _order(meta, rows, "variants", "variant"):
                if variant == reference:
                    continue
                for metric in headline(specs):
                    base = by_page(rows, metric, extractor, reference)
                    other = by_page(rows, metric, extractor, variant)
                    pages = sorted(set(base) & set(other))
                    if not pages:
                        continue
                    a, b = [other[p] for p in pages], [base[p] for p in pages]
                    direction = specs[metric].direction
                    out.append(
                        {
                            "extractor": extractor,
                            "variant": variant,
                            "reference": reference,
                            "metric": metric,
                            "reference_mean": sum(b) / len(b),
                            "variant_mean": sum(a) / len(a),
                            **paired_change_row(
                                a, b, direction, stats_config, binary=specs[metric].binary
                            ),
                        }
                    )
        return out


# The keys of ``details`` that hold per-page counts, by mode.
COUNT_DETAILS = ("verdict_counts", "entry_counts")


@dataclass(frozen=True)
class VerdictCounts:
    key: str = "verdict_counts"

    def __call__(self, rows: Rows, meta: Mapping[str, Any], stats_config: StatsConfig) -> list[Any]:
        totals: dict[tuple[str, str], dict[str, int]] = {}
        for row in rows:
            details = row.get("details") or {}
            counts = next((details[k] for k in COUNT_DETAILS if k in details), None)
            if not is_measured(row) or not isinstance(counts, Mapping):
                continue
            key = (_label(row, "extractor"), _label(row, "variant"))
            total = totals.setdefault(key, {"pages": 0})
            total["pages"] += 1
            for name, n in counts.items():
                total[str(name)] = total.get(str(name), 0) + int(n)
        out: list[dict[str, Any]] = []
        for extractor in _order(meta, rows, "extractors", "extractor"):
            for variant in _order(meta, rows, "variants", "variant"):
                if (extractor, variant) in totals:
                    counts = totals[extractor, variant]
                    out.append({"extractor": extractor, "variant": variant, **counts})
        return out


@dataclass(frozen=True)
class ExtractorPairs:
    key: str = "comparisons"

    def __call__(self, rows: Rows, meta: Mapping[str, Any], stats_config: StatsConfig) -> list[Any]:
        from pytest_doceval.kinds.analyses import pairwise_rows

        specs = specs_from_section(meta)
        extractors = _order(meta, rows, "extractors", "extractor")
        if len(extractors) < 2:
            return []
        systems = {(_label(r, "extractor"), _label(r, "variant")): str(r["system"]) for r in rows}
        out: list[dict[str, Any]] = []
        for variant in _order(meta, rows, "variants", "variant"):
            for metric in sorted(headline(specs)):
                by_system = {
                    systems[e, variant]: values
                    for e in extractors
                    if (values := by_page(rows, metric, e, variant))
                }
                for row in pairwise_rows(by_system, metric, specs[metric], stats_config):
                    out.append({**row, "variant": variant})
        return out
