"""HTML for a documents row's ``tables`` view: each truth table beside the output table it was
paired with, row by row, with the pair's TEDS and TEDS-S (see `metrics.table_scores`).

One table block per row (the page's script draws it as text): a pair's first line names the two
tables and their scores, and every line shows one row of each table, its cells separated by
``│``; a merged cell is marked ``⟨colspan×rowspan⟩``. A missing or an invented table has an
empty side."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_doceval.html.codec import Chunk
from pytest_doceval.html.fmt import mapping, mappings, plain

Block = dict[str, Any]
CELL_SEPARATOR = " │ "


def _side(number: Any, word: str) -> str:
    return f"{word} {number + 1}" if isinstance(number, int) else f"(no {word} table)"


def _lines(rows: Any) -> list[str]:
    if not isinstance(rows, list):
        return []
    return [CELL_SEPARATOR.join(str(c) for c in row) for row in rows if isinstance(row, list)]


def tables(name: str, views: Sequence[Any], chunk: Chunk) -> list[Block]:
    out = []
    for view in views:
        rows: list[list[Any]] = []
        for pair in mappings(mapping(view).get("pairs")):
            truth, output = _lines(pair.get("truth_rows")), _lines(pair.get("output_rows"))
            label = f"{_side(pair.get('truth'), 'truth')} ↔ {_side(pair.get('output'), 'output')}"
            for k in range(max(len(truth), len(output), 1)):
                first = k == 0
                rows.append(
                    [
                        label if first else "",
                        pair.get("teds") if first else "",
                        pair.get("teds_s") if first else "",
                        truth[k] if k < len(truth) else "",
                        output[k] if k < len(output) else "",
                    ]
                )
        block: Block = {
            "t": "table",
            "title": "Tables: truth beside output",
            "note": "pairs by least total 1 - TEDS; ⟨c×r⟩ marks a merged cell",
            "head": ["pair", "TEDS", "TEDS-S", "truth row", "output row"],
            "rows": plain(rows, 6),
        }
        chunk.size += len(json.dumps(block, ensure_ascii=False))
        out.append(block)
    return out
