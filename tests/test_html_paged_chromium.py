"""The HTML report at any size, in real headless Chromium (skipped without /usr/bin/chromium):
a page too big to hold its data keeps it in a folder beside it, loaded on demand with
``<script src>`` (``fetch`` of ``file://`` is blocked); the case table fills in page by page,
and its filters, links and details work over every case. Made small enough for CI by
shrinking the thresholds: 303 rows in pages of 40, every block in the folder."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pymupdf
import pytest
from test_html_chromium import CHROMIUM, HOSTILE, chromium, diff_report, diff_text, diffs

import pytest_doceval.report.html as html_report
from pytest_doceval.report.html import cases as html_cases
from pytest_doceval.report.html import data_folder, write_html

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(html_report, "SELF_CONTAINED_BYTES", 1)
    monkeypatch.setattr(html_cases, "ROWS_PAGE", 40)
    monkeypatch.setattr(html_cases, "CHUNK_BYTES", 2_000)


def written(tmp_path: Path, report: dict[str, Any] | None = None) -> Path:
    folder = tmp_path / "my report"  # a space: the data folder's URL is encoded
    folder.mkdir()
    return write_html(report or diff_report(), folder / "report.html")  # type: ignore[arg-type]


def dump(page: Path, fragment: str = "#selftest") -> str:
    return chromium(page.as_uri() + fragment, page.parent / "profile", "--dump-dom")


def text(page: Path, fragment: str = "") -> str:
    """What Chromium shows (printed to PDF, read back), whitespace folded."""
    pdf = page.parent / "shown.pdf"
    chromium(
        page.as_uri() + fragment,
        page.parent / "profile-pdf",
        f"--print-to-pdf={pdf}",
        "--no-pdf-header-footer",
    )
    with pymupdf.open(pdf) as doc:
        return " ".join(" ".join(p.get_text() for p in doc).split())


def test_the_page_keeps_no_case_data_and_its_folder_holds_it(tmp_path: Path) -> None:
    page = written(tmp_path)
    folder = data_folder(page)
    assert folder.name == "report.data" and folder.is_dir()
    names = {p.name for p in folder.iterdir()}
    assert {f"doceval-rows-0-p{k}.js" for k in range(8)} <= names  # 303 rows, pages of 40
    assert any(n.startswith("doceval-s0-d") for n in names)
    document = page.read_text()
    assert "'strict-dynamic'" in document
    assert f'"folder":"{quote("report.data")}/"' in document
    # The case table's header is in the page; none of its rows or details are.
    blocks = re.findall(r'<script type="[^"]+" id="([^"]+)">', document)
    assert blocks == ["doceval-data", "doceval-rows-0"]
    assert "bulk-299" not in document


def test_every_page_of_rows_arrives_and_a_row_opens(tmp_path: Path) -> None:
    page = written(tmp_path)
    dom = dump(page)
    assert 'data-selftest="ok"' in dom, re.search(r"<html[^>]*>", dom)
    assert re.search(r'data-rows-ms="[0-9.]+"', dom) and re.search(r'data-open-ms="[0-9.]+"', dom)
    assert "showing 250 of 303 matching, 303 in all" in dom
    truth = diffs(dom)[0]
    expected = (
        f"Intro {HOSTILE} text tidaltida1 storage works… 5,000 unchanged characters …"
        f"end {HOSTILE}↵\n"
    )
    assert diff_text(truth) == expected
    assert "<img" not in dom and "<b>bold" not in dom  # text from the data files stays text


def test_the_filter_finds_a_case_in_the_last_page(tmp_path: Path) -> None:
    shown = text(written(tmp_path), "#q=bulk-299")
    assert "showing 1 of 1 matching, 303 in all" in shown
    assert "bulk-299 pymupdf passed 0.2990" in shown


def test_a_link_to_a_row_in_a_later_page_opens_it(tmp_path: Path) -> None:
    report = diff_report()
    suite = next(iter(report["suites"].values()))
    rows = suite["results"]
    rows[-1].update(outcome="failed", message="late failure", counts={"cer": {"hits": 7}})
    page = written(tmp_path, report)
    dom = dump(page, f"#case-s0-r{len(rows) - 1}")
    opened = re.search(r'<tr class="case"[^>]*data-i="302"[^>]*aria-expanded="true"', dom)
    assert opened, "row 302 was not opened"
    assert '<td>cer</td><td class="num">7</td>' in dom  # its details, from its chunk's file


def test_without_its_folder_the_page_says_where_the_data_is(tmp_path: Path) -> None:
    page = written(tmp_path)
    shutil.rmtree(data_folder(page))
    shown = text(page)
    assert "Could not load all the cases: could not load report.data/doceval-rows-0-p0.js" in shown
    assert "keep that folder beside this page" in shown
    assert "What changed against the baseline" in shown  # the first page still reads


def test_a_smaller_report_written_over_a_bigger_one_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = written(tmp_path)
    assert data_folder(page).is_dir()
    monkeypatch.setattr(html_report, "SELF_CONTAINED_BYTES", 10**9)
    write_html(diff_report(), page)  # type: ignore[arg-type]
    assert not data_folder(page).exists()
    assert [p.name for p in page.parent.iterdir() if p.name.startswith(".")] == []
    document = page.read_text()  # every page of rows in the page itself
    assert all(f'id="doceval-rows-0-p{k}"' in document for k in range(1, 8))
