"""The extraction kind on real third-party data (``../shared/realdata``; skipped when absent,
never copied into the repository): ICDAR 2019 SROIE receipts (OCR lines in, gold company /
date / address / total out) and the invoice2data invoices with their line-item lists.

The ``regex-baseline`` rules of ``tools/regex_extract.py`` extract from the real inputs, the
suite scores them through pytest like a user's run, and every number is checked against a
computation written here from the definitions alone: an own reading of numbers and dates
(``strptime``), an own Levenshtein distance, an own walk over the gold fields."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import REALDATA, read_report
from tests.test_suite_extraction import write_extraction_suite

SROIE = REALDATA / "sroie"
INVOICES = REALDATA / "invoice2data"
TOOLS = Path(__file__).resolve().parents[1] / "tools"
ALPHA, TAU = 0.5, 0.1


def load_tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_doceval_tool_{name}", TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# -- the independent computation ---------------------------------------------------------------

DATE_FORMATS = (
    "%Y-%m-%d", "%Y.%m.%d", "%Y/%m/%d", "%Y%m%d",
    "%d/%m/%Y", "%d.%m.%Y", "%d-%m-%Y", "%d/%m/%y", "%d.%m.%y", "%d-%m-%y",
    "%m/%d/%Y", "%m-%d-%Y", "%m/%d/%y", "%m-%d-%y",
    "%d %b %Y", "%d %B %Y", "%d %b %y", "%b %d, %Y", "%B %d, %Y", "%b %d %Y",
)  # fmt: skip
ABSENT = object()


def text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(unicodedata.normalize("NFC", "" if value is None else str(value)).split())


def number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    cleaned = re.sub(r"[\s,$€£]|RM|EUR|USD", "", str(value))
    return float(cleaned) if re.fullmatch(r"-?\d+(\.\d+)?", cleaned) else None


def date(value: Any) -> dt.date | None:
    for fmt in DATE_FORMATS:
        try:
            return dt.datetime.strptime(text(value), fmt).date()
        except ValueError:
            continue
    return None


def levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[-1]


def blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def judge(gold: Any, pred: Any, kind: str) -> tuple[bool, bool]:
    """(exact, fuzzy) of one gold field against a present predicted value."""
    if blank(gold) or blank(pred):
        both = blank(gold) and blank(pred)
        return both, both
    if kind == "number" and None not in (number(gold), number(pred)):
        same = number(gold) == number(pred)
        return same, same
    if kind == "date" and None not in (date(gold), date(pred)):
        same = date(gold) == date(pred)
        return same, same
    exact = text(gold) == text(pred)
    longest = max(len(text(gold)), len(text(pred)))
    fuzzy = kind == "string" and levenshtein(text(gold), text(pred)) / longest <= TAU
    return exact, exact or fuzzy


def gold_fields(
    gold: Any, pred: Any, types: dict[str, str], name: str = "", depth: int = -1
) -> Iterator[tuple[str, int, bool, bool]]:
    """(field name, depth, exact, fuzzy) for every leaf of the gold, lists compared in order."""
    if isinstance(gold, dict) and gold:
        for key, value in gold.items():
            child = pred.get(key, ABSENT) if isinstance(pred, dict) else ABSENT
            yield from gold_fields(value, child, types, f"{name}.{key}" if name else key, depth + 1)
    elif isinstance(gold, list) and gold:
        for i, value in enumerate(gold):
            child = pred[i] if isinstance(pred, list) and i < len(pred) else ABSENT
            yield from gold_fields(value, child, types, f"{name}[]", depth + 1)
    elif pred is ABSENT:
        yield name, max(depth, 0), False, False
    else:
        assert name in types, f"the test must declare a type for predicted field {name}"
        yield name, max(depth, 0), *judge(gold, pred, types[name])


def expected_metrics(gold: Any, pred: Any, types: dict[str, str]) -> dict[str, float]:
    by_name: dict[str, list[tuple[bool, bool]]] = {}
    by_depth: dict[int, list[bool]] = {}
    for name, depth, exact, fuzzy in gold_fields(gold, pred, types):
        by_name.setdefault(name, []).append((exact, fuzzy))
        by_depth.setdefault(depth, []).append(exact)
    weights = {d: ALPHA**d for d in by_depth}
    return {
        "field_accuracy": sum(sum(e for e, _ in v) / len(v) for v in by_name.values())
        / len(by_name),
        "field_fuzzy_accuracy": sum(sum(f for _, f in v) / len(v) for v in by_name.values())
        / len(by_name),
        "nested_accuracy": sum(weights[d] * sum(v) / len(v) for d, v in by_depth.items())
        / sum(weights.values()),
        **{f"field_accuracy:{n}": sum(e for e, _ in v) / len(v) for n, v in by_name.items()},
    }


def fields_toml(variant: str, types: dict[str, str]) -> str:
    table = ", ".join(f'"{k}" = "{v}"' for k, v in types.items())
    return (
        f'[suite]\nkind = "extraction"\nmode = "fields"\nvariants = ["{variant}"]\n'
        f"systems = {{systems}}\n\n[suite.fields]\ntypes = {{{{ {table} }}}}\n"
    )


def run_and_check(
    pytester: pytest.Pytester,
    name: str,
    pages: dict[str, dict[str, Any]],
    types: dict[str, str],
    variant: str,
) -> dict[str, Any]:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    write_extraction_suite(
        pytester.path, name, pages, toml=fields_toml(variant, types), systems=["regex-baseline"]
    )
    pytester.runpytest("--doceval", "-q", "--doceval-html", "").assert_outcomes(passed=len(pages))
    section = read_report(pytester.path / "doceval-report.json")["suites"][name]
    means: dict[str, list[float]] = {}
    for row in section["results"]:
        files = pages[row["case"]]
        expected = expected_metrics(
            files["truth"], files["outputs"]["regex-baseline"][variant], types
        )
        assert {k: row["metrics"][k] for k in expected} == pytest.approx(expected), row["case"]
        per_field = {k for k in row["metrics"] if k.startswith("field_accuracy:")}
        assert per_field == {k for k in expected if k.startswith("field_accuracy:")}
        for metric, value in expected.items():
            means.setdefault(metric, []).append(value)
    aggregate = section["aggregates"][f"regex-baseline-{variant}"]
    for metric in ("field_accuracy", "field_fuzzy_accuracy", "nested_accuracy"):
        assert aggregate[metric]["mean"] == pytest.approx(sum(means[metric]) / len(pages))
    return section


@pytest.mark.skipif(not SROIE.is_dir(), reason="real data not present (../shared/realdata)")
def test_sroie_receipts_scored_as_an_independent_computation_says(
    pytester: pytest.Pytester,
) -> None:
    rules = load_tool("regex_extract")
    pages: dict[str, dict[str, Any]] = {}
    for box in sorted((SROIE / "box").glob("*.csv")):
        lines = rules.sroie_lines(box.read_text(encoding="utf-8"))
        truth = json.loads((SROIE / "key" / f"{box.stem}.json").read_text(encoding="utf-8"))
        pages[f"sroie-{box.stem}"] = {
            "truth": truth,
            "texts": {"ocr": "\n".join(lines)},
            "outputs": {"regex-baseline": {"ocr": rules.sroie(lines)}},
        }
    types = {"company": "string", "date": "date", "address": "string", "total": "number"}
    section = run_and_check(pytester, "sroie", pages, types, "ocr")
    assert len(section["results"]) == len(pages) == 100
    mean = section["aggregates"]["regex-baseline-ocr"]
    # The rules read dates well and addresses badly (measured: 0.96 and 0.22 exact).
    assert mean["field_accuracy:date"]["mean"] > mean["field_accuracy:address"]["mean"]
    assert mean["field_fuzzy_accuracy"]["mean"] >= mean["field_accuracy"]["mean"]


@pytest.mark.skipif(not INVOICES.is_dir(), reason="real data not present (../shared/realdata)")
def test_invoice2data_invoices_with_line_items_scored_as_an_independent_computation_says(
    pytester: pytest.Pytester,
) -> None:
    import pymupdf

    rules = load_tool("regex_extract")
    pages: dict[str, dict[str, Any]] = {}
    for gold_file in sorted(INVOICES.glob("*.json")):
        source = next(INVOICES.glob(f"{gold_file.stem}.*[!n]"))  # the .pdf or the .txt
        if source.suffix == ".pdf":
            with pymupdf.open(source) as doc:
                page_text = "\n".join(page.get_text() for page in doc)
        else:
            page_text = source.read_text(encoding="utf-8")
        (truth,) = json.loads(gold_file.read_text(encoding="utf-8"))
        pages[gold_file.stem] = {
            "truth": truth,
            "texts": {"text": page_text},
            "outputs": {"regex-baseline": {"text": rules.invoice(page_text)}},
        }
    types = {
        "date": "date",
        "amount": "number",
        "invoice_number": "string",
        "currency": "string",
        "lines[].name": "string",
        "lines[].price_unit": "number",
    }
    section = run_and_check(pytester, "invoices", pages, types, "text")
    assert len(section["results"]) == 12
    with_lines = [r for r in section["results"] if "field_accuracy:lines[].name" in r["metrics"]]
    assert len(with_lines) >= 4  # the invoices whose gold lists line items
    assert section["verdict_counts"][0]["invented_item"] > 0  # lines the rules made up
