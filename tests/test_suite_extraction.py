"""The extraction kind, unit by unit: its configuration, reading predictions, scoring equal to
the metric functions called directly, bad input, the LLM extractor's requests, and the
analyses against independent computations (scipy)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats as sps

from pytest_doceval.config import StatsConfig, load_suite_spec
from pytest_doceval.errors import CaseInputError, SuiteConfigError
from pytest_doceval.kinds.base import case_row, evaluate_alone
from pytest_doceval.kinds.extraction.analyses import ExtractorPairs, OcrRobustness, VerdictCounts
from pytest_doceval.kinds.extraction.entries import EntryFields, score_entries
from pytest_doceval.kinds.extraction.fields import score_fields
from pytest_doceval.kinds.extraction.llm import SYSTEM_PROMPT, read_prediction
from pytest_doceval.kinds.extraction.schema import schema_validity
from pytest_doceval.kinds.extraction.suite import ExtractionSuite
from pytest_doceval.kinds.extraction.verdicts import FieldOptions
from pytest_doceval.kinds.registry import make_suite
from pytest_doceval.metrics.tree_edit import tree_edit_score
from pytest_doceval.models.config import ModelConfig
from pytest_doceval.models.runtime import ModelRuntime
from pytest_doceval.systems import build_registry

ENTRIES_TOML = """[suite]
kind = "extraction"
mode = "entries"
variants = ["gold", "raw"]
systems = {systems}

[suite.entries]
list = "speakers"
name = "name"
set = "pages"
"""
FIELDS_TOML = """[suite]
kind = "extraction"
mode = "fields"
variants = ["gold", "raw"]
systems = {systems}

[suite.fields]
types = {{ date = "date", total = "number" }}
weights = {{ total = 2 }}
unordered = ["items"]
tau = 0.2
"""
SPEAKERS = {
    "p1": {
        "speakers": [
            {"name": "Abbott, Graham", "pages": [12, 48, 113]},
            {"name": "Achterberg, Ilse", "pages": [7, 66]},
            {"name": "Adair, Thomas", "pages": [5]},
        ]
    },
    "p2": {
        "speakers": [
            {"name": "Bellamy, Rose", "pages": [3, 4]},
            {"name": "Blount, Amara", "pages": [322]},
        ]
    },
    "p3": {"speakers": [{"name": "Carmody, Niamh", "pages": [90, 91, 92]}]},
}
RAW_PREDICTIONS: dict[str, Any] = {
    "p1": {
        "speakers": [
            {"name": "Abbott, Graharn", "pages": [12, 48]},
            {"name": "Achterberg, llse", "pages": [7, 66]},
        ]
    },
    "p2": {"speakers": [{"name": "Bellamy, Rose", "pages": [3, 4]}, {"name": "Q", "pages": []}]},
    "p3": {"speakers": [{"name": "Carmody, Niamh", "pages": [90, 91, 92]}]},
}
RECEIPT = {
    "merchant": "THE COPPER KETTLE",
    "date": "2024-02-03",
    "items": [{"name": "Flat white", "amount": 6.4}, {"name": "Scone", "amount": 3.25}],
    "total": 9.65,
}


def write_extraction_suite(
    root: Path,
    name: str,
    pages: dict[str, dict[str, Any]],
    *,
    toml: str,
    systems: list[str],
    schema: Any = None,
) -> Path:
    """pages: {page: {"truth": value, "texts": {variant: text},
    "outputs": {extractor: {variant: JSON value, or str/bytes written as they are}}}}."""
    suite = root / "cases" / name
    suite.mkdir(parents=True, exist_ok=True)
    (suite / "suite.toml").write_text(toml.format(systems=json.dumps(systems)), encoding="utf-8")
    if schema is not None:
        text = schema if isinstance(schema, str) else json.dumps(schema)
        (suite / "schema.json").write_text(text, encoding="utf-8")
    for page, files in pages.items():
        folder = suite / page
        folder.mkdir(exist_ok=True)
        if "truth" in files:
            truth = files["truth"]
            data = truth if isinstance(truth, str) else json.dumps(truth, ensure_ascii=False)
            (folder / "truth.json").write_text(data, encoding="utf-8")
        for variant, text in files.get("texts", {}).items():
            (folder / f"{variant}.txt").write_text(text, encoding="utf-8")
        for extractor, outputs in files.get("outputs", {}).items():
            (folder / "outputs" / extractor).mkdir(parents=True, exist_ok=True)
            for variant, value in outputs.items():
                path = folder / "outputs" / extractor / f"{variant}.json"
                if isinstance(value, bytes):
                    path.write_bytes(value)
                elif isinstance(value, str):
                    path.write_text(value, encoding="utf-8")
                else:
                    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return suite


def speaker_pages() -> dict[str, dict[str, Any]]:
    return {
        page: {
            "truth": truth,
            "texts": {"gold": f"text of {page}", "raw": f"text 0f {page}"},
            "outputs": {"rules": {"gold": truth, "raw": RAW_PREDICTIONS[page]}},
        }
        for page, truth in SPEAKERS.items()
    }


def runtime(**models: str) -> ModelRuntime:
    configs = {
        name: ModelConfig.from_table(name, {"base_url": url, "model": "m-1"}, source="test")
        for name, url in models.items()
    }
    return ModelRuntime(configs, workers=1, source="pyproject.toml")


def load(suite: Path, models: ModelRuntime | None = None) -> ExtractionSuite:
    made = make_suite(load_suite_spec(suite / "suite.toml"), build_registry(), models=models)
    assert isinstance(made, ExtractionSuite)
    return made


# -- configuration ---------------------------------------------------------------------------


def test_refs_name_the_variant_and_carry_labels(tmp_path: Path) -> None:
    suite = load(
        write_extraction_suite(tmp_path, "s", speaker_pages(), toml=ENTRIES_TOML, systems=["rules"])
    )
    refs = suite.case_refs()
    assert [r.key for r in refs[:2]] == ["p1[rules-gold]", "p1[rules-raw]"]
    assert all(r.labels == {"extractor": "rules", "variant": r.system.split("-")[1]} for r in refs)
    assert suite.system_names() == ["rules-gold", "rules-raw"]
    described = suite.describe()
    assert described["reference_variant"] == "gold"
    assert described["extractors"] == {"rules": "precomputed"}
    assert suite.scoring_id.startswith("entries@r2-")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('"entries"', '"rows"', 1), "mode must be"),
        (lambda t: t.replace('set = "pages"\n', ""), r"\[suite.entries\]: missing set"),
        (lambda t: t + "colour = 1\n", r"unknown key\(s\) colour"),
        (lambda t: t.replace('["gold", "raw"]', '["gold", "gold"]'), "listed twice: gold"),
        (lambda t: t.replace('["gold", "raw"]', '["go/ld"]'), "not a plain name"),
        (lambda t: t.replace('"raw"]', '"raw"]\nreference_variant = "clean"'), "reference_variant"),
        (lambda t: t.replace('["rules"]', '["rules", "ghost"]'), "unknown extractor 'ghost'"),
        (lambda t: t + "\n[suite.fields]\ntau = 0.1\n", r"\[suite.fields\] does not apply"),
        (lambda t: t + '\n[systems.rules]\nmodel = "x"\n', "takes no settings"),
        (lambda t: t + "\n[systems.other]\nx = 1\n", "not in systems"),
    ],
)
def test_suite_mistakes_are_errors_naming_the_file(tmp_path: Path, edit: Any, message: str) -> None:
    suite = write_extraction_suite(
        tmp_path, "s", speaker_pages(), toml=ENTRIES_TOML, systems=["rules"]
    )
    toml = suite / "suite.toml"
    toml.write_text(edit(toml.read_text()))
    with pytest.raises(SuiteConfigError, match=message) as raised:
        load(suite)
    assert "suite.toml" in str(raised.value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('"number" }', '"money" }'), "types.total = 'money'"),
        (lambda t: t.replace("tau = 0.2", "tau = 2"), "fuzzy_threshold must be in"),
        (lambda t: t.replace("tau = 0.2", "alpha = 1.5"), "alpha must be in"),
        (lambda t: t.replace("tau = 0.2", "weight = 2"), r"unknown key\(s\) weight"),
        (lambda t: t.replace('["items"]', '"items"'), "unordered must be a list"),
        (lambda t: t.replace("tau = 0.2", 'day_first = "yes"'), "day_first must be true or false"),
    ],
)
def test_field_options_are_checked(tmp_path: Path, edit: Any, message: str) -> None:
    pages = {"r1": {"truth": RECEIPT, "outputs": {"rules": {"gold": RECEIPT, "raw": {}}}}}
    suite = write_extraction_suite(tmp_path, "s", pages, toml=FIELDS_TOML, systems=["rules"])
    toml = suite / "suite.toml"
    toml.write_text(edit(toml.read_text()))
    with pytest.raises(SuiteConfigError, match=message):
        load(suite)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ('{"type": "object",', "JSON Schema is not JSON"),
        ({"type": "objekt"}, "not a valid Draft 2020-12 schema"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_an_invalid_schema_fails_the_suite(tmp_path: Path, schema: Any, message: str) -> None:
    suite = write_extraction_suite(
        tmp_path, "s", speaker_pages(), toml=ENTRIES_TOML, systems=["rules"], schema=schema
    )
    with pytest.raises(SuiteConfigError, match=message) as raised:
        load(suite)
    assert "schema.json" in str(raised.value)


def test_test_ids_that_collide_are_refused(tmp_path: Path) -> None:
    pages = speaker_pages()
    for files in pages.values():
        files["outputs"] = {"a": {"b-c": {}}, "a-b": {"c": {}}}
    toml = ENTRIES_TOML.replace('["gold", "raw"]', '["c", "b-c"]')
    suite = write_extraction_suite(tmp_path, "s", pages, toml=toml, systems=["a", "a-b"])
    with pytest.raises(SuiteConfigError, match="test id 'a-b-c' is both"):
        load(suite)


def test_a_configured_model_is_the_llm_extractor_and_saved_outputs_win(tmp_path: Path) -> None:
    suite_dir = write_extraction_suite(
        tmp_path, "s", speaker_pages(), toml=ENTRIES_TOML, systems=["rules", "mistral"]
    )
    suite = load(suite_dir, runtime(mistral="http://127.0.0.1:9/v1", rules="http://x/v1"))
    assert suite.kinds == {"rules": "precomputed", "mistral": "llm"}
    assert any("rules: its saved outputs are scored" in n for n in suite.notes())
    missing = r"no model \[tool.doceval.models.mistral\] is configured \(configured: none"
    with pytest.raises(SuiteConfigError, match=missing):
        load(suite_dir)


def test_every_field_option_reaches_field_options(tmp_path: Path) -> None:
    toml = FIELDS_TOML.replace(
        "tau = 0.2",
        "tau = 0.2\nnumeric_tolerance = 0.01\nalpha = 0.25\nday_first = false\nper_field = false",
    )
    pages = {"r1": {"truth": RECEIPT, "outputs": {"rules": {"gold": RECEIPT, "raw": {}}}}}
    suite = load(write_extraction_suite(tmp_path, "s", pages, toml=toml, systems=["rules"]))
    assert suite.fields.options == FieldOptions(
        types={"date": "date", "total": "number"},
        weights={"total": 2.0},
        unordered=frozenset({"items"}),
        fuzzy_threshold=0.2,
        numeric_tolerance=0.01,
        alpha=0.25,
        day_first=False,
    )
    result = evaluate_alone(suite, suite.case_refs()[0])
    assert not any(":" in metric for metric in result.metrics)  # per_field = false


def test_an_empty_list_key_means_the_document_is_the_list(tmp_path: Path) -> None:
    toml = ENTRIES_TOML.replace('list = "speakers"', 'list = ""')
    truth = SPEAKERS["p1"]["speakers"]
    pages = {"p1": {"truth": truth, "outputs": {"rules": {"gold": truth, "raw": truth[:2]}}}}
    suite = load(write_extraction_suite(tmp_path, "s", pages, toml=toml, systems=["rules"]))
    raw = evaluate_alone(suite, suite.case_refs()[1])
    assert raw.metrics["imq"] == pytest.approx(2 / 3)
    assert suite.describe()["entries"] == {"list": None, "name": "name", "set": "pages"}


# -- scoring ----------------------------------------------------------------------------------


def test_entries_metrics_equal_the_metric_functions(tmp_path: Path) -> None:
    schema = {"type": "object", "required": ["speakers"]}
    suite = load(
        write_extraction_suite(
            tmp_path, "s", speaker_pages(), toml=ENTRIES_TOML, systems=["rules"], schema=schema
        )
    )
    fields = EntryFields("name", "pages", "speakers")
    for ref in suite.case_refs():
        result = evaluate_alone(suite, ref)
        pred = SPEAKERS[ref.case] if ref.labels["variant"] == "gold" else RAW_PREDICTIONS[ref.case]
        direct = score_entries(SPEAKERS[ref.case], pred, fields, threshold=0.5)
        expected = {**direct.metrics(), "json_valid": 1.0, "schema_valid": 1.0}
        assert result.metrics == expected
        assert case_row("s", ref, result)["labels"] == dict(ref.labels)
        assert result.views["entry_alignment"] == direct.view()
        assert result.details["entry_counts"]["gold"] == direct.n_gold
    raw = evaluate_alone(suite, next(r for r in suite.case_refs() if r.key == "p2[rules-raw]"))
    # "Q" with no pages against "Blount, Amara" [322]: d_n = d_p = 1, paired but quality 0.
    assert raw.details["entry_counts"] == {
        "gold": 2, "predicted": 2, "matched": 1, "below_threshold": 1,
        "missing": 0, "spurious": 0, "unreadable": 0,
    }  # fmt: skip


def test_fields_metrics_equal_the_metric_functions(tmp_path: Path) -> None:
    worse = {**RECEIPT, "date": "03/02/2024", "total": "9.56", "items": [RECEIPT["items"][1]]}
    pages = {"r1": {"truth": RECEIPT, "outputs": {"rules": {"gold": RECEIPT, "raw": worse}}}}
    schema = {"type": "object", "properties": {"total": {"type": "number"}}}
    suite = load(
        write_extraction_suite(
            tmp_path, "s", pages, toml=FIELDS_TOML, systems=["rules"], schema=schema
        )
    )
    options = FieldOptions(
        types={"date": "date", "total": "number"},
        weights={"total": 2.0},
        unordered=frozenset({"items"}),
        fuzzy_threshold=0.2,
    )
    result = evaluate_alone(suite, next(r for r in suite.case_refs() if r.system == "rules-raw"))
    direct = score_fields(RECEIPT, worse, options)
    expected = {
        **direct.metrics(per_field=True),
        **tree_edit_score(RECEIPT, worse).metrics(),
        **schema_validity(worse, schema).metrics(),
        "json_valid": 1.0,
    }
    assert result.metrics == expected
    assert result.metrics["schema_valid"] == 0.0  # "9.56" is a string
    assert result.details["verdict_counts"] == direct.counts
    assert result.views["field_verdicts"] == direct.view()
    assert result.views["schema_errors"]["errors"][0]["path"] == "$.total"
    assert result.metrics["field_accuracy:items[].name"] == direct.fields["items[].name"].accuracy


def _one(tmp_path: Path, raw: Any, *, mode: str = "entries") -> Any:
    truth = SPEAKERS["p1"] if mode == "entries" else RECEIPT
    pages = {"p1": {"truth": truth, "outputs": {"rules": {"gold": truth, "raw": raw}}}}
    toml = ENTRIES_TOML if mode == "entries" else FIELDS_TOML
    suite = load(write_extraction_suite(tmp_path, "s", pages, toml=toml, systems=["rules"]))
    return evaluate_alone(suite, next(r for r in suite.case_refs() if r.system == "rules-raw"))


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ('{"speakers": [', "not JSON (Expecting value: line 1 column 15"),
        ("", "empty"),
        (b"\xff\xfe{}", "not UTF-8"),
        ('{"speakers": [], "n": NaN}', "NaN is not a JSON number"),
        ("```json\n{'speakers': []}\n```", "not JSON"),
    ],
)
@pytest.mark.parametrize("mode", ["entries", "fields"])
def test_output_that_is_not_json_scores_zero_with_a_note(
    tmp_path: Path, raw: Any, problem: str, mode: str
) -> None:
    result = _one(tmp_path, raw, mode=mode)
    assert result.metrics["json_valid"] == 0.0
    headline = "imq" if mode == "entries" else "field_accuracy"
    assert result.metrics[headline] == 0.0
    assert problem in result.details["json_problem"]
    assert result.notes == [
        f"outputs/rules/raw.json is {result.details['json_problem']}: scored as an empty prediction"
    ]


@pytest.mark.parametrize("raw", ['"a string"', 42, [1, 2], {"speakers": "none"}, None, {}])
def test_a_prediction_of_the_wrong_type_scores_zero_not_a_crash(tmp_path: Path, raw: Any) -> None:
    result = _one(tmp_path, raw)
    assert result.metrics["json_valid"] == 1.0
    assert result.metrics["imq"] == 0.0
    assert result.details["entry_counts"]["missing"] == 3


def test_unreadable_entries_are_noted(tmp_path: Path) -> None:
    raw = {"speakers": [{"name": 5, "pages": []}, "x", *SPEAKERS["p1"]["speakers"][1:]]}
    result = _one(tmp_path, raw)
    assert result.details["entry_counts"]["unreadable"] == 2
    assert result.notes and result.notes[0].startswith(
        "unreadable in the prediction: $.speakers[0]"
    )


def test_a_fenced_prediction_is_unwrapped(tmp_path: Path) -> None:
    fenced = "```json\n" + json.dumps(SPEAKERS["p1"]) + "\n```"
    assert _one(tmp_path, fenced).metrics["imq"] == 1.0


@pytest.mark.parametrize(
    ("truth", "message"),
    [("{", "truth file is not JSON"), ({"speakers": "x"}, r"gold: \$.speakers is a str")],
)
def test_a_broken_truth_is_an_error_naming_the_file(
    tmp_path: Path, truth: Any, message: str
) -> None:
    pages = {"p1": {"truth": truth, "outputs": {"rules": {"gold": {}, "raw": {}}}}}
    suite = load(write_extraction_suite(tmp_path, "s", pages, toml=ENTRIES_TOML, systems=["rules"]))
    with pytest.raises(CaseInputError, match=message) as raised:
        evaluate_alone(suite, suite.case_refs()[0])
    assert "truth.json" in str(raised.value)


def test_a_missing_saved_output_is_an_error(tmp_path: Path) -> None:
    pages = {"p1": {"truth": SPEAKERS["p1"], "outputs": {"rules": {"gold": {}}}}}
    suite = load(write_extraction_suite(tmp_path, "s", pages, toml=ENTRIES_TOML, systems=["rules"]))
    with pytest.raises(CaseInputError, match=r"raw.json: missing precomputed output of rules"):
        evaluate_alone(suite, suite.case_refs()[1])


# -- reading predictions ------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES, st.booleans(), st.booleans())
def test_any_json_reads_back(value: Any, fenced: bool, bom: bool) -> None:
    text = json.dumps(value, ensure_ascii=False)
    if fenced:
        text = f"```json\n{text}\n```"
    if bom:
        text = "\ufeff" + text
    read = read_prediction(text.encode("utf-8"))
    assert read.valid and read.value == value


def _strict_json(text: str) -> bool:
    """The oracle: the standard library's parser, told to refuse NaN and Infinity."""

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError:
        return False
    return True


@given(st.text())
def test_text_reads_as_json_exactly_when_strict_json_parses_it(text: str) -> None:
    assume(not text.strip().startswith("```"))  # a fence is unwrapped: covered above
    read = read_prediction(text)
    # Surrounding whitespace (Unicode's, not only JSON's) and a BOM are forgiven.
    body = text.removeprefix("\ufeff").strip()
    assert read.valid == (bool(body) and _strict_json(body))
    assert (read.problem is None) == read.valid
    assert read.valid or read.value is None


@pytest.mark.parametrize(
    ("levels", "problem"), [(100_000, "nested too deeply to read"), (101, "more than 100 levels")]
)
def test_deep_nesting_is_a_problem_not_a_crash(levels: int, problem: str) -> None:
    read = read_prediction("[" * levels + "]" * levels)
    assert not read.valid and problem in (read.problem or "")
    assert read_prediction("[" * 100 + "]" * 100).valid


# -- the LLM extractor ----------------------------------------------------------------------------


def test_llm_requests_carry_the_schema_at_temperature_zero(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"speakers": {"type": "array"}}}
    pages = speaker_pages()
    for files in pages.values():
        del files["outputs"]
    suite_dir = write_extraction_suite(
        tmp_path, "s", pages, toml=ENTRIES_TOML, systems=["mistral"], schema=schema
    )
    suite = load(suite_dir, runtime(mistral="http://127.0.0.1:9/v1"))
    refs = suite.case_refs()
    requests = stage_requests(suite, refs)
    assert len(requests) == len(refs) == 6
    body = requests[1].body()
    assert body["temperature"] == 0.0
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "extraction", "schema": schema},
    }
    system, user = body["messages"]
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    assert user["content"].endswith("<<<\ntext 0f p1\n>>>")
    assert '"speakers" holds a list of objects with "name"' in user["content"]
    assert len({r.cache_key() for r in requests}) == 6
    fingerprint = suite.llms["mistral"].fingerprint()
    assert fingerprint["prompt"] == requests[0].prompt_version

    toml = suite_dir / "suite.toml"
    toml.write_text(toml.read_text() + '\n[systems.mistral]\ninstructions = "Pages only."\n')
    other = load(suite_dir, runtime(mistral="http://127.0.0.1:9/v1"))
    assert other.llms["mistral"].prompt_hash != fingerprint["prompt"]
    assert "\nPages only.\n" in stage_requests(other, refs)[0].body()["messages"][1]["content"]


def stage_requests(suite: Any, refs: list[Any]) -> list[Any]:
    """The requests the suite's model stages send for `refs` (what the engine would send)."""
    return [r for ref in refs for stage in suite.plan(ref).stages for r in stage.build(())]


def test_without_a_schema_entries_get_a_derived_one_and_fields_json_object(tmp_path: Path) -> None:
    pages = {"p1": {"truth": SPEAKERS["p1"], "texts": {"gold": "g", "raw": "r"}}}
    suite = load(
        write_extraction_suite(tmp_path, "e", pages, toml=ENTRIES_TOML, systems=["m"]),
        runtime(m="http://127.0.0.1:9/v1"),
    )
    derived = stage_requests(suite, suite.case_refs())[0].body()["response_format"]
    items = derived["json_schema"]["schema"]["properties"]["speakers"]["items"]
    assert items["required"] == ["name", "pages"]
    fields = load(
        write_extraction_suite(tmp_path, "f", pages, toml=FIELDS_TOML, systems=["m"]),
        runtime(m="http://127.0.0.1:9/v1"),
    )
    body = stage_requests(fields, fields.case_refs())[0].body()
    assert body["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ('response_format = "json_schema"', "json_schema needs the suite's schema.json"),
        ('response_format = "xml"', "response_format must be one of"),
        ("max_tokens = 0", "max_tokens must be an integer >= 1"),
        ("temperature = 0.3", r"unknown key\(s\) temperature"),
    ],
)
def test_llm_settings_are_checked(tmp_path: Path, settings: str, message: str) -> None:
    pages = {"p1": {"truth": RECEIPT, "texts": {"gold": "g", "raw": "r"}}}
    toml = FIELDS_TOML + f"\n[systems.m]\n{settings}\n"
    suite_dir = write_extraction_suite(tmp_path, "f", pages, toml=toml, systems=["m"])
    with pytest.raises(SuiteConfigError, match=message):
        load(suite_dir, runtime(m="http://127.0.0.1:9/v1"))


# -- analyses -------------------------------------------------------------------------------------


def _rows(values: dict[tuple[str, str], list[float]], metric: str = "imq") -> list[dict[str, Any]]:
    return [
        {
            "case": f"p{i}",
            "system": f"{extractor}-{variant}",
            "labels": {"extractor": extractor, "variant": variant},
            "outcome": "passed",
            "metrics": {metric: value},
            "details": {"verdict_counts": {"matched": i, "unfound": 1}},
        }
        for (extractor, variant), series in values.items()
        for i, value in enumerate(series)
    ]


META = {
    "metrics": {
        "imq": {"direction": "higher", "headline": True},
        "nted": {"direction": "lower", "headline": True},
    },
    "reference_variant": "gold",
    "variants": ["gold", "layout", "raw"],
    "extractors": {"llm": "llm", "rules": "precomputed"},
}


def test_the_gold_to_raw_drop_equals_an_independent_paired_t_computation() -> None:
    gold = [0.95, 0.9, 1.0, 0.85, 0.92, 0.97]
    raw = [0.80, 0.85, 0.90, 0.60, 0.91, 0.70]
    rows = _rows({("rules", "gold"): gold, ("rules", "raw"): raw})
    rows.append({**rows[-1], "outcome": "error", "case": "p9", "metrics": {}})  # not measured
    (found,) = OcrRobustness()(rows, META, StatsConfig())
    diffs = [r - g for r, g in zip(raw, gold, strict=True)]
    mean = sum(diffs) / len(diffs)
    half = sps.t.ppf(0.975, len(diffs) - 1) * sps.sem(diffs)
    assert found["extractor"] == "rules" and found["variant"] == "raw"
    assert found["n"] == 6 and found["method"] == "t"
    assert found["mean_diff"] == pytest.approx(mean)
    assert found["ci_low"] == pytest.approx(mean - half)
    assert found["ci_high"] == pytest.approx(mean + half)
    assert found["p_ttest"] == pytest.approx(sps.ttest_rel(raw, gold).pvalue)
    assert found["p_wilcoxon"] == pytest.approx(sps.wilcoxon(raw, gold).pvalue)
    assert found["reference_mean"] == pytest.approx(sum(gold) / 6)
    assert found["verdict"] == ("worse" if mean + half < 0 else "unchanged")
    assert found["verdict"] == "worse"


def test_the_drop_pairs_pages_and_reads_the_direction() -> None:
    rows = _rows({("rules", "gold"): [0.1, 0.2, 0.1], ("rules", "layout"): [0.1, 0.2]}, "nted")
    meta = {**META, "metrics": {"nted": META["metrics"]["nted"]}}
    (found,) = OcrRobustness()(rows, meta, StatsConfig())
    assert found["n"] == 2  # only the pages both were measured on
    assert found["direction"] == "lower" and found["mean_diff"] == 0.0
    rows = _rows({("rules", "gold"): [0.1, 0.2, 0.1], ("rules", "raw"): [0.3, 0.5, 0.35]}, "nted")
    assert OcrRobustness()(rows, meta, StatsConfig())[0]["verdict"] == "worse"


def test_verdict_counts_sum_per_extractor_and_variant() -> None:
    rows = _rows({("rules", "raw"): [0.1, 0.2, 0.3], ("rules", "gold"): [1, 1, 1]})
    found = VerdictCounts()(rows, META, StatsConfig())
    assert [(f["variant"], f["pages"], f["matched"], f["unfound"]) for f in found] == [
        ("gold", 3, 0 + 1 + 2, 3),
        ("raw", 3, 3, 3),
    ]


def test_extractor_pairs_compare_extractors_on_the_same_variant() -> None:
    rows = _rows(
        {
            ("llm", "gold"): [0.9, 0.8, 0.95],
            ("rules", "gold"): [0.7, 0.8, 0.6],
            ("llm", "raw"): [0.5, 0.6, 0.4],
        }
    )
    found = ExtractorPairs()(rows, META, StatsConfig())
    assert [(f["a"], f["b"], f["variant"]) for f in found] == [("llm-gold", "rules-gold", "gold")]
    assert found[0]["mean_diff"] == pytest.approx((0.2 + 0.0 + 0.35) / 3)
    assert ExtractorPairs()(_rows({("rules", "gold"): [1.0]}), META, StatsConfig()) == []


# -- the example suites' data and the tools that made it -----------------------------------------

REPO = Path(__file__).resolve().parents[1]


@functools.cache
def _tool(name: str) -> Any:
    """A script of tools/, loaded once (a @given test must not load it per example)."""
    from tests.test_realdata_extraction import load_tool

    return load_tool(name)


@pytest.fixture(scope="module")
def noise_tool() -> Any:
    return _tool("ocr_noise")


@pytest.fixture(scope="module")
def regex_tool() -> Any:
    return _tool("regex_extract")


def _same_files(made: Path, committed: Path, pattern: str) -> int:
    names = sorted(p.relative_to(made) for p in made.glob(pattern))
    assert names == sorted(p.relative_to(committed) for p in committed.glob(pattern))
    for name in names:
        assert (made / name).read_bytes() == (committed / name).read_bytes(), name
    return len(names)


def test_the_committed_example_data_is_what_the_tools_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages, OCR variants and the regex-baseline's outputs are reproducible byte for byte:
    nothing in them was edited by hand to look like a system's output."""
    index, receipts = REPO / "cases" / "speaker-index", REPO / "cases" / "receipts"
    made_index, made_receipts = tmp_path / "speaker-index", tmp_path / "receipts"
    monkeypatch.setattr("sys.argv", ["x", str(made_index)])
    _tool("make_speaker_index").main()
    assert _same_files(made_index, index, "*/gold.txt") == 6
    assert _same_files(made_index, index, "*/truth.json") == 6
    noise = _tool("ocr_noise")
    monkeypatch.setattr("sys.argv", ["x", str(made_index)])
    noise.main()
    assert _same_files(made_index, index, "*/raw.txt") == 6
    assert _same_files(made_index, index, "*/layout.txt") == 6
    for page in receipts.glob("*/gold.txt"):  # receipts are written by hand; their noise is not
        (made_receipts / page.parent.name).mkdir(parents=True)
        (made_receipts / page.parent.name / "gold.txt").write_bytes(page.read_bytes())
    monkeypatch.setattr("sys.argv", ["x", str(made_receipts), "--variants", "raw"])
    noise.main()
    assert _same_files(made_receipts, receipts, "*/raw.txt") == 6
    rules = _tool("regex_extract")
    for kind, suite in (("speaker-index", index), ("receipts", receipts)):
        copy = tmp_path / f"copy-{kind}"
        for path in suite.rglob("*"):
            if path.is_file() and "outputs" not in path.parts:
                target = copy / path.relative_to(suite)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(path.read_bytes())
        rules.run_suite(kind, copy)
        assert _same_files(copy, suite, "*/outputs/regex-baseline/*.json") in (12, 18)


def test_ocr_noise_is_seeded_and_silent_at_rate_zero() -> None:
    import random

    noise = _tool("ocr_noise")
    page = (REPO / "cases" / "speaker-index" / "page-003" / "gold.txt").read_text()
    raw = noise.LEVELS["raw"]
    first = noise.noisy(page, raw, random.Random("s"))
    assert first == noise.noisy(page, raw, random.Random("s")) != page
    assert noise.noisy(page, noise.Noise(confusion=0.0), random.Random(1)) == page


@given(st.text(alphabet="rnmlI1O0oecS5B8hd,. abcxyzřéü\n"), st.integers(0, 2**32))
def test_confusions_come_only_from_the_table(noise_tool: Any, line: str, seed: int) -> None:
    import random

    noise = noise_tool
    assert noise.confuse(line, 0.0, random.Random(seed)) == line
    out = noise.confuse(line, 1.0, random.Random(seed))
    allowed = set(line) | {c for options in noise.CONFUSIONS.values() for o in options for c in o}
    assert set(out) <= allowed


@given(st.integers(-99_999_999, 99_999_999))
def test_regex_amounts_read_every_common_spelling(regex_tool: Any, cents: int) -> None:
    rules = regex_tool
    value = cents / 100
    whole, frac = divmod(abs(cents), 100)
    sign = "-" if cents < 0 else ""
    assert rules.amount(f"{sign}{whole}.{frac:02d}") == pytest.approx(value)
    assert rules.amount(f"{sign}{whole:,}.{frac:02d}") == pytest.approx(value)
    assert rules.amount(f"{sign}{whole}") == (float(f"{sign}{whole}"))
    if whole >= 1000:
        assert rules.amount(f"{sign}{whole:,}") == float(f"{sign}{whole}")  # 2,400 won
    assert rules.amount(f"{sign}{whole},{frac:02d}") == pytest.approx(value)  # 4,95 €


def test_regex_speaker_index_rules_on_a_hand_worked_page() -> None:
    rules = _tool("regex_extract")
    page = "\n".join(
        [
            "INDEX OF SPEAKERS                 12",
            "",
            "    211, 230",  # the previous page's entry: skipped
            "Abbott, Graham (Lab., Halvergate) 12, 48, 113–115,",
            "    240",
            "Ashcombe, Lord. See Abbott, Graham",  # a cross-reference: not an entry
            "B",
            "Beaumont, Rose (Green, Mardale",  # broken inside the affiliation
            "West) 7, 66",
            "Blount, Amara (Ind., Kilmore) 3B8–390, 12-9,",  # goes on overleaf: left out
        ]
    )
    assert rules.speaker_index(page) == {
        "speakers": [
            {"name": "Abbott, Graham", "pages": [12, 48, 113, 114, 115, 240]},
            {"name": "Beaumont, Rose", "pages": [7, 66]},
        ]
    }
