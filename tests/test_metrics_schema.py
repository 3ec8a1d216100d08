"""Schema compliance (seed 004) with jsonschema Draft 2020-12: errors by hand, and the verdict
against jsonschema's own validator on generated instances."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.kinds.extraction.schema import (
    MAX_ERRORS,
    SCHEMA_METRICS,
    compile_schema,
    schema_validity,
)
from pytest_doceval.metrics.json_input import ExtractionInputError
from pytest_doceval.metrics.spec import find_spec

# The seed's insurance-claim schema, written as JSON Schema.
CLAIM_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["patient_name", "diagnosis_code", "total_amount", "admission_date"],
    "properties": {
        "patient_name": {"type": "string", "minLength": 2},
        "diagnosis_code": {"type": "string", "pattern": r"^[A-Z]\d{2,4}(\.\d{1,2})?$"},
        "total_amount": {"type": "number"},
        "admission_date": {"type": "string", "format": "date"},
        "procedures": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["code", "name", "cost"],
                "properties": {
                    "code": {"type": "string"},
                    "name": {"type": "string"},
                    "cost": {"type": "number"},
                    "unit price": {"type": "number"},
                },
            },
        },
    },
}


def test_a_valid_prediction() -> None:
    score = schema_validity(
        {"patient_name": "김철수", "diagnosis_code": "K35.80", "total_amount": 1500000,
         "admission_date": "2024-03-10"},
        CLAIM_SCHEMA,
    )  # fmt: skip
    assert score.valid and score.errors == () and score.metrics() == {"schema_valid": 1.0}


def test_errors_name_the_place_the_keyword_and_the_cause() -> None:
    pred = {
        "patient_name": "김",
        "diagnosis_code": "K35.8O",
        "total_amount": "1,500,000",
        "procedures": [{"code": "Q2861", "name": "x", "cost": 1}, {"code": 1, "unit price": "3"}],
    }
    score = schema_validity(pred, CLAIM_SCHEMA)
    assert not score.valid and score.metrics() == {"schema_valid": 0.0}
    found = [(e.path, e.keyword) for e in score.errors]
    assert found == [
        ("$", "required"),  # admission_date
        ("$.diagnosis_code", "pattern"),
        ("$.patient_name", "minLength"),
        ("$.procedures[1]", "required"),  # name
        ("$.procedures[1]", "required"),  # cost
        ("$.procedures[1].code", "type"),
        ("$.procedures[1]['unit price']", "type"),
        ("$.total_amount", "type"),
    ]
    assert score.error_count == 8
    assert "'admission_date' is a required property" in score.errors[0].message
    assert score.errors[-1].schema_path == "properties/total_amount/type"
    assert score.to_dict()["errors"][0]["path"] == "$"


def test_list_indices_sort_as_numbers() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    score = schema_validity(["a"] * 12, schema)
    assert [e.path for e in score.errors][:3] == ["$[0]", "$[1]", "$[2]"]
    assert score.errors[-1].path == "$[11]"


def test_formats_are_annotations_unless_checked() -> None:
    pred = {"patient_name": "Kim", "diagnosis_code": "K35", "total_amount": 1,
            "admission_date": "2024.03.10"}  # fmt: skip
    assert schema_validity(pred, CLAIM_SCHEMA).valid
    checked = schema_validity(pred, CLAIM_SCHEMA, check_formats=True)
    assert [(e.path, e.keyword) for e in checked.errors] == [("$.admission_date", "format")]


def test_errors_past_the_limit_are_counted_not_listed() -> None:
    score = schema_validity(list(range(MAX_ERRORS + 7)), {"items": {"type": "string"}})
    assert len(score.errors) == MAX_ERRORS and score.error_count == MAX_ERRORS + 7


def test_an_invalid_schema_is_the_suites_error() -> None:
    with pytest.raises(ExtractionInputError, match="not a valid Draft 2020-12 schema") as caught:
        compile_schema({"type": "money"})
    assert isinstance(caught.value, ValueError)


def test_a_compiled_validator_is_reused() -> None:
    validator = compile_schema(CLAIM_SCHEMA)
    assert not schema_validity({}, validator).valid
    assert schema_validity(None, {"type": ["object", "null"]}).valid


instances = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False)
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner),
    max_leaves=10,
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["a"],
    "properties": {
        "a": {"type": ["integer", "string"], "minLength": 1, "maximum": 3},
        "b": {"type": "array", "items": {"type": "number"}, "maxItems": 2},
        "c": {"anyOf": [{"type": "null"}, {"type": "object", "required": ["a"]}]},
    },
    "additionalProperties": False,
}


@given(instances)
@settings(max_examples=300, deadline=None)
def test_verdict_equals_jsonschemas_own_validation(instance: Any) -> None:
    score = schema_validity(instance, SCHEMA)
    try:
        jsonschema.validate(instance, SCHEMA, cls=jsonschema.Draft202012Validator)
        expected = True
    except jsonschema.ValidationError:
        expected = False
    assert score.valid is expected
    assert (score.error_count == 0) is expected


def test_schema_valid_is_a_binary_higher_is_better_metric() -> None:
    spec = find_spec(SCHEMA_METRICS, "schema_valid")
    assert spec is not None and (spec.direction, spec.binary) == ("higher", True)
    assert json.loads(json.dumps(schema_validity([], {"type": "object"}).to_dict()))["errors"]
