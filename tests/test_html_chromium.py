"""The HTML report in real headless Chromium (skipped when /usr/bin/chromium is absent).

No browser driver: Chromium runs with ``--dump-dom`` (the DOM after the page's scripts ran)
and ``--screenshot``. The page is opened as ``report.html#selftest``: its own script then
clicks the first case row that has a diff and, once the diff is drawn, sets
``data-selftest="ok"`` on ``<html>``. ``--virtual-time-budget`` makes Chromium wait for that
asynchronous work (decoding a chunk) before it dumps or shoots. Background networking is off:
this machine has no internet and Chromium would otherwise wait on connections.
"""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.report import html as report_html
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
    a whitespace-only edit, a character beyond U+FFFF, and hostile text everywhere."""
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
    rows = [
        {
            "case": f"tidal {HOSTILE}",
            "system": "pymupdf",
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
            "diff": {"metric": "cer", "ops": truth_a},
        },
        {
            "case": f"tidal {HOSTILE}",
            "system": "rapidocr",
            "outcome": "passed",
            "metrics": {"cer": 0.02, "structure_f1": 0.9},
            "diff": {"metric": "cer", "ops": truth_b},
        },
        {
            "case": "emoji",
            "system": "pymupdf",
            "outcome": "passed",
            "metrics": {"cer": 0.0},
            "diff": {"metric": "cer", "ops": [["=", "smile 😀 "], ["S", "a", "b"], ["=", " ok"]]},
        },
    ]
    rows += [
        {
            "case": f"bulk-{n:03d}",
            "system": "pymupdf",
            "outcome": "passed",
            "metrics": {"cer": n / 1000},
        }
        for n in range(300)
    ]
    return {
        "schema": "doceval-report/1",
        "config": {"confidence": 0.95},
        "suites": {
            f"papers {HOSTILE}": {
                "kind": "documents",
                "systems": ["pymupdf", "rapidocr"],
                "metrics": {"cer": {"direction": "lower"}, "structure_f1": {"direction": "higher"}},
                "notes": [f"suite note {HOSTILE}"],
                "results": rows,
                "aggregates": {
                    "pymupdf": {"cer": {"mean": 0.1, "ci_low": 0.05, "ci_high": 0.15, "n": 3}},
                    "rapidocr": {"cer": {"mean": 0.02, "ci_low": 0.01, "ci_high": 0.03, "n": 3}},
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


def diff_text(fragment: str) -> str:
    """The text a reader sees in a drawn diff."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def first_diff(dom: str) -> str:
    match = re.search(r'<div class="diff">(.*?)</div>', dom, re.S)
    assert match, "no diff was drawn"
    return match.group(1)


@pytest.fixture(params=["plain", "packed"])
def packing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Detail chunks as plain JSON, and raw-deflated + base85 (DecompressionStream)."""
    monkeypatch.setattr(report_html, "INLINE_LIMIT", 0 if request.param == "packed" else 10**9)
    return request.param


def test_selftest_opens_a_diff(tmp_path: Path, packing: str) -> None:
    dom = dump(diff_report(), tmp_path)
    assert 'data-selftest="ok"' in dom, re.search(r"<html[^>]*>", dom)
    assert re.search(r'data-ready-ms="[0-9.]+"', dom)  # the script ran: the CSP allowed it
    diff = first_diff(dom)
    # The failed row sorts first; its diff has every kind of op.
    assert '<span class="sub" title="substitution: truth → output"><del>tidal</del>' in diff
    assert "<ins>tida1</ins></span>" in diff
    assert '<del class="del"> storage</del>' in diff
    assert '<span class="gap">… 5,000 unchanged characters …</span>' in diff
    assert '<ins class="ins ws" title="whitespace">↵\n</ins>' in diff
    expected = (
        f"Intro {HOSTILE} text tidaltida1 storage works… 5,000 unchanged characters …"
        f"end {HOSTILE}↵\n"
    )
    assert diff_text(diff) == expected
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
    text = diff_text(first_diff(dump(report, tmp_path / "shared")))
    assert text == f"Intro {HOSTILE} text tidal storage works… 5,000 unchanged characters …endD"
    suite["results"] = [emoji]
    (tmp_path / "emoji").mkdir()
    assert diff_text(first_diff(dump(report, tmp_path / "emoji"))) == "smile 😀 ab ok"


def test_case_table_draws_a_page_of_rows(tmp_path: Path) -> None:
    dom = dump(diff_report(), tmp_path, fragment="")
    assert dom.count('<tr class="case"') == 250  # one page; the rest on "show more"
    assert "showing 250 of 303 matching, 303 in all" in dom
    assert 'class="more"' in dom and "show 53 more" in dom
    first = dom[dom.index('<tr class="case"') :]
    assert 'class="badge o-failed">failed<' in first[: first.index("</tr>")]


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
