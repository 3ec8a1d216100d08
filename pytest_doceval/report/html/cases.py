"""The per-case table: a compact JSON table of rows the page's script draws a page at a time,
and each row's details (node id, labels, all metrics, counts, notes, views) packed into chunks
decoded only when a row is opened."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.codec import Blobs, Chunk
from pytest_doceval.html.fmt import mapping, num, plain, strings
from pytest_doceval.html.model import SuiteView, judge, ordered_outcomes, outcome_counts
from pytest_doceval.html.views import ViewRenderer, case_views, extras
from pytest_doceval.report.html.kinds import kind_html

# Details are packed into chunks of about this many bytes of JSON (before compression).
CHUNK_BYTES = 400_000
# Above this many bytes of detail JSON in a report, chunks are deflated and base85-encoded.
INLINE_LIMIT = 256_000
# The first this many headline metrics get a column in the per-case table (all are in the
# row details).
ROW_METRICS = 5
# Row messages longer than this are cut in the table; the details hold the whole message.
ROW_MESSAGE_CHARS = 300

_FLAG = {"worse": "+", "better": "-", "same": "=", "changed": "~", "": "."}


def labels_text(labels: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in labels.items())


def cases_block(view: SuiteView, blobs: Blobs) -> Markup:
    results = view.rows()
    if not results:
        return Markup('<h3>Cases</h3><p class="empty">No per-case results.</p>')
    metrics = view.headline[:ROW_METRICS]
    chunks, row_chunk = detail_chunks(results, kind_html(view.data.get("kind")).views)
    rows_id, prefix = f"doceval-rows-{view.index}", f"doceval-s{view.index}-d"
    payload = rows_payload(view, results, metrics, row_chunk)
    blobs.json(rows_id, payload)
    pack = sum(c.size for c in chunks) > INLINE_LIMIT
    for number, chunk in enumerate(chunks):
        (blobs.packed if pack else blobs.json)(f"{prefix}{number}", chunk.data())
    counts = outcome_counts(view.data)
    options = Markup().join(
        Markup('<option value="{o}">{o} ({n:,})</option>').format(o=o, n=counts[o])
        for o in ordered_outcomes(counts)
    )
    not_passed = sum(n for o, n in counts.items() if o != "passed")
    heads = Markup().join(
        Markup('<th class="num" data-key="m{}"><button type="button">{}</button></th>').format(i, m)
        for i, m in enumerate(metrics)
    )
    label_head = (
        Markup('<th data-key="labels"><button type="button">labels</button></th>')
        if payload["labels"]
        else Markup()
    )
    return Markup(
        "<h3>Cases ({n:,}): click a row for its details and views</h3>"
        '<div class="cases" data-rows="{rows_id}" data-prefix="{prefix}">'
        '<div class="toolbar"><label>Outcome <select class="f-outcome">'
        '<option value="">all ({n:,})</option>'
        '<option value="!passed">not passed ({not_passed:,})</option>{options}</select></label>'
        ' <label>Filter <input type="search" class="f-text" '
        'placeholder="case, system, label, message"></label> <span class="count"></span></div>'
        '<table class="case-table"><thead><tr>'
        '<th data-key="case"><button type="button">case</button></th>'
        '<th data-key="system"><button type="button">system</button></th>'
        "{label_head}"
        '<th data-key="outcome"><button type="button">outcome</button></th>'
        '{heads}<th data-key="message"><button type="button">message</button></th>'
        "</tr></thead><tbody></tbody></table>"
        '<p><button type="button" class="more" hidden>show more</button> '
        '<button type="button" class="all" hidden>show all</button></p></div>'
    ).format(
        n=len(results),
        rows_id=rows_id,
        prefix=prefix,
        not_passed=not_passed,
        options=options,
        label_head=label_head,
        heads=heads,
    )


def _row_number(value: Any) -> float | None:
    """A metric for the row table, rounded (it shows 4 decimals); None when not finite."""
    x = num(value)
    return None if x is None else round(x, 6)


def rows_payload(
    view: SuiteView,
    results: list[Mapping[str, Any]],
    metrics: list[str],
    row_chunk: list[int],
) -> dict[str, Any]:
    """The per-case table as compact JSON: names once, then one short array per row:
    ``[case, system, outcome, values, flags, message, chunk, has_views, labels]`` where case,
    system, outcome and labels index the name lists (labels is left off a row without any),
    and flags has one character per metric against the row's baseline: ``+`` worse, ``-``
    better, ``=`` same, ``~`` changed (direction not stated), ``.`` no baseline."""
    names: dict[str, dict[str, int]] = {"cases": {}, "systems": {}, "outcomes": {}, "labels": {}}
    directions = [view.direction(m) for m in metrics]
    rows = []
    for number, row in enumerate(results):
        values = mapping(row.get("metrics"))
        baseline = mapping(row.get("baseline"))
        flags = ""
        for metric, direction in zip(metrics, directions, strict=True):
            current, base = num(values.get(metric)), num(baseline.get(metric))
            moved = current - base if current is not None and base is not None else None
            flags += _FLAG[judge(moved, direction)]
        message = row.get("message")
        notes = strings(row.get("notes"))
        # A passed row's notes say what a reader must know (a known failure, a repaired PDF).
        message = str(message) if message is not None else f"note: {notes[0]}" if notes else None
        if message and len(message) > ROW_MESSAGE_CHARS:
            message = message[: ROW_MESSAGE_CHARS - 1] + "…"
        labels = labels_text(mapping(row.get("labels")))
        entry = [
            names["cases"].setdefault(str(row.get("case", "")), len(names["cases"])),
            names["systems"].setdefault(str(row.get("system", "")), len(names["systems"])),
            names["outcomes"].setdefault(
                str(row.get("outcome") or "unknown"), len(names["outcomes"])
            ),
            [_row_number(values.get(m)) for m in metrics],
            flags,
            message,
            row_chunk[number],
            1 if mapping(row.get("views")) else 0,
        ]
        if labels:  # most kinds have none: no trailing null on every row
            entry.append(names["labels"].setdefault(labels, len(names["labels"])))
        rows.append(entry)
    return {
        "metrics": metrics,
        "dirs": directions,
        "directions": {m: s.direction for m, s in view.specs.items() if s.direction},
        **{key: list(values) for key, values in names.items()},
        "rows": rows,
    }


def _detail(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a row's detail panel shows besides its views. Metric values keep 6 significant
    digits (the panel shows 4 decimals; the JSON report has them all)."""
    out: dict[str, Any] = {}
    for key in ("nodeid", "message", "labels", "metrics", "baseline", "counts"):
        if row.get(key):
            out[key] = plain(row[key], 6)
    notes = strings(row.get("notes"))
    if notes:
        out["notes"] = notes
    return out


def _add_case(
    chunk: Chunk,
    results: list[Mapping[str, Any]],
    numbers: list[int],
    kind_views: Mapping[str, ViewRenderer],
) -> None:
    """Add the rows of one case to `chunk` (their views may share the case's truth text)."""
    views = case_views([(n, results[n]) for n in numbers], chunk, kind_views)
    for number in numbers:
        detail = _detail(results[number])
        blocks = views.get(number, [])
        if blocks:
            detail["views"] = blocks
        more = extras(results[number].get("details"), chunk)
        if more:
            detail["extras"] = more
        chunk.rows[str(number)] = detail
        message = str(detail.get("message") or "")
        chunk.size += 200 + len(message) + 40 * len(detail.get("metrics", {}))


def detail_chunks(
    results: list[Mapping[str, Any]], kind_views: Mapping[str, ViewRenderer] | None = None
) -> tuple[list[Chunk], list[int]]:
    """Row details packed into chunks of about CHUNK_BYTES, all rows of a case in one chunk:
    the chunks and each row's chunk number."""
    by_case: dict[str, list[int]] = {}
    for number, row in enumerate(results):
        by_case.setdefault(str(row.get("case", "")), []).append(number)
    chunks: list[Chunk] = []
    row_chunk = [0] * len(results)
    current = Chunk()
    for numbers in by_case.values():
        _add_case(current, results, numbers, kind_views or {})
        for number in numbers:
            row_chunk[number] = len(chunks)
        if current.size >= CHUNK_BYTES:
            chunks.append(current)
            current = Chunk()
    if current.rows:
        chunks.append(current)
    return chunks, row_chunk
