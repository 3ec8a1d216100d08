"""Renderers for a row's views (``row["views"][name]``), shown in its detail panel.

The panel is drawn in the browser from blocks the page's script knows how to draw: ``diff``
(ops with a from/to legend), ``table`` (head and rows) and ``pre`` (text). A renderer turns
the views of one name, for all rows of one case, into one block each; it gets the whole case
at once so that diffs of the same truth text can share it (`Chunk.diffs`). `VIEWS` holds the
views any kind may give a row (aligned diffs); a kind brings its own in ``Suite.html_views``
(name -> renderer, drawn with this toolkit). A view nobody wrote a renderer for is still shown,
as a table when it is tabular, else as JSON."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_doceval.html.codec import Chunk
from pytest_doceval.html.fmt import is_scalar, mapping, plain, pretty_json, tabular

Block = dict[str, Any]
# (view name, that view of each row of one case, the chunk the case goes into) -> one block each
ViewRenderer = Callable[[str, Sequence[Any], Chunk], list[Block]]


def _ops(view: Any) -> list[Any] | None:
    ops = mapping(view).get("ops")
    return ops if isinstance(ops, list) else None


def generic(name: str, views: Sequence[Any], chunk: Chunk) -> list[Block]:
    """Any view: a table when it is tabular, else its JSON as text."""
    out = []
    for view in views:
        table = tabular(view)
        if table is None:
            text = view if isinstance(view, str) else pretty_json(view)
            out.append(text_block(name, text, chunk))
        else:
            out.append(table_block(name, table[0], table[1], chunk))
    return out


def table_block(title: str, head: Sequence[Any], rows: Sequence[Any], chunk: Chunk) -> Block:
    """A table (numbers to 6 significant digits) in the chunk the case goes into."""
    cells = plain(rows, 6)
    block: Block = {"t": "table", "title": title, "head": list(head), "rows": cells}
    chunk.size += 40 + len(title) + _size(head) + _size(cells)
    return block


def text_block(title: str, text: str, chunk: Chunk) -> Block:
    """Text shown as it is (preformatted) in the chunk the case goes into."""
    block: Block = {"t": "pre", "title": title, "text": text}
    chunk.size += 40 + len(title) + len(text)
    return block


def _size(value: Any) -> int:
    """About the JSON size of a block's cells (a chunk's running estimate: their text as
    Python writes it, in C; encoding every block to measure it was a fifth of the time of a
    big page)."""
    return len(str(value))


def text_diff(name: str, views: Sequence[Any], chunk: Chunk) -> list[Block]:
    """Truth vs output, aligned. The diffs of a case on the same metric share its truth."""
    out: list[Block | None] = [None] * len(views)
    groups: dict[str, list[int]] = {}
    for number, view in enumerate(views):
        if _ops(view) is None:
            out[number] = generic(name, [view], chunk)[0]
        else:
            groups.setdefault(str(mapping(view).get("metric") or ""), []).append(number)
    for metric, members in groups.items():
        encoded = chunk.diffs([_ops(views[n]) or [] for n in members])
        for number, ref in zip(members, encoded, strict=True):
            out[number] = {
                "t": "diff",
                "title": "Aligned diff: truth → output" + (f" ({metric})" if metric else ""),
                "from": "truth",
                "to": "output",
                "d": ref,
            }
    return [block for block in out if block is not None]


def _diffs(
    name: str, views: Sequence[Any], chunk: Chunk, *, title: str, note: str, ends: tuple[str, str]
) -> list[Block]:
    """One diff block per view holding plain ``ops`` (anything else renders generically)."""
    out = []
    for view in views:
        ops = _ops(view)
        if ops is None:
            out.extend(generic(name, [view], chunk))
            continue
        out.append(
            {
                "t": "diff",
                "title": title,
                "note": note,
                "from": ends[0],
                "to": ends[1],
                "d": chunk.ops(ops),
            }
        )
    return out


def output_diff(name: str, views: Sequence[Any], chunk: Chunk) -> list[Block]:
    """The previous output (the baseline's) against this one: what this change changed."""
    return _diffs(
        name,
        views,
        chunk,
        title="previous output → this output",
        note="where did this change make it worse",
        ends=("previous output", "this output"),
    )


def stage_diff(name: str, views: Sequence[Any], chunk: Chunk) -> list[Block]:
    """A two-stage system's stage-1 text against its model's output: what the model changed
    (seed 000 3.2.6: was the text lost by the parser or by the model?)."""
    first = views[0] if views else None
    stage1 = str(first.get("stage1") or "stage 1") if isinstance(first, dict) else "stage 1"
    return _diffs(
        name,
        views,
        chunk,
        title=f"{stage1} → model",
        note="what the model changed in the parser's text",
        ends=(stage1, "model output"),
    )


VIEWS: dict[str, ViewRenderer] = {
    "text_diff": text_diff,
    "output_diff": output_diff,
    "stage_diff": stage_diff,
}


def case_views(
    rows: Sequence[tuple[int, Mapping[str, Any]]],
    chunk: Chunk,
    kind_views: Mapping[str, ViewRenderer] | None = None,
) -> dict[int, list[Block]]:
    """Row number -> its view blocks, for the rows of one case: the shared views in `VIEWS`
    order (truth diff, then output diff), then the others in the order the rows give them,
    each drawn by the kind's renderer (`kind_views`), a shared one, or `generic`."""
    renderers = {**VIEWS, **(kind_views or {})}
    by_name: dict[str, list[tuple[int, Any]]] = {}
    for number, row in rows:
        for name, view in mapping(row.get("views")).items():
            by_name.setdefault(str(name), []).append((number, view))
    names = [n for n in VIEWS if n in by_name] + [n for n in by_name if n not in VIEWS]
    out: dict[int, list[Block]] = {}
    for name in names:
        members = by_name[name]
        blocks = renderers.get(name, generic)(name, [view for _, view in members], chunk)
        for (number, _), block in zip(members, blocks, strict=True):
            out.setdefault(number, []).append(block)
    return out


def extras(details: Any, chunk: Chunk) -> list[Block]:
    """A row's kind-specific ``details``: its scalars as one key/value table, then one
    generic block per other key."""
    details = mapping(details)
    scalars = {k: v for k, v in details.items() if is_scalar(v)}
    blocks = generic("details", [scalars], chunk) if scalars else []
    for key, value in details.items():
        if key not in scalars:
            blocks.extend(generic(str(key), [value], chunk))
    return blocks
