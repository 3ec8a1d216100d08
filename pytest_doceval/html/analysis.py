"""Drawing a suite-level analysis: the renderer type, a plain table, and the generic fallback.

A kind's ``Suite.html_analyses`` maps an analysis key to a renderer ``(key, value, view) ->
Markup``; a key without one is drawn by `generic` (a table when the value is tabular, else its
JSON). Renderers build their HTML from ``markupsafe.Markup`` templates, so every string from the
report is escaped once by construction; a renderer that returns a plain ``str`` has it shown as
text (escaped), never as markup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markupsafe import Markup, escape

from pytest_doceval.html.fmt import fmt_cell, pretty_json, tabular
from pytest_doceval.html.model import SuiteView

# A renderer returns Markup; a plain ``str`` it returns is text, escaped where it meets the
# page (`as_markup`), so a renderer that forgets to build markup cannot inject any.
AnalysisRenderer = Callable[[str, Any, SuiteView], Markup | str]


def as_markup(html: Markup | str) -> Markup:
    """A renderer's result as it goes into the page: Markup as it is, a plain ``str`` escaped."""
    return escape(html)


def html_table(head: list[str], rows: list[list[Any]], css: str = "generic") -> Markup:
    """Head words, not keys (``p_mcnemar`` reads ``p mcnemar``); numbers to 4 decimals,
    ``yes``/``no`` for booleans, ``n/a`` for missing (`fmt_cell`)."""
    head_html = Markup().join(Markup("<th>{}</th>").format(h.replace("_", " ")) for h in head)
    number = Markup('<td class="num">{}</td>')
    other = Markup("<td>{}</td>")
    body = Markup().join(
        Markup("<tr>{}</tr>").format(
            Markup().join(
                (
                    number if isinstance(c, int | float) and not isinstance(c, bool) else other
                ).format(fmt_cell(c))
                for c in row
            )
        )
        for row in rows
    )
    return Markup('<table class="{}"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>').format(
        css, head_html, body
    )


def generic(key: str, value: Any, view: SuiteView) -> Markup:
    """Any analysis: a table when the value is tabular, else its JSON, escaped."""
    title = Markup('<h3>{} <span class="key">({})</span></h3>').format(key.replace("_", " "), key)
    table = tabular(value)
    if table is not None:
        return title + html_table(*table)
    return title + Markup('<pre class="json">{}</pre>').format(pretty_json(value))
