"""The omnidocbench kind's plumbing: its annotation file, page labels and groups, predictions,
a parser's stage on the page image, the error of each bad input, the analysis's grouping, the
HTML diff and the paper table. Scoring itself is `scoring.score_page`'s (its parity tests);
here a fake stands in for it where only the plumbing is under test."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.config import StatsConfig, load_suite_spec
from pytest_doceval.engine import CpuStage, StageNotPlanned, StageResults
from pytest_doceval.engine.plan import gather
from pytest_doceval.errors import CaseInputError, SuiteConfigError
from pytest_doceval.kinds.base import CaseRef, RunContext, evaluate_alone
from pytest_doceval.kinds.omnidocbench import suite as suite_module
from pytest_doceval.kinds.omnidocbench import suite_analysis
from pytest_doceval.kinds.omnidocbench.html import inline_diff
from pytest_doceval.kinds.omnidocbench.paper import leaderboard_table
from pytest_doceval.kinds.omnidocbench.scoring import SCORING_ID, MatchedBlock, PageScore
from pytest_doceval.kinds.omnidocbench.suite import OmniDocBenchSuite, cdm_note
from pytest_doceval.kinds.omnidocbench.suite_pages import (
    attribute_groups,
    image_as_pdf,
    parse_page_image,
    prediction_candidates,
)
from pytest_doceval.kinds.registry import make_suite
from pytest_doceval.paper import to_markdown
from pytest_doceval.store import cache_key, file_digest
from pytest_doceval.systems import build_registry


def page(image: str, **attributes: Any) -> dict[str, Any]:
    return {
        "layout_dets": [{"category_type": "text_block", "text": f"text of {image}", "order": 1}],
        "page_info": {"image_path": f"some/folder/{image}", "page_attribute": attributes},
        "extra": {},
    }


PAGES = [
    page("a.pdf_1.jpg", language="english", layout="single_column", special_issue=[]),
    page("b.png", language="simplified_chinese", special_issue=["fuzzy_scan", "table_rotate"]),
]


def png(path: Path, width: int = 40, height: int = 30) -> Path:
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, width, height), False)
    pix.clear_with(200)
    path.parent.mkdir(parents=True, exist_ok=True)
    pix.save(str(path))
    return path


def write(folder: Path, pages: Any = PAGES, *, systems: tuple[str, ...] = ("saved",)) -> Path:
    """A suite in `folder`, in a project whose root is the folder above it."""
    folder.mkdir(parents=True, exist_ok=True)
    project = folder.parent / "pyproject.toml"
    if not project.exists():
        project.write_text("[tool.doceval]\n", encoding="utf-8")
    data = pages if isinstance(pages, str) else json.dumps(pages)
    (folder / "OmniDocBench.json").write_text(data, encoding="utf-8")
    for system in systems:
        if system != "rapidocr":
            (folder / "outputs" / system).mkdir(parents=True, exist_ok=True)
    toml = f'[suite]\nkind = "omnidocbench"\nsystems = {json.dumps(list(systems))}\n'
    (folder / "suite.toml").write_text(toml, encoding="utf-8")
    return folder / "suite.toml"


def build(file: Path) -> OmniDocBenchSuite:
    suite = make_suite(load_suite_spec(file), build_registry())
    assert isinstance(suite, OmniDocBenchSuite)
    return suite


def fake_score(page: Mapping[str, Any], prediction: str, reference: Any = None) -> PageScore:
    """Stands in for score_page: text_edit from the prediction's length, the page's truth as
    one block (the plumbing under test does not depend on the numbers)."""
    truth = str(page["layout_dets"][0]["text"])
    edit = abs(len(truth) - len(prediction))
    longest = max(len(truth), len(prediction))
    block = MatchedBlock("text_block", truth, prediction, edit, longest, 1, 1)
    notes = ("empty prediction: scored as OmniDocBench scores it",) if not prediction else ()
    return PageScore({"text_edit": edit / longest}, {"text_edit": (edit, longest)}, (block,), notes)


@pytest.fixture
def faked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suite_module, "score_page", fake_score)


def evaluate(suite: Any, ref: CaseRef) -> Any:
    return evaluate_alone(suite, ref)


def scored(suite: Any, ref: CaseRef, output: str) -> Any:
    """`ref` scored on `output` as its plan's ``output`` result (a parser's, given here)."""
    plan = suite.plan(ref)
    results = StageResults({"output": output}, {"output": plan.stage("output")})
    return suite.evaluate(ref, results, RunContext())


# -- the annotation file --------------------------------------------------------------------------


def test_pages_cases_labels_and_describe(tmp_path: Path) -> None:
    suite = build(write(tmp_path / "odb"))
    refs = suite.case_refs()
    assert [(r.case, r.system) for r in refs] == [("a.pdf_1", "saved"), ("b", "saved")]
    assert refs[0].labels == {"language": "english", "layout": "single_column"}
    assert refs[1].labels == {
        "language": "simplified_chinese",
        "special_issue": "fuzzy_scan, table_rotate",
    }
    digest = hashlib.sha256((tmp_path / "odb" / "OmniDocBench.json").read_bytes()).hexdigest()
    assert suite.scoring_id.startswith(
        f"{SCORING_ID}/r1;text=native;annotations={digest[:12]};cdm="
    )
    assert suite.scoring_id.endswith(";missing=error")
    described = suite.describe()
    assert described["listed_attributes"] == ["special_issue"]
    assert described["pages"] == 2 and described["tiers"] == []
    assert described["annotations"] == "odb/OmniDocBench.json"  # from the project root
    assert described["scorer"]["annotations_sha256"] == digest
    if isinstance(suite.cdm, str):  # no TeX Live here: the note names what to install
        assert any(n.startswith("formula_cdm and overall: not computed (") for n in suite.notes())
    else:
        assert not any("not computed" in n for n in suite.notes())


def test_cdm_off_is_a_note_and_part_of_the_scoring_id(tmp_path: Path) -> None:
    file = write(tmp_path / "odb")
    file.write_text(file.read_text("utf-8") + "cdm = false\n", encoding="utf-8")
    suite = build(file)
    assert "cdm=off;" in suite.scoring_id
    assert cdm_note("cdm = false in suite.toml") in suite.notes()
    file.write_text(file.read_text("utf-8").replace("cdm = false", 'cdm = "no"'), "utf-8")
    with pytest.raises(SuiteConfigError, match="cdm must be true or false"):
        build(file)


def test_base_pages_mark_the_tiers(tmp_path: Path) -> None:
    file = write(tmp_path / "odb")
    (tmp_path / "odb" / "v15.txt").write_text("a.pdf_1.jpg\n", encoding="utf-8")
    file.write_text(file.read_text("utf-8") + 'base_pages = "v15.txt"\n', encoding="utf-8")
    suite = build(file)
    assert [r.labels.get("tier") for r in suite.case_refs()] == ["base", "hard"]
    assert suite.describe()["tiers"] == ["base", "hard"]
    # OmniDocBench v1.5's own annotation file works too.
    (tmp_path / "odb" / "v15.json").write_text(json.dumps([PAGES[1]]), encoding="utf-8")
    file.write_text(file.read_text("utf-8").replace("v15.txt", "v15.json"), encoding="utf-8")
    assert [r.labels.get("tier") for r in build(file).case_refs()] == ["hard", "base"]


@pytest.mark.parametrize(
    ("content", "cause"),
    [
        ("{not json", "not JSON"),
        ("{}", "not a non-empty list of pages"),
        ("[]", "not a non-empty list of pages"),
        ("[1]", "page 1 of 1 is not an object"),
        ('[{"page_info": {"image_path": "a.jpg"}}]', "page 1 of 1 has no layout_dets list"),
        ('[{"layout_dets": [], "page_info": {}}]', "page 1 of 1 has no page_info.image_path"),
        (json.dumps([page("a.jpg"), page("a.jpg")]), "page 2 of 2 repeats the image 'a.jpg'"),
        (json.dumps([page("a.jpg"), page("a.png")]), "have one name ('a')"),
    ],
)
def test_a_file_not_in_the_format_is_a_load_error_naming_it(
    tmp_path: Path, content: str, cause: str
) -> None:
    file = write(tmp_path / "odb", content)
    with pytest.raises(SuiteConfigError) as info:
        build(file)
    message = str(info.value)
    assert "odb/OmniDocBench.json (annotations of" in message  # from the project's root
    assert cause in message
    assert "OmniDocBench's annotation format" in message


def test_annotations_and_images_paths_and_bad_keys(tmp_path: Path) -> None:
    folder = tmp_path / "odb"
    file = write(folder)
    (folder / "OmniDocBench.json").rename(tmp_path / "elsewhere.json")
    toml = file.read_text() + f'annotations = "{tmp_path / "elsewhere.json"}"\nimages = "pics"\n'
    file.write_text(toml)
    suite = build(file)
    assert suite.annotations == tmp_path / "elsewhere.json"
    assert suite.images == folder / "pics"
    file.write_text(toml.replace('images = "pics"', 'image = "pics"'))
    with pytest.raises(SuiteConfigError, match=r"unknown key\(s\) image"):
        build(file)
    file.write_text(toml.replace(str(tmp_path / "elsewhere.json"), "absent.json"))
    with pytest.raises(SuiteConfigError, match=r"absent\.json does not exist"):
        build(file)


def test_an_unknown_system_is_a_load_error(tmp_path: Path) -> None:
    file = write(tmp_path / "odb")
    file.write_text(file.read_text().replace('["saved"]', '["saved", "nobody"]'))
    with pytest.raises(SuiteConfigError, match=r"unknown system 'nobody'.*outputs/nobody/"):
        build(file)


def test_groups_follow_omnidocbench_page_split() -> None:
    # OmniDocBench's _build_page_attribute_labels: "key: value" for plain attributes, each
    # special issue by itself unless it names a table.
    labels = {"language": "english", "special_issue": "fuzzy_scan, table_rotate, watermark"}
    assert attribute_groups(labels, ["special_issue"]) == [
        "ALL",
        "language: english",
        "fuzzy_scan",
        "watermark",
    ]
    assert attribute_groups({"special_issue": "None"}, ["special_issue"]) == ["ALL", "None"]


def test_prediction_candidates_in_omnidocbench_order(tmp_path: Path) -> None:
    names = [p.name for p in prediction_candidates(tmp_path, "doc.pdf_3.jpg")]
    assert names == ["doc.pdf_3.md", "doc_3.mmd", "doc_3.md", "doc.pdf_3.jpg.md"]


# -- one test ---------------------------------------------------------------------------------


@pytest.mark.usefixtures("faked")
def test_a_saved_prediction_is_scored_and_its_row_carries_the_sums(tmp_path: Path) -> None:
    folder = tmp_path / "odb"
    suite = build(write(folder))
    (folder / "outputs" / "saved" / "a_1.mmd").write_text("text of a.pdf_1.jp", encoding="utf-8")
    result = evaluate(suite, CaseRef("a.pdf_1", "saved"))
    assert result.metrics == {"text_edit": pytest.approx(1 / 19)}
    assert result.counts == {"text_edit/page": {"matched": 1.0, "total": 19.0}}
    assert result.fingerprint["kind"] == "precomputed"
    assert result.details["prediction"].endswith("a_1.mmd")
    assert result.views["blocks"]["blocks"][0]["truth"] == "text of a.pdf_1.jpg"
    (stage,) = suite.plan(CaseRef("a.pdf_1", "saved")).stages  # reading the saved file
    assert isinstance(stage, CpuStage) and stage.saved_file and stage.fingerprint is None


def test_a_page_with_nothing_scored_says_so_in_a_note(tmp_path: Path) -> None:
    """Only a header (a category OmniDocBench ignores): no metric, and the row says why rather
    than passing silently (issue 37)."""
    header = {"category_type": "header", "text": "Journal of Things", "order": 1, "anno_id": 0}
    only = {
        "layout_dets": [header],
        "page_info": {"image_path": "h.jpg", "page_attribute": {}},
        "extra": {"relation": []},
    }
    folder = tmp_path / "odb"
    suite = build(write(folder, [only]))
    (folder / "outputs" / "saved" / "h.md").write_text("Some text.", encoding="utf-8")
    result = evaluate(suite, CaseRef("h", "saved"))
    assert result.metrics == {}
    assert any(n.startswith("no metric: the page has no text block") for n in result.notes)


@pytest.mark.usefixtures("faked")
def test_missing_and_empty_predictions(tmp_path: Path) -> None:
    folder = tmp_path / "odb"
    suite = build(write(folder))
    with pytest.raises(CaseInputError) as info:
        evaluate(suite, CaseRef("b", "saved"))
    assert "page b.png: missing prediction of saved" in str(info.value)
    assert "tried b.md, b.mmd, b.png.md" in str(info.value)
    (folder / "outputs" / "saved" / "b.md").write_text("  \n", encoding="utf-8")
    result = evaluate(suite, CaseRef("b", "saved"))
    assert any("b.md is empty: scored as an empty page" in n for n in result.notes)


def test_a_bad_page_is_an_error_of_its_test_naming_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_doceval.kinds.omnidocbench.scoring import OmniDocBenchInputError

    def broken(page: Mapping[str, Any], prediction: str, reference: Any = None) -> PageScore:
        raise OmniDocBenchInputError("block 3 has no category_type")

    monkeypatch.setattr(suite_module, "score_page", broken)
    folder = tmp_path / "odb"
    suite = build(write(folder))
    (folder / "outputs" / "saved" / "b.md").write_text("x", encoding="utf-8")
    with pytest.raises(OmniDocBenchInputError, match=r"page b.png \(OmniDocBench.json\): block 3"):
        evaluate(suite, CaseRef("b", "saved"))


@pytest.mark.usefixtures("faked")
def test_a_parser_reads_the_page_image_as_a_stage_and_evaluate_only_reads_it(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "odb"
    suite = build(write(folder, systems=("rapidocr",)))
    ref = CaseRef("b", "rapidocr")
    with pytest.raises(CaseInputError, match=r"page b.png: missing page image .*images/b.png"):
        suite.plan(ref)  # no image: the test says why
    image = png(folder / "images" / "b.png")
    plan = suite.plan(ref)
    (stage,) = plan.stages
    assert isinstance(stage, CpuStage) and plan.results == {"output": stage.key}
    parser = suite.sources["rapidocr"].parser
    assert stage.key == cache_key(parser.fingerprint(), file_digest(image))
    assert stage.call is parse_page_image and stage.args == ("rapidocr", parser, image)
    # A runner that was not given the stage: an error naming the case and the stage.
    with pytest.raises(StageNotPlanned, match=r"odb/b\[rapidocr\]: stage rapidocr on page b.png"):
        gather(plan, lambda key: None, lambda key: False, "odb/b[rapidocr]")
    result = scored(suite, ref, "text of b.png")
    assert result.metrics == {"text_edit": 0.0}
    assert result.cache_key == stage.key
    assert result.fingerprint == parser.fingerprint()
    silent = scored(suite, ref, "")
    assert "rapidocr returned no text for b.png: scored as an empty page" in silent.notes


def test_parse_page_image_gives_an_image_reader_the_image_and_others_a_pdf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = png(tmp_path / "p.png", 60, 20)
    read: list[bytes] = []

    def ocr(data: bytes) -> str:
        read.append(data)
        return "seen"

    monkeypatch.setattr("pytest_doceval.systems.rapidocr_ocr.ocr_image", ocr)
    from pytest_doceval.systems.rapidocr_ocr import RapidOCRParser

    suite_parser: Any = RapidOCRParser()
    assert parse_page_image("rapidocr", suite_parser, image) == "seen"
    assert read == [image.read_bytes()]

    class PdfOnly:
        name = "pdf-only"

        def fingerprint(self) -> dict[str, Any]:
            return {"system": self.name}

        def parse(self, pdf: Path) -> str:
            with pymupdf.open(pdf) as doc:
                return f"{doc.page_count} page, {len(doc[0].get_images())} image"

    assert parse_page_image("pdf-only", PdfOnly(), image) == "1 page, 1 image"
    (tmp_path / "junk.png").write_bytes(b"not an image")
    with pytest.raises(CaseInputError, match=r"junk\.png: not a page image"):
        image_as_pdf(tmp_path / "junk.png")


# -- analysis, HTML, paper ----------------------------------------------------------------------


def test_the_analysis_groups_pages_as_omnidocbench_and_counts_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[list[PageScore]] = []

    def board(pages: list[PageScore]) -> dict[str, float]:
        seen.append(list(pages))
        return {"text_edit": sum(p.metrics["text_edit"] for p in pages) / len(pages)}

    monkeypatch.setattr(suite_analysis, "leaderboard", board)

    def row(case: str, value: float, labels: dict[str, str], outcome: str = "passed") -> Any:
        counts = {"text_edit/page": {"matched": value * 10, "total": 10}}
        metrics = {"text_edit": value}
        return {"case": case, "system": "s", "outcome": outcome, "labels": labels,
                "metrics": metrics, "counts": counts}  # fmt: skip

    rows = [
        row("p1", 0.1, {"language": "english", "special_issue": "watermark"}),
        row("p2", 0.3, {"language": "english"}),
        row("p3", 0.5, {"language": "chinese", "special_issue": "watermark, table_x"}),
        row("p4", 0.0, {"language": "chinese"}, outcome="error"),
    ]
    meta = {"listed_attributes": ["special_issue"]}
    out = suite_analysis.LeaderboardAnalysis()(rows, meta, StatsConfig())["s"]
    assert out["pages"] == 3 and out["pages_not_scored"] == 1
    assert out["leaderboard"] == {"text_edit": pytest.approx(0.3)}
    assert out["by_attribute"] == {
        "language: chinese": {"pages": 1, "text_edit": pytest.approx(0.5)},
        "language: english": {"pages": 2, "text_edit": pytest.approx(0.2)},
        "watermark": {"pages": 2, "text_edit": pytest.approx(0.3)},
    }
    assert seen[0][0].counts == {"text_edit": (1.0, 10.0)}  # the sums come back from the row


def test_the_paper_table_is_the_leaderboard_layout() -> None:
    section = {
        "systems": ["m"],
        "scoring_id": SCORING_ID,
        "notes": [cdm_note("TeX Live's pdflatex is not installed")],
        "omnidocbench": {
            "m": {
                "pages": 18,
                "pages_not_scored": 1,
                "leaderboard": {
                    "text_edit": 0.12345,
                    "table_teds": 0.8,
                    "table_teds_s": 0.91234,
                    "reading_order_edit": 0.2,
                },
            }
        },
    }
    (table,) = leaderboard_table(section)
    assert table.columns[1:7] == [
        "Overall", "Text Edit", "Formula CDM", "Table TEDS", "Table TEDS-S", "Read Order Edit",
    ]  # fmt: skip
    assert [c.text for c in table.rows[0]] == [
        "m", "n/a", "0.123", "n/a", "80.00", "91.23", "0.200", "18",
    ]  # fmt: skip
    text = to_markdown(table)
    assert "formula\\_cdm and overall: not computed" in text
    assert "m: 1 page(s) not scored" in text
    assert leaderboard_table({"omnidocbench": {}}) == []


MARKS = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}")


@settings(deadline=None, max_examples=150)
@given(st.text("abc xyz", max_size=30), st.text("abc xyz", max_size=30))
def test_inline_diff_holds_both_sides(truth: str, prediction: str) -> None:
    diff = inline_diff(truth, prediction)
    assert MARKS.sub(lambda m: m.group(1) or "", diff) == truth
    assert MARKS.sub(lambda m: m.group(2) or "", diff) == prediction
