"""Field verdicts: every field of an extracted JSON judged against its gold (seed 004,
"JSON 구조 비교 평가기"); `fields` turns them into accuracies.

**Fields.** A field is a leaf of the gold: a scalar, ``null``, or an empty object or list.
Nested objects and lists are walked, never compared whole (so one wrong sub-field does not
fail its parent, the seed's "중첩 깊이" caveat). Each field has a path (``$.items[1].code``), a
name (``items[].code``) and a depth, see `json_input.Place`.

**Verdicts.** Every gold field, and every predicted field with no gold counterpart, gets one:

==================  ===========================================================
``matched``         gold value present and equal under its kind's exact rule, or gold
                    ``null`` and the prediction ``null``
``misread``         gold value, prediction present with another value
``unfound``         a gold field the prediction lacks (key or element missing), has as
                    ``null``, or holds under a value of another shape (a string where the
                    gold has an object)
``fabricated``      gold ``null``, prediction has a value
``invented_field``  a predicted key the gold does not have (each leaf below it), or the
                    leaves of a predicted value of another shape than the gold's
``invented_item``   a predicted list element beyond the gold's (each leaf below it)
==================  ===========================================================

Each verdict also keeps the two sides' states apart -- ``value``, ``null`` (JSON null or a
blank string: the seed notes that an unrecognised field comes back as either, and neither
claims a value), ``absent``, and ``wrong_shape`` for a gold field under a predicted value of
another shape -- so that missing, null and extra stay distinct for the structural accuracy.
A gold ``null`` is matched by a predicted ``null``, not by an absent key: the seed asks that
missing and empty be told apart. So an empty prediction (``null``, ``{}``) leaves every gold
field unfound and scores 0.

**Comparison** by kind (`values`): ``number`` (relative tolerance for the fuzzy rule), ``date``
(format-free), ``string`` (exact text; fuzzy: NED <= tau, 0.1 by default). A field's kind
comes from `FieldOptions.types` by name, else is inferred from the gold value as the seed does.
``similarity`` is 1 for an exact match, else 1 - NED of the two texts (0 when unfound).

**Lists** are compared element by element in order. For a list named in
`FieldOptions.unordered`, elements are paired by the Hungarian method (scipy's
``linear_sum_assignment``) on element similarity (the mean similarity of the gold element's
fields, invented ones counting 0); pairs of zero similarity are left unpaired, and a paired
element's fields keep the gold element's index in their path. That costs one comparison per
(gold, predicted) element pair.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np

from pytest_doceval.kinds.extraction.nested import DEFAULT_ALPHA, check_alpha
from pytest_doceval.kinds.extraction.values import (
    VALUE_KINDS,
    ValueKind,
    canonical_text,
    date_match,
    infer_kind,
    numeric_match,
    text_ned,
)
from pytest_doceval.metrics.json_input import DOCUMENT, Place, check_json

Verdict = Literal["matched", "misread", "unfound", "fabricated", "invented_field", "invented_item"]
VERDICTS: Final = ("matched", "misread", "unfound", "fabricated", "invented_field", "invented_item")
State = Literal["value", "null", "absent", "wrong_shape"]

_ABSENT: Final = object()  # a key or element the other side does not have


@dataclass(frozen=True)
class FieldOptions:
    """How fields are compared. Names are field names (``items[].code``; ``$`` for a document
    that is itself a scalar or list)."""

    types: Mapping[str, ValueKind] = field(default_factory=dict)
    weights: Mapping[str, float] = field(default_factory=dict)
    unordered: frozenset[str] = frozenset()
    fuzzy_threshold: float = 0.1
    numeric_tolerance: float = 0.0
    alpha: float = DEFAULT_ALPHA
    day_first: bool = True

    def __post_init__(self) -> None:
        for name, kind in self.types.items():
            if kind not in VALUE_KINDS:
                raise ValueError(f"field {name!r}: type {kind!r} is not one of {VALUE_KINDS}")
        for name, weight in self.weights.items():
            if not (math.isfinite(weight) and weight >= 0):
                raise ValueError(f"field {name!r}: weight {weight!r} is not a number >= 0")
        if not 0 <= self.fuzzy_threshold <= 1:
            raise ValueError(f"fuzzy_threshold must be in [0, 1], got {self.fuzzy_threshold!r}")
        if not (math.isfinite(self.numeric_tolerance) and self.numeric_tolerance >= 0):
            raise ValueError(f"numeric_tolerance must be >= 0, got {self.numeric_tolerance!r}")
        check_alpha(self.alpha)


@dataclass(frozen=True)
class FieldVerdict:
    """The judgement of one field: where it is, what each side holds, and how they compare."""

    path: str
    name: str
    depth: int
    verdict: Verdict
    kind: ValueKind | None  # how two values were compared; None when there were not two
    gold: Any  # the JSON values (None when absent: see the states)
    pred: Any
    gold_state: State
    pred_state: State
    exact: bool
    fuzzy: bool
    similarity: float
    weight: float

    @property
    def scored(self) -> bool:
        """A gold field (enters accuracy), as opposed to an invented one."""
        return self.gold_state != "absent"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "field": self.name,
            "verdict": self.verdict,
            "kind": self.kind,
            "gold": self.gold,
            "pred": self.pred,
            "gold_state": self.gold_state,
            "pred_state": self.pred_state,
            "similarity": round(self.similarity, 6),
        }


def _state(value: Any) -> State:
    return "absent" if value is _ABSENT else "null" if _blank(value) else "value"


def _value(value: Any) -> Any:
    return None if value is _ABSENT else value


def _blank(value: Any) -> bool:
    """No value: ``null`` or a blank string (the seed: an unrecognised field comes back as
    either)."""
    return value is None or (isinstance(value, str) and not value.strip())


def _is_leaf(value: Any) -> bool:
    return not isinstance(value, dict | list) or not value


def _leaves(value: Any, place: Place) -> list[tuple[Any, Place]]:
    out, stack = [], [(value, place)]
    while stack:
        node, where = stack.pop()
        if _is_leaf(node):
            out.append((node, where))
        elif isinstance(node, dict):
            stack.extend((node[k], where.key(k)) for k in reversed(list(node)))
        else:
            stack.extend((node[i], where.index(i)) for i in reversed(range(len(node))))
    return out


_NO_MATCH: Final = (False, False, 0.0)  # exact, fuzzy, similarity
_FULL_MATCH: Final = (True, True, 1.0)


class _Walk:
    """One comparison of a gold and a predicted value, collecting verdicts in gold order."""

    def __init__(self, options: FieldOptions) -> None:
        self.options = options
        self.out: list[FieldVerdict] = []

    def weight(self, place: Place, inherited: float) -> float:
        return self.options.weights.get(place.name, inherited)

    def emit(
        self,
        place: Place,
        verdict: Verdict,
        gold: Any,
        pred: Any,
        weight: float,
        kind: ValueKind | None = None,
        match: tuple[bool, bool, float] = _NO_MATCH,
        pred_state: State | None = None,
    ) -> None:
        exact, fuzzy, similarity = match
        self.out.append(
            FieldVerdict(
                place.path,
                place.name,
                place.depth,
                verdict,
                kind,
                _value(gold),
                _value(pred),
                _state(gold),
                pred_state or _state(pred),
                exact,
                fuzzy,
                similarity,
                weight,
            )
        )

    def invent(self, pred: Any, place: Place, verdict: Verdict, weight: float) -> None:
        for value, where in _leaves(pred, place):
            self.emit(where, verdict, _ABSENT, value, self.weight(where, weight))

    def unfind(self, gold: Any, place: Place, weight: float, pred_state: State) -> None:
        """Every gold field below `place` is unfound (null ones too: missing is not null)."""
        for value, where in _leaves(gold, place):
            self.emit(
                where,
                "unfound",
                value,
                _ABSENT,
                self.weight(where, weight),
                None,
                _NO_MATCH,
                pred_state,
            )

    def mismatch(self, gold: Any, pred: Any, place: Place, weight: float) -> None:
        """A predicted value of another shape than the gold's: the gold's fields are unfound
        and the prediction's are invented."""
        self.unfind(gold, place, weight, "wrong_shape")
        self.invent(pred, place, "invented_field", weight)

    def walk(self, gold: Any, pred: Any, place: Place, inherited: float) -> None:
        weight = self.weight(place, inherited)
        # A missing value, or null where the gold has an object or a list: no gold field below
        # has a path in the prediction.
        if pred is _ABSENT or (not _is_leaf(gold) and _blank(pred)):
            self.unfind(gold, place, weight, "absent")
        elif isinstance(gold, dict) and gold:
            if not isinstance(pred, dict):
                self.mismatch(gold, pred, place, weight)
                return
            for key, value in gold.items():
                self.walk(value, pred.get(key, _ABSENT), place.key(key), weight)
            for key, value in pred.items():
                if key not in gold:
                    self.invent(value, place.key(key), "invented_field", weight)
        elif isinstance(gold, list) and gold:
            if not isinstance(pred, list):
                self.mismatch(gold, pred, place, weight)
            elif place.name in self.options.unordered:
                self.walk_unordered(gold, pred, place, weight)
            else:
                for i, value in enumerate(gold):
                    self.walk(value, pred[i] if i < len(pred) else _ABSENT, place.index(i), weight)
                for i in range(len(gold), len(pred)):
                    self.invent(pred[i], place.index(i), "invented_item", weight)
        else:
            self.leaf(gold, pred, place, weight)

    def leaf(self, gold: Any, pred: Any, place: Place, weight: float) -> None:
        """A gold field against a predicted value that is present."""
        if _blank(gold):
            if _blank(pred):
                self.emit(place, "matched", gold, pred, weight, None, _FULL_MATCH, "null")
            elif isinstance(pred, dict | list) and pred:
                self.mismatch(gold, pred, place, weight)
            else:
                self.emit(place, "fabricated", gold, pred, weight)
        elif _blank(pred):
            self.emit(place, "unfound", gold, pred, weight, None, _NO_MATCH, "null")
        elif isinstance(gold, dict | list):  # an empty object or list
            if type(pred) is not type(gold):
                self.mismatch(gold, pred, place, weight)
            else:
                match = _NO_MATCH if pred else _FULL_MATCH
                self.emit(place, "misread" if pred else "matched", gold, pred, weight, None, match)
        elif isinstance(pred, dict | list):
            self.mismatch(gold, pred, place, weight)
        else:
            kind, match = self.compare(gold, pred, place)
            self.emit(place, "matched" if match[0] else "misread", gold, pred, weight, kind, match)

    def compare(
        self, gold: Any, pred: Any, place: Place
    ) -> tuple[ValueKind, tuple[bool, bool, float]]:
        """Kind, then (exact, fuzzy, similarity) of two scalars."""
        o = self.options
        kind = o.types.get(place.name) or infer_kind(gold)
        if kind == "number":
            exact = numeric_match(pred, gold)
            fuzzy = exact or numeric_match(pred, gold, o.numeric_tolerance)
        elif kind == "date":
            exact = fuzzy = date_match(pred, gold, day_first=o.day_first)
        else:
            exact = fuzzy = canonical_text(gold) == canonical_text(pred)
        if exact:
            return kind, _FULL_MATCH
        ned = text_ned(pred, gold)
        if kind == "string":
            fuzzy = ned <= o.fuzzy_threshold
        return kind, (False, fuzzy, 1.0 - ned)

    def walk_unordered(self, gold: list[Any], pred: list[Any], place: Place, w: float) -> None:
        trials: dict[tuple[int, int], list[FieldVerdict]] = {}
        similarity = np.zeros((len(gold), len(pred)))
        for i, g in enumerate(gold):
            for j, p in enumerate(pred):
                trial = _Walk(self.options)
                trial.walk(g, p, place.index(i), w)
                trials[i, j] = trial.out
                similarity[i, j] = sum(v.similarity for v in trial.out) / len(trial.out)
        # scipy on first use: importing it took half a second in every process of a warm run
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(similarity, maximize=True)
        paired = {int(i): int(j) for i, j in zip(rows, cols, strict=True) if similarity[i, j] > 0}
        for i, g in enumerate(gold):
            if i in paired:
                self.out.extend(trials[i, paired[i]])
            else:
                self.walk(g, _ABSENT, place.index(i), w)
        taken = set(paired.values())
        for j, p in enumerate(pred):
            if j not in taken:
                self.invent(p, place.index(j), "invented_item", w)


def field_verdicts(
    gold: Any, pred: Any, options: FieldOptions | None = None
) -> tuple[FieldVerdict, ...]:
    """The verdicts of every gold and predicted field, in gold order then invented ones where
    they occur. Raises `ExtractionInputError` (a ValueError) naming the side and the path of a
    value JSON cannot hold."""
    check_json(gold, "gold")
    check_json(pred, "prediction")
    walk = _Walk(options or FieldOptions())
    walk.walk(gold, pred, DOCUMENT, 1.0)
    return tuple(walk.out)
