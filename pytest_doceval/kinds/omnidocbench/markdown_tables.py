"""The tables of a predicted page's markdown, found as OmniDocBench v1.6 finds them.

OmniDocBench cuts a page's markdown into blocks (``md_tex_filter``); the tables are taken out
first, and this module reproduces that part, in the reference's order and with its quirks, since
the order decides Hungarian ties and the text decides TEDS:

1. images ``![..](..)`` become spaces; markdown fences (```` ```markdown ````, ```` ```html ````,
   ```` ```latex ````, a closing ```` ``` ````) are removed; runs of more than four ``_`` or spaces
   shorten to four; ``<html>``, ``<body>`` tags go; in a paragraph that describes an image ("The
   image shows ..."), ``$..$`` and ``\\(..\\)`` lose their delimiters;
2. LaTeX tables: ``\\begin{table}..\\end{table}``, then outermost ``\\begin{tabular}`` ..
   ``\\end{tabular}`` (plus the one character after it, as the reference's scanner counts the
   pattern's backslash twice); the reference converts them with ``latexmlc``; without it (the
   reading here, and the reference's on a machine without LaTeXML) each is an *empty* table;
3. HTML tables: outermost ``<table ...>`` .. ``</table>``, by a nesting scanner;
4. display math (``$$..$$``, ``\\[..\\]``) is blanked, so that a formula's ``|`` is no table rule;
5. pipe tables, when the remaining text has at least two ``|...|`` lines: every ``|...|``
   stretch becomes an HTML table (first line the header, second skipped as the rule line,
   ``th`` then turned into ``td``), consecutive converted tables are merged into one, and each
   ``<table ...>..</table>`` of the converted text is a table.

Each step blanks what it took (spaces of the same length), so positions stay comparable; the
tables are ordered by position (HTML before pipe at a tie), LaTeX tables last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_IMAGE: Final = re.compile(r"!\[.*?\]\(.*?\)")
_FENCES: Final = (
    re.compile(r"^```markdown\n?", re.MULTILINE),
    re.compile(r"^```html\n?", re.MULTILINE),
    re.compile(r"^```latex\n?", re.MULTILINE),
    re.compile(r"```\n?$", re.MULTILINE),
)
_PARAGRAPH_BREAK: Final = re.compile(r"(\n\s*\n)")
_IMAGE_DESCRIPTION_OPENINGS: Final = (
    "the image ",
    "the image displays",
    "the figure ",
    "the figure shows",
    "the diagram ",
    "diagram:",
    "[diagram:",
    "[image:",
    "qr code ",
)
_LATEX_TABLE: Final = re.compile(r"\\begin{table}(.*?)\\end{table}", re.DOTALL)
_DISPLAY_MATH: Final = re.compile(r"\$\$(.*?)\$\$|\\\[(.*?)\\\]|\$(.*?)\$|\\\((.*?)\\\)", re.DOTALL)
_DOLLAR_MATH: Final = re.compile(r"\$\$(.*?)\$\$|\$(.*?)\$|\\\((.*?)\\\)", re.DOTALL)
PIPE_STRETCH: Final = re.compile(r"\|\s*.*?\s*\|\n", re.DOTALL)
HTML_TABLE: Final = re.compile(r"(<table.*?</table>)", re.DOTALL)


class _Scanner:
    """Outermost begin..end spans by a nesting stack, as the reference scans them.

    The reference advances by the length of the *pattern strings*, not of what they matched:
    after a begin by len(end pattern), after an end (and to the span's end) by len(end pattern),
    and it restarts past an unclosed begin by len(begin pattern). Those lengths are given here
    as numbers."""

    def __init__(self, begin: str, end: str, end_step: int, restart_step: int) -> None:
        self.begin, self.end = re.compile(begin), re.compile(end)
        self.end_step, self.restart_step = end_step, restart_step

    def spans(self, text: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        stack: list[int] = []
        pos = 0
        while pos < len(text):
            begin, end = self.begin.search(text, pos), self.end.search(text, pos)
            if begin is None and end is None:
                break
            if begin is not None and (end is None or begin.start() < end.start()):
                stack.append(begin.start())
                pos = begin.start() + self.end_step
            elif end is not None:
                if stack:
                    start = stack.pop()
                    if not stack:
                        spans.append((start, end.start() + self.end_step))
                pos = end.start() + self.end_step
        if stack:
            restart = stack[0] + self.restart_step
            spans.extend((s + restart, e + restart) for s, e in self.spans(text[restart:]))
        return spans


# len(r"\\end{tabular}") == 14, len(r"\\begin{tabular}") == 16 (the reference's raw strings).
_TABULAR: Final = _Scanner(r"\\begin{tabular}", r"\\end{tabular}", 14, 16)
# len(r"</table>") == 8, len(r"<table(?:[^>]*)>") == 16.
HTML_TABLE_SCANNER: Final = _Scanner(r"<table(?:[^>]*)>", r"</table>", 8, 16)


def blank(text: str, start: int, end: int) -> str:
    """`text` with [start, end) turned into spaces (positions kept)."""
    end = min(end, len(text))  # a tabular's span may reach one past the text's end
    return text[:start] + " " * (end - start) + text[end:]


def _describes_image(block: str) -> bool:
    compact = " ".join(block.split()).strip().lower()
    return len(compact) >= 24 and compact.startswith(_IMAGE_DESCRIPTION_OPENINGS)


def _undelimit_image_descriptions(text: str) -> str:
    blocks = _PARAGRAPH_BREAK.split(text)
    for i in range(0, len(blocks), 2):
        if _describes_image(blocks[i]):
            block = re.sub(r"\\\((.*?)\\\)", lambda m: m.group(1), blocks[i], flags=re.DOTALL)
            blocks[i] = re.sub(r"\$(.*?)\$", lambda m: m.group(1), block, flags=re.DOTALL)
    return "".join(blocks)


def prepared_markdown(markdown: str) -> str:
    """Step 1 of the module docstring: the page text the block finders read."""
    text = _IMAGE.sub(lambda m: " " * len(m.group(0)), markdown)
    for fence in _FENCES:
        text = fence.sub("", text)
    text = re.sub(r"_{4,}", "____", text)
    text = re.sub(r" {4,}", "    ", text)
    for tag in ("<html>", "</html>", "<body>", "</body>"):
        text = text.replace(tag, "")
    return _undelimit_image_descriptions(text)


def latex_table_spans(text: str) -> list[tuple[int, int]]:
    spans = [(m.start(), m.end()) for m in _LATEX_TABLE.finditer(text)]
    without_tables = text
    for start, end in spans:
        without_tables = blank(without_tables, start, end)
    # Only the start decides the order; a tabular's span is cut from its start by its length.
    return sorted(spans + _TABULAR.spans(without_tables), key=lambda span: span[0])


def _blank_display_math(text: str) -> str:
    blanked = text
    for match in _DISPLAY_MATH.finditer(text):
        single_line = " ".join(match.group(0).strip().split("\n"))
        inner = _DOLLAR_MATH.search(single_line)
        # ``\[..\]`` and a non-empty ``$$..$$`` are display math and taken out; ``$..$`` and
        # ``\(..\)`` are inline formulas and stay in the text.
        if inner is None or inner.group(1):
            blanked = blank(blanked, match.start(), match.end())
    return blanked


def _pipe_table_html(stretch: str) -> str:
    rows = [row.strip() for row in stretch.strip().split("\n")]
    out = "<table>\n  <thead>\n    <tr>\n"
    for cell in rows[0].split("|")[1:-1]:
        out += f"      <th>{cell.strip()}</th>\n"
    out += "    </tr>\n  </thead>\n  <tbody>\n"
    for row in rows[2:]:
        out += "    <tr>\n"
        for cell in row.split("|")[1:-1]:
            out += f"      <td>{cell.strip()}</td>\n"
        out += "    </tr>\n"
    return out + "  </tbody>\n</table>\n"


def _merged_table(block: str) -> str:
    block = re.sub(r"<!--[\s\S]*?-->", "", block)
    rows: list[str] = []
    for table in re.findall(r"<table>[\s\S]*?</table>", block):
        lines = [
            line.replace("<th>", "<td>").replace("</th>", "</td>") if "<th>" in line else line
            for line in table.split("\n")
        ]
        kept = [line for line in lines if not re.search(r"</?t(able|head|body)>", line)]
        if len(kept) > 2:
            rows.extend(kept)
    return "\n\n" + "<table>\n{}\n</table>".format("\n".join(rows)) + "\n\n"


def _is_rule_line(line: str) -> bool:
    # The reference's test (``-*?:`` or ``---`` or ``:-*?``) is true exactly for these.
    return ":" in line or "---" in line


def _merge_converted_tables(text: str) -> str:
    """The reference's ``replace_table_with_placeholder``: a line loop one line behind, that
    gathers consecutive converted tables (and the line before each) into one table."""
    out: list[str] = []
    in_table, block, last = False, "", ""
    for line in text.split("\n"):
        if "<table>" in line:
            in_table = True
            block += last
        elif in_table:
            if not _is_rule_line(last) and "</thead>" not in last:
                block += "\n" + last
            if "</table>" in last and "<table>" not in line:
                in_table = False
                out.append(_merged_table(block))
                block = ""
        else:
            out.append(last)
        last = line
    if last:
        if in_table or "</table>" in last:
            out.append(_merged_table(block + "\n" + last))
        else:
            out.append(last)
    return "\n".join(out)


def pipe_tables_to_html(text: str) -> str:
    text = text.replace("\r", "") + "\n"
    for stretch in PIPE_STRETCH.findall(text):
        text = text.replace(stretch, _pipe_table_html(stretch), 1)
    text = _merge_converted_tables(text)
    return text.replace("<table>", '<table border="1" >').replace(
        "<td>", '<td colspan="1" rowspan="1">'
    )


@dataclass(frozen=True)
class PredictedTables:
    """A page's predicted tables as HTML, in the order OmniDocBench pairs them; the last
    `latex` of them are LaTeX tables, empty (step 2 of the module docstring)."""

    tables: tuple[str, ...]
    latex: int


def predicted_tables(markdown: str) -> PredictedTables:
    """The page's predicted tables (module docstring)."""
    text = prepared_markdown(markdown)
    latex_spans = latex_table_spans(text)
    for start, end in latex_spans:
        text = blank(text, start, end)
    found: list[tuple[int, str]] = []
    for start, end in HTML_TABLE_SCANNER.spans(text):
        found.append((start, text[start:end]))
        text = blank(text, start, end)
    text = _blank_display_math(text)
    if len(PIPE_STRETCH.findall(text + "\n")) >= 2:
        converted = pipe_tables_to_html(text)
        found.extend((m.start(), m.group(0).strip()) for m in HTML_TABLE.finditer(converted))
    found.sort(key=lambda item: item[0])  # stable: HTML tables before pipe tables at a tie
    tables = tuple(html for _, html in found) + ("",) * len(latex_spans)
    return PredictedTables(tables, len(latex_spans))
