"""The extraction kind end to end, as a user runs it: plain and under xdist, labels and ids,
metrics equal to the metric functions, the LLM extractor against the test model server, bad
input, the robustness analysis, merge of shards, and the shipped example suites offline."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import model_server
import pytest
from model_server import ModelServer
from scipy import stats as sps

from pytest_doceval.cli import main as doceval
from pytest_doceval.kinds.extraction.entries import EntryFields, score_entries
from pytest_doceval.metrics.cost import COST_METRICS
from tests.conftest import WORKERS, read_report
from tests.test_suite_extraction import (
    ENTRIES_TOML,
    FIELDS_TOML,
    RAW_PREDICTIONS,
    RECEIPT,
    SPEAKERS,
    speaker_pages,
    write_extraction_suite,
)

REPO = Path(__file__).resolve().parents[1]
FIELDS = EntryFields("name", "pages", "speakers")


def project(pytester: pytest.Pytester, server: ModelServer | None = None, **model: Any) -> None:
    models = ""
    if server is not None:
        settings = "".join(f"{k} = {json.dumps(v)}\n" for k, v in model.items())
        models = (
            f'\n[tool.doceval.models.echo]\nbase_url = "{server.base_url}"\nmodel = "echo-1"\n'
            f"max_concurrency = 4\n{settings}"
        )
    pytester.makepyprojecttoml(f'[tool.doceval]\nsuites = ["cases"]\n{models}')


def section(pytester: pytest.Pytester, name: str = "s", report: str = "doceval-report.json") -> Any:
    return read_report(pytester.path / report)["suites"][name]


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.mark.parametrize("workers", WORKERS)
def test_entries_suite_rows_labels_metrics_and_the_drop(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    project(pytester)
    write_extraction_suite(
        pytester.path, "s", speaker_pages(), toml=ENTRIES_TOML, systems=["rules"]
    )
    pytester.runpytest("--doceval", *workers).assert_outcomes(passed=6)
    found = section(pytester)
    assert found["kind"] == "extraction" and found["mode"] == "entries"
    assert found["systems"] == ["rules-gold", "rules-raw"]
    assert found["analysis_keys"] == ["ocr_robustness", "verdict_counts", "comparisons"]
    rows = {(r["case"], r["labels"]["variant"]): r for r in found["results"]}
    assert len(rows) == 6
    for (case, variant), row in rows.items():
        assert row["labels"] == {"extractor": "rules", "variant": variant}
        assert row["nodeid"].endswith(f"suite.toml::{case}[rules-{variant}]")
        pred = SPEAKERS[case] if variant == "gold" else RAW_PREDICTIONS[case]
        direct = score_entries(SPEAKERS[case], pred, FIELDS).metrics()
        assert {k: row["metrics"][k] for k in direct} == pytest.approx(direct)
        assert row["details"]["variant"] == variant
    # The gold -> raw drop, computed here from the per-page values with scipy.
    pages = sorted(SPEAKERS)
    gold = [rows[p, "gold"]["metrics"]["imq"] for p in pages]
    raw = [rows[p, "raw"]["metrics"]["imq"] for p in pages]
    drop = next(d for d in found["ocr_robustness"] if d["metric"] == "imq")
    diffs = [r - g for r, g in zip(raw, gold, strict=True)]
    half = sps.t.ppf(0.975, len(diffs) - 1) * sps.sem(diffs)
    assert drop["mean_diff"] == pytest.approx(sum(diffs) / len(diffs))
    assert drop["ci_high"] - drop["ci_low"] == pytest.approx(2 * half)
    assert drop["p_ttest"] == pytest.approx(sps.ttest_rel(raw, gold).pvalue)
    assert found["aggregates"]["rules-raw"]["imq"]["mean"] == pytest.approx(sum(raw) / 3)


def test_fields_suite_counts_verdicts_and_reports_per_field_metrics(
    pytester: pytest.Pytester,
) -> None:
    project(pytester)
    worse = {**RECEIPT, "total": 9.56, "items": RECEIPT["items"][:1], "tip": 1}
    pages = {
        f"r{i}": {"truth": RECEIPT, "outputs": {"rules": {"gold": RECEIPT, "raw": worse}}}
        for i in range(3)
    }
    write_extraction_suite(pytester.path, "s", pages, toml=FIELDS_TOML, systems=["rules"])
    pytester.runpytest("--doceval").assert_outcomes(passed=6)
    found = section(pytester)
    assert found["metrics"]["field_accuracy"]["headline"] is True
    assert found["metrics"]["field_accuracy:total"]["headline"] is False
    assert found["metrics"]["nted"]["direction"] == "lower"
    raw = next(r for r in found["results"] if r["system"] == "rules-raw")
    counts = raw["details"]["verdict_counts"]
    assert counts == raw["views"]["field_verdicts"]["counts"]
    assert (counts["misread"], counts["unfound"], counts["invented_field"]) == (1, 2, 1)
    totals = {(c["variant"]): c for c in found["verdict_counts"]}
    assert totals["raw"]["pages"] == 3 and totals["raw"]["unfound"] == 6
    assert totals["gold"]["matched"] == 3 * 7  # merchant, date, total, 2 x (name, amount)


def _answers(pages: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The reply a fake model gives to each page text: the `rules` outputs for that text."""
    return {
        files["texts"][variant]: prediction
        for files in pages.values()
        for variant, prediction in files["outputs"]["rules"].items()
    }


@pytest.mark.parametrize("workers", WORKERS)
def test_the_llm_extractor_sends_each_page_once_and_scores_its_json(
    pytester: pytest.Pytester,
    server: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    pages = speaker_pages()
    answers = _answers(pages)

    def reply(messages: list[dict[str, Any]]) -> str:  # the page's text -> a chosen JSON
        text = re.search(r"<<<\n(.*)\n>>>", messages[-1]["content"], re.S)
        assert text is not None
        return "```json\n" + json.dumps(answers[text.group(1)]) + "\n```"

    monkeypatch.setattr(model_server, "reply_text", reply)
    project(pytester, server)
    write_extraction_suite(pytester.path, "s", pages, toml=ENTRIES_TOML, systems=["rules", "echo"])
    pytester.runpytest("--doceval", *workers).assert_outcomes(passed=12)
    assert server.total == 6  # one request per (page, variant), each sent once
    body = json.loads(server.requests[0].body)
    assert body["temperature"] == 0.0 and body["response_format"]["type"] == "json_schema"
    found = section(pytester)
    assert found["extractors"] == {"rules": "precomputed", "echo": "llm"}
    by_key = {
        (r["case"], r["labels"]["variant"], r["labels"]["extractor"]): r for r in found["results"]
    }
    for (case, variant, extractor), row in by_key.items():
        if extractor == "echo":  # the same JSON through the model path scores the same
            rules = by_key[case, variant, "rules"]["metrics"]
            assert {m: v for m, v in row["metrics"].items() if m not in COST_METRICS} == rules
            assert row["metrics"]["model_requests"] == 1 and row["metrics"]["tokens_in"] > 0
            assert row["fingerprint"]["kind"] == "llm"
            assert row["fingerprint"]["model"]["model"] == "echo-1"
    pairs = [c for c in found["comparisons"] if c["metric"] == "imq"]
    assert {(c["a"], c["b"]) for c in pairs} == {
        ("echo-gold", "rules-gold"),
        ("echo-raw", "rules-raw"),
    }
    assert all(c["mean_diff"] == 0 for c in pairs)
    pytester.runpytest("--doceval", *workers).assert_outcomes(passed=12)
    assert server.total == 6  # the second run is answered from the response cache


def test_a_model_answer_that_is_not_json_scores_zero_and_says_why(
    pytester: pytest.Pytester, server: ModelServer
) -> None:
    project(pytester, server)  # the test server echoes the prompt: not JSON
    pages = speaker_pages()
    for files in pages.values():
        del files["outputs"]
    write_extraction_suite(pytester.path, "s", pages, toml=ENTRIES_TOML, systems=["echo"])
    pytester.runpytest("--doceval").assert_outcomes(passed=6)
    for row in section(pytester)["results"]:
        assert row["metrics"]["json_valid"] == 0.0 and row["metrics"]["imq"] == 0.0
        assert row["notes"][0].startswith("model 'echo''s answer is not JSON (Expecting value")


def test_a_failing_model_is_an_error_of_that_test(
    pytester: pytest.Pytester, server: ModelServer
) -> None:
    project(pytester, server, max_retries=0, timeout=5)
    pages = speaker_pages()
    for files in pages.values():
        del files["outputs"]
    pages["p2"]["texts"]["raw"] += "\n[fault:500]"
    write_extraction_suite(pytester.path, "s", pages, toml=ENTRIES_TOML, systems=["echo"])
    result = pytester.runpytest("--doceval", "-rE")
    result.assert_outcomes(passed=5, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR at setup of s/p2[[]echo-raw[]]*", "*model 'echo'*case 'p2 (raw)'*HTTP 500*"]
    )


def test_bad_input_is_a_clear_error_or_a_documented_zero_never_a_crash(
    pytester: pytest.Pytester,
) -> None:
    project(pytester)
    pages = speaker_pages()
    pages["p1"]["outputs"]["rules"]["raw"] = '{"speakers": [{"name": "Abbott'  # malformed
    pages["p2"]["outputs"]["rules"]["raw"] = ""  # empty
    pages["p3"]["outputs"]["rules"]["raw"] = {"speakers": {"name": "x"}}  # wrong type
    pages["p4"] = {"truth": "{broken", "outputs": {"rules": {"gold": {}, "raw": {}}}}
    pages["p5"] = {"truth": SPEAKERS["p3"], "outputs": {"rules": {"gold": {}}}}  # no raw
    write_extraction_suite(pytester.path, "s", pages, toml=ENTRIES_TOML, systems=["rules"])
    write_extraction_suite(
        pytester.path, "t", speaker_pages(), toml=ENTRIES_TOML, systems=["rules"], schema="{"
    )
    result = pytester.runpytest("--doceval", "-rfE")
    result.assert_outcomes(passed=7, errors=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "truth file is not JSON: Expecting property name*(cases/s/p4/truth.json)",
            "missing precomputed output of rules (cases/s/p5/outputs/rules/raw.json)",
            "*suite error: cases/t/schema.json: JSON Schema is not JSON*",  # the project's path
        ]
    )
    rows = {(r["case"], r["system"]): r for r in section(pytester)["results"]}
    assert rows["p1", "rules-raw"]["metrics"]["json_valid"] == 0.0
    assert "is not JSON" in rows["p1", "rules-raw"]["notes"][0]
    assert rows["p2", "rules-raw"]["details"]["json_problem"] == "empty"
    assert rows["p3", "rules-raw"]["metrics"]["imq"] == 0.0
    assert rows["p3", "rules-raw"]["metrics"]["json_valid"] == 1.0


def test_merge_of_shards_equals_the_unsharded_run_analyses_included(
    pytester: pytest.Pytester,
) -> None:
    project(pytester)
    pages = speaker_pages()
    for i in range(4, 9):  # enough pages for three non-empty shards
        pages[f"p{i}"] = {**pages["p1"], "texts": {"gold": f"g{i}", "raw": f"r{i}"}}
    write_extraction_suite(pytester.path, "s", pages, toml=ENTRIES_TOML, systems=["rules"])
    pytester.runpytest("--doceval", "--doceval-json", "full.json").assert_outcomes(passed=16)
    shards = []
    for k in (1, 2, 3):
        pytester.runpytest("--doceval", "--doceval-shard", f"{k}/3", "--doceval-json", f"s{k}.json")
        shards.append(str(pytester.path / f"s{k}.json"))
    assert all(section(pytester, report=f"s{k}.json")["results"] for k in (1, 2, 3))
    assert doceval(["merge", *shards, "-o", str(pytester.path / "merged.json")]) == 0
    full, merged = section(pytester, report="full.json"), section(pytester, report="merged.json")
    for part in (full, merged):
        for row in part["results"]:
            row.pop("duration", None)
    keys = ["results", "aggregates", "metrics", "outcomes", "ocr_robustness", "verdict_counts"]
    for key in [*keys, "comparisons", "mode", "variants", "reference_variant", "extractors"]:
        assert merged.get(key) == full.get(key), key
    assert full["ocr_robustness"]  # the analysis is there, not two empty lists


@pytest.mark.parametrize("name", ["speaker-index", "receipts"])
def test_the_example_suites_run_offline_against_their_baselines(
    pytester: pytest.Pytester, name: str
) -> None:
    project(pytester)
    shutil.copytree(REPO / "cases" / name, pytester.path / "cases" / name)
    (pytester.path / "baselines").mkdir()
    shutil.copy(REPO / "baselines" / f"{name}.json", pytester.path / "baselines")
    result = pytester.runpytest("--doceval")
    pages = len([p for p in (REPO / "cases" / name).iterdir() if p.is_dir()])
    variants = 3 if name == "speaker-index" else 2
    result.assert_outcomes(passed=pages * variants)
    found = section(pytester, name)
    baseline = json.loads((REPO / "baselines" / f"{name}.json").read_text())
    assert baseline["scoring_id"] == found["scoring_id"]
    assert not found["unused_baseline"]
    assert all(d["verdict"] == "unchanged" for d in found["baseline_deltas"])
    headline = "imq" if name == "speaker-index" else "field_accuracy"
    drop = next(
        d for d in found["ocr_robustness"] if d["metric"] == headline and d["variant"] == "raw"
    )
    assert drop["mean_diff"] < 0  # noisy OCR costs the rules something
    assert {r["labels"]["extractor"] for r in found["results"]} == {"regex-baseline"}


def test_html_renderers_for_the_views_and_analyses(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_doceval.html.codec import Chunk
    from pytest_doceval.kinds.extraction import html as extraction
    from pytest_doceval.report.html import render_html

    project(pytester)
    pages = speaker_pages()
    pages["p1"]["outputs"]["rules"]["raw"] = {
        "speakers": [{"name": "<b>Abbott</b>", "pages": [12]}, 7]
    }
    write_extraction_suite(
        pytester.path, "s", pages, toml=ENTRIES_TOML, systems=["rules"], schema={"type": "object"}
    )
    pytester.runpytest("--doceval").assert_outcomes(passed=6)
    report = read_report(pytester.path / "doceval-report.json")
    row = next(
        r
        for r in report["suites"]["s"]["results"]
        if r["case"] == "p1" and r["system"] == "rules-raw"
    )
    (block,) = extraction.entry_alignment(
        "entry_alignment", [row["views"]["entry_alignment"]], Chunk()
    )
    assert block["head"] == ["gold entry", "predicted entry", "quality 1 - d_e"]
    assert ["Adair, Thomas", "(missing)", 0.0] in block["rows"]
    assert "3 gold, 2 predicted" in block["note"] and "$.speakers[1] is a int" in block["note"]
    page = render_html(report)
    assert "Robustness to OCR fidelity: each variant − gold, paired over pages" in page
    assert "Verdicts per extractor and OCR variant" in page


def test_html_renderers_for_field_verdicts_and_schema_errors() -> None:
    from pytest_doceval.html.codec import Chunk
    from pytest_doceval.kinds.extraction import html as extraction
    from pytest_doceval.kinds.extraction.fields import score_fields
    from pytest_doceval.kinds.extraction.schema import schema_validity

    pred = {**RECEIPT, "total": "9.56"}
    chunk = Chunk()
    (verdicts,) = extraction.field_verdicts("v", [score_fields(RECEIPT, pred).view()], chunk)
    assert verdicts["rows"] == [["$.total", "misread", "9.65", "9.56", pytest.approx(0.5)]]
    assert verdicts["note"].startswith("matched 6, misread 1, unfound 0")
    schema = {"properties": {"total": {"type": "number"}}}
    (errors,) = extraction.schema_errors("s", [schema_validity(pred, schema).to_dict()], chunk)
    assert errors["rows"] == [["$.total", "type", "'9.56' is not of type 'number'"]]
    assert chunk.size > 0
