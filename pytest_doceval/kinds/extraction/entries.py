"""Entry lists: one-to-one alignment by optimal transport, and IMQ (seed 003).

A document holds a list of entries (an index of speakers, each with the pages of their
speeches). Which key holds the list, which the entry's name and which its set is configured
(`EntryFields`: the suite's ``[suite.entries]`` ``list``, ``name``, ``set``).

**Entry distance** (seed 003, "Entry-level Distance"): d_e = d_n x d_p, where d_n = 1 - the
Ratcliff/Obershelp similarity (difflib's ``SequenceMatcher(None, gold, pred,
autojunk=False).ratio()``, run by cydifflib, its compiled port, when installed) of the
lowercased, trimmed names, and d_p = 1 -
IoU of the two sets (set items compared as text, so page ``12`` and ``"12"`` agree; two empty
sets are identical). Ratcliff/Obershelp is not symmetric, so the gold name is always the first
sequence. As the seed defines it, the product is 0 when either part agrees: a right name with
wrong pages is a perfect match, and so are right pages under a wrong name. difflib's "autojunk"
heuristic is off: on by default, it treats every character that makes up more than 1% of a
second sequence of 200+ characters as junk, so ``"ab"*100`` against ``"ba"*100`` had ratio 0
instead of Ratcliff/Obershelp's 0.995; the seed's algorithm has no junk, at any length.

**Assignment** (seed 003: optimal transport): the one-to-one pairing of least total distance,
found as POT's exact ``ot.emd`` with uniform weights (``method="emd"``), whose optimum for
equal counts and uniform weights is a permutation. The same optimum, solved by scipy's
``linear_sum_assignment``, is the default (``method="lsa"``): 2.5x faster (1000 x 1000: 65 vs
160 ms of CPU), and tests check that both reach the brute-force optimum on small tied
matrices and the same total on large random ones. IMQ depends only on that total, so it is
identical either way; when several pairings tie, the two may pick different pairs, which can
move precision and recall at a threshold.

**Unequal counts** (the seed leaves this open): the shorter side is padded with dummy entries
at distance 1 from everything, so a missing or a spurious entry is a pair of quality 0 and
the mean runs over max(n_gold, n_pred) pairs.

**IMQ** (seed 003, "Integrated Matching Quality"): q = 1 - d_e per pair; F(t) = share of pairs
with q >= t; IMQ = the area under F on [0, 1], computed exactly as the area of that step
function. Since the integral of [q >= t] over t in [0, 1] is q, IMQ equals the mean of q
(tests check it, and a fine Riemann sum, the "continuous limit"). No entries on either side
scores 1.0.

**Precision, recall, F1** at a quality threshold (0.5 by default): a true positive is a pair of
a gold and a predicted entry with q >= threshold; precision = TP / predicted entries, recall
= TP / gold entries. They are secondary, with the seed's caveat: a forced one-to-one alignment
pairs everything, so without the threshold and the dummies these would be trivially perfect,
and with them they hinge on an arbitrary threshold that IMQ integrates away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from pytest_doceval.kinds.extraction.values import canonical_text
from pytest_doceval.metrics.assignment import FloatArray, Method, assign
from pytest_doceval.metrics.json_input import ExtractionInputError
from pytest_doceval.metrics.spec import SHARE, MetricSpec

if TYPE_CHECKING:
    from difflib import SequenceMatcher
else:
    try:  # difflib's algorithm compiled: the same ratios, 4x faster (tests compare the two)
        from cydifflib import SequenceMatcher
    except ImportError:  # pragma: no cover - the standard library gives the same numbers
        from difflib import SequenceMatcher

DEFAULT_THRESHOLD: Final = 0.5

ENTRY_METRICS: Final[Mapping[str, MetricSpec]] = {
    "imq": MetricSpec(
        "higher",
        bounds=SHARE,
        description="Integrated matching quality: mean quality 1 - d_e of the one-to-one "
        "entry alignment, missing and spurious entries counting 0 (seed 003)",
    ),
    # seed 003: IMQ is the headline; threshold P/R/F1 hinge on an arbitrary cut-off, so they
    # stay in rows and tables but are no headline (issue 19)
    "entry_f1": MetricSpec(
        "higher",
        bounds=SHARE,
        headline=False,
        description="F1 of aligned entry pairs with quality >= the threshold",
    ),
    "entry_precision": MetricSpec(
        "higher", bounds=SHARE, headline=False, description="TP / predicted entries"
    ),
    "entry_recall": MetricSpec(
        "higher", bounds=SHARE, headline=False, description="TP / gold entries"
    ),
}


@dataclass(frozen=True)
class EntryFields:
    """Where the entries are: `list` is the document's key holding them (``None``: the
    document is the list itself), `name` and `set` the keys inside an entry."""

    name: str = "name"
    set: str = "pages"
    list: str | None = "entries"


@dataclass(frozen=True)
class _Entry:
    name: str  # lowercased, trimmed
    items: frozenset[str]
    shown: str  # the name as written, for the report


@dataclass(frozen=True)
class EntryPair:
    """One pair of the alignment; `gold` or `pred` is None for a dummy (missing or spurious)."""

    gold: int | None
    pred: int | None
    distance: float
    gold_name: str | None = None  # as written (None for a dummy or an unreadable entry)
    pred_name: str | None = None

    @property
    def quality(self) -> float:
        return 1.0 - self.distance

    def to_dict(self) -> dict[str, Any]:
        return {
            "gold": self.gold,
            "pred": self.pred,
            "gold_name": self.gold_name,
            "pred_name": self.pred_name,
            "quality": round(self.quality, 6),
        }


@dataclass(frozen=True)
class EntryScore:
    imq: float
    precision: float
    recall: float
    f1: float
    qualities: tuple[float, ...]  # one per pair, in the order of `pairs`
    pairs: tuple[EntryPair, ...]
    n_gold: int
    n_pred: int
    true_positives: int
    threshold: float
    problems: tuple[str, ...]  # predicted entries that could not be read, and why

    def metrics(self) -> dict[str, float]:
        return {
            "imq": self.imq,
            "entry_precision": self.precision,
            "entry_recall": self.recall,
            "entry_f1": self.f1,
        }

    def view(self) -> dict[str, Any]:
        """The alignment for the report (builtin types), worst pairs first: low-quality pairs
        are where an extractor missed, invented or garbled an entry."""
        return {
            "threshold": self.threshold,
            "n_gold": self.n_gold,
            "n_pred": self.n_pred,
            "true_positives": self.true_positives,
            "problems": list(self.problems),
            "pairs": [p.to_dict() for p in sorted(self.pairs, key=lambda p: p.quality)],
        }


def name_distance(gold: str, pred: str) -> float:
    """1 - Ratcliff/Obershelp similarity of the lowercased, trimmed names."""
    matcher = SequenceMatcher(None, gold.strip().lower(), pred.strip().lower(), autojunk=False)
    return 1.0 - matcher.ratio()


def set_distance(gold: frozenset[str] | set[str], pred: frozenset[str] | set[str]) -> float:
    """1 - |gold & pred| / |gold | pred|; 0.0 for two empty sets."""
    union = len(gold | pred)
    return 0.0 if union == 0 else 1.0 - len(gold & pred) / union


def _items(value: list[Any]) -> frozenset[str]:
    return frozenset(canonical_text(item) for item in value)


def _entries(
    document: Any, fields: EntryFields, what: str
) -> tuple[list[_Entry | None], list[str]]:
    """A side's entries (None for one that cannot be read) and what could not be read. The
    gold must be readable: for it, this raises `ExtractionInputError` naming the place."""
    problems: list[str] = []

    def problem(message: str) -> None:
        if what == "gold":
            raise ExtractionInputError(f"gold: {message}")
        problems.append(message)

    where = "$" if fields.list is None else f"$.{fields.list}"
    if fields.list is not None and document is not None:
        if isinstance(document, dict) and fields.list in document:
            document = document[fields.list]
        else:
            problem(f"no list of entries at {where} (got a {type(document).__name__})")
            document = None
    if document is None:  # an empty prediction: no entries
        if what == "gold":
            problem(f"no list of entries at {where}")
        return [], problems
    if not isinstance(document, list):
        problem(f"{where} is a {type(document).__name__}, not a list of entries")
        return [], problems
    out: list[_Entry | None] = []
    for i, entry in enumerate(document):
        reason = _unreadable(entry, fields)
        if reason is None:
            name, items = entry[fields.name], entry[fields.set]
            out.append(_Entry(name.strip().lower(), _items(items), name))
        else:
            problem(f"{where}[{i}]{reason}")
            out.append(None)
    return out, problems


def _unreadable(entry: Any, fields: EntryFields) -> str | None:
    if not isinstance(entry, dict):
        return f" is a {type(entry).__name__}, not an entry"
    if not isinstance(entry.get(fields.name), str):
        return f".{fields.name} is not a string"
    if not isinstance(entry.get(fields.set), list):
        return f".{fields.set} is not a list"
    return None


def _distance_matrix(gold: Sequence[_Entry | None], pred: Sequence[_Entry | None]) -> FloatArray:
    """d_e for every (gold, pred) pair, padded to a square with dummies at distance 1. An
    unreadable predicted entry is at distance 1 from everything."""
    n = max(len(gold), len(pred))
    cost = np.ones((n, n))
    matcher = SequenceMatcher(None, autojunk=False)  # one home: name_distance's settings
    for j, p in enumerate(pred):
        if p is None:
            continue
        matcher.set_seq2(p.name)  # difflib caches its index of the second sequence
        for i, g in enumerate(gold):
            assert g is not None  # the gold was checked
            d_p = set_distance(g.items, p.items)
            if d_p == 0 or g.name == p.name:  # the product is 0: no need for the ratio
                cost[i, j] = 0.0
                continue
            matcher.set_seq1(g.name)
            cost[i, j] = (1.0 - matcher.ratio()) * d_p
    return cost


def imq(qualities: Sequence[float]) -> float:
    """Area under F(t) = share of qualities >= t, for t in [0, 1]: the step function's exact
    area. 1.0 for no pairs."""
    n = len(qualities)
    if n == 0:
        return 1.0
    area, below = 0.0, 0.0
    for k, q in enumerate(sorted(qualities)):  # F = (n - k) / n on (previous q, q]
        area += (q - below) * (n - k) / n
        below = q
    return area


def _ratio(hits: int, total: int, other_misses: int) -> float:
    """hits / total, closed as 1.0 when there is nothing to count and nothing missed."""
    if total == 0:
        return 1.0 if other_misses == 0 else 0.0
    return hits / total


def score_entries(
    gold: Any,
    pred: Any,
    fields: EntryFields | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    method: Method = "lsa",
) -> EntryScore:
    """Align predicted entries with gold ones and score the alignment (module docstring).

    A prediction that is ``null``, lacks the list or is of the wrong type has no entries: every
    gold entry is missing (IMQ 0 when there are gold entries); the last two are also listed
    in `problems`. A predicted entry that cannot be read (not an object, no string name, no
    list set) is listed there too and scores as a spurious entry (q = 0). A gold that cannot
    be read raises `ExtractionInputError` (a ValueError) naming the place."""
    if not 0 <= threshold <= 1:
        raise ValueError(f"entry threshold must be in [0, 1], got {threshold!r}")
    fields = fields or EntryFields()
    gold_entries, _ = _entries(gold, fields, "gold")
    pred_entries, problems = _entries(pred, fields, "prediction")
    cost = _distance_matrix(gold_entries, pred_entries)
    cols = assign(cost, method)
    n_gold, n_pred = len(gold_entries), len(pred_entries)

    def shown(entries: list[_Entry | None], k: int) -> str | None:
        entry = entries[k] if k < len(entries) else None
        return None if entry is None else entry.shown

    pairs = [
        EntryPair(
            i if i < n_gold else None,
            int(j) if j < n_pred else None,
            float(cost[i, j]),
            shown(gold_entries, i),
            shown(pred_entries, int(j)),
        )
        for i, j in enumerate(cols)
    ]
    pairs.sort(key=lambda p: (p.gold is None, p.gold or 0, p.pred or 0))
    qualities = tuple(p.quality for p in pairs)
    tp = sum(
        1 for p in pairs if p.gold is not None and p.pred is not None and p.quality >= threshold
    )
    precision = _ratio(tp, n_pred, n_gold)
    recall = _ratio(tp, n_gold, n_pred)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return EntryScore(
        imq=imq(qualities),
        precision=precision,
        recall=recall,
        f1=f1,
        qualities=qualities,
        pairs=tuple(pairs),
        n_gold=n_gold,
        n_pred=n_pred,
        true_positives=tp,
        threshold=threshold,
        problems=tuple(problems),
    )
