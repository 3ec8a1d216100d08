"""Schema compliance of an extracted JSON (seed 004, "스키마 준수율").

The seed's compliance rate is the share of predictions that validate against the schema S;
per document that is 1.0 (valid) or 0.0, and the suite's mean is the rate. Validation is
jsonschema's, against JSON Schema Draft 2020-12 (the seed sketches its own lightweight
validator; the issue asks for the standard). ``format`` is an annotation in 2020-12 unless
asked for: `check_formats` turns on jsonschema's format checker (dates, emails, ...).

Every error is kept for the report, with the place in the prediction as jsonschema's
``json_path`` writes it (``$.items[1].cost``, the same paths as the field verdicts), the
failing keyword and its message, sorted by place. A schema that is not itself a valid
2020-12 schema is the suite's error, not the prediction's: it raises `ExtractionInputError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import jsonschema
from jsonschema import Draft202012Validator, FormatChecker

from pytest_doceval.metrics.json_input import ExtractionInputError
from pytest_doceval.metrics.spec import SHARE, MetricSpec

# Past this many errors a report lists only the first ones (and says how many there were).
MAX_ERRORS: Final = 50

SCHEMA_METRICS: Final[Mapping[str, MetricSpec]] = {
    "schema_valid": MetricSpec(
        "higher",
        bounds=SHARE,
        binary=True,
        description="1 when the prediction validates against the JSON Schema (Draft 2020-12)",
    ),
}


@dataclass(frozen=True)
class SchemaViolation:
    path: str  # where in the prediction: "$", "$.items[1].cost"
    keyword: str  # the failing schema keyword: "type", "required", "pattern", ...
    message: str
    schema_path: str  # where in the schema: "properties/items/items/properties/cost/type"

    def to_dict(self) -> dict[str, str]:
        return {
            "path": self.path,
            "keyword": self.keyword,
            "message": self.message,
            "schema_path": self.schema_path,
        }


@dataclass(frozen=True)
class SchemaScore:
    valid: bool
    errors: tuple[SchemaViolation, ...]  # at most MAX_ERRORS
    error_count: int  # all of them

    def metrics(self) -> dict[str, float]:
        return {"schema_valid": float(self.valid)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "error_count": self.error_count,
            "errors": [e.to_dict() for e in self.errors],
        }


def compile_schema(
    schema: Mapping[str, Any], *, check_formats: bool = False
) -> Draft202012Validator:
    """A validator for `schema`, built once per suite. Raises `ExtractionInputError` when the
    schema is not a valid Draft 2020-12 schema."""
    try:
        Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise ExtractionInputError(
            f"schema: not a valid Draft 2020-12 schema at {where}: {error.message}"
        ) from None
    checker = FormatChecker() if check_formats else None
    return Draft202012Validator(schema, format_checker=checker)


def _order(error: jsonschema.ValidationError) -> tuple[list[tuple[int, int, str]], str]:
    """Errors sorted by place (list indices numerically), then message."""
    steps = [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path]
    return steps, error.message


def schema_validity(
    instance: Any, schema: Mapping[str, Any] | Draft202012Validator, *, check_formats: bool = False
) -> SchemaScore:
    """Validate a prediction; `schema` is a schema or a validator from `compile_schema`
    (`check_formats` applies only to a schema given as a mapping)."""
    validator = (
        schema
        if isinstance(schema, Draft202012Validator)
        else compile_schema(schema, check_formats=check_formats)
    )
    found = sorted(validator.iter_errors(instance), key=_order)
    errors = tuple(
        SchemaViolation(
            path=e.json_path,
            keyword=str(e.validator),
            message=e.message,
            schema_path="/".join(str(p) for p in e.absolute_schema_path),
        )
        for e in found[:MAX_ERRORS]
    )
    return SchemaScore(valid=not found, errors=errors, error_count=len(found))
