"""The Markdown grammar: every pattern any module uses to find Markdown constructs (headings,
fences, lists, tables, links, emphasis), in one place.

Two readings of Markdown are needed and both live here, each pattern named by what it matches:
the normaliser's (seed 000 section 3.4.1 and seed 002 section 4.7) strips markup from whole
texts, so its patterns are ``re.MULTILINE`` and forgiving about indentation (``*_LINES``,
``*_MARKS``); the structure extraction (seed 001) and boundary coherence read one line at a
time with the element grammar their seeds define (one-line patterns). Where the two readings
differ (a heading's pandoc attributes, a setext underline's indentation) the difference is the
seeds', and the scores are defined by it, so it is kept and named rather than merged.

Tables are read by one tokenizer that every table reader calls: TEDS's trees read pandoc's
way (`pandoc_table_blocks`, `pipe_separator_columns`, `split_pipe_row`'s defaults), olmOCR-bench's
table facts and seed 000's table-row elements each with the parameters its definition fixes
(`table_blocks`, `is_pipe_row`, `is_separator_row`, said where it calls).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

# Horizontal whitespace: every Unicode space (NBSP, thin space, ideographic space, tab) but the
# line break. For patterns that see text before NFKC (scope split, structure extraction).
HSPACE = r"[^\S\n]"
# A pandoc attribute block: {#id}, {.class}, {key=value}, {-} (unnumbered), in any combination.
PANDOC_ATTRIBUTES = r"\{[ \t]*(?:[#.][^{}\n]*|-|[\w-]+=[^{}\n]*)\}"

# --- blocks, as the normaliser strips them from whole texts (re.MULTILINE) ---

PANDOC_ATTRIBUTE_BLOCK = re.compile(PANDOC_ATTRIBUTES)
PANDOC_DIV_FENCE_LINES = re.compile(r"^[ \t]*:{3,}.*$", re.MULTILINE)
BRACKETED_SPAN = re.compile(r"\[([^\[\]\n]*)\]\{[^{}\n]*\}")
# A table's delimiter row: pipe-table separators (|---|:--:|, ---|---) and grid-table borders
# (+----+====+), trailing spaces and tabs allowed; at least one | or + and one - or =.
TABLE_SEPARATOR = re.compile(r"^[ \t]*(?=[^\n]*[|+])(?=[^\n]*[-=])[-=:|+ \t]*$", re.MULTILINE)
HEADING_LINES = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
SETEXT_UNDERLINE_LINES = re.compile(r"^[ \t]*(?:=+|-+)[ \t]*$", re.MULTILINE)
BLOCKQUOTE_MARKS = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
BULLET_MARKS = re.compile(
    r"^[ \t]*(?:[-*+\u2022\u25e6\u25aa\u2023\u2043\u00b7])[ \t]+", re.MULTILINE
)
FENCE_LINES = re.compile(r"^[ \t]*(?:```|~~~).*$", re.MULTILINE)

# --- blocks, one line at a time (seed 001's elements, boundary coherence) ---

HEADING = re.compile(rf"^#{{1,6}}\s+(.*?)(?:\s+#+)?(?:\s*{PANDOC_ATTRIBUTES})?\s*$")
UNORDERED_ITEM = re.compile(r"^\s*[-*+]\s+(.*)$")
ORDERED_ITEM = re.compile(r"^\s*\d+\.\s+(.*)$")
TABLE_ROW = re.compile(r"^\|.+\|$")
FENCE = re.compile(r"^```")
# Lines that end a list item's paragraph besides a blank line and another element: rules,
# setext underlines, pandoc div fences, other code fences, block quotes.
BLOCK_BREAK = re.compile(r"^\s*(?:(?:[-*_=]\s*){3,}$|:::|~~~|```|>)")
# CommonMark's: at most three spaces of indentation.
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
THEMATIC_BREAK = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
# A grid table's border line (+---+===+).
GRID_BORDER = re.compile(r"^[ \t]*\+[-=:+]*[-=][-=:+]*\+[ \t]*$")
# A pipe table's cell boundary (``\|`` is a pipe inside a cell).
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
ANY_PIPE = re.compile(r"\|")
# A whole reply that is one fenced block (a model wrapping its Markdown in ```markdown ... ```).
FENCED_REPLY = re.compile(r"\A\s*```[a-zA-Z]*\n(.*?)\n```\s*\Z", re.S)

# --- inlines ---

# Link text, then a destination that may hold one level of parentheses (wiki/X_(y)). An
# escaped "\[" or "\*" is literal text: no delimiter below starts or ends after a backslash.
LINK = re.compile(r"(?<!\\)\[([^\[\]\n]*)(?<!\\)\]\((?:[^()\n]|\([^()\n]*\))*\)")
# Seed 001's element text: a link's text, its destination up to the first ")".
LINK_IN_ELEMENT = re.compile(r"\[([^\]]*)\]\([^)]*\)")
IMAGE = re.compile(r"!\[.*?\]\(.*?\)")
AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+|[^<>\s@]+@[^<>\s@]+\.[^<>\s]+)>")
# Strong, emphasis with *, emphasis with _, strikethrough: delimiter pairs around non-space.
EMPHASIS_SPANS = (
    re.compile(r"(?<!\\)(\*\*|__)(?=\S)(.+?)(?<=[^\s\\])\1", re.DOTALL),
    re.compile(r"(?<![\w*\\])\*(?=\S)(.+?)(?<=[^\s\\])\*(?![\w*])", re.DOTALL),
    re.compile(r"(?<![\w_\\])_(?=\S)(.+?)(?<=[^\s\\])_(?![\w_])", re.DOTALL),
    re.compile(r"(?<!\\)~~(?=\S)(.+?)(?<=[^\s\\])~~", re.DOTALL),
)
# Seed 001's element text drops every emphasis and code mark, paired or not.
EMPHASIS_MARKS = re.compile(r"(\*\*|__|\*|_|~~|`)")
INLINE_CODE = re.compile(r"`+([^`\n]*)`+")
# CommonMark's escapable punctuation (and pandoc's), the backslash dropped.
ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!$%&|~^<>\"'@:=])")
# Seed 001's element text: any backslash escape.
ANY_ESCAPE = re.compile(r"\\(.)")


# --- tables: the tokenizer every table reader calls ---
#
# Two readers call it, each with the reading its metric is defined by: the documents kind reads
# pipe and grid tables as pandoc does (`pandoc_table_blocks`) into PubTabNet trees (TEDS), the
# facts kind reads tables as olmOCR-bench's ``parse_markdown_tables`` does (its verdicts are
# olmOCR's): each parameter's docstring says what olmOCR-bench does.


def is_pipe_row(line: str, *, pipe_anywhere: bool = False) -> bool:
    """A line of a pipe table: one that starts with ``|`` (after indentation); with
    `pipe_anywhere`, any line holding a ``|`` (olmOCR-bench's, where outer pipes are optional).
    Pandoc's rows are `is_pandoc_pipe_row`."""
    return "|" in line if pipe_anywhere else line.lstrip().startswith("|")


def is_separator_row(line: str, *, grid_marks: bool = True) -> bool:
    """A table's delimiter row. With `grid_marks` (`TABLE_SEPARATOR`, the normaliser's): dashes,
    colons, pipes, spaces and a grid table's ``+`` and ``=``, with at least one ``|``/``+`` and
    one ``-``/``=``. Without (olmOCR-bench's): once pipes are removed and the ends trimmed,
    something made only of ``-``, ``:`` and spaces (so ``| : |`` is one, ``|===|`` is not)."""
    if grid_marks:
        return TABLE_SEPARATOR.match(line) is not None
    inner = line.replace("|", "").strip()
    return bool(inner) and all(ch in "- :" for ch in inner)


# What pandoc reads as one piece of a pipe-table row, so that a ``|`` inside it is no cell
# boundary: a code span, inline maths (``$...$``, pandoc's tex_math_dollars), an HTML tag and a
# backslash escape; a bare ``|`` is a boundary.
PIPE_ROW_PIECE = re.compile(
    r"(?P<code>(`+).+?(?<!`)\2(?!`))"
    r"|(?P<math>\$\$.+?\$\$|\$(?=[^\s$])(?:\\.|[^$\\])*?(?<=[^\s\\])\$(?!\d))"
    r"|(?P<tag></?[A-Za-z][^<>\n]*>)"
    r"|(?P<escape>\\.)"
    r"|(?P<pipe>\|)"
)


def _cell_boundaries(line: str) -> list[int]:
    """Offsets of the ``|`` of `line` that pandoc splits cells at (`PIPE_ROW_PIECE`)."""
    return [m.start() for m in PIPE_ROW_PIECE.finditer(line) if m.group("pipe")]


def split_pipe_row(line: str, *, escaped_pipes: bool = True) -> list[str]:
    """The cells of one pipe-table row, as written (not trimmed): the line, trimmed, split on
    ``|``, without the blank piece an outer pipe leaves at either end (outer pipes are optional).
    With `escaped_pipes` (pandoc's) a ``|`` escaped as ``\\|`` or inside a code span, inline
    maths or an HTML tag is text of the cell (`PIPE_ROW_PIECE`); without (olmOCR-bench's), every
    ``|`` is a boundary."""
    text = line.strip()
    if escaped_pipes:
        cuts = _cell_boundaries(text)
        pieces = [text[a + 1 : b] for a, b in zip([-1, *cuts], [*cuts, len(text)], strict=True)]
    else:
        pieces = ANY_PIPE.split(text)
    if pieces and not pieces[0].strip():
        pieces = pieces[1:]
    if pieces and not pieces[-1].strip():
        pieces = pieces[:-1]
    return pieces


def is_pandoc_pipe_row(line: str) -> bool:
    """A row of a pandoc pipe table: a line with at least one ``|`` that splits cells
    (`PIPE_ROW_PIECE`; so ```` `x|y` ```` alone is no row, ``a | b`` is one)."""
    return bool(_cell_boundaries(line))


# Pandoc's pipe-table separator: optional leading ``|``, then columns of ``:?-+:?`` (spaces
# around) parted by ``|`` or ``+``, an optional trailing ``|``; at most three spaces of indent.
_SEPARATOR_COLUMN = r"[ \t]*:?-+:?[ \t]*"
PIPE_SEPARATOR = re.compile(
    rf"^ {{0,3}}(?P<open>\|?)(?P<columns>{_SEPARATOR_COLUMN}(?:[|+]{_SEPARATOR_COLUMN})*)"
    r"\|?[ \t]*$"
)


def pipe_separator_columns(line: str) -> int:
    """How many columns a pandoc pipe-table separator row (``|---|:--:|``, ``--|--``) sets, 0
    when `line` is not one. A one-column separator needs its leading ``|``, as in pandoc."""
    match = PIPE_SEPARATOR.match(line)
    if match is None:
        return 0
    columns = len(re.split(r"[|+]", match.group("columns")))
    return columns if columns > 1 or match.group("open") else 0


@dataclass(frozen=True)
class TableBlock:
    """Lines ``start`` up to (not including) ``end`` of a text hold one table of `form`."""

    form: Literal["grid", "pipe"]
    start: int
    end: int


def table_blocks(
    lines: Sequence[str],
    *,
    grid_tables: bool = True,
    pipe_anywhere: bool = False,
    min_pipe_rows: int = 1,
) -> list[TableBlock]:
    """Every run of table-like lines of `lines`, in order, with no regard for the blocks around
    them (olmOCR-bench's reading; pandoc's is `pandoc_table_blocks`). A grid table (when
    `grid_tables`) starts at a `GRID_BORDER` line and runs over the lines that start with ``+``
    or ``|``; a pipe table is a run of at least `min_pipe_rows` lines that are `is_pipe_row`
    (`pipe_anywhere` passed on). olmOCR-bench reads no grid tables and needs two lines that hold
    a pipe."""
    blocks: list[TableBlock] = []
    index = 0
    while index < len(lines):
        if grid_tables and GRID_BORDER.match(lines[index]):
            end = index + 1
            while end < len(lines) and lines[end].lstrip().startswith(("+", "|")):
                end += 1
            blocks.append(TableBlock("grid", index, end))
        elif is_pipe_row(lines[index], pipe_anywhere=pipe_anywhere):
            end = index + 1
            while end < len(lines) and is_pipe_row(lines[end], pipe_anywhere=pipe_anywhere):
                end += 1
            if end - index >= min_pipe_rows:
                blocks.append(TableBlock("pipe", index, end))
        else:
            end = index + 1
        index = end
    return blocks


_CODE_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")


def _closed_fence_end(lines: Sequence[str], index: int) -> int | None:
    """The line closing the fenced code block opened at `index`, if it is one and is closed
    (pandoc reads an unclosed fence as text)."""
    match = _CODE_FENCE.match(lines[index])
    if match is None:
        return None
    fence = match.group("fence")
    closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    return next((i for i in range(index + 1, len(lines)) if closing.match(lines[i])), None)


def _pandoc_table_at(lines: Sequence[str], index: int) -> TableBlock | None:
    """The pipe or grid table that starts at `index`, if any: a grid table at a
    `GRID_BORDER`, over the lines that start with ``+`` or ``|``; a pipe table at a row
    (`is_pandoc_pipe_row`, at most three spaces in) with a separator row under it
    (`pipe_separator_columns`), over the rows that follow."""
    line = lines[index]
    if len(line) - len(line.lstrip(" ")) > 3 or not line.strip():
        return None
    if GRID_BORDER.match(line):
        end = index + 1
        while end < len(lines) and lines[end].lstrip().startswith(("+", "|")):
            end += 1
        return TableBlock("grid", index, end)
    under = lines[index + 1] if index + 1 < len(lines) else ""
    if not (is_pandoc_pipe_row(line) and pipe_separator_columns(under)):
        return None
    end = index + 2
    while end < len(lines) and is_pandoc_pipe_row(lines[end]):
        end += 1
    return TableBlock("pipe", index, end)


def pandoc_table_blocks(lines: Sequence[str]) -> list[TableBlock]:
    """Every pipe and grid table of `lines` as pandoc's markdown reader finds them, outside
    closed code fences: a pipe table needs its separator row under its first row (so one
    ``| a | b |`` line, or rows with no separator, are text) and its outer pipes are optional.
    Pandoc's simple and multiline tables are not read.

    One difference, on purpose: a table may follow a line of text directly, as GitHub's
    markdown reads it. Pandoc wants a blank line before a table (its paragraphs run until one)
    and reads the table as more of the paragraph; parsers such as PyMuPDF join blocks with one
    line break, and a correct table would score 0 for a missing blank line."""
    blocks: list[TableBlock] = []
    index = 0
    while index < len(lines):
        table = _pandoc_table_at(lines, index)
        if table is not None:
            blocks.append(table)
            index = table.end
            continue
        fence_end = _closed_fence_end(lines, index)
        index = index + 1 if fence_end is None else fence_end + 1
    return blocks
