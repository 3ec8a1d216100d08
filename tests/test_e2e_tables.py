"""Table metrics as a user runs them (issue 20): a documents suite whose truths hold tables,
scored plain and under xdist, gated on table_teds, and the tables view drawn in Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_doceval.report.html import write_html
from tests.conftest import WORKERS, read_report, write_suite

pytest_plugins = ["pytester"]

CHROMIUM = Path("/usr/bin/chromium")

TRUTH = """# Survey

Counts per transect.

| Transect | Spring | Autumn |
|---|---|---|
| North reef | 42 | 37 |
| Channel | 6 | 4 |

<table><thead><tr><th></th><th colspan="2">Morning</th></tr></thead>
<tbody><tr><td rowspan="2">Gannet</td><td>06:10</td><td>09:40</td></tr>
<tr><td>07:00</td><td>10:30</td></tr></tbody></table>
"""

# A parser that finds the first table, misreads a cell, and flattens the merged one.
GOOD = TRUTH.replace("| 6 |", "| 8 |")
BAD = """# Survey

Counts per transect.

| Transect | Spring | Autumn |
|---|---|---|
| North reef 42 37 |
| Channel | 6 | 4 |

Morning Gannet 06:10 09:40 07:00 10:30
"""


def _suite(root: Path) -> Path:
    return write_suite(
        root,
        "tables",
        {
            "survey": {"truth": TRUTH, "good": GOOD, "bad": BAD},
            "plain": {"truth": "No table here.", "good": "No table here.", "bad": "| a |\n|---|"},
        },
        systems=["good", "bad"],
        gates="",
    )


@pytest.mark.parametrize("workers", WORKERS)
def test_table_metrics_rows_counts_notes(pytester: pytest.Pytester, workers: list[str]) -> None:
    _suite(pytester.path)
    pytester.runpytest("--doceval", *workers).assert_outcomes(passed=4)
    suite = read_report(pytester.path / "doceval-report.json")["suites"]["tables"]
    rows = {(r["case"], r["system"]): r for r in suite["results"]}
    good, bad = rows[("survey", "good")], rows[("survey", "bad")]
    assert good["counts"]["tables"] == {"truth": 2, "output": 2, "matched": 2}
    assert bad["counts"]["tables"] == {"truth": 2, "output": 1, "matched": 1}
    assert good["metrics"]["table_teds_s"] == 1.0
    assert 0.95 < good["metrics"]["table_teds"] < 1.0
    assert bad["metrics"]["table_teds"] < 0.5
    assert (
        "output: pipe table 1: row 2 has 1 cell where the separator sets 3 columns: padded with "
        "empty cells, as pandoc reads it"
    ) in bad["notes"]
    assert [p["truth"] for p in good["views"]["tables"]["pairs"]] == [0, 1]
    # no table in the truth: no table metric, and a note when the output invents one
    assert "table_teds" not in rows[("plain", "good")]["metrics"]
    assert "table_teds" not in rows[("plain", "bad")]["metrics"]
    assert any("the truth has no table" in n for n in rows[("plain", "bad")]["notes"])
    assert "table_teds" in suite["metrics"] and suite["metrics"]["table_teds"]["headline"]


@pytest.mark.parametrize("workers", WORKERS)
def test_a_gate_on_table_teds(pytester: pytest.Pytester, workers: list[str]) -> None:
    suite = _suite(pytester.path)
    (suite / "plain").rename(pytester.path / "plain-aside")  # every gated case has a table
    toml = suite / "suite.toml"
    toml.write_text(toml.read_text() + '\n[gates]\ntable_teds = ">= 0.9"\ntable_teds_s = "-2pp"\n')
    pytester.runpytest("--doceval", "--doceval-update", *workers)
    result = pytester.runpytest("--doceval", *workers)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*table_teds 0.* violates bound >= 0.9 (tables/survey[[]bad[]])*"])
    # the baseline gate: the good system's merged cell now read as two cells
    good = suite / "survey" / "outputs" / "good.md"
    good.write_text(
        good.read_text().replace('<th colspan="2">Morning</th>', "<th>Morning</th><th></th>")
    )
    result = pytester.runpytest("--doceval", *workers)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*table_teds_s 0.* < baseline 1.000 - 2pp (tables/survey[[]good[]])*"]
    )


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")
def test_tables_view_in_chromium(pytester: pytest.Pytester, tmp_path: Path) -> None:
    from tests.test_html_chromium import chromium

    _suite(pytester.path)
    pytester.runpytest("--doceval", "-k", "survey and bad").assert_outcomes(passed=1)
    report = read_report(pytester.path / "doceval-report.json")
    page = write_html(report, tmp_path / "report.html")
    dom = chromium(page.as_uri() + "#selftest", tmp_path / "profile", "--dump-dom")
    assert 'data-selftest="ok"' in dom
    views = dom[dom.index('<div class="views">') :]
    assert "<h4>Tables: truth beside output</h4>" in views
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", views)]
    # truth 1 beside output 1, row by row; the missing merged table has an empty side
    assert "truth 1 ↔ output 1" in cells
    # the output's ragged row, padded to the separator's three columns
    assert "North reef │ 42 │ 37" in cells and "North reef 42 37 │  │ " in cells
    assert "truth 2 ↔ (no output table)" in cells
    assert " │ Morning ⟨2×1⟩" in cells


# PubTabNet's reading (teds = "pubtabnet"): markup, th against td, a caption.
PUBTABNET_TRUTH = (
    "<table><caption>Loans</caption><tr><th>Tool</th><th>Loans</th></tr>"
    "<tr><td>Tile cutter</td><td><b>7</b></td></tr><tr><td>Sander</td><td>12</td></tr></table>"
)
PUBTABNET_OUTPUT = (
    "<table><tr><td>Tool</td><td>Loans</td></tr>"
    "<tr><td>Tile  cutter</td><td>7</td></tr><tr><td>Sander</td><td>12</td></tr></table>"
)


def test_pubtabnet_teds_on_request(pytester: pytest.Pytester) -> None:
    from tests.test_teds_pubtabnet import reference

    suite = write_suite(
        pytester.path,
        "tables",
        {"loans": {"truth": PUBTABNET_TRUTH, "vlm": PUBTABNET_OUTPUT}},
        systems=["vlm"],
        gates="",
    )
    pytester.runpytest("--doceval").assert_outcomes(passed=1)
    fair = read_report(pytester.path / "doceval-report.json")["suites"]["tables"]
    toml = suite / "suite.toml"
    toml.write_text(toml.read_text().replace("[suite]", '[suite]\nteds = "pubtabnet"', 1))
    pytester.runpytest("--doceval").assert_outcomes(passed=1)
    ours = read_report(pytester.path / "doceval-report.json")["suites"]["tables"]
    (fair_row,), (row,) = fair["results"], ours["results"]
    assert fair_row["metrics"]["table_teds"] == 1.0  # the fair reading: what a reader sees
    expected = reference(PUBTABNET_TRUTH, PUBTABNET_OUTPUT)
    assert (row["metrics"]["table_teds"], row["metrics"]["table_teds_s"]) == pytest.approx(
        expected, abs=1e-6
    )
    assert expected[0] < expected[1] < 1.0
    # the report says which TEDS, and the numbers do not compare across the two
    assert (fair["teds"], ours["teds"]) == ("fair", "pubtabnet")
    assert ours["scoring_id"] == fair["scoring_id"] + "+teds-pubtabnet"


def test_an_unknown_teds_reading_is_a_config_error(pytester: pytest.Pytester) -> None:
    suite = _suite(pytester.path)
    toml = suite / "suite.toml"
    toml.write_text(toml.read_text().replace("[suite]", '[suite]\nteds = "docling"', 1))
    result = pytester.runpytest("--doceval")
    result.stdout.fnmatch_lines(["*teds 'docling' is not one of fair, pubtabnet*"])
