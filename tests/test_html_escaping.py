"""The HTML report is escaped by construction (``markupsafe.Markup`` templates): any text a
report holds, wherever the page shows it (row and suite notes, case and system names, messages,
gates, package versions, metric descriptions, every kind's analyses, the building blocks), is
escaped exactly once and adds no markup.

The check is independent of MarkupSafe: the page is read back with the standard library's
``html.parser``. A marker built around arbitrary text must (1) leave the page's tags exactly as
a harmless marker leaves them (no text became markup) and (2) read back, decoded, as many times
as the harmless marker does, outside ``<script>`` data (text escaped twice would read back as
``&lt;...`` and not match; text not escaped would have changed the tags).
"""

from __future__ import annotations

import copy
import html
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from pytest_doceval.html.analysis import as_markup, generic, html_table
from pytest_doceval.html.model import suite_views
from pytest_doceval.report.html import analyses as html_analyses
from pytest_doceval.report.html import render_html
from tests.test_html_report import documents_report

SAFE = "SAFE"
# No whitespace (messages are re-spaced, labels trimmed) and short (plot labels are cut at 18).
HOSTILE = st.text(alphabet=st.sampled_from(list("<>&\"'/=;#x!-")), min_size=1, max_size=6) | (
    st.sampled_from(["<script>", "</script>", "&amp;", "<b>", "&#39;", '"><i', "<!--", "]]>"])
)


def marker(text: str) -> str:
    return f"zq{text}qz"


class Page(HTMLParser):
    """The tags of a page (name and attribute names) and its text outside <script>/<style>
    (data and attribute values, entities decoded), one string per node."""

    def __init__(self, document: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, ...]] = []
        self.text: list[str] = []
        self._raw = 0
        self.feed(document)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, *sorted(name for name, _ in attrs)))
        self.text.extend(value or "" for _, value in attrs)
        self._raw += tag in ("script", "style")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag + "/", *sorted(name for name, _ in attrs)))
        self.text.extend(value or "" for _, value in attrs)

    def handle_endtag(self, tag: str) -> None:
        self.tags.append(("/" + tag,))
        self._raw -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self._raw:
            self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.tags.append(("!--",))

    def count(self, needle: str) -> int:
        return sum(node.count(needle) for node in self.text)


def hostile_report(m: str) -> Any:
    """A documents report and one section per kind with analyses, `m` in every string a
    reader sees on the server-rendered page."""
    report = documents_report()
    report["environment"]["packages"] = {m: m}
    report["environment"]["platform"] = m
    papers = report["suites"].pop("papers")
    papers["notes"] = [m]
    papers["error"] = m
    papers["language"] = m
    papers["unused_baseline"] = [m]
    papers["baseline_changes"] = [m]
    papers["metrics"]["cer"]["description"] = m
    papers["systems"] = ["pymupdf", "rapidocr", m]
    papers["aggregates"][m] = {"cer": {"mean": 0.1, "ci_low": 0.05, "ci_high": 0.2, "n": 5}}
    papers["baseline_deltas"][0]["system"] = m
    papers["gates"][0].update(message=m, rule=m, power_note=m)
    papers["comparisons"][0].update(a=m, p_ttest=1e-9)
    papers["results"][0].update(case=m, message=m, notes=[m], labels={"k": m})
    report["suites"][m] = papers
    exam_entry = {"model": m, "track": m, "accuracy": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 9}
    report["suites"]["exam"] = {
        "kind": "exam",
        "analysis_keys": ["accuracy", "deltas", "pairwise", "anova", "consistency", "references"],
        "accuracy": [exam_entry],
        "references": {
            "random": 0.25,
            "random_by_track": {m: 0.25},
            "random_by_nation": {m: 0.2},
            "human_pass_marks": {m: 0.6},
        },
        "deltas": [{"model": m, "delta": m, "n": 9, "value": 0.1, "interpretation": m}],
        "pairwise": [{"track": m, "a": m, "b": m, "n": 9, "diff": 0.2, "significant": True}],
        "anova": [{"track": m, "n": 9, "method": m, "effects": [{"name": m, "ss": 1.0}]}],
        "consistency": [{"track": m, "models": [{"model": m, "larger": m}]}],
    }
    group = {m: {"mean": 0.5, "passed": 1, "total": 2}}
    report["suites"]["facts"] = {
        "kind": "facts",
        "analysis_keys": ["pass_rate"],
        "pass_rate": {m: {"pass_rate": 0.5, "method": m, "by_type": group, "by_file": group}},
    }
    report["suites"]["extraction"] = {
        "kind": "extraction",
        "analysis_keys": ["ocr_robustness", "verdict_counts"],
        "ocr_robustness": [
            {"extractor": m, "reference": m, "metric": m, "variant": m, "n": 6, "verdict": m}
        ],
        "verdict_counts": [{"extractor": m, "variant": m, m: 3}],
    }
    report["suites"]["omnidocbench"] = {
        "kind": "omnidocbench",
        "analysis_keys": ["omnidocbench", m],
        "omnidocbench": {m: {"pages": m, "leaderboard": {}, "by_attribute": {m: {"pages": 1}}}},
        m: [{m: m}],  # an analysis without a renderer: the generic table
    }
    return report


@settings(max_examples=25, deadline=None)
@given(text=HOSTILE)
def test_any_text_is_escaped_exactly_once_everywhere(text: str) -> None:
    safe = Page(render_html(hostile_report(marker(SAFE))))
    page = Page(render_html(hostile_report(marker(text))))
    assert page.tags == safe.tags  # no text became markup
    assert safe.count(marker(SAFE)) >= 60  # the marker really is in all those places
    assert page.count(marker(text)) == safe.count(marker(SAFE))  # each read back as written


@settings(max_examples=50, deadline=None)
@given(text=HOSTILE)
def test_building_blocks_escape_text_once(text: str) -> None:
    m = marker(text)
    escaped = html.escape(m, quote=True)  # stdlib: an escape written independently
    for block in (
        html_table([m], [[m, 1.5, None]]),
        generic(m, [{m: m}], None),  # type: ignore[arg-type]  # `generic` never reads it
        generic(m, {"nested": [m]}, None),  # type: ignore[arg-type]  # JSON in a <pre>
    ):
        assert isinstance(block, Markup)
        parsed = Page(str(block))
        assert all(tag[0].strip("/") in ("table", "thead", "tbody", "tr", "th", "td", "h3",
                                         "span", "pre") for tag in parsed.tags)  # fmt: skip
        assert parsed.count(m) >= 1
        # Escaped once: the decoded text is the marker, and no escape of an escape is present.
        if escaped != m:
            assert html.escape(escaped, quote=True) not in str(block)


def test_p_values_below_a_thousandth_are_escaped() -> None:
    """Before Markup, ``fmt_p``'s ``<0.001`` went into the comparison tables unescaped."""
    report: Any = documents_report()
    report["suites"]["papers"]["comparisons"][0]["p_ttest"] = 1e-9
    document = render_html(report)
    assert '<td class="num">&lt;0.001</td>' in document
    assert "><0.001<" not in document


def test_a_renderer_that_returns_a_plain_str_is_shown_as_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A kind's analysis renderer that returns ``str`` (not Markup) has it escaped: text,
    never markup. Markup passes unchanged."""
    monkeypatch.setitem(html_analyses.SHARED, "raw", lambda key, value, view: "<b>raw</b> & co")
    report = copy.deepcopy(documents_report())
    section = report["suites"]["papers"]
    section["analysis_keys"] = ["raw"]
    section["raw"] = [1]
    body = str(html_analyses.analyses(suite_views(report)[0]))
    assert body == "&lt;b&gt;raw&lt;/b&gt; &amp; co"
    assert as_markup(Markup("<b>x</b>")) == "<b>x</b>"
    assert as_markup("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;"


def test_no_hand_escaping_left_in_the_html_code() -> None:
    """One rule for escaping: the templates. No ``esc(`` helper and no ``html.escape``."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "pytest_doceval"
    files = [
        *root.glob("html/*.py"),
        *root.glob("report/html/*.py"),
        *root.glob("kinds/*/html*.py"),
    ]
    assert len(files) > 10
    for path in files:
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"\besc\(|html\.escape", source), path
