"""Every verdict equals olmOCR-bench's own checker (``../shared/peers/olmocr-bench`` at f7cfe4c).

The reference is imported from the peers folder (on ``sys.path`` in this test only) and skipped
cleanly when the folder or its light dependencies (rapidfuzz, fuzzysearch, beautifulsoup4, tqdm)
are missing. Its KaTeX renderer needs Playwright and a browser, so ``olmocr.bench.katex.render``
is replaced by a stub that "renders" an equation as its text: the math check is then compared
only where text equality decides it (see `test_math_where_text_decides`).

Hypothesis writes (page output, fact) pairs of every type from pieces that reach the checks'
corners (markup, tags, pipes, footnote markers, superscripts, invisible characters, dashes and
quotes), with fact strings often cut from the page so that both verdicts occur. Loading is
compared too: the reference refuses a fact exactly when `parse_fact` does.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_doceval.kinds.facts import FactError, check, parse_fact

PEER = Path(__file__).resolve().parents[1].parent / "shared" / "peers" / "olmocr-bench"


def _load_reference() -> types.ModuleType:
    if not (PEER / "olmocr" / "bench" / "tests.py").is_file():
        pytest.skip(f"olmOCR-bench's checker is not at {PEER}")
    for dependency in ("rapidfuzz", "fuzzysearch", "bs4", "tqdm"):
        pytest.importorskip(dependency, reason=f"olmOCR-bench's checker needs {dependency}")
    stub = types.ModuleType("olmocr.bench.katex.render")
    stub.render_equation = lambda latex: latex  # type: ignore[attr-defined]
    stub.compare_rendered_equations = lambda a, b: a == b  # type: ignore[attr-defined]
    saved_path = list(sys.path)
    sys.modules.setdefault("olmocr.bench.katex.render", stub)
    sys.path.insert(0, str(PEER))
    try:
        return importlib.import_module("olmocr.bench.tests")
    except ImportError as exc:
        pytest.skip(f"olmOCR-bench's checker does not import: {exc}")
    finally:
        sys.path[:] = saved_path


@pytest.fixture(scope="module")
def reference() -> types.ModuleType:
    return _load_reference()


def reference_verdict(reference: types.ModuleType, fact: dict[str, Any], page: str) -> bool | None:
    """The reference's verdict, or None when it refuses the fact."""
    try:
        test = reference.load_single_test(dict(fact))
    except (reference.ValidationError, ValueError, TypeError, KeyError):
        return None
    passed, _ = test.run(page)
    return bool(passed)


def our_verdict(fact: dict[str, Any], page: str) -> bool | None:
    try:
        parsed = parse_fact(dict(fact))
    except FactError:
        return None
    result = check(parsed, page, latin_only=True)
    assert result.passed is not None, result.explanation
    return result.passed


def assert_same(reference: types.ModuleType, fact: dict[str, Any], page: str) -> None:
    theirs = reference_verdict(reference, fact, page)
    ours = our_verdict(fact, page)
    assert ours == theirs, f"fact {fact!r} on page {page!r}: ours {ours}, olmOCR-bench {theirs}"


# --- generators ---------------------------------------------------------------------------

WORDS = ["alpha", "Beta", "gamma", "ab", "a", "B", "12", "3.5", "x"]
MARKS = [
    *" \n\n\t*_#|-:^[]<>/",
    "**",
    "__",
    "<b>",
    "</b>",
    "<i>",
    "</i>",
    "<em>",
    "</em>",
    "<strong>",
    "</strong>",
    "<h1>",
    "</h1>",
    "<h2 class='x'>",
    "</h2>",
    "<br>",
    "<br/>",
    "<sup>",
    "</sup>",
    "[^1]",
    "[^1]:",
    "\u00b9",
    "\u00b2",
    "\u00b9\u00b2",
    "\n# ",
    "\n## ",
    "#\n",
    "\u2019",
    "\u201c",
    "\u2014",
    "\u00b5",
    "\u00ad",
    "\u200b",
    "e\u0301",
    "\u00a0",
    "$",
    "\\(",
    "\\)",
]
PIECES = st.sampled_from(WORDS + MARKS)
PAGE = st.lists(PIECES, max_size=40).map("".join)
SHORT = st.lists(PIECES, min_size=1, max_size=6).map("".join)


def _cut(page: str, draw: Callable[..., Any]) -> str:
    """A string for a fact: mostly a piece of the page (so facts pass too), sometimes new."""
    if page and draw(st.booleans()):
        start = draw(st.integers(0, len(page) - 1))
        end = draw(st.integers(start + 1, min(len(page), start + 30)))
        return page[start:end]
    text: str = draw(SHORT)
    return text


DIFFS = st.integers(0, 3)


@st.composite
def page_and_fact(draw: Callable[..., Any], kind: str) -> tuple[str, dict[str, Any]]:
    page: str = draw(PAGE)
    fact: dict[str, Any] = {"pdf": "d.pdf", "page": 1, "id": "f", "type": kind}
    if draw(st.booleans()):
        fact["max_diffs"] = draw(DIFFS)
    if kind in ("present", "absent"):
        fact["text"] = _cut(page, draw)
        fact["case_sensitive"] = draw(st.booleans())
        for end in ("first_n", "last_n"):
            if draw(st.integers(0, 3)) == 0:
                fact[end] = draw(st.integers(1, 40))
    elif kind == "order":
        fact["before"], fact["after"] = _cut(page, draw), _cut(page, draw)
    elif kind == "format":
        wrap = draw(st.sampled_from(["**", "__", "*", "_", "<b>", "<i>", "<em>", "<h2>", "\n# "]))
        closing = wrap.replace("<", "</") if wrap.startswith("<") else wrap.strip()
        page += wrap + draw(SHORT) + (closing if closing != "#" else "\n") + draw(PAGE)
        fact["text"] = _cut(page, draw)
        fact["format"] = draw(st.sampled_from(["heading", "bold", "italic"]))
        fact["case_sensitive"] = draw(st.booleans())
    elif kind == "footnote":
        marker = draw(st.sampled_from(["1", "2", "12", "a", "*", "1a"]))
        form = draw(st.sampled_from(["[^{}]", "[^{}]:", "<sup>{}</sup>", "<SUP class=f>{}</sup>"]))
        shown = form.format(marker) if draw(st.integers(0, 3)) else "\u00b9\u00b2"
        page += shown + draw(PAGE)
        fact["marker"] = marker
        for side in ("appears_before_marker", "appears_after_marker"):
            if draw(st.booleans()):
                fact[side] = _cut(page, draw)
    elif kind == "baseline":
        if draw(st.booleans()):
            fact["max_length"] = draw(st.integers(0, 20))
            fact["max_length_skips_image_alt_tags"] = draw(st.booleans())
        fact["max_repeats"] = draw(st.integers(1, 6))
        fact["check_disallowed_characters"] = draw(st.booleans())
        page += draw(st.sampled_from(["", "ab" * 8, "x" * 9, "\u4e2d", " \n" * 4, "![a](b.png)"]))
    return page, fact


CELLS = ["a", "b", "ab", "A", "12", "1.2", "**b**", "x y", "", "a<b>b</b>", "<i>a</i> b", "a<br>b"]
SPANS = ["", "", "", " colspan='2'", " rowspan='2'", " rowspan='0'", " colspan='x'"]


@st.composite
def _html_table(draw: Callable[..., Any], depth: int = 0) -> str:
    rows = []
    for r in range(draw(st.integers(1, 4))):
        cells = []
        for _ in range(draw(st.integers(1 if r else 0, 4))):
            tag = draw(st.sampled_from(["td", "td", "th"]))
            text = draw(st.sampled_from(CELLS))
            if depth == 0 and draw(st.integers(0, 15)) == 0:
                text += draw(_html_table(depth=1))  # a nested table
            cells.append(f"<{tag}{draw(st.sampled_from(SPANS))}>{text}</{tag}>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = draw(st.integers(0, len(rows)))
    if head and draw(st.booleans()):
        body = "<thead>" + "".join(rows[:head]) + "</thead><tbody>" + "".join(rows[head:])
        return "<table>" + body + "</tbody></table>"
    return "<table>" + "".join(rows) + "</table>"


@st.composite
def _markdown_table(draw: Callable[..., Any]) -> str:
    width = draw(st.integers(1, 4))
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        cells = [draw(st.sampled_from(CELLS)) for _ in range(draw(st.integers(1, width)))]
        lines.append(draw(st.sampled_from(["| ", "", "|"])) + " | ".join(cells) + " |")
    separator = draw(st.sampled_from(["|---|---|", "| :-- | --: |", "---|---", "|-|"]))
    lines.insert(draw(st.integers(0, len(lines))), separator)
    return "\n".join(lines)


@st.composite
def table_page_and_fact(draw: Callable[..., Any]) -> tuple[str, dict[str, Any]]:
    """A page with markdown and/or HTML tables (cells from a small vocabulary, with markup,
    spans, headings or none, nested tables) and a table fact about its cells."""
    parts = [draw(st.sampled_from(["", "Intro\n\n", "text | with pipe\n"]))]
    for _ in range(draw(st.integers(1, 2))):
        table = draw(_html_table()) if draw(st.booleans()) else draw(_markdown_table())
        parts.append(table + "\n\n")
    page = "".join(parts) + draw(st.sampled_from(["", "end"]))
    words = ["a", "b", "ab", "A", "12", "1.2", "H", "x y", "c", "a b", "ab b"]
    fact: dict[str, Any] = {"pdf": "d.pdf", "page": 1, "id": "t", "type": "table"}
    fact["cell"] = draw(st.sampled_from(words))
    for name in ("up", "down", "left", "right", "top_heading", "left_heading"):
        if draw(st.integers(0, 2)) == 0:
            fact[name] = draw(st.sampled_from(words))
    if draw(st.booleans()):
        fact["max_diffs"] = draw(DIFFS)
    fact["ignore_markdown_tables"] = draw(st.booleans())
    return page, fact


PARITY = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("kind", ["present", "absent", "order", "format", "footnote", "baseline"])
@given(data=st.data())
@PARITY
def test_every_verdict_equals_olmocr_bench(
    reference: types.ModuleType, kind: str, data: st.DataObject
) -> None:
    page, fact = data.draw(page_and_fact(kind))
    assert_same(reference, fact, page)


@given(data=st.data())
@PARITY
def test_shorter_output_passes_are_flagged_and_strict_fails_exactly_them(
    reference: types.ModuleType, data: st.DataObject
) -> None:
    """The default verdict is olmOCR-bench's; the caveat marks exactly its passes where the
    output it compared (normalised by olmOCR-bench, cut by first_n/last_n) is shorter than the
    text, and the strict profile fails exactly those."""
    page, fact = data.draw(page_and_fact("present"))
    if data.draw(st.integers(0, 3)) == 0:
        page = data.draw(st.sampled_from(["\n", " ", "\n\n", "<br>", "\t", ""]))
    theirs = reference_verdict(reference, fact, page)
    if theirs is None:
        return
    test = reference.load_single_test(dict(fact))
    content = reference.normalize_text(page)
    text = test.text if test.case_sensitive else test.text.lower()
    content = content if test.case_sensitive else content.lower()
    if test.first_n and test.last_n:
        content = content[: test.first_n] + content[-test.last_n :]
    elif test.first_n:
        content = content[: test.first_n]
    elif test.last_n:
        content = content[-test.last_n :]
    shorter_pass = theirs and len(content) < len(text)
    parsed = parse_fact(dict(fact))
    default = check(parsed, page, latin_only=True)
    strict = check(parsed, page, latin_only=True, fail_shorter=True)
    assert default.passed is theirs
    assert bool(default.caveat) is shorter_pass
    assert strict.passed is (theirs and not shorter_pass)


@pytest.mark.parametrize("page", ["\n", " ", "\n\n\n", "<br>", "<br/>\n"])
def test_a_blank_page_passes_present_as_in_olmocr_bench_with_a_caveat(
    reference: types.ModuleType, page: str
) -> None:
    """olmOCR-bench issue #461: a page that is only whitespace holds any text with a space."""
    fact = {"pdf": "d.pdf", "page": 1, "id": "p", "type": "present", "text": "Energy storage"}
    assert reference_verdict(reference, fact, page) is True
    result = check(parse_fact(fact), page, latin_only=True)
    assert result.passed is True and "(blank) is shorter" in result.caveat
    assert check(parse_fact(fact), page, latin_only=True, fail_shorter=True).passed is False


@given(pair=table_page_and_fact())
@PARITY
def test_table_verdicts_equal_olmocr_bench(
    reference: types.ModuleType, pair: tuple[str, dict[str, Any]]
) -> None:
    page, fact = pair
    assert_same(reference, fact, page)


@given(
    equations=st.lists(st.sampled_from(["x^2", "x^{2}", "a+b", " a+b ", "\\alpha"]), max_size=3),
    delimiters=st.lists(st.sampled_from(["$", "$$", "\\(", "\\["]), min_size=3, max_size=3),
    target=st.sampled_from(["x^2", "a+b", "\\alpha", "y"]),
    ignore_dollar=st.booleans(),
)
@PARITY
def test_math_where_text_decides(
    reference: types.ModuleType,
    equations: list[str],
    delimiters: list[str],
    target: str,
    ignore_dollar: bool,
) -> None:
    """With the stub renderer the reference passes exactly when an equation equals the fact as
    text; ours must pass then too, and may fail only when the page has no equation at all (it
    skips where only a rendering could decide)."""
    closing = {"$": "$", "$$": "$$", "\\(": "\\)", "\\[": "\\]"}
    page = " text ".join(f"{d}{e}{closing[d]}" for d, e in zip(delimiters, equations, strict=False))
    fact = {"pdf": "d.pdf", "page": 1, "id": "m", "type": "math", "math": target}
    fact["ignore_dollar_delimited"] = ignore_dollar
    theirs = reference_verdict(reference, fact, page)
    ours = check(parse_fact(fact), page, latin_only=True).passed
    if theirs:
        assert ours is True
    if ours is False:
        assert theirs is False


# --- the headline and its interval ---------------------------------------------------------


def _reference_utils() -> types.ModuleType:
    _load_reference()  # skips as it does
    saved = list(sys.path)
    sys.path.insert(0, str(PEER))
    try:
        return importlib.import_module("olmocr.bench.utils")
    finally:
        sys.path[:] = saved


FILES = st.dictionaries(
    st.sampled_from(["arxiv_math.jsonl", "tables.jsonl", "old_scans.jsonl", "baseline"]),
    st.lists(st.sampled_from([0.0, 1 / 3, 2 / 3, 1.0]), min_size=1, max_size=30),
    min_size=1,
)


@given(fractions_by_file=FILES)
@settings(max_examples=60, deadline=None)
def test_headline_and_micro_mean_equal_olmocr_bench_formulas(
    fractions_by_file: dict[str, list[float]],
) -> None:
    """``benchmark.py``'s two figures, retyped from its ``main`` and ``evaluate_candidate``:
    per file, passed (``test_avg > 0.5``) / total, then the mean over files; and
    ``overall_score``, the mean of every ``test_avg``."""
    from pytest_doceval.kinds.facts import FactResult, micro_mean, pass_rate

    passed_by_file = {f: [a > 0.5 for a in avgs] for f, avgs in fractions_by_file.items()}
    rates = [sum(p) / len(p) for p in passed_by_file.values()]
    headline = sum(rates) / len(rates)
    every = [a for avgs in fractions_by_file.values() for a in avgs]
    overall_score = sum(every) / len(every)
    verdicts = {
        f: [FactResult(a > 0.5, a, "", (FactResult(True, 1, ""),) * 2) for a in avgs]
        for f, avgs in fractions_by_file.items()
    }
    assert pass_rate(verdicts) == pytest.approx(headline, abs=1e-12)
    assert micro_mean(r.pass_fraction for rs in verdicts.values() for r in rs) == pytest.approx(
        overall_score, abs=1e-12
    )


def test_interval_agrees_with_olmocr_bench_bootstrap() -> None:
    """Ours (seeded numpy Generator) against ``utils.calculate_bootstrap_ci`` with ``splits``
    (numpy's global random state, unseeded there; seeded here to make the test repeatable): two
    Monte Carlo estimates of the same percentile interval, so they agree to sampling error."""
    import numpy as np

    from pytest_doceval.kinds.facts import pass_rate_ci

    utils = _reference_utils()
    rng = np.random.default_rng(7)
    files = {
        name: [bool(v) for v in rng.random(size) < p]
        for name, size, p in (("a.jsonl", 40, 0.8), ("b.jsonl", 25, 0.4), ("baseline", 12, 0.9))
    }
    ours = pass_rate_ci(files, n_resamples=4000, seed=3)
    np.random.seed(11)
    scores = [float(v) for values in files.values() for v in values]
    low, high = utils.calculate_bootstrap_ci(
        scores, n_bootstrap=4000, ci_level=0.95, splits=[len(v) for v in files.values()]
    )
    assert ours.ci_low == pytest.approx(low, abs=0.015)
    assert ours.ci_high == pytest.approx(high, abs=0.015)
    assert ours.ci_low < ours.mean < ours.ci_high


# --- hand-picked corners ------------------------------------------------------------------

TRICKY: list[tuple[str, dict[str, Any], bool | None]] = [
    # format: a heading whose "\s+" runs over the newline; <b[^>]*> also opens at <br>
    ("#\nTitle here", {"type": "format", "text": "Title", "format": "heading"}, True),
    ("a<br>bold</b>", {"type": "format", "text": "bold", "format": "bold"}, True),
    ("**Bold**", {"type": "format", "text": "Bold", "format": "italic"}, False),
    ("*it*", {"type": "format", "text": "it", "format": "italic"}, True),
    ("__x__ and _y_", {"type": "format", "text": "y", "format": "italic"}, True),
    ("<H3>Caps</h3>", {"type": "format", "text": "caps", "format": "heading"}, False),
    (
        "<H3>Caps</h3>",
        {"type": "format", "text": "caps", "format": "heading", "case_sensitive": False},
        True,
    ),
    ("plain", {"type": "format", "text": "plain", "format": "bold"}, False),
    ("x", {"type": "format", "text": "x", "format": "underline"}, None),  # not a format
    # footnote: a definition [^1]: is not a reference; superscripts; context windows
    ("See [^1]: the note", {"type": "footnote", "marker": "1"}, False),
    ("See[^1] the note", {"type": "footnote", "marker": "1", "appears_before_marker": "See"}, True),
    ("Energy\u00b9\u00b2 rises", {"type": "footnote", "marker": "12"}, True),
    ("Energy<SUP>a</SUP>", {"type": "footnote", "marker": "A"}, True),
    (
        "Energy<sup>2</sup> rises sharply",
        {"type": "footnote", "marker": "2", "appears_after_marker": "rises sharply"},
        True,
    ),
    (
        "Energy<sup>2</sup> falls",
        {"type": "footnote", "marker": "2", "appears_after_marker": "rises"},
        False,
    ),
    ("x[^1]", {"type": "footnote", "marker": "1 2"}, None),  # a space in the marker
    ("x[^1]", {"type": "footnote", "marker": "1", "appears_after_marker": "**"}, None),
    # present: an output shorter than the text is aligned inside the text (rapidfuzz swaps)
    ("phrase", {"type": "present", "text": "a phrase"}, True),
    ("Page 3", {"type": "absent", "text": "Journal Page 3", "last_n": 6}, False),
    # invisible characters are kept, as olmOCR-bench keeps them
    ("an exam\u00adple here", {"type": "present", "text": "example"}, False),
]


@pytest.mark.parametrize(("page", "fact", "expected"), TRICKY)
def test_hand_picked_corners(
    reference: types.ModuleType, page: str, fact: dict[str, Any], expected: bool | None
) -> None:
    full = {"pdf": "d.pdf", "page": 1, "id": "c", **fact}
    assert our_verdict(full, page) is expected
    assert reference_verdict(reference, full, page) is expected
