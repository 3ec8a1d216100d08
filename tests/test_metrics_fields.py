"""Field verdicts and accuracies (seed 004): value readers, hand-worked documents, the seed's own
insurance-claim example, property tests, and real gold JSON from SROIE and invoice2data."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from pytest_doceval.kinds.extraction.fields import FIELD_METRICS, score_fields
from pytest_doceval.kinds.extraction.nested import nested_accuracy
from pytest_doceval.kinds.extraction.values import (
    canonical_text,
    date_match,
    infer_kind,
    numeric_match,
    parse_date,
    parse_number,
)
from pytest_doceval.kinds.extraction.verdicts import FieldOptions, field_verdicts
from pytest_doceval.metrics.json_input import ExtractionInputError
from pytest_doceval.metrics.spec import find_spec
from tests.conftest import REALDATA

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=25,
)


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("1,500,000원", 1_500_000),
        ("₩ 1,500,000", 1_500_000),
        ("$1,234.50", 1234.5),
        ("-$5", -5),
        ("1 500 000 €", 1_500_000),
        ("RM 9.00", 9),
        (".5", 0.5),
        (1500000.0, 1_500_000),
    ],
)
def test_numbers_lose_separators_and_currency_marks(text: Any, number: float) -> None:
    assert parse_number(text) == number


@pytest.mark.parametrize(
    "text", ["", "abc", "1e5", "inf", "nan", "12 USD 34", "1.2.3", "+-5", True]
)
def test_what_is_not_a_number(text: Any) -> None:
    assert parse_number(text) is None


@given(
    st.integers(0, 10**12),
    st.sampled_from(["", "₩", "$", "€"]),
    st.sampled_from(["", "원", " KRW"]),
    st.booleans(),
)
def test_a_formatted_amount_reads_back(amount: int, before: str, after: str, sep: bool) -> None:
    text = f"{before}{amount:,}{after}" if sep else f"{before}{amount}{after}"
    assert parse_number(text) == amount


def test_numeric_match_uses_a_relative_tolerance() -> None:
    assert numeric_match("1,500,000", 1500000)
    assert not numeric_match("1,500,001", 1500000)
    assert numeric_match("1,515,000", 1500000, tolerance=0.01)
    assert not numeric_match("1,515,001", 1500000, tolerance=0.01)
    assert numeric_match(0, "0원") and not numeric_match("0.001", 0, tolerance=0.5)
    assert numeric_match("n/a", "N/A ") is False  # falls back to exact text
    assert numeric_match("n/a", "n/a")


# ---------------------------------------------------------------- dates


@pytest.mark.parametrize(
    "text",
    [
        "2024-03-15",
        "2024.03.15",
        "2024/3/15",
        "2024년 3월 15일",
        "2024 년 03 월 15 일",
        "15 March 2024",
        "15 MAR 2024",
        "March 15, 2024",
        "Mar 15 2024",
        "15-Mar-24",
        "15/03/2024",
        "15-03-24",
        "03/15/2024",  # month first: 15 cannot be a month
        "20240315",
        "Date: 15.03.2024 10:20",
    ],
)
def test_dates_across_formats(text: str) -> None:
    assert parse_date(text) == dt.date(2024, 3, 15)


def test_ambiguous_numeric_dates_read_day_first_unless_told() -> None:
    assert parse_date("03/04/2019") == dt.date(2019, 4, 3)
    assert parse_date("03/04/2019", day_first=False) == dt.date(2019, 3, 4)
    assert parse_date("28-12-69") == dt.date(1969, 12, 28)  # POSIX %y pivot
    assert parse_date("2024-02-30") is None and parse_date("no date") is None


@given(st.dates(dt.date(1970, 1, 1), dt.date(2068, 12, 31)))
def test_every_format_of_a_date_reads_back(day: dt.date) -> None:
    month = day.strftime("%B")
    forms = [
        day.isoformat(),
        f"{day.year}.{day.month:02d}.{day.day:02d}",
        f"{day.year}/{day.month}/{day.day}",
        f"{day.year}년 {day.month}월 {day.day}일",
        f"{day.day} {month} {day.year}",
        f"{month[:3]} {day.day}, {day.year}",
        f"{day.day:02d}/{day.month:02d}/{day.year}",
        f"{day.day:02d}-{day.month:02d}-{day.year % 100:02d}",
    ]
    for form in forms:
        assert parse_date(form) == day, form
        assert date_match(form, day.isoformat())


def test_kinds_are_inferred_as_the_seed_does() -> None:
    assert infer_kind(1500000) == "number" and infer_kind("1,500,000원") == "number"
    assert infer_kind("2024.03.15") == "date" and infer_kind("12 MAR 2018") == "date"
    assert infer_kind("Ordered on 18 april 2014, thanks") == "string"  # mentions, is not, a date
    assert infer_kind(True) == "string" and infer_kind("K35.80") == "string"


# ---------------------------------------------------------------- text and NED


def test_canonical_text_writes_json_scalars_alike() -> None:
    assert canonical_text(1500000.0) == canonical_text(1500000) == "1500000"
    assert canonical_text(True) == "true" and canonical_text(None) == ""
    assert canonical_text("  a \n b ") == "a b"
    assert canonical_text("\u1112\u1161\u11ab") == "한"  # NFD Hangul reads as NFC


@pytest.mark.parametrize(
    ("gold", "pred", "edits", "longest"),
    [("K35.80", "K35.8O", 1, 6), ("kitten", "sitting", 3, 7), ("NO501", "N0501", 1, 5)],
)
def test_fuzzy_similarity_is_one_minus_ned_worked_by_hand(
    gold: str, pred: str, edits: int, longest: int
) -> None:
    (verdict,) = field_verdicts({"f": gold}, {"f": pred})
    assert verdict.similarity == pytest.approx(1 - edits / longest)
    assert Levenshtein.normalized_distance(gold, pred) == pytest.approx(edits / longest)
    tau = edits / longest
    assert field_verdicts({"f": gold}, {"f": pred}, FieldOptions(fuzzy_threshold=tau))[0].fuzzy
    below = FieldOptions(fuzzy_threshold=tau - 0.01)
    assert not field_verdicts({"f": gold}, {"f": pred}, below)[0].fuzzy


# ---------------------------------------------------------------- the seed's example

CLAIM_GOLD = {
    "patient_name": "김철수",
    "diagnosis_code": "K35.80",
    "total_amount": 1500000,
    "admission_date": "2024-03-10",
    "discharge_date": "2024-03-15",
    "procedures": [
        {"code": "Q2861", "name": "충수절제술", "cost": 800000},
        {"code": "N0501", "name": "전신마취", "cost": 200000},
    ],
}
CLAIM_PRED = {
    "patient_name": "김철수",
    "diagnosis_code": "K35.8O",
    "total_amount": "1,500,000",
    "admission_date": "2024.03.10",
    "discharge_date": "2024-03-15",
    "procedures": [
        {"code": "Q2861", "name": "충수절제술", "cost": 800000},
        {"code": "NO501", "name": "전신마취", "cost": 200000},
    ],
}


def test_the_seeds_insurance_claim() -> None:
    score = score_fields(CLAIM_GOLD, CLAIM_PRED, FieldOptions(fuzzy_threshold=0.15))
    by_path = {v.path: v for v in score.verdicts}
    assert by_path["$.total_amount"].verdict == "matched"  # "1,500,000" is 1500000
    assert by_path["$.admission_date"].verdict == "matched"  # dotted is ISO
    assert by_path["$.diagnosis_code"].verdict == "misread"
    assert by_path["$.procedures[1].code"].verdict == "misread"
    assert score.counts == {
        "matched": 9, "misread": 2, "unfound": 0, "fabricated": 0,
        "invented_field": 0, "invented_item": 0,
    }  # fmt: skip
    # Field names: 5 top-level fields (1 wrong) and 3 list fields (code 1/2 right):
    # mean over names = (4 + 0.5 + 1 + 1) / 8
    assert score.field_accuracy == pytest.approx(6.5 / 8)
    # NED 1/6 and 1/5, both above tau = 0.15: fuzzy as exact
    assert score.field_fuzzy_accuracy == pytest.approx(6.5 / 8)
    assert score.metrics()["field_accuracy:procedures[].code"] == 0.5
    # depth 0: 4/5; depth 2 (procedures[i].x): 5/6; alpha = 0.5
    assert score.nested_accuracy == pytest.approx((4 / 5 + 0.25 * 5 / 6) / 1.25)
    assert score.structure.accuracy == 1.0


# ---------------------------------------------------------------- verdicts


def verdicts_of(gold: Any, pred: Any, **options: Any) -> dict[str, str]:
    return {v.path: v.verdict for v in field_verdicts(gold, pred, FieldOptions(**options))}


def test_every_verdict_by_hand() -> None:
    gold = {"a": "x", "b": "y", "c": None, "d": None, "e": "z", "items": [{"k": 1}]}
    pred = {"a": "x", "b": "Y", "c": None, "d": "made up", "f": 2, "items": [{"k": 1}, {"k": 2}]}
    assert verdicts_of(gold, pred) == {
        "$.a": "matched",
        "$.b": "misread",
        "$.c": "matched",
        "$.d": "fabricated",
        "$.e": "unfound",
        "$.items[0].k": "matched",
        "$.items[1].k": "invented_item",
        "$.f": "invented_field",
    }


def test_missing_null_and_extra_stay_distinct() -> None:
    gold = {"a": "x", "b": "y", "c": None, "d": {"e": 1}}
    score = score_fields(gold, {"a": None, "c": "", "d": "flat", "z": 1})
    states = {v.path: (v.verdict, v.pred_state) for v in score.verdicts}
    assert states == {
        "$.a": ("unfound", "null"),
        "$.b": ("unfound", "absent"),
        "$.c": ("matched", "null"),  # a blank string claims no value, like null
        "$.d.e": ("unfound", "wrong_shape"),
        "$.d": ("invented_field", "value"),
        "$.z": ("invented_field", "value"),
    }
    s = score.structure
    assert (s.present, s.null, s.missing, s.mismatched, s.extra) == (2, 2, 1, 1, 2)
    assert s.accuracy == pytest.approx(2 / 6)


def test_a_gold_null_is_not_matched_by_a_missing_key() -> None:
    assert verdicts_of({"a": None}, {}) == {"$.a": "unfound"}


def test_empty_containers_are_fields() -> None:
    assert verdicts_of({"a": [], "b": {}}, {"a": [], "b": {"x": 1}}) == {
        "$.a": "matched",
        "$.b": "misread",
    }


def test_lists_are_ordered_unless_named_unordered() -> None:
    gold = {"items": [{"code": "A", "n": 1}, {"code": "B", "n": 2}, {"code": "C", "n": 3}]}
    pred = {"items": [{"code": "C", "n": 3}, {"code": "A", "n": 1}]}
    ordered = score_fields(gold, pred)
    assert ordered.counts["matched"] == 0 and ordered.counts["unfound"] == 2
    unordered = score_fields(gold, pred, FieldOptions(unordered=frozenset({"items"})))
    assert verdicts_of(gold, pred, unordered=frozenset({"items"})) == {
        "$.items[0].code": "matched",
        "$.items[0].n": "matched",
        "$.items[1].code": "unfound",
        "$.items[1].n": "unfound",
        "$.items[2].code": "matched",
        "$.items[2].n": "matched",
    }
    assert unordered.field_accuracy == pytest.approx(2 / 3)
    # An unpaired predicted element is an invented item under its own (predicted) index.
    extra = field_verdicts({"l": [1]}, {"l": [5, 1]}, FieldOptions(unordered=frozenset({"l"})))
    assert [(v.path, v.verdict, v.pred) for v in extra] == [
        ("$.l[0]", "matched", 1),
        ("$.l[0]", "invented_item", 5),
    ]


def test_weights_make_the_seeds_weighted_mean() -> None:
    gold = {"total": 100, "date": "2024-01-02", "items": [{"a": "x", "b": "y"}]}
    pred = {"total": 100, "date": "2024-01-03", "items": [{"a": "x", "b": "n"}]}
    # per name: total 1, date 0, items[].a 1, items[].b 0
    assert score_fields(gold, pred).field_accuracy == pytest.approx(2 / 4)
    weights = {"total": 3.0, "items": 0.5, "items[].b": 0.0}
    weighted = score_fields(gold, pred, FieldOptions(weights=weights))
    assert weighted.field_accuracy == pytest.approx((3 * 1 + 1 * 0 + 0.5 * 1) / (3 + 1 + 0.5))


def test_types_override_inference() -> None:
    gold, pred = {"id": "00123"}, {"id": "123"}
    assert verdicts_of(gold, pred) == {"$.id": "matched"}  # inferred a number
    assert verdicts_of(gold, pred, types={"id": "string"}) == {"$.id": "misread"}


def test_numeric_tolerance_makes_fuzzy_not_exact() -> None:
    (v,) = field_verdicts({"t": 1000}, {"t": "1,004"}, FieldOptions(numeric_tolerance=0.005))
    assert (v.verdict, v.exact, v.fuzzy) == ("misread", False, True)


def test_nested_accuracy_is_normalised_and_depth_weighted() -> None:
    score = nested_accuracy([(0, True), (0, False), (1, True), (2, False)], alpha=0.5)
    assert score.accuracy == pytest.approx((0.5 + 0.5 * 1 + 0.25 * 0) / 1.75)
    assert nested_accuracy([(3, True)], alpha=0.9).accuracy == 1.0
    with pytest.raises(ValueError, match="alpha"):
        nested_accuracy([], alpha=1.0)


# ---------------------------------------------------------------- properties


@given(json_values)
@settings(max_examples=200, deadline=None)
def test_a_document_against_itself_is_perfect(value: Any) -> None:
    score = score_fields(value, value)
    metrics = score.metrics()
    assert all(m == 1.0 for m in metrics.values()), metrics
    assert score.counts["matched"] == len(score.verdicts)


@given(json_values, json_values)
@settings(max_examples=200, deadline=None)
def test_scores_are_bounded_and_every_field_has_one_verdict(gold: Any, pred: Any) -> None:
    score = score_fields(gold, pred)
    assert all(0.0 <= m <= 1.0 for m in score.metrics().values())
    gold_fields = sum(1 for v in score.verdicts if v.scored)
    assert gold_fields == len(field_verdicts(gold, gold))
    counts = score.edit_counts()
    assert counts["hits"] + counts["substitutions"] + counts["deletions"] == gold_fields


# ---------------------------------------------------------------- bad input


def test_empty_and_wrong_type_predictions_score_zero() -> None:
    preds: tuple[Any, ...] = (None, {}, [], "", "text", 3, [CLAIM_PRED])
    for pred in preds:
        score = score_fields(CLAIM_GOLD, pred)
        assert score.field_accuracy == 0.0 and score.nested_accuracy == 0.0, pred
        assert score.counts["unfound"] == 11


def test_nothing_to_find_and_nothing_found_is_perfect() -> None:
    assert score_fields({}, {}).field_accuracy == 1.0
    assert score_fields({}, {"a": 1}).field_accuracy == 0.0


def test_values_json_cannot_hold_are_value_errors_naming_the_place() -> None:
    with pytest.raises(ExtractionInputError, match=r"gold: value at \$\.a\[1\] is a set"):
        score_fields({"a": [1, {2}]}, {})
    with pytest.raises(ValueError, match=r"prediction: key 3 at \$\.b is not a string"):
        score_fields({}, {"b": {3: "x"}})
    with pytest.raises(ValueError, match=r"prediction: value at \$\['a b'\] is nan"):
        score_fields({}, {"a b": float("nan")})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"types": {"a": "money"}}, "type 'money'"),
        ({"weights": {"a": -1.0}}, "weight"),
        ({"fuzzy_threshold": 2.0}, "fuzzy_threshold"),
        ({"numeric_tolerance": -0.1}, "numeric_tolerance"),
        ({"alpha": 0.0}, "alpha"),
    ],
)
def test_bad_options_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FieldOptions(**options)


# ---------------------------------------------------------------- real gold JSON


@pytest.mark.skipif(not (REALDATA / "sroie").is_dir(), reason="shared/realdata/sroie absent")
def test_sroie_gold_fields_read_as_their_kinds() -> None:
    keys = sorted((REALDATA / "sroie" / "key").glob("*.json"))
    dates = [json.loads(p.read_text())["date"] for p in keys]
    assert all(parse_date(d) is not None for d in dates)
    # A prediction that writes every SROIE date as ISO and every total with a currency mark
    # still matches field by field.
    for path in keys:
        gold = json.loads(path.read_text())
        pred = dict(gold)
        day = parse_date(gold["date"])
        assert day is not None
        pred["date"] = day.isoformat()
        if (total := parse_number(gold["total"])) is not None:
            pred["total"] = f"RM {total:,.2f}"
        options = FieldOptions(types={"date": "date", "total": "number"})
        assert score_fields(gold, pred, options).field_accuracy == 1.0, path.name


@pytest.mark.skipif(not (REALDATA / "invoice2data").is_dir(), reason="realdata absent")
def test_invoice2data_line_items_with_one_item_dropped() -> None:
    gold = json.loads((REALDATA / "invoice2data" / "SammyMaystoneLinesTest.json").read_text())
    pred = json.loads(json.dumps(gold))
    pred[0]["line_items"].pop(0)
    ordered = score_fields(gold, pred)
    assert ordered.counts["unfound"] == 2  # the second item now sits at index 0: misread
    unordered = score_fields(gold, pred, FieldOptions(unordered=frozenset({"[].line_items"})))
    assert unordered.counts == {
        "matched": 7, "misread": 0, "unfound": 2, "fabricated": 0,
        "invented_field": 0, "invented_item": 0,
    }  # fmt: skip


def test_every_metric_declares_its_direction_and_the_view_is_json() -> None:
    score = score_fields(CLAIM_GOLD, CLAIM_PRED)
    for name in score.metrics():
        spec = find_spec(FIELD_METRICS, name)
        assert spec is not None and spec.direction == "higher", name
    view = json.loads(json.dumps(score.view()))
    assert view["counts"]["misread"] == 2
    assert [v["path"] for v in view["verdicts"]] == ["$.diagnosis_code", "$.procedures[1].code"]
    assert view["depths"] == [
        {"depth": 0, "correct": 4, "total": 5},
        {"depth": 2, "correct": 5, "total": 6},
    ]
