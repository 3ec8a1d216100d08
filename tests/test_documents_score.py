"""score_document against independent computations, and the whole pipeline on real LaTeX."""

from __future__ import annotations

import shutil
import unicodedata

import jiwer
import pytest

from pytest_doceval.kinds.documents.suite import score_document
from pytest_doceval.text.normalise import FAIR_V1
from tests.conftest import REALDATA, read_report

pytest_plugins = ["pytester"]

TRUTH = """# Tidal storage

Caverns store energy [@harwick2019] with efficiency $\\eta$.[^1]

| Site | Volume |
|------|-------:|
| Kelda | 42000 |

::: thebibliography
R. Harwick. Pairing tidal arrays. 2019.
:::

[^1]: Adiabatic designs recover heat.
"""
PDF_TEXT = """Tidal storage
Caverns store energy [1] with efficiency η.1
Site Volume
Kelda 42000
References
[1] R. Harwick. Pairing tidal arrays. 2019.
"""


def _rate(reference: str, hypothesis: str) -> float:
    out = jiwer.process_characters(reference, hypothesis)
    return (out.substitutions + out.deletions + out.insertions) / len(reference)


def test_cer_and_body_cer_from_first_principles() -> None:
    score = score_document(TRUTH, PDF_TEXT, language="en", normalization="fair-v1")
    truth_norm, pdf_norm = FAIR_V1(TRUTH), FAIR_V1(PDF_TEXT)
    assert score.metrics["cer"] == pytest.approx(_rate(truth_norm, pdf_norm))
    # Body: each side cut at its own marker (the div, the heading) before normalising.
    truth_body = FAIR_V1(TRUTH[: TRUTH.index("::: thebibliography")])
    pdf_body = FAIR_V1(PDF_TEXT[: PDF_TEXT.index("References")])
    assert score.metrics["body_cer"] == pytest.approx(_rate(truth_body, pdf_body))
    assert score.metrics["refs_delta"] == pytest.approx(
        score.metrics["cer"] - score.metrics["body_cer"]
    )
    nfc = unicodedata.normalize
    assert score.metrics["cer_raw"] == pytest.approx(
        _rate(nfc("NFC", TRUTH).strip(), nfc("NFC", PDF_TEXT).strip())
    )
    words = jiwer.process_words(truth_norm, pdf_norm)
    assert score.metrics["wer"] == pytest.approx(jiwer.wer(truth_norm, pdf_norm))
    assert score.counts["wer"]["reference_length"] == len(truth_norm.split())
    assert score.counts["wer"]["substitutions"] == words.substitutions


def test_fair_normalisation_is_what_makes_the_numbers_fair() -> None:
    score = score_document(TRUTH, PDF_TEXT, language="en", normalization="fair-v1")
    # What remains is only what the two sides really disagree on: the inline η the truth
    # wrote as math and the footnote mark "1" glued to it; far below the raw comparison.
    assert score.metrics["body_cer"] < 0.05
    assert score.metrics["cer_raw"] > 3 * score.metrics["cer"]


def test_a_blank_page_is_scored() -> None:
    """Empty truth and empty output: perfect. An output on a blank page counts its insertions
    (jiwer's rule for an empty reference), and the counts stay exact."""
    import jiwer

    blank = score_document("", "", language="en", normalization="fair-v1")
    assert blank.metrics["cer"] == blank.metrics["wer"] == blank.metrics["body_cer"] == 0.0
    assert blank.metrics["structure_f1"] == 1.0
    stray = score_document("$$x$$\n", "12", language="en", normalization="fair-v1")
    assert stray.counts["cer"]["reference_length"] == 0
    assert stray.counts["cer"]["insertions"] == 2
    assert stray.metrics["cer"] == pytest.approx(jiwer.cer("", "12")) == 2.0


@pytest.mark.slow
@pytest.mark.skipif(
    not (REALDATA / "latex" / "technote.tex").is_file()
    or not shutil.which("pdflatex")
    or not shutil.which("pandoc"),
    reason="needs ../shared/realdata and pdflatex + pandoc",
)
def test_real_latex_document_end_to_end(pytester: pytest.Pytester) -> None:
    """A real third-party LaTeX document: build the case, run the parsers, read the report."""
    from pytest_doceval.cli import main as doceval

    case = pytester.path / "cases" / "real" / "technote"
    assert doceval(["build-case", str(REALDATA / "latex" / "technote.tex"), str(case)]) == 0
    (pytester.path / "cases" / "real" / "suite.toml").write_text(
        '[suite]\nkind = "documents"\nsystems = ["pymupdf", "pymupdf4llm"]\n'
    )
    result = pytester.runpytest("--doceval", "--doceval-html=")
    result.assert_outcomes(passed=2)
    rows = read_report(pytester.path / "doceval-report.json")["suites"]["real"]["results"]
    for row in rows:
        metrics = row["metrics"]
        assert 0.0 <= metrics["cer"] < 0.5, (row["system"], metrics["cer"])
        assert metrics["cer"] <= metrics["cer_raw"]
        counts = row["counts"]["cer"]
        assert (
            counts["hits"] + counts["substitutions"] + counts["deletions"]
            == counts["reference_length"]
        )
