"""A predicted page's markdown cut into blocks as OmniDocBench v1.6 cuts it (``md_tex_filter``).

In its order, each step blanking what it took (spaces of the same length):

1. image alt texts that read as formulas become candidates; the text is prepared as for the
   tables (`markdown_tables.prepared_markdown`: images, fences, runs of ``_``/spaces, ``<html>``
   tags, math in image descriptions);
2. LaTeX tables (``latex_table``: OmniDocBench converts them with LaTeXML, absent here as on
   most machines, and scores them as empty tables), then HTML tables (``html_table``, and their
   formula-like cells as candidates);
3. math: ``$$..$$`` and ``\\[..\\]`` are display formulas (blanked); ``$..$`` and ``\\(..\\)``
   are inline formulas (``equation_inline``), kept in the text as well (`formula_blocks`);
4. pipe tables, when at least two ``|..|`` lines remain: the text is rewritten with them as
   HTML (`markdown_tables.pipe_tables_to_html`; positions from here on count in the rewritten
   text) and each table taken out;
5. fenced code blocks with a language (rare: step 1 drops a closing fence at a line's end);
6. ``\\title{..}``, ``\\text{..}`` and ``\\section{..}`` unwrapped; then the text is split at
   blank lines (at newlines if there is none) into ``text_block``s, HTML ``<div>`` paragraphs
   read as text, each formula-like paragraph also a candidate. A paragraph's position is the
   running sum of the lengths before it, without the separators (OmniDocBench's counting).

Blocks are sorted by start (stably), label-like inline formulas dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from bs4 import BeautifulSoup

from pytest_doceval.kinds.omnidocbench.formula_blocks import (
    display_formula_blocks,
    is_label_formula,
    rescue_candidate,
    table_cell_candidates,
)
from pytest_doceval.kinds.omnidocbench.markdown_tables import (
    HTML_TABLE,
    HTML_TABLE_SCANNER,
    PIPE_STRETCH,
    blank,
    latex_table_spans,
    pipe_tables_to_html,
    prepared_markdown,
)
from pytest_doceval.kinds.omnidocbench.pred_blocks import PredBlock

_IMAGE: Final = re.compile(r"!\[(.*?)\]\((.*?)\)")
_MATH: Final = re.compile(r"\$\$(.*?)\$\$|\\\[(.*?)\\\]|\$(.*?)\$|\\\((.*?)\\\)", re.DOTALL)
_DOLLAR_MATH: Final = re.compile(r"\$\$(.*?)\$\$|\$(.*?)\$|\\\((.*?)\\\)", re.DOTALL)
_CODE: Final = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)
_LATEX_STYLES: Final = (
    (re.compile(r"\\title\{(.*?)\}"), r"\1"),
    (re.compile(r"\\title\s*\{\s*(.*?)\s*\}", re.DOTALL), r"\1"),
    (re.compile(r"\\text\s*\{\s*(.*?)\s*\}", re.DOTALL), r"\1"),
    (re.compile(r"\\section\*?\{(.*?)\}"), r"\1"),
    (re.compile(r"\\section\*?\{\s*(.*?)\s*\}", re.DOTALL), r"\1"),
)
_INLINE_TAGS: Final = ["span", "font", "b", "strong", "i", "em", "u", "a", "sup", "sub"]


@dataclass(frozen=True)
class Segmented:
    """A page's blocks by category, each in page order (OmniDocBench's ``pred_dataset``)."""

    blocks: Mapping[str, tuple[PredBlock, ...]]

    def of(self, category: str) -> tuple[PredBlock, ...]:
        return self.blocks.get(category, ())


def _math_blocks(text: str, found: list[PredBlock]) -> str:
    """Step 3 of the module docstring; the text with the display formulas blanked."""
    out = text
    for match in _MATH.finditer(text):
        matched = match.group(0)
        if not matched:
            continue
        line = " ".join(matched.strip().split("\n"))
        start, end = match.start(), match.end()
        inner = _DOLLAR_MATH.search(line)
        if inner is None or inner.group(1):
            if inner is not None:
                line = _DOLLAR_MATH.sub(r"\\[\1\\]", line)
            out = blank(out, start, end)
            found.extend(display_formula_blocks(line, start, end))
        else:
            line = _DOLLAR_MATH.sub(r"\\[\2\3\\]", line)
            found.extend(display_formula_blocks(line, start, end, "equation_inline"))
    return out


def _html_paragraph_text(text: str) -> str:
    """``_normalize_html_text_fragment``: a ``<div>``/``<dir>`` paragraph as its lines of
    text (styles and scripts dropped, inline tags unwrapped, ``<br>`` a newline)."""
    stripped = text.strip()
    if not stripped or "<table" in stripped.lower():
        return stripped
    if not re.match(r"^<(div|dir)\b", stripped, flags=re.IGNORECASE):
        return stripped
    soup = BeautifulSoup(stripped, "html.parser")
    for tag in soup.find_all(["style", "script"]):
        tag.decompose()
    for tag in soup.find_all(_INLINE_TAGS):
        tag.unwrap()
    for tag in soup.find_all("br"):
        tag.replace_with("\n")
    for tag in soup.find_all(["div", "dir", "p", "li"]):
        last = tag.contents[-1] if tag.contents else None
        if not (isinstance(last, str) and last == "\n"):
            tag.append("\n")
    extracted = soup.get_text(separator="").replace("\xa0", " ")
    extracted = re.sub(r"[ \t]*\n[ \t]*", "\n", extracted)
    lines = [line.strip() for line in extracted.split("\n") if line.strip()]
    return "\n".join(lines).strip() or stripped


def _paragraphs(text: str, found: list[PredBlock]) -> None:
    """Step 6's split of the module docstring."""
    parts = text.split("\n\n")
    if len(parts) == 1:
        parts = text.split("\n")
    position = 0
    for part in parts:
        start, end = position, position + len(part)
        position = end
        part = part.strip().strip("\n")
        part = "\n".join(line.strip() for line in part.split("\n") if line.strip())
        part = _html_paragraph_text(part).strip()
        if part:
            found.append(PredBlock("text_all", start, end, part, "text_block"))
            candidate = rescue_candidate(part, start, end, "text_formula")
            if candidate is not None:
                found.append(candidate)


def _segment(markdown: str) -> list[PredBlock]:
    found: list[PredBlock] = []
    for match in _IMAGE.finditer(markdown):
        candidate = rescue_candidate(
            (match.group(1) or "").strip(), match.start(), match.end(), "image_formula"
        )
        if candidate is not None:
            found.append(candidate)
    text = prepared_markdown(markdown)
    for start, span_end in latex_table_spans(text):
        latex = text[start:span_end]
        end = start + len(latex)
        found.append(PredBlock("latex_table", start, end, latex, "latex_table"))
        text = blank(text, start, end)
    for start, span_end in HTML_TABLE_SCANNER.spans(text):
        html = text[start:span_end]
        end = start + len(html)
        found.append(PredBlock("html_table", start, end, html))
        found.extend(table_cell_candidates(html, start))
        text = blank(text, start, end)
    text = _math_blocks(text, found)
    if len(PIPE_STRETCH.findall(text + "\n")) >= 2:
        text = pipe_tables_to_html(text)
        for match in HTML_TABLE.finditer(text):
            start, end = match.start(), match.end()
            html = match.group(0).strip()
            text = blank(text, start, end)
            found.append(PredBlock("html_table", start, end, html, "md2html_table"))
            found.extend(table_cell_candidates(html, start))
    for match in _CODE.finditer(text):
        start, end = match.start(), match.end()
        text = blank(text, start, end)
        found.append(PredBlock("text_all", start, end, match.group(2).strip(), "code"))
    for pattern, replacement in _LATEX_STYLES:
        text = pattern.sub(replacement, text)
    _paragraphs(text, found)
    found.sort(key=lambda block: block.start)
    return [block for block in found if not is_label_formula(block)]


def segment(markdown: str) -> Segmented:
    """The page's blocks by category (module docstring)."""
    by_category: dict[str, list[PredBlock]] = {}
    for block in _segment(markdown):
        by_category.setdefault(block.category, []).append(block)
    return Segmented({category: tuple(blocks) for category, blocks in by_category.items()})
