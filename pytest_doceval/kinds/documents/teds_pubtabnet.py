"""PubTabNet's own TEDS, on request (``teds = "pubtabnet"`` in a documents suite; issue 25).

The default TEDS (`teds`) compares what a reader sees in a cell: markup, whitespace runs,
``th`` against ``td``, captions and column groups cost nothing. PubTabNet's ``metric.py``
(ibm-aur-nlp/PubTabNet, ``src/metric.py``: the number papers quote) compares the HTML itself,
and this module is that definition:

* The table's HTML is parsed as ``metric.py`` parses it: lxml's HTML parser with comments
  removed, the document's ``body/table``. An HTML table is taken as written; a pipe or grid
  table as the HTML pandoc writes of it (``pandoc -f markdown-smart -t html --wrap=none``:
  no smart quotes, so characters stay as written, and no line wrapping inside a cell; pandoc
  writes a ``<colgroup>`` for a table whose lines are wider than 72 columns, and ``<th>`` for
  header cells, as it does for a truth).
* The tree: every element below ``<table>`` is a node, ``td`` excepted, whose content is not
  nodes but the cell's tokens: ``<tag>`` and ``</tag>`` of every element inside the cell and
  every character of its text (whitespace included). So ``th`` is a node of its own (its
  text is not compared, renaming it into a ``td`` costs 1), and ``caption``, ``colgroup`` and
  ``col`` are nodes.
* Rename costs 1 between different tags or a ``td``'s different ``colspan``/``rowspan``
  (``int`` of the attribute, 1 when absent), the normalised Levenshtein distance of two
  ``td``'s token lists, else 0; insert and delete 1.
* TEDS = 1 - TED / max(n_a, n_b), n counting every element below ``<table>``, those inside
  cells too (``len(table.xpath(".//*"))``). TEDS-S: the same with every ``td``'s tokens left
  out (``structure_only``).

Where ``metric.py`` would raise (a ``colspan`` that is not an integer) the span is 1, as the
table reader notes; a span ``int`` reads (``0``, ``-1``) is taken as ``metric.py`` takes it. A
table lxml or pandoc does not read as a table scores 0, as ``metric.py`` scores it.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.kinds.documents.table_trees import Table
from pytest_doceval.kinds.documents.teds import CellNode, rename_costs
from pytest_doceval.metrics.tree_edit import Node, weighted_tree_edit_distance

PANDOC_HTML = ("-f", "markdown-smart", "-t", "html", "--wrap=none")
PANDOC_INSTALL = "apt-get install pandoc, or https://pandoc.org/installing.html"
# Between two markdown tables sent to pandoc in one call: a raw HTML comment it copies through.
_BOUNDARY = "<!-- doceval: next table -->"


@dataclass(frozen=True)
class PubTabNetTree:
    """One table as ``metric.py`` sees it: its tree, its tree without cell tokens, and n."""

    tree: Node
    structure: Node
    size: int


def pandoc_version() -> str | None:
    """``pandoc --version``'s first line, or None without pandoc."""
    found = shutil.which("pandoc")
    if found is None:
        return None
    return _version(found)


@functools.cache
def _version(pandoc: str) -> str:
    done = subprocess.run([pandoc, "--version"], capture_output=True, text=True, check=False)
    return (done.stdout.splitlines() or ["pandoc (version unknown)"])[0].strip()


# Every distinct token (a character, "<b>", "</b>") as one code point, so that a string
# Levenshtein (rapidfuzz) is the Levenshtein of token lists. Only equality of tokens matters.
_TOKEN_CODES: dict[str, str] = {}


def _encode(tokens: Sequence[str]) -> str:
    return "".join(
        _TOKEN_CODES.setdefault(token, chr(0x10000 + len(_TOKEN_CODES))) for token in tokens
    )


def _cell_tokens(element: Any, out: list[str]) -> None:
    """``metric.py``'s ``tokenize``: tags and characters, tails of all but the cell itself."""
    tag = str(element.tag)
    out.append(f"<{tag}>")
    if element.text is not None:
        out.extend(element.text)
    for child in element:
        _cell_tokens(child, out)
    if tag != "unk":
        out.append(f"</{tag}>")
    if tag != "td" and element.tail is not None:
        out.extend(element.tail)


def _span(element: Any, name: str) -> int:
    """``int`` of the attribute, as ``metric.py`` reads it; 1 where that raises (the table
    reader has noted it: `table_trees`)."""
    try:
        return int(element.attrib.get(name, "1"))
    except ValueError:
        return 1


def _tree(element: Any, *, structure_only: bool) -> Node:
    tag = str(element.tag)
    if tag == "td":
        tokens: list[str] = []
        if not structure_only:
            _cell_tokens(element, tokens)
        spans = f"{_span(element, 'colspan')} {_span(element, 'rowspan')}"
        return CellNode(f"td {spans}", (), _encode(tokens[1:-1]))
    return Node(tag, tuple(_tree(child, structure_only=structure_only) for child in element))


def _html_tables(html: str) -> list[Any]:
    """The ``body/table`` elements of `html`, parsed as ``metric.py`` parses a table."""
    from lxml import html as lxml_html  # only a pubtabnet run needs lxml

    parser = lxml_html.HTMLParser(remove_comments=True, encoding="utf-8")
    root = lxml_html.fromstring(f"<html><body>{html}</body></html>", parser=parser)
    return list(root.xpath("body/table"))


def tree_of(element: Any) -> PubTabNetTree:
    """The PubTabNet tree of one lxml ``<table>`` element (module docstring)."""
    tree = _tree(element, structure_only=False)
    structure = _tree(element, structure_only=True)
    return PubTabNetTree(tree, structure, len(element.xpath(".//*")))


@functools.lru_cache(maxsize=64)
def _pandoc_html(markdown: str) -> str:
    pandoc = shutil.which("pandoc")
    if pandoc is None:
        raise SuiteConfigError(
            'teds = "pubtabnet" reads a markdown table as the HTML pandoc writes of it, and '
            f"pandoc is not installed: {PANDOC_INSTALL} (or leave teds at its default)"
        )
    done = subprocess.run(
        [pandoc, *PANDOC_HTML], input=markdown, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SuiteConfigError(f"pandoc {' '.join(PANDOC_HTML)} failed: {done.stderr.strip()}")
    return done.stdout


def pubtabnet_trees(tables: Sequence[Table]) -> tuple[list[PubTabNetTree | None], list[str]]:
    """Each table's PubTabNet tree (module docstring), None where there is no table to read;
    and notes. The markdown tables of one text go to pandoc in one call."""
    markdown = [t.source for t in tables if t.form != "html"]
    chunks = (
        _pandoc_html(f"\n\n{_BOUNDARY}\n\n".join(markdown)).split(_BOUNDARY) if markdown else []
    )
    if len(chunks) != len(markdown):  # the boundary did not come through: one call a table
        chunks = [_pandoc_html(source) for source in markdown]
    rendered = iter(chunks)
    trees: list[PubTabNetTree | None] = []
    notes: list[str] = []
    for number, table in enumerate(tables, start=1):
        html = table.source if table.form == "html" else next(rendered)
        found = _html_tables(html)
        where = f"table {number} ({table.form})"
        if not found:
            reader = "lxml" if table.form == "html" else "pandoc"
            notes.append(f"{where}: {reader} reads no table in it: TEDS 0, as metric.py gives")
            trees.append(None)
            continue
        trees.append(tree_of(found[0]))
    return trees, notes


def pubtabnet_teds(
    a: PubTabNetTree | None, b: PubTabNetTree | None, *, structure_only: bool = False
) -> float:
    """PubTabNet's TEDS (or TEDS-S) of two tables; 0 where either could not be read. Not
    clipped: like ``metric.py``'s it can fall below 0 (the pairing counts such a pair as a
    missing and an invented table, `tables.pair_by`)."""
    if a is None or b is None:
        return 0.0
    tree_a, tree_b = (a.structure, b.structure) if structure_only else (a.tree, b.tree)
    distance = weighted_tree_edit_distance(tree_a, tree_b, rename_costs)
    size = max(a.size, b.size)
    return 1.0 if size == 0 else 1.0 - distance / size
