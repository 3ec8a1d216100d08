"""GriTS (issue 36) against its authors' package, ``grits-metric`` 0.7.0 (the ``dev`` extra):
the grid placement against its HTML conversion, the true-positive score of one pair of tables
(Con, Top, Loc) against its ``grits_*_matching``, and a document's tables against its
``hungarian_grits_*``, on hypothesis-generated tables; then hand-computed values and the
documents kind's tables, cases and bad input."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.kinds.documents.table_grits import grid_of, score_grits
from pytest_doceval.kinds.documents.table_trees import read_tables
from pytest_doceval.kinds.documents.tables import score_tables
from pytest_doceval.metrics.grits import (
    GridCell,
    GritsInputError,
    TableGrid,
    grits,
    table_grid,
    true_positive_score,
)

reference = pytest.importorskip("grits", reason="grits-metric (the dev extra) is the reference")
conversion = pytest.importorskip("grits.conversion")

CASES = Path(__file__).parent.parent / "cases"

# Few distinct texts, so that equal and overlapping cells are common (the alignments' ties).
texts = st.sampled_from(["", "a", "ab", "abc", "b a", "12", "1.5", "표", "Σx"])
cells = st.builds(
    GridCell,
    texts,
    st.sampled_from([1, 1, 1, 2, 3]),
    st.sampled_from([1, 1, 1, 2]),
)
tables = st.lists(st.lists(cells, max_size=5), min_size=1, max_size=6)


def as_html(rows: Sequence[Sequence[GridCell]]) -> str:
    body = "".join(
        "<tr>"
        + "".join(
            f'<td colspan="{c.colspan}" rowspan="{c.rowspan}">{html.escape(c.text)}</td>'
            for c in row
        )
        + "</tr>"
        for row in rows
    )
    return f"<table>{body}</table>"


def ref_cells(rows: Sequence[Sequence[GridCell]]) -> list[object]:
    """The package's cells of the same table, placed by its own HTML conversion."""
    found = conversion.html_to_cell_list(as_html(rows))
    assert found is not None
    return list(found)


def con_grid(grid: TableGrid) -> list[list[str]]:
    return [list(grid.texts[r * grid.cols : (r + 1) * grid.cols]) for r in range(grid.rows)]


def top_grid(grid: TableGrid) -> list[list[list[int]]]:
    spans = grid.spans.tolist()
    return [spans[r * grid.cols : (r + 1) * grid.cols] for r in range(grid.rows)]


@settings(deadline=None, max_examples=300)
@given(tables)
def test_placement_is_the_packages(rows: list[list[GridCell]]) -> None:
    grid = table_grid(rows)
    cell_list = ref_cells(rows)
    expected_con = conversion.cell_list_to_grid_con(cell_list)
    expected_top = conversion.cell_list_to_grid_top(cell_list)
    if grid.slots == 0:
        assert expected_con == [[]]
        return
    assert con_grid(grid) == expected_con
    assert top_grid(grid) == expected_top


@settings(deadline=None, max_examples=400)
@given(tables, tables)
def test_pair_score_is_the_packages(a: list[list[GridCell]], b: list[list[GridCell]]) -> None:
    ga, gb = table_grid(a), table_grid(b)
    if ga.slots == 0 or gb.slots == 0:
        assert true_positive_score(ga, gb, "con") == 0.0
        return
    con = reference.grits_con_matching(con_grid(ga), con_grid(gb)).true_positive_score
    top = reference.grits_top_matching(top_grid(ga), top_grid(gb)).true_positive_score
    assert true_positive_score(ga, gb, "con") == pytest.approx(con, abs=1e-9)
    assert true_positive_score(ga, gb, "top") == pytest.approx(top, abs=1e-9)


boxes = st.tuples(
    st.integers(0, 40), st.integers(0, 40), st.integers(0, 30), st.integers(0, 30)
).map(lambda t: (float(t[0]), float(t[1]), float(t[0] + t[2]), float(t[1] + t[3])))
boxed_tables = st.lists(
    st.lists(st.builds(GridCell, texts, st.just(1), st.just(1), boxes), min_size=1, max_size=4),
    min_size=1,
    max_size=4,
)


@settings(deadline=None, max_examples=200)
@given(boxed_tables, boxed_tables)
def test_loc_is_the_packages(a: list[list[GridCell]], b: list[list[GridCell]]) -> None:
    ga, gb = table_grid(a), table_grid(b)
    assert ga.boxes is not None and gb.boxes is not None

    def loc(grid: TableGrid) -> list[list[list[float]]]:
        assert grid.boxes is not None
        flat = grid.boxes.tolist()
        return [flat[r * grid.cols : (r + 1) * grid.cols] for r in range(grid.rows)]

    expected = reference.grits_loc_matching(loc(ga), loc(gb)).true_positive_score
    assert true_positive_score(ga, gb, "loc") == pytest.approx(expected, abs=1e-9)


@settings(deadline=None, max_examples=150)
@given(st.lists(tables, max_size=3), st.lists(tables, max_size=3))
def test_document_score_is_the_packages_hungarian(
    truth: list[list[list[GridCell]]], output: list[list[list[GridCell]]]
) -> None:
    truth_grids = [table_grid(t) for t in truth]
    output_grids = [table_grid(t) for t in output]
    for aspect, grid_form, package in (
        ("con", con_grid, reference.hungarian_grits_con),
        ("top", top_grid, reference.hungarian_grits_top),
    ):
        ours = grits(truth_grids, output_grids, aspect)
        if not truth_grids or not output_grids:
            assert ours.true_positive == 0.0
            continue
        f1, precision, recall = package(
            [grid_form(g) if g.slots else [[]] for g in truth_grids],
            [grid_form(g) if g.slots else [[]] for g in output_grids],
        )
        # The package keeps the pair scores in float32.
        assert ours.f1 == pytest.approx(f1, abs=1e-6)
        assert ours.precision == pytest.approx(precision, abs=1e-6)
        assert ours.recall == pytest.approx(recall, abs=1e-6)


def test_the_packages_readme_examples_by_hand() -> None:
    """The package README's numbers, by hand: '95' against '90' share '9' (2 x 1 / 4 = 0.5),
    the other three cells are equal, so TP = 3.5 of 4 slots a side and GriTS-Con = 7 / 8."""
    name = [GridCell("Name"), GridCell("Score")]
    truth = table_grid([name, [GridCell("Alice"), GridCell("95")]])
    output = table_grid([name, [GridCell("Alice"), GridCell("90")]])
    assert grits([truth], [output], "con").f1 == 0.875
    assert grits([truth], [output], "top").f1 == 1.0
    # Two tables in swapped order are paired by content: 3.5 + 4 of 8 slots each side.
    city = table_grid([[GridCell("City"), GridCell("Pop")], [GridCell("NYC"), GridCell("8M")]])
    assert grits([truth, city], [city, output], "con").f1 == pytest.approx(15 / 16)


def test_spans_by_hand() -> None:
    """A header cell spanning two columns against two unmerged cells: the span grid of the
    merged cell is [0,0,2,1] and [-1,0,1,1] (IoU 1/2 with [0,0,1,1] each), so Top's TP is
    1/2 + 1/2 + 2 = 3 of 4 slots."""
    merged = table_grid([[GridCell("h", colspan=2)], [GridCell("a"), GridCell("b")]])
    split = table_grid([[GridCell("h"), GridCell("")], [GridCell("a"), GridCell("b")]])
    assert merged.spans.tolist()[:2] == [[0, 0, 2, 1], [-1, 0, 1, 1]]
    assert true_positive_score(merged, split, "top") == 3.0
    # Con: the merged cell's text fills both slots; "h" against "" scores 0.
    assert true_positive_score(merged, split, "con") == 3.0


def test_missing_and_invented_tables_cost_their_slots() -> None:
    t = table_grid([[GridCell("a"), GridCell("b")]])
    assert grits([t], [], "con").f1 == 0.0  # found nothing: recall 0
    assert grits([t], [t, t], "con").f1 == pytest.approx(2 * 2 / (2 + 4))
    empty = table_grid([])
    assert empty.slots == 0
    assert grits([t, empty], [t], "con").f1 == 1.0  # a table without cells counts nothing


def test_bad_input_is_refused() -> None:
    with pytest.raises(GritsInputError, match="box"):
        table_grid([[GridCell("a", box=(5.0, 0.0, 1.0, 1.0))]])
    with pytest.raises(GritsInputError, match="spans"):
        table_grid([[GridCell("a", colspan=0)]])
    plain = table_grid([[GridCell("a")]])
    with pytest.raises(GritsInputError, match="Loc needs a box"):
        true_positive_score(plain, plain, "loc")
    with pytest.raises(ValueError, match="aspect"):
        grits([plain], [plain], "colour")  # type: ignore[arg-type]


def test_documents_tables_against_the_package_on_their_html() -> None:
    """The shipped truths' tables: our reading then GriTS equals the package on the HTML of
    the same cells, for each case against a degraded copy (a row dropped, a cell changed)."""
    for truth_file in sorted(CASES.glob("tables/*/truth.md")):
        tables = read_tables(truth_file.read_text(encoding="utf-8")).tables
        assert tables
        for table in tables:
            rows = [[GridCell(c.text, c.colspan, c.rowspan) for c in r] for r in table.rows]
            damaged = [list(r) for r in rows[1:]]
            if damaged and damaged[0]:
                damaged[0][0] = GridCell(damaged[0][0].text + "x", damaged[0][0].colspan)
            ours = grits([grid_of(table)], [table_grid(damaged)], "con")
            ref_t = conversion.html_to_grids(as_html(rows))
            ref_o = conversion.html_to_grids(as_html(damaged)) if damaged else {"con": [[]]}
            f1, _, _ = reference.hungarian_grits_con([ref_t["con"]], [ref_o["con"]])
            assert ours.f1 == pytest.approx(f1, abs=1e-6), truth_file


def test_documents_case_metrics_and_corpus_counts() -> None:
    truth = "| a | b |\n|---|---|\n| 1 | 2 |\n"
    output = "| a | b |\n|---|---|\n| 1 | 3 |\n\n| x |\n|---|\n| y |\n"
    scores = score_tables(truth, output)
    # 3 of 4 cells right, one invented 2-slot table: 2 x 3 / (4 + 6)
    assert scores.metrics["grits_con"] == pytest.approx(0.6)
    assert scores.counts["grits_con/slots"] == {"matched": 6.0, "total": 10.0}
    assert scores.metrics["grits_top"] == pytest.approx(2 * 4 / 10)


def test_truth_tables_without_cells_give_no_grits() -> None:
    scored = score_grits(read_tables("<table></table>").tables, [])
    assert scored.metrics == {}
    assert any("no cells" in note for note in scored.notes)


# ----------------------------------------------------------------- the omnidocbench kind

html_cell = st.sampled_from(["", "a", "Total", "12.5", " x  y ", "<b>bold</b>", "中文", "a<br>b"])


@st.composite
def html_tables(draw: st.DrawFn) -> str:
    rows = []
    for _ in range(draw(st.integers(1, 4))):
        cells = []
        for _ in range(draw(st.integers(1, 3))):
            span = draw(st.sampled_from(["", "", ' colspan="2"', ' rowspan="2"', ' colspan="x"']))
            tag = draw(st.sampled_from(["td", "td", "th"]))
            cells.append(f"<{tag}{span}>{draw(html_cell)}</{tag}>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return "<table>" + "".join(rows) + "</table>"


@settings(deadline=None, max_examples=150)
@given(st.lists(html_tables(), min_size=1, max_size=2), st.lists(html_tables(), max_size=2))
def test_omnidocbench_page_grits_is_the_package_on_its_normalised_html(
    truth: list[str], predicted: list[str]
) -> None:
    """The omnidocbench kind reads each table as its TEDS does (OmniDocBench's normaliser),
    then as the package reads HTML: the package's html_to_grids on the same HTML agrees."""
    from pytest_doceval.kinds.omnidocbench.table_html import normalised_table_html
    from pytest_doceval.kinds.omnidocbench.tables import page_grits

    def grids(markup: str) -> dict[str, object]:
        found = conversion.html_to_grids(normalised_table_html(markup) or markup)
        return found if found is not None else {"con": [[]], "top": [[]]}

    ours = page_grits(truth, predicted)
    ref_t, ref_p = [grids(t) for t in truth], [grids(p) for p in predicted]
    if not any(g["con"] != [[]] for g in ref_t):
        assert ours == {}
        return
    for aspect, package in (
        ("con", reference.hungarian_grits_con),
        ("top", reference.hungarian_grits_top),
    ):
        if not ref_p:
            assert ours[f"grits_{aspect}"] == 0.0
            continue
        f1, _, _ = package([g[aspect] for g in ref_t], [g[aspect] for g in ref_p])
        assert ours[f"grits_{aspect}"] == pytest.approx(f1, abs=1e-6)
