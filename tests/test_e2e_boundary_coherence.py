"""Boundary Coherence as a user sees it in `pytest --doceval` (issue 26): an output that writes
every paragraph twice scores the truth's own ceiling, not above it, and the same words with
paragraphs separated by one newline, a blank line or two blank lines score alike."""

from __future__ import annotations

import itertools

import pytest

from tests.conftest import read_report, write_suite

pytest_plugins = ["pytester"]

WORDS = "tidal caverns store the flood peak and return it after sunset to the grid".split()


def _paragraphs() -> list[str]:
    """Twelve paragraphs of 150 to 260 characters, a table and a list: two or three blocks share
    a 500-character chunk, so the truth's own chunking cuts only some of its breaks (its ceiling
    is below 1), and the table's and the list's lines are single newlines apart."""
    cycle = itertools.cycle(WORDS)
    blocks = [
        f"Paragraph {n}: " + " ".join(next(cycle) for _ in range(22 + 7 * (n % 3))) + "."
        for n in range(12)
    ]
    blocks.insert(4, "| site | share |\n|---|---|\n| Brannock | 0.41 |\n| Selsey | 0.37 |")
    blocks.insert(9, "- charge on the flood;\n- hold between tides;\n- discharge after sunset.")
    return blocks


def test_repeats_and_line_breaks_in_a_plain_run(pytester: pytest.Pytester) -> None:
    paragraphs = _paragraphs()
    truth = "# Storage note\n\n" + "\n\n".join(paragraphs)
    outputs = {
        "same": truth,
        "twice": "# Storage note\n\n" + "\n\n".join(f"{p}\n\n{p}" for p in paragraphs),
        "one-newline": "# Storage note\n" + "\n".join(paragraphs),
        "two-blank-lines": "# Storage note\n\n\n" + "\n\n\n".join(paragraphs),
    }
    write_suite(
        pytester.path, "notes", {"c": {"truth": truth, **outputs}}, systems=[*outputs], gates=""
    )
    pytester.runpytest("--doceval").assert_outcomes(passed=4)
    report = read_report(pytester.path / "doceval-report.json")
    rows = {r["system"]: r for r in report["suites"]["notes"]["results"]}
    bc = {name: row["metrics"]["boundary_coherence"] for name, row in rows.items()}
    ceiling = rows["same"]["details"]["boundary_coherence"]["ceiling"]
    assert 0 < ceiling < 1 and bc["same"] == ceiling
    assert bc["twice"] == ceiling  # chunked as written, it scored above the ceiling
    assert bc["one-newline"] == bc["two-blank-lines"] == bc["same"]
