"""Field-level accuracy of an extracted JSON against its gold (seed 004, "필드별 정확도",
"Fuzzy Field Matching", "중첩 구조 재귀적 평가"), from the verdicts of `field_verdicts`.

**Per field name** k (a list field has one gold field per element): Acc_k = matched / gold
fields named k; FuzzyAcc_k likewise with the fuzzy rule (NED <= tau for strings, the numeric
tolerance for numbers); the mean similarity (1 - NED) is the seed's other "FuzzyAcc".

**Totals** are the seed's weighted means over field names, ``sum_k w_k Acc_k / sum_k w_k``,
weights from `FieldOptions.weights` (a weight set on ``items`` applies to ``items[].code``
unless that has its own; 1 by default, 0 leaves a field out). Invented fields do not enter
accuracy, which is over gold fields as in the seed: they enter the structural accuracy and the
per-verdict counts. With no gold field at all, every accuracy is 1.0 when nothing was
predicted either, else 0.0.

**Across documents** the report shows, for ``field_accuracy``, the mean of the per-document
totals above (every document weighs the same) and, as ``corpus``, seed 004's Acc_total: per
field name k, Acc_k = |{i : v̂_ik = v_ik}| / N_k over the N_k documents whose gold has a field
named k, then Σ w_k Acc_k / Σ w_k. A document's field k "matches" when its value does; for a list
field (``items[].name``) when the whole list does -- every gold element's value matched and no
predicted element beyond them (an invented item under that name) -- since v̂_ik = v_ik compares
the lists, not their elements. ``field_accuracy_pooled`` keeps the item-pooled share beside it:
its corpus pools the elements, Σ matched_k / Σ total_k over all documents' gold fields named k,
which lets a receipt of ten line items outweigh one of a single item (issue 26: 0.909 pooled
where the seed's formula gives 0.5). Its per-document value is ``field_accuracy``'s (for one
document the per-element share); only its corpus differs. ``field_fuzzy_accuracy`` and
``field_fuzzy_accuracy_pooled`` likewise under the fuzzy rule. `FieldScore.pooled_counts` puts
both kinds of counts in the row, `stats.pooled_share` sums them.

**Nested accuracy**: `nested`, over the same gold fields and their depths.

**Structure** (the seed's structural accuracy, with missing, null and extra kept apart): over
gold fields, ``present`` (the prediction has the path; ``null`` included and also counted in
``null``), ``missing`` (it lacks the path) and ``mismatched`` (the path lies under a predicted
value of another shape); and ``extra`` predicted fields. Structural accuracy = present /
(present + missing + mismatched + extra); 1.0 for two empty documents.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pytest_doceval.kinds.extraction.nested import NestedScore, nested_accuracy
from pytest_doceval.kinds.extraction.verdicts import (
    VERDICTS,
    FieldOptions,
    FieldVerdict,
    field_verdicts,
)
from pytest_doceval.metrics.spec import SHARE, MetricSpec


@dataclass(frozen=True)
class FieldTally:
    """One field name's gold fields in one document: how many, how many matched exactly and
    fuzzily, their summed similarity, the name's weight, and how many predicted fields of that
    name have no gold counterpart (list elements beyond the gold's)."""

    total: int
    exact: int
    fuzzy: int
    similarity: float
    weight: float
    invented: int = 0

    @property
    def whole_exact(self) -> bool:
        """Seed 004's v̂_ik = v_ik for this document: every gold field of the name matched
        and none invented (a list matches when the whole list does)."""
        return self.exact == self.total and self.invented == 0

    @property
    def whole_fuzzy(self) -> bool:
        return self.fuzzy == self.total and self.invented == 0

    @property
    def accuracy(self) -> float:
        return self.exact / self.total

    @property
    def fuzzy_accuracy(self) -> float:
        return self.fuzzy / self.total

    @property
    def mean_similarity(self) -> float:
        return self.similarity / self.total


@dataclass(frozen=True)
class StructureTally:
    present: int
    null: int
    missing: int
    mismatched: int
    extra: int

    @property
    def accuracy(self) -> float:
        total = self.present + self.missing + self.mismatched + self.extra
        return 1.0 if total == 0 else self.present / total


# Per-field metrics: these prefixes plus a field name, e.g. "field_accuracy:items[].code".
PER_FIELD_PREFIXES: Final = ("field_accuracy:", "field_fuzzy_accuracy:")
# The item-pooled twins of field_accuracy and field_fuzzy_accuracy (their corpus pools list
# elements), and the prefixes of their counts in a row.
POOLED_METRICS: Final = ("field_accuracy_pooled", "field_fuzzy_accuracy_pooled")
POOLED_PREFIXES: Final = ("field_accuracy_pooled:", "field_fuzzy_accuracy_pooled:")

FIELD_METRICS: Final[Mapping[str, MetricSpec]] = {
    "field_accuracy": MetricSpec(
        "higher",
        bounds=SHARE,
        pooled="field_accuracy:",
        description="Weighted mean over field names of the share matched exactly (004); "
        "corpus: the seed's Acc_total, Σ w_k Acc_k / Σ w_k, Acc_k the share of documents whose "
        "field k matches (a list field when the whole list does)",
    ),
    "field_fuzzy_accuracy": MetricSpec(
        "higher",
        bounds=SHARE,
        pooled="field_fuzzy_accuracy:",
        description="As field_accuracy, with NED <= tau for text, a tolerance for numbers",
    ),
    "field_accuracy_pooled": MetricSpec(
        "higher",
        bounds=SHARE,
        headline=False,
        pooled="field_accuracy_pooled:",
        description="Per document as field_accuracy; corpus: Acc_k pools the list elements "
        "(matched / gold fields named k over all documents), not the seed's Acc_total",
    ),
    "field_fuzzy_accuracy_pooled": MetricSpec(
        "higher",
        bounds=SHARE,
        headline=False,
        pooled="field_fuzzy_accuracy_pooled:",
        description="As field_accuracy_pooled, under the fuzzy rule",
    ),
    "field_similarity": MetricSpec(
        "higher",
        bounds=SHARE,
        headline=False,
        description="Weighted mean over field names of 1 - NED",
    ),
    "nested_accuracy": MetricSpec(
        "higher",
        bounds=SHARE,
        description="Field accuracy per depth, weighted alpha^depth and normalised",
    ),
    "structural_accuracy": MetricSpec(
        "higher",
        bounds=SHARE,
        headline=False,
        description="Gold fields whose path the prediction has / (those + missing + other "
        "shape + invented)",
    ),
    "field_accuracy:*": MetricSpec(
        "higher", bounds=SHARE, headline=False, description="One field name's accuracy"
    ),
    "field_fuzzy_accuracy:*": MetricSpec(
        "higher", bounds=SHARE, headline=False, description="One field name's fuzzy accuracy"
    ),
}


@dataclass(frozen=True)
class FieldScore:
    """Verdicts and tallies of one predicted document against its gold."""

    verdicts: tuple[FieldVerdict, ...]
    fields: Mapping[str, FieldTally]
    structure: StructureTally
    nested: NestedScore

    @property
    def counts(self) -> dict[str, int]:
        """How many fields got each verdict (every verdict listed, zeros included)."""
        found = Counter(v.verdict for v in self.verdicts)
        return {verdict: found[verdict] for verdict in VERDICTS}

    def _closed(self, value: float | None) -> float:
        """A total over gold fields; with none, 1.0 if nothing was predicted either, else 0."""
        if value is not None:
            return value
        return 0.0 if self.verdicts else 1.0

    def _weighted(self, of: Callable[[FieldTally], float]) -> float | None:
        weights = sum(t.weight for t in self.fields.values())
        if weights == 0:
            return None
        return sum(t.weight * of(t) for t in self.fields.values()) / weights

    @property
    def field_accuracy(self) -> float:
        return self._closed(self._weighted(lambda t: t.accuracy))

    @property
    def field_fuzzy_accuracy(self) -> float:
        return self._closed(self._weighted(lambda t: t.fuzzy_accuracy))

    @property
    def field_similarity(self) -> float:
        return self._closed(self._weighted(lambda t: t.mean_similarity))

    @property
    def nested_accuracy(self) -> float:
        return self._closed(self.nested.accuracy if self.nested.by_depth else None)

    def edit_counts(self) -> dict[str, int]:
        """The verdicts as the report's edit counts: hits = matched, substitutions = misread
        and fabricated, deletions = unfound, insertions = invented, over the gold fields."""
        c = self.counts
        return {
            "hits": c["matched"],
            "substitutions": c["misread"] + c["fabricated"],
            "deletions": c["unfound"],
            "insertions": c["invented_field"] + c["invented_item"],
            "reference_length": sum(1 for v in self.verdicts if v.scored),
        }

    def pooled_counts(self) -> dict[str, dict[str, float]]:
        """What the corpus aggregates (`MetricSpec.pooled`) sum over documents, as
        ``row["counts"]`` keys ``<prefix><name>`` -> matched, total and weight. Seed 004's
        (``field_accuracy:``, ``field_fuzzy_accuracy:``): this document is one sample of field k,
        matched when the whole field does (`FieldTally.whole_exact`). Item-pooled
        (``field_accuracy_pooled:``...): the name's gold fields and how many matched."""
        exact, fuzzy = PER_FIELD_PREFIXES
        pooled_exact, pooled_fuzzy = POOLED_PREFIXES
        out: dict[str, dict[str, float]] = {}
        for name, t in self.fields.items():
            out[exact + name] = {"matched": int(t.whole_exact), "total": 1, "weight": t.weight}
            out[fuzzy + name] = {"matched": int(t.whole_fuzzy), "total": 1, "weight": t.weight}
            out[pooled_exact + name] = {"matched": t.exact, "total": t.total, "weight": t.weight}
            out[pooled_fuzzy + name] = {"matched": t.fuzzy, "total": t.total, "weight": t.weight}
        return out

    def view(self) -> dict[str, Any]:
        """Verdicts for the report (builtin types): the counts, the structure tallies, the
        accuracy per depth, and every field that is not matched (matched ones are counted)."""
        s = self.structure
        return {
            "counts": self.counts,
            "structure": {
                "present": s.present,
                "null": s.null,
                "missing": s.missing,
                "mismatched": s.mismatched,
                "extra": s.extra,
            },
            "depths": [
                {"depth": d.depth, "correct": d.correct, "total": d.total}
                for d in self.nested.by_depth
            ],
            "verdicts": [v.to_dict() for v in self.verdicts if v.verdict != "matched"],
        }

    def metrics(self, *, per_field: bool = True) -> dict[str, float]:
        out = {
            "field_accuracy": self.field_accuracy,
            "field_fuzzy_accuracy": self.field_fuzzy_accuracy,
            # Per document the same values; their corpus aggregates differ (module docstring).
            "field_accuracy_pooled": self.field_accuracy,
            "field_fuzzy_accuracy_pooled": self.field_fuzzy_accuracy,
            "field_similarity": self.field_similarity,
            "nested_accuracy": self.nested_accuracy,
            "structural_accuracy": self.structure.accuracy,
        }
        if per_field:
            exact, fuzzy = PER_FIELD_PREFIXES
            for name, tally in self.fields.items():
                out[exact + name] = tally.accuracy
                out[fuzzy + name] = tally.fuzzy_accuracy
        return out


def _structure(verdicts: tuple[FieldVerdict, ...]) -> StructureTally:
    gold = [v for v in verdicts if v.scored]
    return StructureTally(
        present=sum(v.pred_state in ("value", "null") for v in gold),
        null=sum(v.pred_state == "null" for v in gold),
        missing=sum(v.pred_state == "absent" for v in gold),
        mismatched=sum(v.pred_state == "wrong_shape" for v in gold),
        extra=len(verdicts) - len(gold),
    )


def _tallies(verdicts: tuple[FieldVerdict, ...]) -> dict[str, FieldTally]:
    groups: dict[str, list[FieldVerdict]] = {}
    for v in verdicts:
        if v.scored:
            groups.setdefault(v.name, []).append(v)
    invented = Counter(v.name for v in verdicts if not v.scored)
    return {
        name: FieldTally(
            total=len(vs),
            exact=sum(v.verdict == "matched" for v in vs),
            fuzzy=sum(v.fuzzy for v in vs),
            similarity=sum(v.similarity for v in vs),
            weight=vs[0].weight,
            invented=invented[name],
        )
        for name, vs in groups.items()
    }


def score_fields(gold: Any, pred: Any, options: FieldOptions | None = None) -> FieldScore:
    """Compare a predicted JSON value with its gold, field by field (module docstrings here
    and in `field_verdicts`).

    A prediction of the wrong shape or an empty one (``None``, ``{}``) is scored, not refused:
    its gold fields are unfound, so its accuracies are 0. Raises `ExtractionInputError` (a
    ValueError) naming the side and the path of a value JSON cannot hold."""
    options = options or FieldOptions()
    verdicts = field_verdicts(gold, pred, options)
    nested = nested_accuracy(
        ((v.depth, v.verdict == "matched") for v in verdicts if v.scored), options.alpha
    )
    return FieldScore(verdicts, _tallies(verdicts), _structure(verdicts), nested)
