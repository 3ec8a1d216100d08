"""Korean: Kiwi morphemes for WER, NFC before anything, and the OCR caveat in the report."""

from __future__ import annotations

import unicodedata

import pytest

from pytest_doceval.kinds.documents.suite import score_document
from pytest_doceval.text.tokenise import (
    korean_tokens,
    mixed_tokens,
    tokeniser_for,
    whitespace_tokens,
)
from tests.conftest import read_report, write_suite

pytest_plugins = ["pytester"]

KOREAN = "# 서론\n\n문서 파서는 한국어 문서를 정확하게 읽어야 한다.\n\n- 첫째 항목\n"


def test_korean_tokens_are_morphemes() -> None:
    tokens = korean_tokens("학생입니다")
    assert tokens[0] == "학생" and len(tokens) >= 2  # stem and copula split apart


def test_nfd_copy_tokenises_like_nfc() -> None:
    nfd = unicodedata.normalize("NFD", KOREAN)
    assert nfd != KOREAN
    assert korean_tokens(nfd) == korean_tokens(KOREAN)


def test_nfd_copy_scores_zero() -> None:
    nfd = unicodedata.normalize("NFD", KOREAN)
    for language in ("ko", "mixed"):
        score = score_document(KOREAN, nfd, language=language, normalization="fair-v1")
        assert score.metrics["cer"] == 0.0
        assert score.metrics["wer"] == 0.0
        assert score.metrics["cer_raw"] == 0.0
        assert score.metrics["structure_f1"] == 1.0


def test_one_wrong_particle_costs_one_morpheme_not_a_word() -> None:
    truth = "학생이 학교에 갔다"
    output = "학생은 학교에 갔다"
    ko = score_document(truth, output, language="ko", normalization="fair-v1")
    en = score_document(truth, output, language="en", normalization="fair-v1")
    ko_ref = len(korean_tokens(truth))
    assert ko.counts["wer"]["substitutions"] == 1
    assert ko.metrics["wer"] == pytest.approx(1 / ko_ref)
    assert en.metrics["wer"] == pytest.approx(1 / 3)  # whitespace: the whole word is wrong


def test_mixed_splits_only_hangul_tokens() -> None:
    assert mixed_tokens("PDF 파서는 fast") == ["PDF", *korean_tokens("파서는"), "fast"]
    assert whitespace_tokens("a  b\nc") == ["a", "b", "c"]
    with pytest.raises(KeyError, match="expected one of en, ko, mixed"):
        tokeniser_for("fr")


def test_korean_suite_reports_the_rapidocr_caveat(pytester: pytest.Pytester) -> None:
    write_suite(
        pytester.path,
        "korean",
        {"c": {"truth": KOREAN, "saved": KOREAN}},
        systems=["saved", "rapidocr"],
        extra='language = "ko"\n',
        gates="",
    )
    (pytester.path / "cases" / "korean" / "c" / "outputs" / "rapidocr.md").write_text("x")
    result = pytester.runpytest("--doceval", "-k", "saved")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*note: rapidocr does not read Korean*"])
    report = read_report(pytester.path / "doceval-report.json")
    assert any("does not read Korean" in n for n in report["suites"]["korean"]["notes"])
    assert report["suites"]["korean"]["language"] == "ko"
