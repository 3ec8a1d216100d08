"""Properties of the HTML report's data codec and number formatting.

The shared-truth diff encoding must give back exactly the ops it was given (minus empty equal
runs), for any diffs of one truth text; a diff shares the truth unless the part of it that
diff shows holds a character beyond U+FFFF (JavaScript counts those as two). The Python twin
of the page's decoder (`test_html_report.expand`) reads it back; the browser's own is
exercised in Chromium.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from test_html_report import expand, without_empty_equals

from pytest_doceval.html.codec import Blobs, Chunk, DataFolder
from pytest_doceval.html.fmt import NA, fmt, fmt_signed, plain, tabular

# Mostly BMP letters and whitespace, sometimes a character JavaScript counts as two.
TEXT = st.text(alphabet=st.sampled_from("ab c\n\té한😀"), min_size=1, max_size=60)
HYP = st.text(alphabet=st.sampled_from("xy z\n😀<&"), min_size=1, max_size=4)


@st.composite
def diff_of(draw: st.DrawFn, truth: str) -> list[list[Any]]:
    """An aligned diff whose truth side is `truth`: equal, substituted, deleted and elided
    runs consume it, insertions do not."""
    ops: list[list[Any]] = []
    position = 0
    while position < len(truth):
        kind = draw(st.sampled_from(["=", "S", "D", "…", "I"]))
        if kind == "I":
            ops.append(["I", draw(HYP)])
            continue
        n = draw(st.integers(1, min(8, len(truth) - position)))
        run = truth[position : position + n]
        ops.append(
            {"=": ["=", run], "S": ["S", run, draw(HYP)], "D": ["D", run]}.get(kind, ["…", n])
        )
        position += n
    return ops


def shown_truth(ops: list[list[Any]]) -> str:
    return "".join(op[1] for op in ops if op[0] in "=SD")


@given(st.data())
def test_diffs_of_one_truth_round_trip(data: st.DataObject) -> None:
    truth = data.draw(TEXT)
    diffs = data.draw(st.lists(diff_of(truth), min_size=1, max_size=4))
    chunk = Chunk()
    encoded = chunk.diffs(diffs)
    for ops, ref in zip(diffs, encoded, strict=True):
        assert expand(ref, chunk.data()) == without_empty_equals(ops)
    # a diff shares the truth unless the part it shows has a character beyond U+FFFF
    shareable = [max(shown_truth(ops), default="") <= "\uffff" for ops in diffs]
    assert [("g" in ref) for ref in encoded] == shareable
    assert len(chunk.refs) == (1 if any(shareable) else 0)


@given(st.lists(st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=3)), max_size=4)))
def test_malformed_ops_are_kept_as_given(ops: list[Any]) -> None:
    chunk = Chunk()
    (ref,) = chunk.diffs([ops])
    if "g" in ref:  # it happened to be a well-formed diff
        assert expand(ref, chunk.data()) == without_empty_equals(ops)
    else:
        assert ref["ops"] == ops


@given(st.one_of(st.floats(), st.integers(), st.none(), st.text(max_size=3), st.booleans()))
def test_numbers_show_fixed_decimals_or_na(value: Any) -> None:
    for shown in (fmt(value), fmt_signed(value)):
        finite = isinstance(value, int | float) and not isinstance(value, bool)
        finite = finite and math.isfinite(value)
        if finite:
            assert abs(float(shown) - value) <= 0.5e-4 * (1 + 1e-9) + abs(value) * 1e-15
            assert len(shown.split(".")[1]) == 4
        else:
            assert shown == NA


SCALARS = st.floats() | st.text(max_size=2) | st.none() | st.booleans() | st.integers()


@given(
    st.recursive(
        SCALARS, lambda c: st.lists(c) | st.dictionaries(st.text(max_size=2), c), max_leaves=12
    )
)
def test_plain_is_json_without_nan(value: Any) -> None:
    """Non-finite floats become null (as the JSON report writes them); all else is kept."""
    text = json.dumps(plain(value), allow_nan=False)
    if not any(isinstance(x, float) and not math.isfinite(x) for x in _leaves(value)):
        assert json.loads(text) == value


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


@given(
    st.lists(
        st.dictionaries(st.text(max_size=3), st.integers() | st.none(), max_size=3), min_size=1
    )
)
def test_a_list_of_flat_dicts_is_a_table(rows: list[dict[str, Any]]) -> None:
    table = tabular(rows)
    assert table is not None
    head, body = table
    assert len(body) == len(rows) and all(len(r) == len(head) for r in body)
    assert {k for r in rows for k in r} == set(head)


def test_a_spilled_report_writes_every_block_from_its_threads(tmp_path: Path) -> None:
    """Blocks are written on a thread pool once the page spills. The folder is made once,
    when it spills: a lazy mkdir in each write raced ("File exists") under load in CI."""
    folder = DataFolder(tmp_path / "report.data", "render-1")
    blobs = Blobs(spill_at=0, folder=folder)
    blocks = {f"block-{n}": {"rows": [[n, "x" * n]]} for n in range(64)}
    for ident, data in blocks.items():
        blobs.packed(ident, data)
    blobs.close()
    assert blobs.spilled
    written = {path.stem for path in folder.path.iterdir()}
    assert written == set(blocks)
    for ident in blocks:
        text = (folder.path / f"{ident}.js").read_text(encoding="utf-8")
        assert text.startswith("doceval_data(") and f'"{ident}","render-1"' in text
