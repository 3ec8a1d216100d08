"""Tests of `pytest_doceval.cli.build_case`: LaTeX, markdown and image-only case building."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pymupdf
import pytest

from pytest_doceval.cli import main as doceval
from pytest_doceval.cli.build_case import (
    BuiltCase,
    CaseBuildError,
    build_case_from_latex,
    build_case_from_markdown,
    make_image_only_pdf,
    markdown_to_html,
)
from tests.conftest import REALDATA

HAVE_LATEX = shutil.which("pdflatex") is not None and shutil.which("pandoc") is not None
needs_latex = pytest.mark.skipif(not HAVE_LATEX, reason="pdflatex and pandoc are not on PATH")

REPO = Path(__file__).resolve().parents[1]


SMALL_TEX = r"""\documentclass{article}
\usepackage{amsmath}
\begin{document}
\section{Harbour tides}
The quay gauge logged the spring tide every ten minutes~\cite{gauge}.
A footnote follows\footnote{Readings before dawn were taken by hand.} and $h = a \sin t$.
\begin{equation}
h(t) = a \sin(\omega t)
\end{equation}
\begin{tabular}{lr}
\hline
Station & Height \\
\hline
North quay & 4.2 \\
South quay & 3.9 \\
\hline
\end{tabular}
\begin{thebibliography}{9}
\bibitem{gauge} P. Keel. Harbour gauges. Tide Press, 2001.
\end{thebibliography}
\end{document}
"""


def _pdf_text(pdf: Path) -> str:
    with pymupdf.open(pdf) as doc:
        return "\n".join(page.get_text() for page in doc)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- LaTeX


@needs_latex
def test_latex_case_pdf_and_truth(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    tex = _write(tmp_path / "src" / "harbour.tex", SMALL_TEX)
    case = build_case_from_latex(tex, tmp_path / "case")

    assert isinstance(case, BuiltCase)
    assert case.directory == tmp_path / "case"
    assert case.pdf == tmp_path / "case" / "document.pdf"
    assert case.truth == tmp_path / "case" / "truth.md"
    assert case.pages == 1
    assert (tmp_path / "case" / "source.tex").read_text("utf-8") == SMALL_TEX

    text = _pdf_text(case.pdf)
    assert "The quay gauge logged the spring tide every ten minutes [1]." in text
    assert "References" in text  # thebibliography needs no bibtex

    truth = case.truth.read_text("utf-8")
    assert re.search(r"^# Harbour tides$", truth, re.MULTILINE)
    assert re.search(r"^\| North quay +\| +4\.2 \|$", truth, re.MULTILINE)
    assert re.search(r"^\[\^1\]: Readings before dawn were taken by hand\.$", truth, re.MULTILINE)
    assert "[@gauge]" in truth
    assert "$h = a \\sin t$" in truth
    # --wrap=none: the first paragraph is one line.
    assert re.search(r"^The quay gauge logged .*A footnote follows\[\^1\]", truth, re.MULTILINE)


@needs_latex
def test_latex_truth_shows_what_the_pdf_shows(tmp_path: Path) -> None:
    tex = SMALL_TEX.replace(
        "\\begin{document}",
        "\\title{Harbour Notes}\\author{Ada Quay}\\date{}\n\\begin{document}\n\\maketitle",
    ).replace("every ten minutes", "every ten minutes--or so")
    case = build_case_from_latex(_write(tmp_path / "t.tex", tex), tmp_path / "case")
    truth = case.truth.read_text("utf-8")
    # \maketitle's title and author lead the truth, as they lead the page.
    assert truth.startswith("# Harbour Notes\n\nAda Quay\n")
    assert "minutes–or so" in truth  # a real en dash (the PDF's), not pandoc's "--"
    # thebibliography's width argument {9} is not content.
    assert re.search(r"^::: thebibliography\nP\. Keel\.", truth, re.MULTILINE)
    assert "Harbour Notes" in _pdf_text(case.pdf)


@needs_latex
def test_latex_rebuild_in_place_is_byte_identical(tmp_path: Path) -> None:
    first = build_case_from_latex(_write(tmp_path / "a.tex", SMALL_TEX), tmp_path / "case")
    pdf_bytes = first.pdf.read_bytes()
    # Rebuilding from the case's own source.tex (the way example cases are refreshed).
    second = build_case_from_latex(tmp_path / "case" / "source.tex", tmp_path / "case")
    assert second.pdf.read_bytes() == pdf_bytes
    assert second.truth.read_text("utf-8") == first.truth.read_text("utf-8")


@needs_latex
def test_latex_keep_source_false(tmp_path: Path) -> None:
    case = build_case_from_latex(
        _write(tmp_path / "a.tex", SMALL_TEX), tmp_path / "case", keep_source=False
    )
    assert sorted(p.name for p in case.directory.iterdir()) == ["document.pdf", "truth.md"]
    umask = os.umask(0)
    os.umask(umask)
    for path in (case.pdf, case.truth):  # not mkstemp's 0600
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask


@needs_latex
def test_latex_input_and_bibtex_next_to_source(tmp_path: Path) -> None:
    if shutil.which("bibtex") is None:
        pytest.skip("bibtex is not on PATH")
    src = tmp_path / "src"
    src.mkdir()
    _write(src / "part.tex", "The included part names the lighthouse keeper.\n")
    _write(
        src / "refs.bib",
        "@book{keeper, author = {Ada Lamp}, title = {Lights of the North Sea},"
        " publisher = {Beacon}, year = {1999}}\n",
    )
    tex = _write(
        src / "main.tex",
        "\\documentclass{article}\n\\begin{document}\n\\section{Lights}\n"
        "\\input{part}\nSee~\\cite{keeper}.\n"
        "\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n",
    )
    case = build_case_from_latex(tex, tmp_path / "case")
    text = _pdf_text(case.pdf)
    assert "lighthouse keeper" in text
    assert "See [1]." in text
    assert "Lights of the North Sea" in text  # bibtex ran and the .bbl was read
    truth = case.truth.read_text("utf-8")
    assert "lighthouse keeper" in truth  # pandoc resolved \input next to the source
    assert "[@keeper]" in truth


@needs_latex
def test_latex_compile_error_names_file_and_error_line(tmp_path: Path) -> None:
    tex = _write(
        tmp_path / "broken.tex",
        "\\documentclass{article}\n\\begin{document}\nFine text.\n"
        "\\frobnicate{x}\n\\end{document}\n",
    )
    with pytest.raises(CaseBuildError) as info:
        build_case_from_latex(tex, tmp_path / "case")
    message = str(info.value)
    assert str(tex) in message
    assert "pdflatex failed" in message
    assert "! Undefined control sequence." in message
    assert "l.4 \\frobnicate" in message
    assert not (tmp_path / "case" / "document.pdf").exists()


@needs_latex
def test_latex_timeout_kills_the_build(tmp_path: Path) -> None:
    tex = _write(
        tmp_path / "loop.tex",
        "\\documentclass{article}\n\\begin{document}\n\\def\\spin{\\spin}\\spin\n\\end{document}\n",
    )
    start = time.monotonic()
    with pytest.raises(CaseBuildError, match=r"loop\.tex: pdflatex timed out"):
        build_case_from_latex(tex, tmp_path / "case", timeout=1.5)
    assert time.monotonic() - start < 15


def test_latex_missing_input(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.tex"
    with pytest.raises(CaseBuildError, match=r"nowhere\.tex: LaTeX source not found"):
        build_case_from_latex(missing, tmp_path / "case")


def test_latex_missing_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tex = _write(tmp_path / "a.tex", SMALL_TEX)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(CaseBuildError) as info:
        build_case_from_latex(tex, tmp_path / "case")
    assert str(info.value) == f"{tex}: pdflatex not found: apt-get install texlive-latex-base"


# --------------------------------------------------------------------------- markdown

KOREAN = "한국어 문단입니다. 조수 간만의 차는 서해안에서 가장 크다."

MARKDOWN = f"""# Tide tables

The harbour office prints **two** tables each month.

{KOREAN}

- high water
- low water

1. read the gauge
2. write the time

| Port | High | Low |
|:-----|-----:|----:|
| Incheon | 8.1 | 0.4 |
| Busan | 1.2 | 0.1 |
"""


def test_markdown_case_with_hangul(tmp_path: Path) -> None:
    case = build_case_from_markdown(MARKDOWN, tmp_path / "case", title="Tides")
    assert case.pages == 1
    assert case.truth.read_text("utf-8") == MARKDOWN
    text = _pdf_text(case.pdf)
    assert _squash(KOREAN) in _squash(text)
    for expected in ("Tide tables", "two tables", "high water", "Incheon", "8.1", "0.4"):
        assert expected in text
    assert "**" not in text and "|" not in text
    with pymupdf.open(case.pdf) as doc:
        assert doc.metadata["title"] == "Tides"
        assert doc[0].rect == pymupdf.paper_rect("a4")


def test_a_case_from_markdown_keeps_its_source(tmp_path: Path) -> None:
    """As a case built from LaTeX keeps source.tex: the markdown the PDF was laid out from
    stays beside it, byte for byte, when truth.md is corrected later; the command writes it."""
    source = tmp_path / "notes.md"
    source.write_text(MARKDOWN, encoding="utf-8")
    assert doceval(["build-case", str(source), str(tmp_path / "case")]) == 0
    assert (tmp_path / "case" / "source.md").read_bytes() == source.read_bytes()
    assert sorted(p.name for p in (tmp_path / "case").iterdir()) == [
        "document.pdf",
        "source.md",
        "truth.md",
    ]
    build_case_from_markdown(MARKDOWN, tmp_path / "bare", keep_source=False)
    assert not (tmp_path / "bare" / "source.md").exists()


def test_markdown_long_document_flows_over_pages(tmp_path: Path) -> None:
    paragraph = "A sentence about tide gauges and harbour walls, repeated to fill the page. " * 8
    markdown = "\n\n".join(f"## Part {i}\n\n{paragraph}" for i in range(12)) + "\n"
    case = build_case_from_markdown(markdown, tmp_path / "case")
    assert case.pages > 1
    assert "Part 11" in _pdf_text(case.pdf)


def test_markdown_empty_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CaseBuildError, match="markdown is empty"):
        build_case_from_markdown(" \n", tmp_path / "case")


def test_markdown_to_html_subset() -> None:
    html = markdown_to_html(
        "## Title ##\nline one\nline two with **bold** and <tag> & `x<y`\n\n"
        "-   loose\n\n-   items\n\n3. three\n4. four\n\n"
        "| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 |\n\n```\n<raw> **kept**\n```\n"
    )
    assert "<h2>Title</h2>" in html
    assert (
        "<p>line one line two with <b>bold</b> and &lt;tag&gt; &amp; <code>x&lt;y</code></p>"
        in html
    )
    assert "<ul><li>loose</li><li>items</li></ul>" in html
    assert '<ol start="3"><li>three</li><li>four</li></ol>' in html
    assert '<th style="text-align: center">b</th>' in html
    assert '<th style="text-align: right">c</th>' in html
    assert '<td style="text-align: right"></td>' in html  # short rows are padded
    assert "<pre>&lt;raw&gt; **kept**</pre>" in html


# --------------------------------------------------------------------------- image-only


def test_make_image_only_pdf(tmp_path: Path) -> None:
    paragraph = "Scanned pages keep their look but lose their text layer entirely. " * 10
    markdown = "\n\n".join(f"# Page part {i}\n\n{paragraph}" for i in range(8))
    source = build_case_from_markdown(markdown, tmp_path / "case")
    assert source.pages >= 2
    out = make_image_only_pdf(source.pdf, tmp_path / "scan" / "document.pdf", dpi=72)
    assert out == tmp_path / "scan" / "document.pdf"
    with pymupdf.open(source.pdf) as original, pymupdf.open(out) as scan:
        assert scan.page_count == original.page_count
        for page, scanned in zip(original, scan, strict=True):
            assert scanned.get_text().strip() == ""
            assert scanned.get_fonts() == []
            assert len(scanned.get_images()) == 1
            assert scanned.rect == page.rect


def test_make_image_only_pdf_in_place(tmp_path: Path) -> None:
    case = build_case_from_markdown("# One page\n\nSome text.\n", tmp_path / "case")
    make_image_only_pdf(case.pdf, case.pdf, dpi=72)
    assert _pdf_text(case.pdf).strip() == ""


def test_make_image_only_pdf_errors(tmp_path: Path) -> None:
    with pytest.raises(CaseBuildError, match=r"missing\.pdf: PDF not found"):
        make_image_only_pdf(tmp_path / "missing.pdf", tmp_path / "out.pdf")
    junk = _write(tmp_path / "junk.pdf", "this is not a PDF")
    with pytest.raises(CaseBuildError, match=r"junk\.pdf: not a readable PDF"):
        make_image_only_pdf(junk, tmp_path / "out.pdf")
    assert not (tmp_path / "out.pdf").exists()


@needs_latex
def test_doceval_build_case_from_latex(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tex = _write(tmp_path / "harbour.tex", SMALL_TEX)
    assert doceval(["build-case", str(tex), str(tmp_path / "case"), "--image-only"]) == 0
    assert "1 page(s), image-only PDF + truth.md" in capsys.readouterr().out
    assert _pdf_text(tmp_path / "case" / "document.pdf").strip() == ""
    assert "# Harbour tides" in (tmp_path / "case" / "truth.md").read_text("utf-8")


# --------------------------------------------------------------------------- example cases

EXAMPLE_CASES = sorted(
    p for suite in ("papers", "scans") for p in (REPO / "cases" / suite).glob("*/") if p.is_dir()
)


@pytest.mark.parametrize("case", EXAMPLE_CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_case_is_complete(case: Path) -> None:
    for name in ("document.pdf", "truth.md", "source.tex"):
        assert (case / name).is_file(), f"{case.name}: {name} missing"
    truth = (case / "truth.md").read_text("utf-8")
    assert truth.startswith("# ")
    text = _pdf_text(case / "document.pdf")
    if case.parent.name == "scans":
        assert text.strip() == ""  # only an OCR engine can read it
    else:
        assert re.search(r"^\| .+ \|$", truth, re.MULTILINE)  # a pipe-table row
        assert re.search(r"^\[\^1\]: ", truth, re.MULTILINE)
        assert "::: thebibliography" in truth and "[@" in truth
        assert "References" in text and "[1]" in text


# --------------------------------------------------------------------------- real LaTeX

REAL_DOCUMENTS = {
    "technote.tex": "# Introduction",
    "subeqn.tex": "Prime equation numbers",
    "modguide.tex": "",
    "psnfss2e.tex": "",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REAL_DOCUMENTS))
def test_real_latex_documents(name: str, tmp_path: Path) -> None:
    tex = REALDATA / "latex" / name
    if not tex.is_file():
        pytest.skip(f"{tex} is absent (set DOCEVAL_REALDATA)")
    if not HAVE_LATEX:
        pytest.skip("pdflatex and pandoc are not on PATH")
    case = build_case_from_latex(tex, tmp_path / name.removesuffix(".tex"))
    assert case.pages >= 1
    assert len(_pdf_text(case.pdf).strip()) > 500
    truth = case.truth.read_text("utf-8")
    assert len(truth.strip()) > 500
    assert REAL_DOCUMENTS[name] in truth


SPANS_TEX = r"""\documentclass{article}
\begin{document}
\begin{tabular}{|l|c|c|}
\hline
 & \multicolumn{2}{c|}{Morning} \\
\hline
Gannet & 06:10 & 09:40 \\
\hline
\end{tabular}

\begin{tabular}{ll}
plain & table \\
\end{tabular}
\end{document}
"""


@needs_latex
def test_latex_merged_cells_become_an_html_table(tmp_path: Path) -> None:
    """pandoc's pipe tables would flatten the span into an empty cell: the filter writes that
    table as HTML, and leaves a table without spans a pipe table. (\\multicolumn is LaTeX's own;
    \\multirow needs texlive-latex-extra, which CI does not install: the committed
    cases/tables/merged-cells covers rowspan.)"""
    from pytest_doceval.kinds.documents.table_trees import read_tables

    source = tmp_path / "spans.tex"
    source.write_text(SPANS_TEX, encoding="utf-8")
    built = build_case_from_latex(source, tmp_path / "case")
    truth = built.truth.read_text("utf-8")
    assert "```" not in truth and "{=html}" not in truth
    merged, plain = read_tables(truth).tables
    assert (merged.form, plain.form) == ("html", "pipe")
    cells = [(c.text, c.colspan, c.rowspan) for row in merged.rows for c in row]
    assert cells == [
        ("", 1, 1),
        ("Morning", 2, 1),
        ("Gannet", 1, 1),
        ("06:10", 1, 1),
        ("09:40", 1, 1),
    ]
