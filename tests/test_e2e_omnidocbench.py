"""The omnidocbench kind end to end, as a user runs it: OmniDocBench's 18 demo pages (from
``../shared/peers``; skipped without it) with the model predictions it ships as a precomputed
system, plain and under xdist; its rows against `score_page`, its analysis against `leaderboard`
and the framework's summary against both; labels, views, the HTML and paper table; baselines and
gates; bad input; RapidOCR reading the 18 page images cold; CDM as stages (canary, shares, the
cache) with Overall in the report and the terminal; the shipped example suite; and no machine
folder in any report field where the suite's paths are relative (issue 37)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.cli import main as doceval
from pytest_doceval.config import load_suite_spec
from pytest_doceval.kinds.omnidocbench.cdm import cdm_tools
from pytest_doceval.kinds.omnidocbench.scoring import (
    PAGE_METRICS,
    SCORING_ID,
    PageScore,
    leaderboard,
    score_page,
)
from pytest_doceval.kinds.registry import make_suite
from pytest_doceval.metrics.cost import COST_METRICS
from pytest_doceval.store import Store, stored_output
from pytest_doceval.systems import build_registry
from tests.conftest import WORKERS, read_report

pytest_plugins = ["pytester"]

DEMO = Path(__file__).resolve().parents[1].parent / "shared/peers/omnidocbench-v1.6/demo_data"
ANNOTATIONS = DEMO / "omnidocbench_demo" / "OmniDocBench_demo.json"
IMAGES = DEMO / "omnidocbench_demo" / "images"
PREDICTIONS = DEMO / "end2end"
pytestmark = pytest.mark.skipif(
    not ANNOTATIONS.is_file(), reason="OmniDocBench's demo data (../shared/peers) is absent"
)


def demo_pages() -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = json.loads(ANNOTATIONS.read_text(encoding="utf-8"))
    return pages


def stem(page: dict[str, Any]) -> str:
    return Path(page["page_info"]["image_path"]).stem


def write_demo_suite(root: Path, systems: list[str], extra: str = "", cdm: bool = False) -> Path:
    """The demo set as a suite: the benchmark's annotation file and images where they lie
    (absolute paths), the shipped predictions as the precomputed system ``demo``; CDM off
    unless asked (its pdflatex runs are the CDM tests' business)."""
    suite = root / "cases" / "odb"
    (suite / "outputs").mkdir(parents=True, exist_ok=True)
    if "demo" in systems:
        shutil.copytree(PREDICTIONS, suite / "outputs" / "demo")
    (suite / "suite.toml").write_text(
        f'[suite]\nkind = "omnidocbench"\nannotations = "{ANNOTATIONS}"\n'
        f'images = "{IMAGES}"\nsystems = {json.dumps(systems)}\n'
        f"cdm = {str(cdm).lower()}\n{extra}",
        encoding="utf-8",
    )
    return suite


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    return pytester


def section(pytester: pytest.Pytester) -> dict[str, Any]:
    report = read_report(pytester.path / "doceval-report.json")
    return dict(report["suites"]["odb"])


def expected_scores() -> dict[str, PageScore]:
    return {
        stem(p): score_page(p, (PREDICTIONS / f"{stem(p)}.md").read_text(encoding="utf-8"))
        for p in demo_pages()
    }


@pytest.mark.parametrize("workers", WORKERS)
def test_demo_pages_rows_equal_score_page_and_analysis_equals_leaderboard(
    project: pytest.Pytester, workers: list[str]
) -> None:
    write_demo_suite(project.path, ["demo"])
    result = project.runpytest("--doceval", *workers)
    result.assert_outcomes(passed=18)
    data = section(project)
    assert data["kind"] == "omnidocbench"
    assert data["scoring_id"].startswith(f"{SCORING_ID}/r1;text=native;")
    assert "cdm=off;" in data["scoring_id"]
    assert "formula_cdm and overall: not computed (cdm = false in suite.toml)" in data["notes"]
    rows = {r["case"]: r for r in data["results"]}
    expected = expected_scores()
    assert set(rows) == set(expected)
    pages = {stem(p): p for p in demo_pages()}
    for case, score in expected.items():
        row = rows[case]
        assert row["nodeid"] == f"cases/odb/suite.toml::{case}[demo]"
        ours = {m: v for m, v in row["metrics"].items() if not m.startswith("grits_")}
        assert ours == pytest.approx(dict(score.metrics), abs=1e-9), case
        # GriTS beside TEDS, on the pages with tables (tests/test_metrics_grits.py checks it)
        assert ("grits_con" in row["metrics"]) == ("table_teds" in score.metrics), case
        page_attribute = pages[case]["page_info"]["page_attribute"]
        assert row["labels"]["language"] == page_attribute["language"]
        assert row["labels"]["data_source"] == page_attribute["data_source"]
        if page_attribute["special_issue"]:
            assert row["labels"]["special_issue"] == ", ".join(page_attribute["special_issue"])
        assert len(row["views"]["blocks"]["blocks"]) == len(score.blocks)
    board = leaderboard(list(expected.values()))
    assert board  # the demo pages have tables at least
    analysis = data["omnidocbench"]["demo"]
    assert analysis["pages"] == 18 and analysis["pages_not_scored"] == 0
    assert analysis["leaderboard"] == pytest.approx(board, abs=1e-9)
    # The framework's summary: the mean over pages of each metric is the leaderboard's number.
    for metric, value in board.items():
        assert data["aggregates"]["demo"][metric]["mean"] == pytest.approx(value, abs=1e-9)
        assert data["aggregates"]["demo"][metric]["ci_low"] <= value
    # A page-attribute group: the leaderboard of exactly its pages, computed here from the
    # annotation file's own attributes.
    attributes = {s: p["page_info"]["page_attribute"] for s, p in pages.items()}
    english = [expected[s] for s, a in attributes.items() if a["language"] == "english"]
    group = analysis["by_attribute"]["language: english"]
    assert group["pages"] == len(english)
    assert {k: v for k, v in group.items() if k != "pages"} == pytest.approx(
        leaderboard(english), abs=1e-9
    )
    fuzzy = [expected[s] for s, a in attributes.items() if "fuzzy_scan" in a["special_issue"]]
    assert analysis["by_attribute"]["fuzzy_scan"]["pages"] == len(fuzzy) == 2
    assert not any("table" in g for g in analysis["by_attribute"] if ":" not in g)


def test_report_html_paper_table_baselines_and_gates(project: pytest.Pytester) -> None:
    suite = write_demo_suite(project.path, ["demo"], '\n[gates]\ntable_teds = "-1pp"\n')
    with_tables = sum("table_teds" in s.metrics for s in expected_scores().values())
    first = project.runpytest("--doceval")  # no baseline yet: every gated page fails
    first.assert_outcomes(failed=18)
    # Counted per test, not per line: a wide terminal repeats each message in the short summary.
    failures = {
        node: message
        for node, message in re.findall(r"^_+ (odb/\S+) _+\n+(.+)$", first.stdout.str(), re.M)
    }
    assert len(failures) == 18
    no_baseline = [n for n, m in failures.items() if m.startswith("table_teds: no baseline for")]
    assert len(no_baseline) == with_tables
    not_measured = [n for n, m in failures.items() if "gated in suite.toml but not measured" in m]
    assert len(not_measured) == 18 - with_tables
    project.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=18)
    assert (project.path / "baselines" / "odb.json").is_file()
    html = (project.path / "doceval-report.html").read_text(encoding="utf-8")
    assert "OmniDocBench v1.6 leaderboard numbers" in html
    out = project.path / "tables.md"
    report = str(project.path / "doceval-report.json")
    assert doceval(["report", report, "--format", "markdown", "-o", str(out)]) == 0
    tables = out.read_text(encoding="utf-8")
    board = section(project)["omnidocbench"]["demo"]["leaderboard"]
    assert "End-to-end evaluation on OmniDocBench v1.6 pages" in tables
    assert "| demo | n/a |" in tables and f"{board['table_teds'] * 100:.2f}" in tables
    # A page whose table got worse than its baseline fails its gate; the others pass.
    page = "eastmoney_62b4149b1612ce28d20f26cd5c5b2e18f80b26fca6e4452e090376a2fe72eae3.pdf_0"
    prediction = suite / "outputs" / "demo" / f"{page}.md"
    before = prediction.read_text(encoding="utf-8")
    prediction.write_text(before.replace("<td>", "<td>wrong "), encoding="utf-8")
    truth = next(p for p in demo_pages() if stem(p) == page)
    was = score_page(truth, before).metrics["table_teds"]
    now = score_page(truth, prediction.read_text(encoding="utf-8")).metrics["table_teds"]
    assert now < was - 0.01
    result = project.runpytest("--doceval")
    result.assert_outcomes(passed=17, failed=1)
    out = result.stdout.str()
    assert f"table_teds {now:.3f} < baseline {was:.3f} - 1pp (odb/{page}[demo])" in out
    # Pages without tables have no table_teds today nor in the baseline: nothing to gate.
    assert "not measured" not in out


def test_bad_input_errors_name_the_page_and_the_run_goes_on(project: pytest.Pytester) -> None:
    suite = write_demo_suite(project.path, ["demo", "rapidocr"])
    shutil.copytree(suite / "outputs" / "demo", suite / "outputs" / "gappy")
    pages = demo_pages()
    missing, empty = stem(pages[0]), stem(pages[1])
    (suite / "outputs" / "gappy" / f"{missing}.md").unlink()
    (suite / "outputs" / "gappy" / f"{empty}.md").write_text("", encoding="utf-8")
    images = project.path / "images"
    images.mkdir()  # rapidocr finds no page image: every one of its tests errors
    toml = (suite / "suite.toml").read_text(encoding="utf-8")
    toml = toml.replace(f'images = "{IMAGES}"', 'images = "../../images"')
    (suite / "suite.toml").write_text(toml.replace('"rapidocr"]', '"rapidocr", "gappy"]'))
    broken = project.path / "cases" / "broken"
    broken.mkdir()
    (broken / "OmniDocBench.json").write_text('{"pages": []}', encoding="utf-8")
    (broken / "suite.toml").write_text('[suite]\nkind = "omnidocbench"\nsystems = ["demo"]\n')
    result = project.runpytest("--doceval", "-rfE")
    result.assert_outcomes(passed=35, errors=19, failed=1)
    out = result.stdout.str()
    assert f"page {missing}.jpg: missing prediction of gappy" in out
    assert f"page {empty}.jpg: missing page image" in out
    assert "broken/OmniDocBench.json (annotations of" in out and "not a non-empty list" in out
    rows = {(r["case"], r["system"]): r for r in section(project)["results"]}
    assert any("is empty: scored as an empty page" in n for n in rows[(empty, "gappy")]["notes"])
    assert rows[(empty, "gappy")]["outcome"] == "passed"
    analysis = section(project)["omnidocbench"]
    assert analysis["gappy"]["pages_not_scored"] == 1 and analysis["gappy"]["pages"] == 17
    assert analysis["rapidocr"]["pages"] == 0 and analysis["rapidocr"]["pages_not_scored"] == 18


@pytest.mark.slow
def test_rapidocr_reads_page_images_as_stages_under_xdist(project: pytest.Pytester) -> None:
    """The two smallest demo pages (516 x 729 pixels), cold under ``-n 2``, then cached."""
    small = [p for p in demo_pages() if stem(p).startswith("notes_")]
    assert len(small) == 2
    annotations = project.path / "two.json"
    annotations.write_text(json.dumps(small), encoding="utf-8")
    suite = write_demo_suite(project.path, ["rapidocr"])
    toml = (suite / "suite.toml").read_text(encoding="utf-8")
    (suite / "suite.toml").write_text(toml.replace(str(ANNOTATIONS), str(annotations)))
    cold = project.runpytest("--doceval", "-n", "2")
    cold.assert_outcomes(passed=2)
    # two pages: each read by RapidOCR, then scored
    cold.stdout.fnmatch_lines(["doceval: 4/4 stages (0 from the cache, 0 failed)*"])
    first = {r["case"]: r for r in section(project)["results"]}
    warm = project.runpytest("--doceval", "-n", "2")
    warm.assert_outcomes(passed=2)
    print(warm.stdout.str())
    warm.stdout.fnmatch_lines(["doceval: 4/4 stages (4 from the cache, 0 failed)*"])
    again = {r["case"]: r for r in section(project)["results"]}
    store = Store(project.path / ".doceval-cache")
    for case, row in first.items():
        assert row["cache_key"] and row["cache_key"] == again[case]["cache_key"]
        assert row["metrics"] == again[case]["metrics"]
        text = stored_output(store, row["cache_key"])
        assert text and text.strip(), case  # RapidOCR read the page's text, kept by its key


@pytest.mark.slow
def test_rapidocr_reads_the_18_demo_page_images_cold(project: pytest.Pytester) -> None:
    write_demo_suite(project.path, ["rapidocr"])
    result = project.runpytest("--doceval", "--doceval-no-cache")
    result.assert_outcomes(passed=18)
    data = section(project)
    rows = data["results"]
    assert all(r["fingerprint"]["system"] == "rapidocr" and r["cache_key"] for r in rows)
    images = {stem(p): p["page_info"]["image_path"] for p in demo_pages()}
    for row in rows:
        # The suite gives the images' folder absolute: shown as given.
        assert row["details"]["prediction"] == str(IMAGES / images[row["case"]])
        assert set(row["metrics"]) <= {*PAGE_METRICS, *COST_METRICS, "grits_con", "grits_top"}
    # OCR text has no markup tables: the pages with truth tables score their TEDS as misses.
    assert data["omnidocbench"]["rapidocr"]["pages"] == 18


REPO = Path(__file__).resolve().parents[1]
needs_tex = pytest.mark.skipif(isinstance(cdm_tools(), str), reason=f"no CDM here: {cdm_tools()}")
FORMULA_PAGE = {
    "layout_dets": [
        {"anno_id": 1, "category_type": "text_block", "order": 1, "text": "Energy and mass:"},
        {"anno_id": 2, "category_type": "equation_isolated", "order": 2, "latex": "E=mc^{2}"},
        {"anno_id": 3, "category_type": "equation_isolated", "order": 3,
         "latex": "a^{2}+b^{2}=c^{2}"},
        {"anno_id": 4, "category_type": "table", "order": 4,
         "html": "<table><tr><td>a</td><td>1</td></tr></table>"},
    ],
    "extra": {"relation": []},
    "page_info": {"image_path": "formulas.jpg", "page_attribute": {"language": "english"}},
}  # fmt: skip


@needs_tex
def test_cdm_runs_as_stages_and_gives_overall_then_comes_from_the_cache(
    project: pytest.Pytester,
) -> None:
    suite = project.path / "cases" / "odb"
    (suite / "outputs" / "demo").mkdir(parents=True)
    (suite / "OmniDocBench.json").write_text(json.dumps([FORMULA_PAGE]), encoding="utf-8")
    prediction = (
        "Energy and mass:\n\n$$E=mc^{2}$$\n\n$$a^2+b^2=c\\frac{1$$\n\n"
        "<table><tr><td>a</td><td>1</td></tr></table>"
    )
    (suite / "outputs" / "demo" / "formulas.md").write_text(prediction, encoding="utf-8")
    (suite / "suite.toml").write_text(
        '[suite]\nkind = "omnidocbench"\nsystems = ["demo"]\n', encoding="utf-8"
    )
    cold = project.runpytest("--doceval")
    cold.assert_outcomes(passed=1)
    # The canary, the page's one share (two formulas: one share) and the page's score.
    cold.stdout.fnmatch_lines(["doceval: 3/3 stages (0 from the cache, 0 failed)*"])
    data = section(project)
    (row,) = data["results"]
    score = score_page(FORMULA_PAGE, prediction)
    assert len(score.formulas) == 2 and len(row["details"]["cdm"]) == 2
    assert row["details"]["cdm"][0] == 1.0  # E=mc^2 predicted exactly
    assert row["metrics"]["formula_cdm"] == pytest.approx(sum(row["details"]["cdm"]) / 2)
    assert any("did not compile 0 truth and 1 predicted" in n for n in row["notes"])
    board = data["omnidocbench"]["demo"]["leaderboard"]
    assert board["overall"] == pytest.approx(
        ((1 - board["text_edit"]) * 100 + board["formula_cdm"] * 100 + board["table_teds"] * 100)
        / 3
    )
    cold.stdout.fnmatch_lines([f"  leaderboard demo: Overall {board['overall']:.2f} | *"])
    assert "cdm=texlive" in data["scoring_id"]
    warm = project.runpytest("--doceval")
    warm.assert_outcomes(passed=1)
    assert "CPU stage(s) on" not in warm.stdout.str()  # nothing to render again
    assert section(project)["results"][0]["metrics"] == row["metrics"]
    # The CDM scores are kept in the run's cache under their stages' keys.
    built = make_suite(load_suite_spec(suite / "suite.toml"), build_registry())
    plan = built.plan(built.case_refs()[0])
    store = Store(project.path / ".doceval-cache")
    keys = [plan.results[name] for name in plan.results if name.startswith("cdm/")]
    assert keys and all(stored_output(store, key) for key in keys)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_the_shipped_suite_scores_its_pages_and_reports_no_machine_folders(
    project: pytest.Pytester,
) -> None:
    """cases/omnidocbench as a project holds it (CDM off here: the CDM tests run it): its
    rows are score_page's, and neither the report, the HTML, the paper table nor the terminal
    holds the machine's folders (issue 37)."""
    shipped = REPO / "cases" / "omnidocbench"
    suite = project.path / "cases" / "omnidocbench"
    shutil.copytree(shipped, suite, ignore=shutil.ignore_patterns("*.jpg"))
    toml = (suite / "suite.toml").read_text(encoding="utf-8")
    (suite / "suite.toml").write_text(toml + "cdm = false\n", encoding="utf-8")
    result = project.runpytest("--doceval")
    result.assert_outcomes(passed=18)
    report = read_report(project.path / "doceval-report.json")
    data = report["suites"]["omnidocbench"]
    assert data["annotations"] == "cases/omnidocbench/OmniDocBench.json"
    pages = {stem(p): p for p in json.loads((suite / "OmniDocBench.json").read_text("utf-8"))}
    for row in data["results"]:
        prediction = suite / "outputs" / "omnidocbench-demo" / f"{row['case']}.md"
        expected = score_page(pages[row["case"]], prediction.read_text(encoding="utf-8"))
        ours = {m: row["metrics"][m] for m in expected.metrics}
        assert ours == pytest.approx(dict(expected.metrics), abs=1e-9)
        assert set(row["metrics"]) - set(ours) <= {"grits_con", "grits_top"}  # not OmniDocBench's
        assert row["details"]["prediction"] == (
            f"cases/omnidocbench/outputs/omnidocbench-demo/{row['case']}.md"
        )
    out = project.path / "tables.tex"
    assert doceval(["report", str(project.path / "doceval-report.json"), "--format", "latex",
                    "-o", str(out)]) == 0  # fmt: skip
    machine = str(project.path)
    texts = {
        "report": json.dumps(_strings(data), ensure_ascii=False),
        "html": (project.path / "doceval-report.html").read_text(encoding="utf-8"),
        "paper": out.read_text(encoding="utf-8"),
        "terminal": result.stdout.str().split("=== doceval ===")[-1],
    }
    for name, text in texts.items():
        assert machine not in text, name
