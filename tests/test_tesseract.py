"""The ``tesseract`` parser (issue 36): what it reads on pages whose text this file drew
(English and Korean), its fingerprint, and each way it cannot run -- the program or a
language's data missing (a skip saying what to install), an image it cannot read and a
Tesseract failure (an error naming the page) -- alone and end to end."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest

from pytest_doceval.errors import SystemRunError, SystemUnavailable
from pytest_doceval.metrics import character_errors
from pytest_doceval.systems import tesseract_ocr
from pytest_doceval.systems.tesseract_ocr import TesseractParser
from pytest_doceval.text.normalise import FAIR_V1
from tests.conftest import TRUTH, make_pdf, read_report, write_suite

INSTALLED = shutil.which("tesseract") is not None
needs_tesseract = pytest.mark.skipif(
    not INSTALLED,
    reason="tesseract is not installed: apt-get install tesseract-ocr tesseract-ocr-kor",
)
ENGLISH = "Tidal storage moves water between two basins.\nThe pumps run at night."
KOREAN = "도시 텃밭의 물 사용량을 한 해 동안 기록했다."


@pytest.fixture
def no_tesseract(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(tesseract_ocr, "PROGRAM", "tesseract-is-not-installed-here")
    tesseract_ocr.installation.cache_clear()
    yield
    tesseract_ocr.installation.cache_clear()


@needs_tesseract
def test_reads_english_at_the_default_settings(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "en.pdf", [ENGLISH, "Second page here."], fontsize=14)
    text = TesseractParser().parse(pdf)
    assert character_errors(FAIR_V1(ENGLISH), FAIR_V1(text.split("Second")[0])).rate < 0.05
    assert text.index("Tidal") < text.index("Second page")  # pages in order
    assert "\f" not in text


@needs_tesseract
def test_reads_korean_with_its_language_data(tmp_path: Path) -> None:
    pdf = tmp_path / "ko.pdf"
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_htmlbox(pymupdf.Rect(50, 50, 545, 400), f"<p style='font-size:18px'>{KOREAN}</p>")
    doc.save(pdf)
    text = TesseractParser({"lang": "kor", "psm": 4}).parse(pdf)
    assert character_errors(FAIR_V1(KOREAN), FAIR_V1(text)).rate < 0.2


@needs_tesseract
def test_fingerprint_names_the_engine_and_its_language_data() -> None:
    fingerprint = TesseractParser({"lang": "kor+eng"}).fingerprint()
    assert fingerprint["system"] == "tesseract"
    assert fingerprint["tesseract"][0].isdigit()  # "5.3.0"
    assert set(fingerprint["tessdata"]) == {"kor", "eng"}
    assert (fingerprint["lang"], fingerprint["psm"], fingerprint["dpi"]) == ("kor+eng", 3, 300)


def test_settings_are_checked() -> None:
    for bad, match in (({"dpi": 10}, "dpi"), ({"psm": 14}, "psm"), ({"lang": "eng kor"}, "lang")):
        with pytest.raises(ValueError, match=match):
            TesseractParser(bad)


def test_without_the_program_it_is_unavailable_saying_what_to_install(no_tesseract: None) -> None:
    with pytest.raises(SystemUnavailable, match="apt-get install tesseract-ocr tesseract-ocr-kor"):
        TesseractParser().fingerprint()


@needs_tesseract
def test_a_missing_language_is_unavailable_naming_its_package() -> None:
    with pytest.raises(SystemUnavailable, match=r"no 'fra' language data.*tesseract-ocr-fra"):
        TesseractParser({"lang": "eng+fra"}).fingerprint()


@needs_tesseract
def test_an_unreadable_image_and_a_failure_are_errors_naming_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    junk = tmp_path / "page.png"
    junk.write_bytes(b"/etc/passwd\n")  # Tesseract would read it as a list of file names
    with pytest.raises(SystemRunError, match=r"cannot read .*page\.png: not an image"):
        TesseractParser().parse_image(junk)
    truncated = tmp_path / "cut.png"
    truncated.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)
    with pytest.raises(SystemRunError, match=r"tesseract failed on .*cut\.png \(exit status"):
        TesseractParser().parse_image(truncated)


def project(pytester: pytest.Pytester) -> Path:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    cases = {"c0": {"truth": TRUTH, "pdf": ENGLISH}}
    return write_suite(pytester.path, "ocr", cases, systems=["pymupdf", "tesseract"], gates="")


def test_without_tesseract_its_tests_skip_and_its_metrics_are_absent(
    pytester: pytest.Pytester, no_tesseract: None
) -> None:
    project(pytester)
    result = pytester.runpytest("--doceval", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*tesseract is not installed*apt-get install tesseract-ocr*"])
    section = read_report(pytester.path / "doceval-report.json")["suites"]["ocr"]
    assert "tesseract" not in section["aggregates"]


@needs_tesseract
def test_tesseract_end_to_end(pytester: pytest.Pytester) -> None:
    project(pytester)
    pytester.runpytest("--doceval").assert_outcomes(passed=2)
    section = read_report(pytester.path / "doceval-report.json")["suites"]["ocr"]
    row = next(r for r in section["results"] if r["system"] == "tesseract")
    assert row["metrics"]["cer"] < 0.5
    assert row["metrics"]["cpu_seconds"] > 0  # the OCR's own process counts: see cost.py
    assert row["fingerprint"]["tesseract"]
    assert row["metrics"]["peak_rss_mib"] > 0  # Tesseract's own process, or the pool's


@pytest.mark.parametrize(("settings", "noted"), [("", True), ('lang = "kor+eng"\n', False)])
def test_a_korean_suite_says_when_tesseract_does_not_read_korean(
    pytester: pytest.Pytester, settings: str, noted: bool
) -> None:
    korean = "도시 텃밭의 물 사용"
    write_suite(
        pytester.path,
        "korean",
        {"c": {"truth": korean, "saved": korean}},
        systems=["saved", "tesseract"],
        extra=f'language = "ko"\n\n[systems.tesseract]\n{settings}',
        gates="",
    )
    pytester.runpytest("--doceval", "-k", "saved").assert_outcomes(passed=1)
    notes = read_report(pytester.path / "doceval-report.json")["suites"]["korean"]["notes"]
    warned = [n for n in notes if n.startswith("tesseract does not read Korean (it reads 'eng'")]
    assert bool(warned) == noted, notes
