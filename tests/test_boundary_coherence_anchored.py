"""Anchored Boundary Coherence against an independent implementation written here from the
definition (the docstring of kinds/documents/boundary_coherence.py, seed 000 section 3.3.3).

Only the public `boundary_coherence` is imported from the module. What the definition names
from elsewhere is shared on purpose: the Markdown grammar (text/markdown.py: a heading is
structure.py's pattern), the seed's chunker (`chunking.split_text`, checked against LangChain in
test_metrics_chunking.py) and rapidfuzz's Levenshtein alignment and ``partial_ratio`` (the
reference library the definition names; an optimal alignment is not unique, so another one would
map offsets elsewhere). Everything else is written again, differently: the blocks as a line
classification, the line-break reading as a walk over lines that decides each line's separator,
the projection and its offset mapping walked from ``editops`` character by character, the word
characters as a list, the one-to-one matching as scipy's maximum bipartite matching.

The same code then shows what anchoring is for: without it, garbage (an unrelated paper, lorem
ipsum, one sentence repeated) catches truth boundaries by chance; with it, it does not, while a
correct output keeps its ceiling.
"""

from __future__ import annotations

import itertools
import random
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from pytest_doceval.kinds.documents.boundary_coherence import boundary_coherence
from pytest_doceval.kinds.documents.chunking import split_text
from pytest_doceval.text import markdown as md

CASES = Path(__file__).resolve().parents[1] / "cases"
TOLERANCE, SIZE, OVERLAP = 20, 500, 50
NEAR, WIDE, SIMILARITY = 16, 32, 75.0


# ----------------------------------------------------------------- the independent definition


def raw(text: str) -> str:
    """The raw profile: CRLF, CR, VT, FF, U+2028 and U+2029 are line breaks; then NFC."""
    text = re.sub(r"\r\n|[\r\x0b\x0c\u2028\u2029]", "\n", text)
    return unicodedata.normalize("NFC", text)


def classify(line: str, in_paragraph: bool) -> str:
    if not line.strip():
        return "blank"
    if md.FENCE.match(line):
        return "fence"
    if md.HEADING.match(line):
        return "heading"
    if in_paragraph and md.SETEXT_UNDERLINE.match(line):
        return "underline"
    if md.THEMATIC_BREAK.match(line):
        return "break"
    return "text"


def gold_boundaries(truth: str) -> list[int]:
    """Block starts (offset, heading?) by classifying each line; then every block start but the
    first and but a non-heading block right after a heading."""
    blocks: list[list[int | bool]] = []
    in_paragraph = in_code = False
    offset = 0
    for line in truth.split("\n"):
        start = offset + len(line) - len(line.lstrip())
        offset += len(line) + 1
        if in_code:
            in_code = not md.FENCE.match(line.strip())
            continue
        kind = classify(line, in_paragraph)
        if kind == "underline":
            blocks[-1][1] = True
        elif kind in ("fence", "heading") or (kind == "text" and not in_paragraph):
            blocks.append([start, kind == "heading"])
        in_code = kind == "fence"
        in_paragraph = kind == "text"
    return [
        int(block[0]) for before, block in itertools.pairwise(blocks) if block[1] or not before[1]
    ]


def cuts_of(text: str, size: int, overlap: int) -> list[int]:
    """The splitter's cuts of `text` with each U+2029 written as a blank line, as offsets into
    `text` (a cut starts a chunk: a visible character, found by counting them)."""
    written = text.replace("\u2029", "\n\n")
    chunks = split_text(written, size, overlap)
    cuts = sorted({c.start for c in chunks} - {chunks[0].start}) if chunks else []
    return [cut - written.count("\n\n", 0, cut) for cut in cuts]


def is_held(line: str) -> bool:
    stripped = line.strip()
    return (
        stripped.startswith(("|", "<"))
        or bool(md.TABLE_SEPARATOR.match(line))
        or bool(md.GRID_BORDER.match(line))
    )


def read_breaks(text: str) -> tuple[str, list[int]]:
    """Every run of line breaks read as one U+2029, but a single newline kept between two
    table/HTML lines, after a div's opening fence, before its closing one, inside ``` code or $$
    math; with, for every character and the end, the offset in `text` it stands for. Walked
    line by line: a run is a line's trailing spacing, its newline and the whitespace-only lines
    after it (not the last line, which has no newline)."""
    lines = text.split("\n")
    starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    out: list[str] = []
    where: list[int] = []
    code = math = False
    k = 0
    while k < len(lines) - 1:
        line = lines[k].rstrip()
        out.append(line)
        where.extend(range(starts[k], starts[k] + len(line)))
        m = k + 1
        while m < len(lines) - 1 and not lines[m].strip():
            m += 1
        code ^= line.strip().startswith("```")
        math ^= line.count("$$") % 2 == 1
        following = lines[m]
        held = (
            code
            or math
            or (is_held(line) and is_held(following))
            or (line.lstrip().startswith(":::") and bool(line.strip().strip(":")))
            or (following.lstrip().startswith(":::") and not following.strip().strip(":"))
        )
        out.append("\n" if held and m == k + 1 else "\u2029")
        if m > k + 1:  # a blank line: no $$ math goes on past it
            math = False
        where.append(starts[k] + len(line))
        k = m
    out.append(lines[k])
    where.extend(range(starts[k], starts[k] + len(lines[k])))
    where.append(len(text))
    return "".join(out), where


def projected(truth: str, output: str) -> tuple[str, list[int]]:
    """The output's characters that ``editops`` aligns with a truth character (equal or
    substituted), and for every gap p of them the truth gap right after the truth character
    aligned with the one before p."""
    inserted = {op.dest_pos for op in Levenshtein.editops(truth, output) if op.tag == "insert"}
    deleted = {op.src_pos for op in Levenshtein.editops(truth, output) if op.tag == "delete"}
    kept, after = [], [0]
    i = 0
    for j, ch in enumerate(output):
        if j in inserted:
            continue
        while i in deleted:
            i += 1
        kept.append(ch)
        after.append(i + 1)
        i += 1
    return "".join(kept), after


@dataclass
class Words:
    """Word characters (casefolded, pandoc fences and attribute blocks left out), each with the
    offset of the text character it came from."""

    chars: list[tuple[str, int]]

    @classmethod
    def of(cls, text: str) -> Words:
        markup: set[int] = set()
        lines = text.replace("\u2029", "\n")  # a break ends a line: same length, same offsets
        for pattern in (md.PANDOC_DIV_FENCE_LINES, md.PANDOC_ATTRIBUTE_BLOCK):
            for m in pattern.finditer(lines):
                markup.update(range(m.start(), m.end()))
        chars = [
            (folded, k)
            for k, ch in enumerate(text)
            if (ch.isalnum() or ch == "_") and k not in markup  # what re's \w matches
            for folded in ch.casefold()
        ]
        return cls(chars)

    def window(self, position: int, width: int) -> tuple[str, str]:
        before = [c for c, k in self.chars if k < position]
        after = [c for c, k in self.chars if k >= position]
        return "".join(before[max(0, len(before) - width) :]), "".join(after[:width])


def found_in(short: str, wide: str) -> bool:
    return fuzz.partial_ratio(short, wide) >= SIMILARITY if short else not wide


def anchored(truth: Words, output: Words, cut: int, mapped: int) -> bool:
    o_near, o_wide = output.window(cut, NEAR), output.window(cut, WIDE)
    t_near, t_wide = truth.window(mapped, NEAR), truth.window(mapped, WIDE)
    return all(
        found_in(o_near[side], t_wide[side]) or found_in(t_near[side], o_wide[side])
        for side in (0, 1)
    )


def max_matching(gold: list[int], predicted: list[int], tolerance: int) -> int:
    if not gold or not predicted:
        return 0
    graph = np.array([[abs(g - p) <= tolerance for p in predicted] for g in gold], dtype=np.int8)
    return int((maximum_bipartite_matching(csr_matrix(graph), perm_type="column") >= 0).sum())


@dataclass(frozen=True)
class Reference:
    value: float
    matched: int
    n_truth: int
    n_pred: int
    anchored: int
    ceiling: float
    gold: tuple[int, ...]
    mapped: tuple[int, ...]


def reference_bc(
    truth: str,
    output: str,
    *,
    anchoring: bool = True,
    tolerance: int = TOLERANCE,
    size: int = SIZE,
    overlap: int = OVERLAP,
) -> Reference:
    truth, output = raw(truth), raw(output)
    truth_read, stands_for = read_breaks(truth)
    gold_raw = gold_boundaries(truth)
    gold = [stands_for.index(b) for b in gold_raw]
    text, after = projected(truth_read, read_breaks(output)[0])
    cuts = cuts_of(text, size, overlap)
    mapped = [after[cut] for cut in cuts]
    truth_words, output_words = Words.of(truth_read), Words.of(text)
    kept = [
        q
        for cut, q in zip(cuts, mapped, strict=True)
        if not anchoring or anchored(truth_words, output_words, cut, q)
    ]
    in_truth = tuple(stands_for[q] for q in mapped)
    if not gold:
        return Reference(1.0, 0, 0, len(cuts), len(kept), 1.0, (), in_truth)
    matched = max_matching(gold, kept, tolerance)
    ceiling = max_matching(gold, cuts_of(truth_read, size, overlap), tolerance) / len(gold)
    return Reference(
        matched / len(gold),
        matched,
        len(gold),
        len(cuts),
        len(kept),
        ceiling,
        tuple(gold_raw),
        in_truth,
    )


def assert_same(
    truth: str, output: str, name: str = "", chunking: tuple[int, int, int] | None = None
) -> Reference:
    """Both implementations agree on every count and offset (`chunking`: tolerance, chunk size
    and overlap, the seed's by default)."""
    tolerance, size, overlap = chunking or (TOLERANCE, SIZE, OVERLAP)
    ours = reference_bc(truth, output, tolerance=tolerance, size=size, overlap=overlap)
    theirs = boundary_coherence(truth, output, tolerance=tolerance, size=size, overlap=overlap)
    assert (
        theirs.value,
        theirs.matched,
        theirs.n_truth,
        theirs.n_pred,
        theirs.anchored,
        theirs.ceiling,
        theirs.truth,
        theirs.predicted,
    ) == (
        ours.value,
        ours.matched,
        ours.n_truth,
        ours.n_pred,
        ours.anchored,
        ours.ceiling,
        ours.gold,
        ours.mapped,
    ), name
    return ours


# --------------------------------------------------------------------------- generated texts

WORDS = st.sampled_from(
    "the tide storage basin holds water pumps run at night Über straße naïve 42 x_y "
    "cache compiler hit rate canopy cover sample [@cite] C# *emph* `code`".split()
)
SENTENCE = st.lists(WORDS, min_size=3, max_size=40).map(" ".join)
BLOCK = st.one_of(
    SENTENCE,
    st.lists(SENTENCE, min_size=2, max_size=4).map("\n".join),  # a paragraph over lines
    SENTENCE.map(lambda s: "## " + s[:40]),
    SENTENCE.map(lambda s: "# " + s[:30] + " {#sec:x .unnumbered}"),
    SENTENCE.map(lambda s: s[:30] + "\n======"),
    SENTENCE.map(lambda s: s[:30] + "\n---"),
    st.just("---"),
    st.just("* * *"),
    SENTENCE.map(lambda s: "```\n" + s + "\n\n" + s[:20] + "\n```"),
    SENTENCE.map(lambda s: "::: thebibliography\n" + s + "\n:::"),
    SENTENCE.map(lambda s: "- " + s + "\n- " + s[:25]),
    SENTENCE.map(lambda s: "    " + s),
    SENTENCE.map(lambda s: "so $$x\n= y$$ and\n" + s),  # display math inside a paragraph
    SENTENCE.map(lambda s: "costs $$5\n" + s),  # a $$ never closed
    SENTENCE.map(lambda s: "| " + s[:20] + " |\n|---|\n| " + s[-20:] + " |"),
    SENTENCE.map(lambda s: "<table>\n<tr><td>" + s[:20] + "</td></tr>\n</table>"),
)
DOCUMENT = st.lists(BLOCK, min_size=1, max_size=20).map("\n\n".join)


def _plain(text: str) -> str:
    return re.sub(r"[#*`{}]|:::|\[@\w+\]", "", text)


def _garble(text: str, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(
        rng.choice("aeiou") if ch.isalpha() and rng.random() < 0.15 else ch for ch in text
    )


def _reorder(text: str, seed: int) -> str:
    blocks = text.split("\n\n")
    random.Random(seed).shuffle(blocks)
    return "\n\n".join(blocks)


def _crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


OUTPUT_OF: dict[str, Callable[[str, int], str]] = {
    "same": lambda t, s: t,
    "plain": lambda t, s: _plain(t),
    "garbled": _garble,
    "reordered": _reorder,
    "cut short": lambda t, s: t[: len(t) * (s % 4 + 1) // 5],
    "one line": lambda t, s: " ".join(t.split()),
    "crlf": lambda t, s: _crlf(t),
}


# Tolerance, chunk size, overlap: the seed's, and small chunks so that short texts get many cuts.
CHUNKING = st.sampled_from([(TOLERANCE, SIZE, OVERLAP), (20, 120, 20), (5, 60, 0), (0, 200, 50)])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENT, st.sampled_from(sorted(OUTPUT_OF)), st.integers(0, 10**6), CHUNKING)
def test_equal_to_the_independent_implementation_on_generated_texts(
    truth: str, how: str, seed: int, chunking: tuple[int, int, int]
) -> None:
    assert_same(truth, OUTPUT_OF[how](truth, seed), chunking=chunking)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENT, DOCUMENT, CHUNKING)
def test_equal_to_the_independent_implementation_on_unrelated_texts(
    truth: str, other: str, chunking: tuple[int, int, int]
) -> None:
    assert_same(truth, other, chunking=chunking)


def test_the_mapping_follows_the_definition_by_hand() -> None:
    # "# Title\n\nBody" against "Title\n\nXXBody": the inserted "XX" is left out, the gap
    # before "Title" maps before "# ", the gap before "Body" to the truth's "Body".
    text, after = projected("# Title\n\nBody", "Title\n\nXXBody")
    assert text == "Title\n\nBody"
    assert after[0] == 0 and after[len("Title\n\n")] == len("# Title\n\n")
    assert read_breaks("a \n\n\nb\n  c") == ("a\u2029b\u2029  c", [0, 1, 5, 6, 7, 8, 9, 10])


# ------------------------------------------------------------------------------ shipped cases

PAPERS = sorted((CASES / "papers").glob("*/truth.md"))


def _pdf_text(pdf: Path) -> str:
    pymupdf = pytest.importorskip("pymupdf")
    with pymupdf.open(pdf) as doc:
        return "\n\n".join(page.get_text() for page in doc)


def _shipped_outputs() -> list[tuple[str, str, str]]:
    """(name, truth, output) for every saved output of a documents case, and the text layer of
    every paper's PDF (what the `pymupdf` system starts from)."""
    found = []
    for suite in ("papers", "korean", "scans", "tables"):
        for truth in sorted((CASES / suite).glob("*/truth.md")):
            for output in sorted((truth.parent / "outputs").glob("*")):
                if output.is_file():
                    name = f"{suite}/{truth.parent.name}/{output.name}"
                    found.append((name, truth.read_text("utf-8"), output.read_text("utf-8")))
    return found


@pytest.mark.skipif(not PAPERS, reason="the example cases are not here")
def test_equal_to_the_independent_implementation_on_the_shipped_outputs() -> None:
    shipped = _shipped_outputs()
    assert len(shipped) >= 10
    for name, truth, output in shipped:
        assert_same(truth, output, name)
    for truth_file in PAPERS:
        truth = truth_file.read_text("utf-8")
        assert_same(truth, _pdf_text(truth_file.with_name("document.pdf")), str(truth_file))
        assert_same(truth, truth, str(truth_file))


# ------------------------------------------------------------------- garbage against good


def _garbage(truth: str) -> dict[str, str]:
    lorem = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod. " * 200)[
        : len(truth)
    ]
    out = {"lorem": lorem}
    # A prose sentence (a table's rows between two stops are no sentence to repeat).
    sentences = [
        s for s in re.split(r"(?<=[.!?])\s+", truth)[1:8] if 20 <= len(s) <= 300 and "|" not in s
    ]
    if sentences:
        sentence = max(sentences, key=len)
        out["repeated"] = " ".join([sentence] * (len(truth) // len(sentence) + 1))[: len(truth)]
    return out


@pytest.mark.skipif(len(PAPERS) < 2, reason="the example cases are not here")
def test_anchoring_tells_garbage_from_a_good_output() -> None:
    truths = {p.parent.name: p.read_text("utf-8") for p in PAPERS}
    garbage_scores, unanchored_garbage, good_scores = [], [], []
    for name, truth in truths.items():
        good = assert_same(truth, truth)
        assert good.value == good.ceiling > 0, name
        good_scores.append(good.value)
        plain = assert_same(truth, _plain(truth))
        assert plain.value > 0, name  # markup lost, text kept: its cuts still anchor
        for kind, text in _garbage(truth).items():
            bad = assert_same(truth, text)
            garbage_scores.append(bad.value)
            unanchored_garbage.append(reference_bc(truth, text, anchoring=False).value)
            assert bad.value <= 0.1 < good.value, (name, kind, bad.value, good.value)
    for (_, truth), (_, other) in itertools.permutations(truths.items(), 2):
        bad = assert_same(truth, other)  # another paper entirely
        garbage_scores.append(bad.value)
        unanchored_garbage.append(reference_bc(truth, other, anchoring=False).value)
    mean = sum(garbage_scores) / len(garbage_scores)
    unanchored = sum(unanchored_garbage) / len(unanchored_garbage)
    assert mean <= 0.05 < sum(good_scores) / len(good_scores)
    # Anchoring is what makes the difference: the same cuts unanchored catch boundaries by chance.
    assert unanchored >= 3 * mean + 0.05, (mean, unanchored)


def test_a_reordered_page_loses_what_a_good_one_keeps() -> None:
    # Paragraphs of 359 characters: each fills a chunk of its own, so the ceiling is 1.
    paragraphs = [(f"{word} " * 60).strip() for word in ("alpha", "bravo", "delta", "gamma")]
    truth = "\n\n".join(paragraphs)
    good = assert_same(truth, truth)
    swapped_text = "\n\n".join([paragraphs[1], paragraphs[0], *paragraphs[2:]])
    swapped = assert_same(truth, swapped_text)
    # Only the cut before "gamma" has the truth's text on both sides.
    assert (good.value, good.anchored) == (1.0, 3) and (swapped.value, swapped.anchored) == (
        1 / 3,
        1,
    )
    # Unanchored, the alignment still lands the cut before "delta" on a truth boundary.
    assert reference_bc(truth, swapped_text, anchoring=False).value == 2 / 3 > swapped.value
