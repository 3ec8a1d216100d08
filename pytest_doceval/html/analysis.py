"""Drawing a suite-level analysis: the renderer type, a plain table, and the generic fallback.

A kind's ``Suite.html_analyses`` maps an analysis key to a renderer ``(key, value, view) ->
HTML``; a key without one is drawn by `generic` (a table when the value is tabular, else its
JSON). Every string is escaped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_doceval.html.fmt import esc, fmt_cell, pretty_json, tabular
from pytest_doceval.html.model import SuiteView

AnalysisRenderer = Callable[[str, Any, SuiteView], str]


def html_table(head: list[str], rows: list[list[Any]], css: str = "generic") -> str:
    """Head words, not keys (``p_mcnemar`` reads ``p mcnemar``); numbers to 4 decimals,
    ``yes``/``no`` for booleans, ``n/a`` for missing (`fmt_cell`)."""
    head_html = "".join(f"<th>{esc(h.replace('_', ' '))}</th>" for h in head)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{esc(fmt_cell(c))}</td>'
            if isinstance(c, int | float) and not isinstance(c, bool)
            else f"<td>{esc(fmt_cell(c))}</td>"
            for c in row
        )
        + "</tr>"
        for row in rows
    )
    return f'<table class="{css}"><thead><tr>{head_html}</tr></thead><tbody>{body}</tbody></table>'


def generic(key: str, value: Any, view: SuiteView) -> str:
    """Any analysis: a table when the value is tabular, else its JSON, escaped."""
    title = f'<h3>{esc(key.replace("_", " "))} <span class="key">({esc(key)})</span></h3>'
    table = tabular(value)
    if table is not None:
        return title + html_table(*table)
    return f'{title}<pre class="json">{esc(pretty_json(value))}</pre>'
