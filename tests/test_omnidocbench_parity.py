"""Our OmniDocBench scoring against OmniDocBench v1.6's own code (tests/omnidocbench_reference.py).

Every metric `score_page` gives must equal, to 1e-9 per page and for the leaderboard, what the
reference computes when run as its `configs/end2end.yaml` runs it, on the 18 demo pages with the
shipped predictions, with the demo's markdown renderings, and with predictions generated here
from the annotations (tables dropped, merged, reordered, invented, edited; HTML, pipe and LaTeX
tables; display math; an empty page). Skipped cleanly when ../shared/peers or the reference's
dependencies are absent.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import omnidocbench_reference as reference
import pytest
from bs4 import BeautifulSoup

from pytest_doceval.kinds.omnidocbench.scoring import (
    PAGE_METRICS,
    PageScore,
    leaderboard,
    score_page,
)

try:
    reference.load()
except reference.Unavailable as exc:  # pragma: no cover - depends on the machine
    pytest.skip(str(exc), allow_module_level=True)

TOLERANCE = 1e-9


def _assert_page_equal(name: str, ours: PageScore, theirs: Mapping[str, float]) -> None:
    for metric, value in ours.metrics.items():
        assert metric in theirs, f"{name}: we give {metric}, the reference does not"
        assert math.isclose(value, theirs[metric], rel_tol=0, abs_tol=TOLERANCE), (
            f"{name}: {metric} ours {value!r}, reference {theirs[metric]!r}"
        )
    for metric in ("table_teds", "table_teds_s"):
        assert (metric in ours.metrics) == (metric in theirs), f"{name}: {metric} presence"


def _assert_run_equal(
    pages: Sequence[Mapping[str, Any]], predictions: Mapping[str, str | None]
) -> None:
    theirs = reference.run(pages, predictions)
    ours = []
    for page in pages:
        name = reference.image_name(page)
        score = score_page(page, predictions.get(name) or "")
        _assert_page_equal(name, score, theirs.pages.get(name, {}))
        ours.append(score)
    board = leaderboard(ours)
    for metric, value in board.items():
        assert math.isclose(value, theirs.leaderboard[metric], rel_tol=0, abs_tol=TOLERANCE), (
            f"leaderboard {metric}: ours {value!r}, reference {theirs.leaderboard[metric]!r}"
        )
    assert "table_teds" in board or not any("table_teds" in p for p in theirs.pages.values())


def test_demo_pages_with_the_shipped_predictions() -> None:
    pages = reference.demo_pages()
    _assert_run_equal(pages, {reference.image_name(p): reference.demo_prediction(p) for p in pages})


def test_demo_pages_with_their_markdown_renderings() -> None:
    pages = [
        p
        for p in reference.demo_pages()
        if any(d["category_type"] == "table" for d in p["layout_dets"])
    ]
    folder = reference.DEMO / "omnidocbench_demo" / "mds"
    predictions = {}
    for page in pages:
        path = folder / (reference.image_name(page).rsplit(".", 1)[0] + ".md")
        predictions[reference.image_name(page)] = (
            path.read_text("utf-8") if path.is_file() else None
        )
    _assert_run_equal(pages, predictions)


# --- predictions generated from the annotations --------------------------------------------


def _rows(table_html: str) -> list[list[str]]:
    soup = BeautifulSoup(table_html, "html.parser")
    return [
        [" ".join(c.get_text(" ").split()) for c in tr.find_all(["td", "th"])]
        for tr in soup.find_all("tr")
    ]


def _pipe(table_html: str) -> str:
    rows = [r for r in _rows(table_html) if r] or [["x"]]
    width = max(len(r) for r in rows)
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    return "\n".join([lines[0], "|" + "---|" * width, *lines[1:]])


def _latex(table_html: str) -> str:
    rows = _rows(table_html) or [["x"]]
    body = " \\\\\n".join(" & ".join(r) for r in rows)
    return "\\begin{tabular}{" + "l" * max(len(r) for r in rows) + "}\n" + body + "\n\\end{tabular}"


def _headed(table_html: str) -> str:
    # The first row as a header row in a thead, cells as th: what VLMs often write.
    soup = BeautifulSoup(table_html, "html.parser")
    first = soup.find("tr")
    if first is not None:
        for cell in first.find_all("td"):
            cell.name = "th"
        first.wrap(soup.new_tag("thead"))
    return "```html\n" + str(soup) + "\n```"


def _edited(table_html: str, rng: random.Random) -> str:
    soup = BeautifulSoup(table_html, "html.parser")
    cells = soup.find_all("td")
    if cells:
        rng.choice(cells).decompose()
    for cell in soup.find_all("td")[: rng.randint(0, 3)]:
        cell.string = (cell.get_text() or "a")[::-1] + "7"
    return str(soup)


def _blocks(page: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = []
    for d in sorted(page["layout_dets"], key=lambda d: d.get("order") or 0):
        kind = d["category_type"]
        if kind == "table" and d.get("html"):
            out.append(("table", str(d["html"])))
        elif kind == "equation_isolated" and d.get("latex"):
            out.append(("math", "$$\n" + str(d["latex"]).strip("$ \n") + "\n$$"))
        elif kind == "title" and d.get("text"):
            out.append(("text", "# " + str(d["text"])))
        elif d.get("text") and kind not in ("figure",):
            out.append(("text", str(d["text"])))
    return out


INVENTED_TABLE = (
    "<table><tr><td>Invented</td><td>42</td></tr><tr><td>row</td><td>7</td></tr></table>"
)
INVENTED_PIPE = "| made | up |\n| --- | --- |\n| 1 | 2 |"


def _variant(name: str) -> Callable[[list[tuple[str, str]], random.Random], str]:
    def join(blocks: list[tuple[str, str]], sep: str = "\n\n") -> str:
        return sep.join(text for _, text in blocks)

    def tables(blocks: list[tuple[str, str]], how: Callable[[str], str]) -> list[tuple[str, str]]:
        return [(k, how(t) if k == "table" else t) for k, t in blocks]

    variants: dict[str, Callable[[list[tuple[str, str]], random.Random], str]] = {
        "html": lambda b, r: join(b),
        "pipe": lambda b, r: join(tables(b, _pipe)),
        "headed-fenced": lambda b, r: join(tables(b, _headed)),
        "latex": lambda b, r: join(tables(b, _latex)),
        "edited": lambda b, r: join(tables(b, lambda t: _edited(t, r))),
        "dropped": lambda b, r: join(
            [x for i, x in enumerate(b) if not (x[0] == "table" and i % 2 == 0) and i % 3]
        ),
        "reordered": lambda b, r: join(list(reversed(b))),
        "invented": lambda b, r: join(
            [*b[:1], ("table", INVENTED_TABLE), *b[1:], ("table", INVENTED_PIPE)]
        ),
        "merged": lambda b, r: join(tables(b, _pipe), sep="\n"),
        "math-around": lambda b, r: join(
            [("math", "\\[ a | b \\]"), *tables(b, _pipe), ("math", "$x|y$")]
        ),
        "empty": lambda b, r: "",
    }
    return variants[name]


VARIANTS = (
    "html",
    "pipe",
    "headed-fenced",
    "latex",
    "edited",
    "dropped",
    "reordered",
    "invented",
    "merged",
    "math-around",
    "empty",
)


@pytest.mark.slow
def test_generated_predictions() -> None:
    rng = random.Random(25)
    pages, predictions = [], {}
    with_tables = [
        p
        for p in reference.demo_pages()
        if any(d["category_type"] == "table" for d in p["layout_dets"])
    ]
    for variant in VARIANTS:
        for page in with_tables:
            renamed = copy.deepcopy(page)
            name = f"{variant}--{reference.image_name(page)}"
            renamed["page_info"]["image_path"] = name
            pages.append(renamed)
            predictions[name] = _variant(variant)(_blocks(page), rng)
    _assert_run_equal(pages, predictions)


def test_empty_prediction_is_noted() -> None:
    page = next(
        p
        for p in reference.demo_pages()
        if any(d["category_type"] == "table" for d in p["layout_dets"])
    )
    score = score_page(page, "  \n")
    assert score.metrics["table_teds"] == 0.0 and score.metrics["table_teds_s"] == 0.0
    assert any("empty prediction" in note for note in score.notes)
    assert set(score.metrics) <= set(PAGE_METRICS)


def test_edge_pages() -> None:
    """Pages built by hand for the rules the demo set does not reach: a table in a truncated
    group with an ignored member (page counted at 0), an ignored table, a table the prediction
    misses, a prediction whose only table is invented, a LaTeX tabular (empty table)."""
    table = "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>"
    other = "<table><tr><td>x</td></tr></table>"

    def page(name: str, *dets: dict[str, Any], truncated: bool = False) -> dict[str, Any]:
        relation = [{"relation_type": "truncated", "source_anno_id": 1, "target_anno_id": 2}]
        return {
            "layout_dets": list(dets),
            "extra": {"relation": relation if truncated else []},
            "page_info": {"image_path": name, "page_attribute": {}},
        }

    def tab(anno_id: int, order: int, html: str = table, **extra: Any) -> dict[str, Any]:
        return {"category_type": "table", "anno_id": anno_id, "order": order, "html": html, **extra}

    ignored_text = {
        "category_type": "text_block",
        "anno_id": 2,
        "order": 2,
        "text": "b",
        "ignore": True,
    }
    pages = [
        page("truncated.jpg", tab(1, 1, text="a"), ignored_text, truncated=True),
        page("ignored.jpg", tab(1, 1, ignore=True), tab(2, 2, other)),
        page("missing.jpg", tab(1, 1), tab(2, 2, other)),
        page("invented.jpg", tab(1, 1)),
        page("latex.jpg", tab(1, 1), tab(2, 2, other)),
    ]
    predictions = {
        "truncated.jpg": table,
        "ignored.jpg": table + "\n\n" + other,
        "missing.jpg": other,
        "invented.jpg": INVENTED_TABLE,
        "latex.jpg": "\\begin{tabular}{ll}\na & b \\\\\n1 & 2\n\\end{tabular}\n\n" + other,
    }
    _assert_run_equal(pages, predictions)
