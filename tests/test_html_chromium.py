"""The HTML report in real headless Chromium (skipped when /usr/bin/chromium is absent).

No browser driver: Chromium runs with ``--dump-dom`` (the DOM after the page's scripts ran),
``--screenshot`` and ``--print-to-pdf``. The PDF's text layer is what the page *shows* --
CSS-generated content included, hidden and collapsed parts excluded -- and PyMuPDF reads it
back; the tests of what a reader sees use that, not the HTML source. The page is opened as
``report.html#selftest``: its own script then clicks the first case row that has a view and,
once the row's details are drawn, sets ``data-selftest="ok"`` on ``<html>``; ``#q=text``
opens it with the case filter filled in. ``--virtual-time-budget`` makes Chromium wait for
that asynchronous work (decoding a chunk) before it dumps, shoots or prints. Background
networking is off: this machine has no internet and Chromium would otherwise wait on it.
"""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pymupdf
import pytest
from test_html_report import agg, delta, documents_report, unknown_kind_report

from pytest_doceval.report.html import cases as html_cases
from pytest_doceval.report.html import write_html

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--virtual-time-budget=20000",
)
TIMEOUT = 120

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")

# If any of this were parsed as markup, the dump would contain an <img> or a <b> element.
HOSTILE = '<img src=x onerror="document.title=1"><b>bold</b></script>&amp;'


def diff_report() -> dict[str, Any]:
    """One case seen by two systems (their diffs share the truth text), every op kind,
    a whitespace-only edit, a character beyond U+FFFF, an output-to-output diff, and hostile
    text everywhere."""
    truth_a = [
        ["=", f"Intro {HOSTILE} text "],
        ["S", "tidal", "tida1"],
        ["D", " storage"],
        ["=", " works"],
        ["…", 5000],
        ["=", "end"],
        ["I", f" {HOSTILE}"],
        ["I", "\n"],
    ]
    truth_b = [
        ["=", f"Intro {HOSTILE} text tidal storage works"],
        ["…", 5000],
        ["=", "en"],
        ["S", "d", "D"],
    ]
    previous = [["=", "Intro "], ["S", "tidal", "tida1"], ["D", f" was {HOSTILE}"], ["…", 99]]
    rows = [
        {
            "case": f"tidal {HOSTILE}",
            "system": "pymupdf",
            "labels": {},
            "outcome": "failed",
            "nodeid": "cases/p/suite.toml::tidal[pymupdf]",
            "message": f"cer up {HOSTILE}",
            "metrics": {"cer": 0.1, "structure_f1": 0.5},
            "baseline": {"cer": 0.05},
            "counts": {
                "cer": {
                    "hits": 90,
                    "substitutions": 5,
                    "deletions": 3,
                    "insertions": 2,
                    "reference_length": 98,
                },
                "structure": {"tp": 3, "fp": 1, "fn": 0},
            },
            "notes": [f"note {HOSTILE}"],
            "views": {
                "text_diff": {"metric": "cer", "ops": truth_a},
                "output_diff": {"ops": previous, "previous_cache_key": "k0"},
            },
        },
        {
            "case": f"tidal {HOSTILE}",
            "system": "rapidocr",
            "labels": {},
            "outcome": "passed",
            "metrics": {"cer": 0.02, "structure_f1": 0.9},
            "views": {"text_diff": {"metric": "cer", "ops": truth_b}},
        },
        {
            "case": "emoji",
            "system": "pymupdf",
            "labels": {},
            "outcome": "passed",
            "metrics": {"cer": 0.0},
            "views": {
                "text_diff": {
                    "metric": "cer",
                    "ops": [["=", "smile 😀 "], ["S", "a", "b"], ["=", " ok"]],
                }
            },
        },
    ]
    rows += [
        {
            "case": f"bulk-{n:03d}",
            "system": "pymupdf",
            "labels": {},
            "outcome": "passed",
            "metrics": {"cer": n / 1000},
        }
        for n in range(300)
    ]
    return {
        "schema": "doceval-report/1",
        "config": {"confidence": 0.95},
        "interrupted": False,
        "suites": {
            f"papers {HOSTILE}": {
                "kind": "documents",
                "systems": ["pymupdf", "rapidocr"],
                "metrics": {
                    "cer": {"direction": "lower", "headline": True},
                    "structure_f1": {"direction": "higher", "headline": True},
                },
                "analysis_keys": [],
                "notes": [f"suite note {HOSTILE}"],
                "results": rows,
                "aggregates": {
                    "pymupdf": {"cer": agg(0.1, 0.05, 0.15, n=3)},
                    "rapidocr": {"cer": agg(0.02, 0.01, 0.03, n=3)},
                },
                "gates": [
                    {
                        "system": "pymupdf",
                        "metric": "cer",
                        "rule": "+0.5pp",
                        "passed": False,
                        "message": f"regressed {HOSTILE}",
                    }
                ],
            }
        },
    }


def chromium(url: str, profile: Path, *extra: str) -> str:
    done = subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *extra, url],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    return done.stdout


def dump(report: dict[str, Any], tmp_path: Path, fragment: str = "#selftest") -> str:
    page = write_html(report, tmp_path / "report.html")
    return chromium(page.as_uri() + fragment, tmp_path / "profile", "--dump-dom")


def shown_text(
    report: dict[str, Any], tmp_path: Path, fragment: str = "#selftest", *, unfold: bool = False
) -> str:
    """The text Chromium renders for the page (printed to PDF, read back), whitespace-folded;
    with `unfold`, as a reader sees it after opening the folded analyses."""
    page = write_html(report, tmp_path / "report.html")
    if unfold:
        opened = page.read_text().replace(
            '<details class="analyses">', '<details class="analyses" open>'
        )
        page.write_text(opened)
    pdf = tmp_path / "report.pdf"
    chromium(
        page.as_uri() + fragment,
        tmp_path / "profile",
        f"--print-to-pdf={pdf}",
        "--no-pdf-header-footer",
    )
    with pymupdf.open(pdf) as doc:
        return " ".join(" ".join(page.get_text() for page in doc).split())


def diff_text(fragment: str) -> str:
    """The text a reader sees in a drawn diff."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def diffs(dom: str) -> list[str]:
    found = re.findall(r'<div class="diff">(.*?)</div>', dom, re.S)
    assert found, "no diff was drawn"
    return found


@pytest.fixture(params=["plain", "packed"])
def packing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Detail chunks as plain JSON, and raw-deflated + base85 (DecompressionStream)."""
    monkeypatch.setattr(html_cases, "INLINE_LIMIT", 0 if request.param == "packed" else 10**9)
    return request.param


def test_selftest_opens_the_views(tmp_path: Path, packing: str) -> None:
    dom = dump(diff_report(), tmp_path)
    assert 'data-selftest="ok"' in dom, re.search(r"<html[^>]*>", dom)
    assert re.search(r'data-ready-ms="[0-9.]+"', dom)  # the script ran: the CSP allowed it
    truth, previous = diffs(dom)
    # The failed row sorts first; its diff has every kind of op.
    assert '<span class="sub" title="substitution: truth → output"><del>tidal</del>' in truth
    assert "<ins>tida1</ins></span>" in truth
    assert '<del class="del"> storage</del>' in truth
    assert '<span class="gap">… 5,000 unchanged characters …</span>' in truth
    assert '<ins class="ins ws" title="whitespace">↵\n</ins>' in truth
    expected = (
        f"Intro {HOSTILE} text tidaltida1 storage works… 5,000 unchanged characters …"
        f"end {HOSTILE}↵\n"
    )
    assert diff_text(truth) == expected
    # the output diff, beside it, with its own labels
    assert diff_text(previous) == f"Intro tidaltida1 was {HOSTILE}… 99 unchanged characters …"
    views = dom[dom.index('<div class="views">') :]
    assert views.index("Aligned diff: truth → output (cer)") < views.index(
        "<h4>previous output → this output</h4>"
    )
    assert '<p class="note">where did this change make it worse</p>' in views
    assert "<del>previous output</del><ins>this output</ins>" in views
    # details: node id, notes, counts
    assert "cases/p/suite.toml::tidal[pymupdf]" in dom
    assert '<td>cer</td><td class="num">90</td>' in dom
    assert "<th>tp</th><th>fp</th><th>fn</th>" in dom  # non-edit counts get their own table
    assert '<td>structure</td><td class="num">3</td>' in dom


def test_hostile_text_stays_text(tmp_path: Path, packing: str) -> None:
    dom = dump(diff_report(), tmp_path)
    assert 'data-selftest="ok"' in dom
    assert "<img" not in dom and "<b>bold" not in dom
    escaped = html.escape(HOSTILE, quote=False)
    # in the server-rendered header and gate table, and in script-drawn rows, details, diff
    for where in ("<h2>papers ", "regressed ", "suite note ", "tidal ", "note ", "cer up "):
        assert where + escaped in dom, where


def test_shared_truth_and_wide_characters(tmp_path: Path) -> None:
    """The second system's diff, drawn from the truth text it shares with the first; and a
    diff with a character beyond U+FFFF, kept as given."""
    report = diff_report()
    suite = next(iter(report["suites"].values()))
    first, second, emoji = suite["results"][:3]
    first["outcome"], second["outcome"] = "passed", "failed"  # #selftest opens `second`
    suite["results"] = [first, second]
    (tmp_path / "shared").mkdir()
    text = diff_text(diffs(dump(report, tmp_path / "shared"))[0])
    assert text == f"Intro {HOSTILE} text tidal storage works… 5,000 unchanged characters …endD"
    suite["results"] = [emoji]
    (tmp_path / "emoji").mkdir()
    assert diff_text(diffs(dump(report, tmp_path / "emoji"))[0]) == "smile 😀 ab ok"


def test_case_table_draws_a_page_of_rows(tmp_path: Path) -> None:
    dom = dump(diff_report(), tmp_path, fragment="")
    assert dom.count('<tr class="case"') == 250  # one page; the rest on "show more"
    assert "showing 250 of 303 matching, 303 in all" in dom
    assert 'class="more"' in dom and "show 53 more" in dom
    first = dom[dom.index('<tr class="case"') :]
    assert 'class="badge o-failed">failed<' in first[: first.index("</tr>")]
    assert '<td class="labels">' not in dom  # no row has labels: no labels column


def test_unknown_kind_in_the_browser(tmp_path: Path, packing: str) -> None:
    """Labels in the table and the details, unknown views drawn generically, all as text."""
    dom = dump(unknown_kind_report(), tmp_path)
    assert 'data-selftest="ok"' in dom
    assert "<script>alert" not in dom
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    # goodness (higher is better) rose above the baseline: green, and its arrow points up
    assert '<td class="num m better up" title="better than baseline">0.6000</td>' in dom
    assert f'<td class="labels">model=m-small, track=easy {escaped}</td>' in dom
    labels = dom[dom.index('<table class="labels">') :]
    assert f"<td>track</td><td>easy {escaped}</td>" in labels[: labels.index("</table>")]
    answer = dom[dom.index('<div class="view view-table"><h4>answer</h4>') :]
    assert (
        f"<td>raw</td><td>B {escaped}</td>" in answer and "<td>correct</td><td>true</td>" in answer
    )
    trace = dom[dom.index('<div class="view view-pre"><h4>trace</h4>') :]
    assert f'"tool": "{escaped}"' in trace[: trace.index("</pre>")]


def test_text_filter_matches_labels(tmp_path: Path) -> None:
    dom = dump(unknown_kind_report(), tmp_path, fragment="#q=" + quote("track=hard"))
    assert "showing 4 of 4 matching, 8 in all" in dom
    cells = re.findall(r'<td class="labels">([^<]*)</td>', dom)
    assert len(cells) == 4 and all(c.endswith("track=hard") for c in cells)


def test_screenshot(tmp_path: Path) -> None:
    page = write_html(diff_report(), tmp_path / "report.html")
    shot = tmp_path / "report.png"
    chromium(
        page.as_uri() + "#selftest",
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--window-size=1280,2000",
    )
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000


# --------------------------------------------------------------------------- what a reader sees


def reviewer_report() -> dict[str, Any]:
    """An interrupted run: numbers missing or NaN, a small suite, every outcome."""
    report = documents_report()
    report["interrupted"] = True
    suite = report["suites"]["papers"]
    suite["aggregates"]["pymupdf"]["cer"].update(mean=None, ci_high=float("nan"))
    suite["aggregates"]["rapidocr"]["cer"] = agg(0.05, 0.03, float("inf"), n=12)
    suite["baseline_deltas"].append(delta("rapidocr", "wer", 0.0, 0.0, 0.0, "unchanged"))
    suite["baseline_deltas"][-1].update(p_ttest=None, p_wilcoxon=float("nan"))
    suite["aggregates"]["pymupdf"]["structure_f1"]["flagged"] = {"output repeats itself": 1}
    suite["gates"][0].update(
        reliable=False,
        power_note="this suite detects changes of 2.1pp or more (80% power); its tolerance "
        "0.5pp is below that: it cannot reliably fail on a regression smaller than 2.6pp",
    )
    suite["analysis_keys"] = ["comparisons"]
    suite["comparisons"] = [
        {
            "metric": "cer",
            "a": "pymupdf",
            "b": "rapidocr",
            "n": 3,
            "mean_diff": 0.08,
            "ci_low": 0.01,
            "ci_high": 0.15,
            "mde": 0.0213,
            "flagged": {"rapidocr": {"output repeats itself": 2}},
        }
    ]
    first = suite["results"][0]
    first["metrics"].update(wer=None, structure_f1=float("nan"))
    extra = [("error", "crashed"), ("failed", "worse"), ("passed", None), ("passed", None)]
    for number, (outcome, message) in enumerate(extra):
        suite["results"].append(
            {"case": f"more-{number}", "system": "pymupdf", "outcome": outcome, "metrics": {}}
            | ({"message": message} if message else {})
        )
    return report


@pytest.fixture(scope="module")
def reviewer_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shown_text(
        reviewer_report(), tmp_path_factory.mktemp("reviewer"), fragment="", unfold=True
    )


def test_stylesheet_glyphs_render_as_glyphs(reviewer_text: str) -> None:
    """CSS-generated arrows show as arrows, not as the escape's text."""
    assert not re.search(r"\\[0-9A-Fa-f]{4}|2195|25B2|25BC", reviewer_text)
    for head in ("case ↕", "system ↕", "outcome ↕", "cer ↕", "message ↕"):
        assert head in reviewer_text, head
    assert "0.1530 ▲" in reviewer_text  # the failed row's cer, worse than its baseline


def test_missing_numbers_render_as_na(reviewer_text: str) -> None:
    assert not re.search(r"\bnan\b|\binf\b|Infinity|undefined|null|None", reviewer_text, re.I)
    assert "n/a [0.0080, n/a]" in reviewer_text  # pymupdf cer: mean None, upper bound NaN
    assert "0.0500 [0.0300, n/a]" in reviewer_text  # rapidocr cer: upper bound inf
    assert "0.1530 ▲ n/a n/a" in reviewer_text  # the failed row: cer, wer None, f1 NaN


def test_interrupted_run_says_so_first(reviewer_text: str) -> None:
    assert "This run was interrupted. The numbers below are partial" in reviewer_text
    assert reviewer_text.index("interrupted") < reviewer_text.index("Run summary")


def test_small_n_and_interval_method_render(reviewer_text: str) -> None:
    summary = reviewer_text[reviewer_text.index("Summary: mean") :]
    summary = summary[: summary.index("Means with")]
    # under the cer and structure_f1 columns; wer has no aggregate, so no method (printing
    # may repeat the table's head on a new page: count the columns, not the occurrences)
    assert "cer ↓ lower is better CI: percentile-bootstrap" in summary
    assert "structure_f1 ↑ higher is better CI: percentile-bootstrap" in summary
    assert "wer ↓ lower is better CI" not in summary
    assert summary.count("small n") == 3  # pymupdf's two cells, and the legend
    assert "n=12 · corpus" not in summary and "n=12 small n" not in summary


def test_outcome_counts_match_pytest(reviewer_text: str) -> None:
    """One test per row, counted as the row's outcome says: what pytest printed."""
    assert "1 suite, 7 tests: 1 error, 2 failed, 1 skipped, 3 passed" in reviewer_text
    assert "error 1 failed 2 skipped 1 passed 3" in reviewer_text
    assert "showing 7 of 7 matching, 7 in all" in reviewer_text


def test_a_flagged_value_gets_a_dagger_and_a_legend(reviewer_text: str) -> None:
    """Issue 19: a value the kind flagged is marked where it is compared, and said why."""
    summary = reviewer_text[reviewer_text.index("Summary: mean") :]
    summary = summary[: summary.index("Means with")]
    assert summary.count("\u2020") == 2  # the pymupdf structure_f1 cell and the legend
    assert "\u2020 marks a value that may mislead" in summary
    assert "structure_f1 [pymupdf]: output repeats itself (1 of " in summary


def test_power_shows_in_gates_and_comparisons(reviewer_text: str) -> None:
    """Issue 19: a gate says what it detects and that it cannot reliably fail; comparisons
    carry their MDE, in percentage points."""
    assert "this suite detects changes of 2.1pp or more (80% power)" in reviewer_text
    assert "it cannot reliably fail on a regression smaller than 2.6pp" in reviewer_text
    comparisons = reviewer_text[reviewer_text.index("Pairwise comparisons") :]
    assert "MDE" in comparisons and "2.1pp" in comparisons
    assert "rapidocr\u2020" in comparisons  # the flagged side of the comparison
