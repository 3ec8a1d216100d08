"""The example exam suite's generator (tools/make_exam_questions.py): what it renders is a
valid suite, and each image shows exactly its oracle text."""

from __future__ import annotations

import importlib.util
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from types import ModuleType

import pymupdf
import pytest

from pytest_doceval.kinds.exam.answers import parse_robust
from pytest_doceval.kinds.exam.questions import load_questions

SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "make_exam_questions.py"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_exam_questions", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


def test_the_script_writes_a_valid_suite(tool: ModuleType, tmp_path: Path) -> None:
    assert tool.main([str(tmp_path), "--dpi", "72"]) == 0
    questions = load_questions(tmp_path)
    assert len(questions) == 12
    assert Counter(q.nation for q in questions) == {"Korea": 4, "Canada": 4, "Australia": 4}
    assert set(Counter(q.task for q in questions)) == {"civics", "maths", "geography"}
    assert {q.choices for q in questions} == {4, 5}
    assert {q.extra["language"] for q in questions} == {"ko", "en"}
    assert sum(q.has_oracle for q in questions) == 9
    assert {q.choices for q in questions if q.extra["language"] == "ko"} == {4, 5}
    # The answer keys are spread over the options, not all "3".
    assert len({q.answer for q in questions}) >= 4
    for q in questions:
        png = q.read_image(tmp_path)
        pix = pymupdf.Pixmap(png)  # type: ignore[no-untyped-call]
        assert pix.width == 480 and 100 < pix.height < 480  # 72 dpi: one pixel per point


def test_each_image_shows_its_oracle_text(tool: ModuleType) -> None:
    for example in tool.EXAMPLES:
        doc, clip = tool.layout_question(example)
        try:
            page = doc[0]
            shown = page.get_text("text", clip=clip)
            fonts = {font[3] for font in page.get_fonts()}
        finally:
            doc.close()
        # NFKC: the renderer sets "fi" as a ligature, which text extraction returns as "ﬁ".
        words = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", shown)).strip()
        for line in example.text().splitlines():
            assert re.sub(r"\s+", " ", unicodedata.normalize("NFKC", line)) in words, example.id
        if example.language == "ko":
            # Hangul comes from PyMuPDF's built-in CJK fallback font, not from tofu boxes.
            assert any("Fallback" in f or "CJK" in f for f in fonts), fonts


def test_the_maths_keys_are_right(tool: ModuleType) -> None:
    worked = {
        "kr-maths-01": "7",  # 3x - 7 = 14
        "ca-maths-01": f"{900 // 45} minutes",
        "au-maths-01": str(240 * 15 // 100),
        "au-maths-02": f"{int((12**2 + 5**2) ** 0.5)} m",
    }
    for example in tool.EXAMPLES:
        if example.id in worked:
            key = example.answer if isinstance(example.answer, int) else None
            if key is None:
                key = parse_robust(str(example.answer), len(example.options)).answer
            assert key is not None
            assert example.options[key - 1] == worked[example.id]
