"""The per-case table: a compact JSON table of rows the page's script draws a page at a time,
and each row's details (node id, labels, all metrics, counts, notes, views) packed into chunks
decoded only when a row is opened.

Both are made in one pass over the suite's rows, each row read once (from disk, for a report
read or written by this package) and let go: the table's rows in pages of `ROWS_PAGE`, the
details in chunks of about `CHUNK_BYTES`, each handed to the page's data blocks (`Blobs`) as
it is complete, so the page of a suite of 200,000 rows is written with one page and one chunk
of it in memory."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.codec import Blobs, Chunk
from pytest_doceval.html.fmt import mapping, num, plain, strings
from pytest_doceval.html.model import SuiteView, judge, ordered_outcomes, outcome_counts
from pytest_doceval.html.views import ViewRenderer, case_views, extras
from pytest_doceval.report.html.kinds import kind_html

# Details are packed into chunks of about this many bytes of JSON (before compression).
CHUNK_BYTES = 400_000
# Once a suite's details pass this many bytes of JSON, its further chunks are deflated and
# base85-encoded (the first ones too, for a table whose rows are in several pages).
INLINE_LIMIT = 256_000
# Rows of the case table per page of its data (the script reads every page, one after another).
ROWS_PAGE = 20_000
# The first this many headline metrics get a column in the per-case table (all are in the
# row details).
ROW_METRICS = 5
# Row messages longer than this are cut in the table; the details hold the whole message.
ROW_MESSAGE_CHARS = 300

_FLAG = {"worse": "+", "better": "-", "same": "=", "changed": "~", "": "."}
_NAMES = ("cases", "systems", "outcomes", "labels")


def labels_text(labels: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in labels.items())


def cases_block(view: SuiteView, blobs: Blobs) -> Markup:
    rows = view.rows()
    if not len(rows):
        return Markup('<h3>Cases</h3><p class="empty">No per-case results.</p>')
    metrics = view.headline[:ROW_METRICS]
    rows_id, prefix = f"doceval-rows-{view.index}", f"doceval-s{view.index}-d"
    table = _CaseTable(view, metrics, rows_id, blobs)
    details = _Details(prefix, blobs, kind_html(view.data.get("kind")).views)
    for numbers, case_rows in _by_case(rows):
        chunk = details.add_case(numbers, case_rows)
        for number, row in zip(numbers, case_rows, strict=True):
            table.add(number, row, chunk)
    details.finish()
    has_labels = table.finish()
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
        if has_labels
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
        n=len(rows),
        rows_id=rows_id,
        prefix=prefix,
        not_passed=not_passed,
        options=options,
        label_head=label_head,
        heads=heads,
    )


def _by_case(rows: Any) -> Iterator[tuple[list[int], list[Mapping[str, Any]]]]:
    """The rows, read once, in runs of one case each (a report's rows are sorted by case, so
    a run is all of a case's rows; elsewhere a case seen again starts a new run)."""
    numbers: list[int] = []
    group: list[Mapping[str, Any]] = []
    current: str | None = None
    for number, row in enumerate(rows):
        case = str(row.get("case", ""))
        if group and case != current:
            yield numbers, group
            numbers, group = [], []
        current = case
        numbers.append(number)
        group.append(row)
    if group:
        yield numbers, group


def _row_number(value: Any) -> float | None:
    """A metric for the row table, rounded (it shows 4 decimals); None when not finite."""
    x = num(value)
    return None if x is None else round(x, 6)


class _CaseTable:
    """The per-case table as compact JSON, a page of `ROWS_PAGE` rows at a time: names once
    (each page lists the names it adds: ``cases``, ``systems``, ``outcomes``, ``labels``), then
    one short array per row: ``[case, system, outcome, values, flags, message, chunk,
    has_views, labels]`` where case, system, outcome and labels index the name lists (labels
    is left off a row without any), and flags has one character per metric against the row's
    baseline: ``+`` worse, ``-`` better, ``=`` same, ``~`` changed (direction not stated),
    ``.`` no baseline. The header (`Blobs.table`) holds the metrics, their directions, the
    number of pages and, while the page holds its data, the first page itself."""

    def __init__(self, view: SuiteView, metrics: list[str], ident: str, blobs: Blobs) -> None:
        self.metrics = metrics
        self.directions = [view.direction(m) for m in metrics]
        self.ident = ident
        self.blobs = blobs
        self.header: dict[str, Any] = {
            "metrics": metrics,
            "dirs": self.directions,
            "directions": {m: s.direction for m, s in view.specs.items() if s.direction},
        }
        self.names: dict[str, dict[str, int]] = {key: {} for key in _NAMES}
        self.pages = 0
        self.first: dict[str, Any] | None = None
        self.has_labels = False
        self._start_page()

    def _start_page(self) -> None:
        self.page: dict[str, Any] = {key: [] for key in _NAMES}
        self.page["rows"] = []

    def _name(self, key: str, value: str) -> int:
        found = self.names[key].get(value)
        if found is None:
            found = self.names[key][value] = len(self.names[key])
            self.page[key].append(value)
        return found

    def add(self, number: int, row: Mapping[str, Any], chunk: int) -> None:
        values = mapping(row.get("metrics"))
        baseline = mapping(row.get("baseline"))
        flags = ""
        for metric, direction in zip(self.metrics, self.directions, strict=True):
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
            self._name("cases", str(row.get("case", ""))),
            self._name("systems", str(row.get("system", ""))),
            self._name("outcomes", str(row.get("outcome") or "unknown")),
            [_row_number(values.get(m)) for m in self.metrics],
            flags,
            message,
            chunk,
            1 if mapping(row.get("views")) else 0,
        ]
        if labels:  # most kinds have none: no trailing null on every row
            entry.append(self._name("labels", labels))
            self.has_labels = True
        self.page["rows"].append(entry)
        if len(self.page["rows"]) >= ROWS_PAGE:
            self._end_page()

    def _end_page(self) -> None:
        if self.first is None:
            self.first = self.page
        else:
            self.blobs.packed(f"{self.ident}-p{self.pages}", self.page)
        self.pages += 1
        self._start_page()

    def finish(self) -> bool:
        """Hand the last page and the header to the page's data; whether any row has labels."""
        if self.page["rows"] or self.first is None:
            self._end_page()
        assert self.first is not None
        self.blobs.table(self.ident, {**self.header, "pages": self.pages}, self.first)
        return self.has_labels


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


class _Details:
    """Row details packed into chunks of about `CHUNK_BYTES`, all rows of a case in one chunk,
    each handed to the page's data as soon as it is full (deflated once the suite's details
    pass `INLINE_LIMIT`)."""

    def __init__(self, prefix: str, blobs: Blobs, kind_views: Mapping[str, ViewRenderer]) -> None:
        self.prefix = prefix
        self.blobs = blobs
        self.kind_views = kind_views
        self.chunks = 0
        self.size = 0  # of the chunks handed over
        self.current = Chunk()

    def add_case(self, numbers: list[int], rows: list[Mapping[str, Any]]) -> int:
        """Add the rows of one case (their views may share the case's truth text); the number
        of the chunk they are in."""
        chunk = self.current
        views = case_views(list(zip(numbers, rows, strict=True)), chunk, self.kind_views)
        for number, row in zip(numbers, rows, strict=True):
            detail = _detail(row)
            blocks = views.get(number, [])
            if blocks:
                detail["views"] = blocks
            more = extras(row.get("details"), chunk)
            if more:
                detail["extras"] = more
            chunk.rows[str(number)] = detail
            message = str(detail.get("message") or "")
            chunk.size += 200 + len(message) + 40 * len(detail.get("metrics", {}))
        found = self.chunks
        if chunk.size >= CHUNK_BYTES:
            self._hand_over()
        return found

    def _hand_over(self) -> None:
        self.size += self.current.size
        ident = f"{self.prefix}{self.chunks}"
        # Packed once the details are big: the page's first chunks stay plain JSON then, as
        # they did when the whole page was decided at once (a small report is not packed).
        if self.size > INLINE_LIMIT:
            self.blobs.packed(ident, self.current.data())
        else:
            self.blobs.json(ident, self.current.data())
        self.chunks += 1
        self.current = Chunk()

    def finish(self) -> None:
        if self.current.rows:
            self._hand_over()
