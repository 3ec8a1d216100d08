"""The native text matcher against OmniDocBench v1.6's own code (tests/omnidocbench_reference.py):
every page's ``text_edit``, ``formula_edit`` and ``reading_order_edit``, the leaderboard means
(``ALL_page_avg``) and the corpus values (``edit_whole``) equal its run within 1e-9.

Pages: the 18 demo pages with the shipped predictions and with their markdown renderings; the
demo pages with predictions generated from their annotations (blocks edited, dropped, swapped,
reversed, merged in pairs, split, joined by one newline, invented; formulas as ``$$``,
``\\[``, ``$``, as unicode text, joined into ``aligned`` and ``cases``; tables as HTML, pipe and
LaTeX; headers and footers moved; ``<div>`` paragraphs, code fences, images with formula alt
text, ``\\section``; an empty page); hand-made pages for the rules the demo set does not reach;
and pages made to pass each deadline (the merge search's, the page's). The fallbacks the pages
took are the reference's, and the run must take each kind at least once.

Skipped cleanly when ../shared/peers or the reference's dependencies are absent.
"""

from __future__ import annotations

import copy
import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import omnidocbench_reference as reference
import pytest

from pytest_doceval.kinds.omnidocbench.chunked_match import ChunkSettings
from pytest_doceval.kinds.omnidocbench.edit_scores import edit_scores
from pytest_doceval.kinds.omnidocbench.page_match import PageMatch, match_page
from pytest_doceval.kinds.omnidocbench.quick_match import MatchSettings

try:
    reference.load()
except reference.Unavailable as exc:  # pragma: no cover - depends on the machine
    pytest.skip(str(exc), allow_module_level=True)

TOLERANCE = 1e-9
METRICS = ("text_edit", "formula_edit", "reading_order_edit")
Block = tuple[str, str]  # (kind, markdown)


def _values(match: PageMatch) -> dict[str, tuple[int, int, float | None]]:
    scores = edit_scores(match)
    out = {}
    for metric, score in zip(METRICS, (scores.text, scores.formula, scores.order), strict=True):
        if score is not None:
            out[metric] = (score.edits, score.longer, score.value)
    return out


def assert_matcher_equal(
    pages: Sequence[Mapping[str, Any]],
    predictions: Mapping[str, str],
    settings: MatchSettings | None = None,
    dataset: Mapping[str, Any] | None = None,
) -> dict[str, PageMatch]:
    """Every page's three numbers, the means and the corpus values, and the fallbacks."""
    theirs = reference.run(pages, predictions, dataset, tables=False)
    matches = {}
    sums = {m: [0, 0] for m in METRICS}
    means: dict[str, list[float]] = {m: [] for m in METRICS}
    for page in pages:
        name = reference.image_name(page)
        match = matches[name] = match_page(page, predictions[name], settings)
        ours = _values(match)
        expected = {m: v for m, v in theirs.pages.get(name, {}).items() if m in METRICS}
        values = {m: v[2] for m, v in ours.items() if v[2] is not None}
        assert set(values) == set(expected), f"{name}: metrics {set(values)} vs {set(expected)}"
        for metric, value in values.items():
            assert math.isclose(value, expected[metric], rel_tol=0, abs_tol=TOLERANCE), (
                f"{name}: {metric} ours {value!r}, reference {expected[metric]!r}"
            )
            means[metric].append(value)
        for metric, (edits, longer, _) in ours.items():
            sums[metric][0] += edits
            sums[metric][1] += longer
        for reason in ("quick_match_timeout", "page_timeout"):
            took = reason in match.log.fallbacks
            assert took == (name in theirs.fallbacks.get(reason, ())), f"{name}: {reason}"
    for metric in METRICS:
        if means[metric]:
            mean = sum(means[metric]) / len(means[metric])
            assert math.isclose(mean, theirs.leaderboard[metric], rel_tol=0, abs_tol=TOLERANCE)
        edits, longer = sums[metric]
        if longer:
            whole = theirs.leaderboard[f"{metric}_whole"]
            assert math.isclose(edits / longer, whole, rel_tol=0, abs_tol=TOLERANCE), metric
    return matches


def _renamed(page: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    out = copy.deepcopy(dict(page))
    out["page_info"]["image_path"] = f"{prefix}--{reference.image_name(page)}"
    return out


# -- the demo pages -------------------------------------------------------------------------------


def test_demo_pages_with_the_shipped_predictions() -> None:
    pages = reference.demo_pages()
    predictions = {reference.image_name(p): reference.demo_prediction(p) or "" for p in pages}
    matches = assert_matcher_equal(pages, predictions)
    assert all(any(m in _values(x) for x in matches.values()) for m in METRICS)


def test_demo_pages_with_their_markdown_renderings() -> None:
    folder = reference.DEMO / "omnidocbench_demo" / "mds"
    pages, predictions = [], {}
    for page in reference.demo_pages():
        path = folder / (reference.image_name(page).rsplit(".", 1)[0] + ".md")
        renamed = _renamed(page, "mds")
        pages.append(renamed)
        predictions[reference.image_name(renamed)] = path.read_text("utf-8")
    assert_matcher_equal(pages, predictions)


# -- predictions generated from the annotations ---------------------------------------------


def truth_blocks(page: Mapping[str, Any]) -> list[Block]:
    """The page's truth as markdown blocks in reading order."""
    out = []
    for d in sorted(page["layout_dets"], key=lambda d: d.get("order") or 0):
        kind = d["category_type"]
        if kind == "equation_isolated" and d.get("latex"):
            out.append(("math", str(d["latex"]).strip("$ \n")))
        elif kind == "table" and d.get("html"):
            out.append(("table", str(d["html"])))
        elif kind == "title" and d.get("text"):
            out.append(("title", "# " + str(d["text"])))
        elif kind in ("header", "footer", "page_number", "page_footnote") and d.get("text"):
            out.append(("margin", str(d["text"])))
        elif d.get("text") and kind != "figure":
            out.append(("text", str(d["text"])))
    return out


def _math(text: str, how: str) -> str:
    if how == "$$":
        return f"$$\n{text}\n$$"
    if how == "\\[":
        return f"\\[ {text} \\]"
    return f"${text}$"


def _pipe(html: str) -> str:
    rows = [
        [
            re.sub(r"<[^>]+>", "", c).strip()
            for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S)
        ]
        for r in re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.S)
    ]
    rows = [r for r in rows if r] or [["x"]]
    width = max(len(r) for r in rows)
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    return "\n".join([lines[0], "|" + "---|" * width, *lines[1:]])


def _latex_table(html: str) -> str:
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", html, re.S)]
    return "\\begin{tabular}{ll}\n" + " & ".join(cells[:2] or ["x"]) + " \\\\\n\\end{tabular}"


def render(
    blocks: Sequence[Block], math: str = "$$", tables: str = "html", sep: str = "\n\n"
) -> str:
    def one(kind: str, text: str) -> str:
        if kind == "math":
            return _math(text, math)
        if kind == "table":
            return {"html": text, "pipe": _pipe(text), "latex": _latex_table(text)}[tables]
        return text

    return sep.join(one(kind, text) for kind, text in blocks)


def _edited(text: str, rng: random.Random, every: int = 15) -> str:
    chars = list(text)
    for _ in range(max(1, len(chars) // every)):
        if chars:
            chars[rng.randrange(len(chars))] = rng.choice("xyz ")
    return "".join(chars)


def _split(blocks: Sequence[Block], parts: int) -> list[Block]:
    out: list[Block] = []
    for kind, text in blocks:
        if kind == "text" and len(text) > 30 * parts:
            step = len(text) // parts
            out += [
                (kind, text[i * step : (i + 1) * step if i < parts - 1 else None])
                for i in range(parts)
            ]
        else:
            out.append((kind, text))
    return out


def _pairs(blocks: Sequence[Block]) -> list[Block]:
    out = []
    for i in range(0, len(blocks), 2):
        chunk = blocks[i : i + 2]
        out.append(("text", " ".join(text for _, text in chunk)))
    return out


def _swapped(blocks: Sequence[Block]) -> list[Block]:
    out = list(blocks)
    for i in range(0, len(out) - 1, 3):
        out[i], out[i + 1] = out[i + 1], out[i]
    return out


def _as_text(latex: str) -> str:
    """A formula as a parser that writes unicode might: commands to symbols, no braces."""
    for command, symbol in (
        ("\\alpha", "α"),
        ("\\beta", "β"),
        ("\\times", "×"),
        ("\\leq", "≤"),
        ("\\pi", "π"),
        ("\\infty", "∞"),
        ("\\cdot", "·"),
        ("\\sum", "∑"),
    ):
        latex = latex.replace(command, symbol)
    return re.sub(r"\\[A-Za-z]+|[{}]", "", latex).strip()


def _joined_formulas(blocks: Sequence[Block], env: str) -> list[Block]:
    out: list[Block] = []
    run: list[str] = []
    for kind, text in [*blocks, ("end", "")]:
        if kind == "math":
            run.append(text)
            continue
        if len(run) >= 2:
            rows = " \\\\ ".join(("& " if env == "aligned" else "") + r for r in run)
            out.append(("math", f"\\begin{{{env}}} {rows} \\end{{{env}}}"))
        else:
            out += [("math", r) for r in run]
        run = []
        if kind != "end":
            out.append((kind, text))
    return out


INVENTED: Block = (
    "text",
    "An invented paragraph that no annotation holds, about the ferries at nine.",
)
Variant = Callable[[list[Block], random.Random], str]
VARIANTS: Mapping[str, Variant] = {
    "truth": lambda b, r: render(b),
    "edited": lambda b, r: render([(k, _edited(t, r)) for k, t in b]),
    "heavily-edited": lambda b, r: render([(k, _edited(t, r, 3)) for k, t in b]),
    "dropped": lambda b, r: render([x for i, x in enumerate(b) if i % 3 != 1]),
    "swapped": lambda b, r: render(_swapped(b)),
    "reversed": lambda b, r: render(list(reversed(b))),
    "one-newline": lambda b, r: render(b, sep="\n"),
    "merged-pairs": lambda b, r: render(_pairs(b)),
    "split": lambda b, r: render(_split(b, 2)),
    "split-three": lambda b, r: render(_split([(k, _edited(t, r, 40)) for k, t in b], 3)),
    "invented": lambda b, r: render([INVENTED, *b[:2], INVENTED, *b[2:]]),
    "bracket-math": lambda b, r: render(b, math="\\["),
    "inline-math": lambda b, r: render(b, math="$"),
    "math-as-text": lambda b, r: render(
        [("text", _as_text(t)) if k == "math" else (k, t) for k, t in b]
    ),
    "aligned": lambda b, r: render(_joined_formulas(b, "aligned")),
    "cases": lambda b, r: render(
        _joined_formulas(
            [(k, t + " \\Rightarrow x") if k == "math" else (k, t) for k, t in b], "cases"
        )
    ),
    "pipe-tables": lambda b, r: render(b, tables="pipe"),
    "latex-tables": lambda b, r: render(b, tables="latex"),
    "margins-moved": lambda b, r: render(
        [x for x in b if x[0] != "margin"][:2]
        + [x for x in b if x[0] == "margin"]
        + [x for x in b if x[0] != "margin"][2:]
    ),
    "div-paragraphs": lambda b, r: render(
        [(k, f"<div><span>{t}</span><br>x</div>") if k == "text" else (k, t) for k, t in b]
    ),
    "code-and-images": lambda b, r: (
        "![a = 2 + 3 = 5](f.png)\n\n```python\nx = 1\n``` trailing\n\n\\section{Head}\n\n"
        + render(b)
    ),
    "empty": lambda b, r: "",
}


@pytest.mark.slow
def test_generated_predictions() -> None:
    rng = random.Random(34)
    pages, predictions = [], {}
    for variant, make in VARIANTS.items():
        for page in reference.demo_pages():
            renamed = _renamed(page, variant)
            pages.append(renamed)
            predictions[reference.image_name(renamed)] = make(truth_blocks(page), rng)
    matches = assert_matcher_equal(pages, predictions)
    taken = {f.split(" ")[0] for m in matches.values() for f in m.log.fallbacks}
    candidates = {m.log.formula_candidate for m in matches.values()} - {None}
    # The generated pages reach the text-span fallback and formula candidates besides the
    # text matcher's own (the deadlines are the next test's).
    assert "text_span" in taken and len(candidates) >= 2, (taken, candidates)


def test_a_few_generated_variants() -> None:
    """A fast subset of the generated pages (the slow test runs them all)."""
    rng = random.Random(7)
    pages, predictions = [], {}
    for variant in ("edited", "split", "one-newline", "math-as-text", "aligned", "div-paragraphs"):
        for page in reference.demo_pages()[2:6]:
            renamed = _renamed(page, variant)
            pages.append(renamed)
            predictions[reference.image_name(renamed)] = VARIANTS[variant](truth_blocks(page), rng)
    assert_matcher_equal(pages, predictions)


# -- the deadlines --------------------------------------------------------------------------------


def test_pages_past_each_deadline_take_the_chunked_fallback() -> None:
    rng = random.Random(3)
    pages, predictions = [], {}
    for page in reference.demo_pages():
        for variant in ("edited", "split"):
            renamed = _renamed(page, variant)
            pages.append(renamed)
            predictions[reference.image_name(renamed)] = VARIANTS[variant](truth_blocks(page), rng)
    tiny = 1e-9
    merge = assert_matcher_equal(
        pages,
        predictions,
        MatchSettings(truncated_timeout_s=tiny, chunks=ChunkSettings()),
        {"quick_match_truncated_timeout_sec": tiny},
    )
    assert any("quick_match_timeout" in m.log.fallbacks for m in merge.values())
    page_level = assert_matcher_equal(
        pages, predictions, MatchSettings(page_timeout_s=tiny), {"match_timeout_sec": tiny}
    )
    assert all("page_timeout" in m.log.fallbacks for m in page_level.values())
    assert all(m.log.deadlines for m in page_level.values())


# -- hand-made pages ------------------------------------------------------------------------------


def _page(
    name: str, *dets: dict[str, Any], relations: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "layout_dets": [{"anno_id": i, **d} for i, d in enumerate(dets, start=1)],
        "extra": {"relation": relations or []},
        "page_info": {"image_path": name, "page_attribute": {}},
    }


def _text(order: Any, text: str, kind: str = "text_block", **extra: Any) -> dict[str, Any]:
    return {"category_type": kind, "order": order, "text": text, **extra}


def _formula(order: Any, latex: str) -> dict[str, Any]:
    return {"category_type": "equation_isolated", "order": order, "latex": latex}


LONG = (
    "The committee met on a grey Tuesday to weigh the harbour's new timetable, and after two "
    "hours of argument agreed that the ferries would keep their summer hours until October."
)
EDGE_PAGES = {
    # A block that normalises to nothing shifts the positions of the lines after it.
    "punctuation.jpg": (
        _page(
            "punctuation.jpg",
            _text(1, "***"),
            _text(2, "First real paragraph here."),
            _text(3, "Second real paragraph here."),
        ),
        "First real paragraph here.\n\nSecond real paragraph here.",
    ),
    "truncated.jpg": (
        _page(
            "truncated.jpg",
            _text(1, LONG[:80]),
            _text(2, LONG[80:]),
            relations=[{"relation_type": "truncated", "source_anno_id": 1, "target_anno_id": 2}],
        ),
        LONG[:60] + "\n\n" + LONG[60:],
    ),
    "orders.jpg": (
        _page(
            "orders.jpg",
            _text(None, "No order at all here."),
            _text(0, "Order zero here."),
            _text(2, "Order two here."),
            _text(1, "A header", "header"),
        ),
        "A header\n\nOrder two here.\n\nOrder zero here.\n\nNo order at all here.",
    ),
    "ignored-only.jpg": (
        _page(
            "ignored-only.jpg",
            _text(1, "Page 7", "page_number"),
            _text(2, "Figure 1: a cat", "figure_caption"),
        ),
        "Figure 1: a cat\n\nPage 7\n\nstray text",
    ),
    "formulas.jpg": (
        _page(
            "formulas.jpg",
            _formula(1, "a+b=c"),
            _formula(2, "\\begin{aligned} x&=1 \\\\ y&=2 \\end{aligned}"),
            _text(3, "where $x_1$ is small and $\\alpha^2$ large"),
            _formula(4, "\\begin{cases} x>0 \\Rightarrow y \\\\ \\therefore z<1 \\end{cases}"),
        ),
        "$$a+b=c$$\n\n$$x=1 \\\\ y=2$$\n\nwhere $x_1$ is small and α² large\n\n"
        "\\[\\begin{cases} x>0 \\Rightarrow y \\\\ \\therefore z<1 \\end{cases}\\]\n\n$x_1$",
    ),
    "margins.jpg": (
        _page("margins.jpg", _formula(1, "E=mc^{2}")),
        "$$ (3) \\quad E=mc^{2} \\quad \\text{for a body at rest here} $$\n\n"
        "$$ 1+2=3 \\quad 4-1=3 $$",
    ),
    "chinese.jpg": (
        _page(
            "chinese.jpg", _text(1, "解方程：3×4=12，所以答案是十二。"), _formula(2, "3\\times4=12")
        ),
        "解方程：3×4=12，所以答案是十二。\n\n3×4=12",
    ),
    "title-span.jpg": (
        _page("title-span.jpg", _text(1, "A Long Title Of The Report", "title"), _text(2, LONG)),
        "A Long\n\nTitle Of The Report\n\n" + LONG,
    ),
}


def test_hand_made_pages() -> None:
    pages = [page for page, _ in EDGE_PAGES.values()]
    predictions = {name: markdown for name, (_, markdown) in EDGE_PAGES.items()}
    assert_matcher_equal(pages, predictions)
