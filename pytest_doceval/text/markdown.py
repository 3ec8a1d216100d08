"""The Markdown grammar: every pattern any module uses to find Markdown constructs (headings,
fences, lists, tables, links, emphasis), in one place.

Two readings of Markdown are needed and both live here, each pattern named by what it matches:
the normaliser's (seed 000 section 3.4.1 and seed 002 section 4.7) strips markup from whole
texts, so its patterns are ``re.MULTILINE`` and forgiving about indentation (``*_LINES``,
``*_MARKS``); the structure extraction (seed 001) and boundary coherence read one line at a
time with the element grammar their seeds define (one-line patterns). Where the two readings
differ (a heading's pandoc attributes, a setext underline's indentation) the difference is the
seeds', and the scores are defined by it, so it is kept and named rather than merged.

Tables are read by one tokenizer (`is_pipe_row`, `is_separator_row`, `split_pipe_row`,
`table_blocks`) that every table reader calls: TEDS's trees (pandoc's reading, the defaults),
olmOCR-bench's table facts and seed 000's table-row elements (each with the parameters its
definition fixes, said where it calls).
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
# Two readers call it with different parameters, each a reading its metric is defined by: the
# documents kind reads pandoc's pipe and grid tables into PubTabNet trees (TEDS), the facts kind
# reads tables as olmOCR-bench's ``parse_markdown_tables`` does (its verdicts are olmOCR's).
# The defaults are pandoc's; each parameter's docstring says what olmOCR-bench does instead.


def is_pipe_row(line: str, *, pipe_anywhere: bool = False) -> bool:
    """A line of a pipe table: pandoc's starts with ``|`` (after indentation); with
    `pipe_anywhere`, any line holding a ``|`` (olmOCR-bench's, where outer pipes are optional)."""
    return "|" in line if pipe_anywhere else line.lstrip().startswith("|")


def is_separator_row(line: str, *, grid_marks: bool = True) -> bool:
    """A table's delimiter row. With `grid_marks` (pandoc's, `TABLE_SEPARATOR`): dashes, colons,
    pipes, spaces and a grid table's ``+`` and ``=``, with at least one ``|``/``+`` and one
    ``-``/``=``. Without (olmOCR-bench's): once pipes are removed and the ends trimmed, something
    made only of ``-``, ``:`` and spaces (so ``| : |`` is one, ``|===|`` is not)."""
    if grid_marks:
        return TABLE_SEPARATOR.match(line) is not None
    inner = line.replace("|", "").strip()
    return bool(inner) and all(ch in "- :" for ch in inner)


def split_pipe_row(line: str, *, escaped_pipes: bool = True) -> list[str]:
    """The cells of one pipe-table row, as written (not trimmed): the line, trimmed, split on
    ``|``, without the blank piece an outer pipe leaves at either end (outer pipes are optional).
    With `escaped_pipes` (pandoc's) ``\\|`` is a pipe inside a cell and stays in it, escape and
    all; without (olmOCR-bench's), every ``|`` is a boundary."""
    pieces = (UNESCAPED_PIPE if escaped_pipes else ANY_PIPE).split(line.strip())
    if pieces and not pieces[0].strip():
        pieces = pieces[1:]
    if pieces and not pieces[-1].strip():
        pieces = pieces[:-1]
    return pieces


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
    """Every table block of `lines`, in order. A grid table (when `grid_tables`) starts at a
    `GRID_BORDER` line and runs over the lines that start with ``+`` or ``|``; a pipe table is a
    run of at least `min_pipe_rows` lines that are `is_pipe_row` (`pipe_anywhere` passed on).
    olmOCR-bench reads no grid tables and needs two lines that hold a pipe."""
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
