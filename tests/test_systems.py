"""The built-in parsers on real PDFs (the registry users extend: test_systems_registry.py)."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from pytest_doceval.errors import CaseInputError
from pytest_doceval.systems.pdf import open_pdf
from pytest_doceval.systems.pymupdf_text import PyMuPDFText, text_flags
from tests.conftest import make_pdf

CASES = Path(__file__).resolve().parents[1] / "cases"
TIDAL = CASES / "papers" / "tidal-storage" / "document.pdf"
SCAN = CASES / "scans" / "allotment-water"


def test_pymupdf_expands_ligatures() -> None:
    assert not text_flags() & pymupdf.TEXT_PRESERVE_LIGATURES


def test_pymupdf_text_pages_in_order(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "d.pdf", ["first page words", "second page words"])
    text = PyMuPDFText().parse(pdf)
    assert text.index("first page") < text.index("second page")


@pytest.mark.skipif(not TIDAL.is_file(), reason="example case not built")
def test_pymupdf_merges_tables_once() -> None:
    text = PyMuPDFText().parse(TIDAL)
    rows = [line for line in text.splitlines() if line.startswith("|") and "Kelda Sound" in line]
    assert len(rows) == 1  # as a markdown table row ...
    assert text.count("Kelda Sound") == 1  # ... and not again as loose text


KOREAN = CASES / "korean" / "allotment-water-ko" / "document.pdf"


@pytest.mark.skipif(not KOREAN.is_file(), reason="example case not built")
def test_pymupdf_table_with_external_header_invents_nothing() -> None:
    text = PyMuPDFText().parse(KOREAN)
    assert "Col2" not in text
    assert text.count("결과") == 1  # the heading above the table, emitted once
    assert "|저장통 있음|17|310|" in text


def test_pymupdf_without_tables(tmp_path: Path) -> None:
    parser = PyMuPDFText({"tables": False})
    assert parser.fingerprint()["tables"] is False
    with pytest.raises(ValueError, match=r"unknown pymupdf setting\(s\): colour"):
        PyMuPDFText({"colour": 1})


@pytest.mark.slow
@pytest.mark.skipif(not SCAN.is_dir(), reason="example case not built")
def test_rapidocr_reads_the_scan() -> None:
    from pytest_doceval.metrics import character_errors
    from pytest_doceval.systems.rapidocr_ocr import RapidOCRParser
    from pytest_doceval.text.normalise import FAIR_V1

    parser = RapidOCRParser({"dpi": 150})
    text = parser.parse(SCAN / "document.pdf")
    truth = (SCAN / "truth.md").read_text(encoding="utf-8")
    assert character_errors(FAIR_V1(truth), FAIR_V1(text)).rate < 0.1
    assert PyMuPDFText().parse(SCAN / "document.pdf") == ""  # no text layer at all


def test_rapidocr_settings_are_checked() -> None:
    from pytest_doceval.systems.rapidocr_ocr import RapidOCRParser

    assert RapidOCRParser({}).fingerprint()["dpi"] == 300
    with pytest.raises(ValueError, match="dpi"):
        RapidOCRParser({"dpi": 10})


@pytest.mark.skipif(not TIDAL.is_file(), reason="example case not built")
def test_pymupdf4llm_emits_markdown_structure() -> None:
    from pytest_doceval.systems.pymupdf4llm_md import PyMuPDF4LLM

    text = PyMuPDF4LLM().parse(TIDAL)
    assert any(line.startswith("#") for line in text.splitlines())
    assert any(line.startswith("|") for line in text.splitlines())


def test_open_pdf_refuses_bad_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.4 nonsense")
    with pytest.raises(CaseInputError, match=r"bad\.pdf: not a readable PDF"):
        open_pdf(bad)
    with pytest.raises(CaseInputError, match=r"missing\.pdf: file not found"):
        open_pdf(tmp_path / "missing.pdf")
    enc = tmp_path / "enc.pdf"
    doc = pymupdf.open()
    doc.new_page()
    doc.save(enc, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="u", owner_pw="o")
    with pytest.raises(CaseInputError, match="encrypted"):
        open_pdf(enc)


@pytest.mark.skipif(not SCAN.is_dir(), reason="example case not built")
def test_pymupdf4llm_does_not_ocr_unless_asked(capfd: pytest.CaptureFixture[str]) -> None:
    """A textless page gives no text, and nothing is printed into the run's output; OCR is a
    setting that changes the fingerprint."""
    from pytest_doceval.systems.pymupdf4llm_md import PyMuPDF4LLM

    assert PyMuPDF4LLM().parse(SCAN / "document.pdf") == ""
    out, err = capfd.readouterr()
    assert "ocr" not in (out + err).lower()
    assert PyMuPDF4LLM({"ocr": True}).fingerprint() != PyMuPDF4LLM().fingerprint()
    with pytest.raises(ValueError, match="ocr = 'yes' is not true or false"):
        PyMuPDF4LLM({"ocr": "yes"})
