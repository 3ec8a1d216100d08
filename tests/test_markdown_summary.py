"""The markdown a CI step summary or a pull-request comment shows (``doceval compare --format
markdown``, ``doceval report --format summary``), rendered as GitHub would by pandoc's GFM
reader and read back as text, tables and links; the worst case is found again from the JSON."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from pandoc_support import needs_pandoc, pandoc_html

from pytest_doceval.cli import main as doceval
from pytest_doceval.report.markdown import cell
from tests.conftest import read_report, write_suite

LINK = "https://ci.example/run/7/doceval-report.html"
WORDS = "tidal storage moves water between two basins and returns it after sunset".split()


class Page(HTMLParser):
    """Headings, list items and tables (rows of cell texts) of rendered HTML, and links."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.items: list[str] = []
        self.tables: list[list[list[str]]] = []
        self.links: list[tuple[str, str]] = []  # (link text, href), in page order
        self._text: list[str] | None = None
        self._href: str | None = None
        self._link_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th", "li", "h2", "h3"):
            self._text = []
        elif tag == "a":
            self._href = dict(attrs).get("href")
            self._link_text = []

    def handle_endtag(self, tag: str) -> None:
        text = " ".join("".join(self._text or []).split())
        if tag in ("td", "th"):
            self.tables[-1][-1].append(text)
        elif tag == "li":
            self.items.append(text)
        elif tag in ("h2", "h3"):
            self.headings.append(text)
        elif tag == "a" and self._href:
            self.links.append((" ".join("".join(self._link_text).split()), self._href))
            self._href = None
        if tag in ("td", "th", "li", "h2", "h3"):
            self._text = None

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)
        if self._href is not None:
            self._link_text.append(data)


def render(markdown: str) -> Page:
    html = pandoc_html(markdown, "-f", "gfm", "-t", "html")
    page = Page()
    page.feed(html)
    return page


@pytest.fixture
def two_runs(pytester: pytest.Pytester) -> Path:
    """old.json (baselines recorded) and new.json: every `sys` output a little worse, c03's
    much worse (its per-case gate fails), `alt` unchanged."""
    cases = {}
    for i in range(12):
        truth = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(40))
        cases[f"c{i:02d}"] = {"truth": truth, "sys": truth, "alt": truth.replace("tidal", "tide")}
    suite = write_suite(
        pytester.path, "tides", cases, systems=["sys", "alt"], gates='cer = "+5pp"\n'
    )
    pytester.runpytest("--doceval", "--doceval-update", "--doceval-json", "old.json")
    for case in suite.iterdir():
        out = case / "outputs" / "sys.md"
        if out.exists():
            text = out.read_text().replace("water", "wtr")
            if case.name == "c03":
                text = text.replace("storage", "strg").replace("basins", "bsns").replace("t", "")
            out.write_text(text)
    pytester.runpytest("--doceval", "--doceval-json", "new.json")
    return pytester.path


def first_link(page: Page, text: str) -> str:
    return next(href for label, href in page.links if label == text)


def worst_case(changes: list[tuple[str, str, str, float]]) -> tuple[str, str, str]:
    """The (case, system, metric) that moved most in its metric's bad direction."""
    return max(changes, key=lambda c: c[3])[:3]


def anchor_of(report: dict[str, Any], case: str, system: str) -> str:
    rows = report["suites"]["tides"]["results"]
    index = next(i for i, r in enumerate(rows) if r["case"] == case and r["system"] == system)
    return f"{LINK}#case-s0-r{index}"


def headline_directions(report: dict[str, Any]) -> dict[str, str]:
    specs = report["suites"]["tides"]["metrics"]
    return {m: s["direction"] for m, s in specs.items() if s.get("headline", True)}


@needs_pandoc
def test_compare_as_markdown_renders_failures_changes_and_worst_cases(
    two_runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = read_report(two_runs / "old.json"), read_report(two_runs / "new.json")
    capsys.readouterr()  # pytest's own output, not the markdown
    code = doceval(["compare", "old.json", "new.json", "--format", "markdown", "--link", LINK])
    assert code == 1  # a significant regression: the CI step fails, after writing its summary
    page = render(capsys.readouterr().out)
    assert (
        page.headings[0].startswith("doceval: ") and "significant regression(s)" in page.headings[0]
    )
    assert page.headings[1] == "What failed"
    assert page.headings[2].startswith("Significant changes (")
    assert page.headings[3].startswith("Cases that moved most (")
    # What failed: c03 [sys] broke its per-case gate, linked to its row.
    failed = [item for item in page.items if item.startswith("failed: tides c03 [sys]")]
    assert failed and "+ 5pp" in failed[0], page.items
    assert first_link(page, "c03 [sys]") == anchor_of(new, "c03", "sys")
    changes, cases = page.tables
    assert changes[0][:4] == ["verdict", "suite", "system", "metric"]
    verdicts = [row[0] for row in changes[1:]]
    assert verdicts[0] == "WORSE" and verdicts == sorted(verdicts, key=lambda v: v != "WORSE")
    assert all(row[2] == "sys" for row in changes[1:] if row[0] == "WORSE")
    # The worst case, found again from the two JSON reports and the metrics' directions.
    directions = headline_directions(new)
    values = {(r["case"], r["system"]): r["metrics"] for r in old["suites"]["tides"]["results"]}
    moved = [
        (
            r["case"],
            r["system"],
            m,
            (1 if d == "lower" else -1) * (r["metrics"][m] - values[(r["case"], r["system"])][m]),
        )
        for r in new["suites"]["tides"]["results"]
        for m, d in directions.items()
        if m in r["metrics"] and m in values[(r["case"], r["system"])]
    ]
    case, system, metric = worst_case(moved)
    assert cases[0][:4] == ["case", "suite", "system", "metric"]
    assert cases[1][0] == case and cases[1][2:4] == [system, metric]
    assert first_link(page, case) == anchor_of(new, case, system)


@needs_pandoc
def test_report_summary_shows_the_changes_against_the_baseline(
    two_runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = read_report(two_runs / "new.json")
    capsys.readouterr()  # pytest's own output, not the markdown
    assert doceval(["report", "new.json", "--format", "summary", "--link", LINK]) == 0
    page = render(capsys.readouterr().out)
    outcomes = new["suites"]["tides"]["outcomes"]
    failing = outcomes.get("failed", 0) + outcomes.get("error", 0)
    assert page.headings[0] == f"doceval: {failing} test(s) did not pass, 0 suite gate(s) failed"
    changes, cases = page.tables
    assert changes[0][4:7] == ["n", "baseline", "current"]
    assert changes[1][0] == "WORSE" and changes[1][2] == "sys"
    directions = headline_directions(new)
    moved = [
        (
            r["case"],
            r["system"],
            m,
            (1 if d == "lower" else -1) * (r["metrics"][m] - r["baseline"][m]),
        )
        for r in new["suites"]["tides"]["results"]
        if r["baseline"]
        for m, d in directions.items()
        if m in r["metrics"] and m in r["baseline"]
    ]
    case, system, metric = worst_case(moved)
    assert cases[1][0] == case and cases[1][2:4] == [system, metric]
    assert first_link(page, case) == anchor_of(new, case, system)


def one_case_run(pytester: pytest.Pytester) -> None:
    """r.json: one case that passes, no baseline and no gate."""
    write_suite(
        pytester.path, "tides", {"c00": {"truth": "a b", "sys": "a b"}}, systems=["sys"], gates=""
    )
    pytester.runpytest("--doceval", "--doceval-json", "r.json")


@needs_pandoc
def test_nothing_failed_and_no_link_without_an_address(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    one_case_run(pytester)
    capsys.readouterr()  # pytest's own output, not the markdown
    assert doceval(["compare", "r.json", "r.json", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    page = render(out)
    assert page.headings[0] == "doceval: no significant regression"
    assert "Nothing failed." in out and "No significant change." in out
    assert "No case changed value." in out and page.tables == [] and page.links == []


def test_a_cell_is_one_line_and_keeps_its_text() -> None:
    assert cell("a|b\nc *d* [e](f) `g`") == "a\\|b c \\*d\\* \\[e\\](f) \\`g\\`"


def test_link_and_output_need_the_markdown(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    one_case_run(pytester)
    assert doceval(["compare", "r.json", "r.json", "--link", LINK]) == 2
    assert "add --format markdown" in capsys.readouterr().err
    assert doceval(["report", "r.json", "--link", LINK]) == 2
    assert "add --format summary" in capsys.readouterr().err
    # -o appends: a CI step summary collects several commands' markdown.
    summary = pytester.path / "summary.md"
    summary.write_text("# CI\n", encoding="utf-8")
    assert doceval(["report", "r.json", "--format", "summary", "-o", str(summary)]) == 0
    assert summary.read_text(encoding="utf-8").startswith("# CI\n## doceval: 0 test(s)")
