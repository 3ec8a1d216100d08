"""Boundary Coherence: truth boundaries, the offset mapping, one-to-one matching, the score."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from pytest_doceval.kinds.documents.boundary_coherence import (
    PARAGRAPH_BREAK,
    WordCharacters,
    boundary_coherence,
    canonical_breaks,
    chunk_boundaries,
    is_anchored,
    match_boundaries,
    project,
    truth_boundaries,
)
from pytest_doceval.kinds.documents.chunking import split_text
from pytest_doceval.metrics.text import character_alignment
from pytest_doceval.text.normalise import get_profile

CASES = Path(__file__).resolve().parents[1] / "cases"

# Title, byline, intro, a section whose text starts on the heading's next line, a code block
# with a blank line inside, a thematic break, a setext heading over two lines, its body.
MARKDOWN = (
    "# Title\n\nBy A. Author\n\nIntro para.\n\n## Method\nText under method.\nMore text.\n\n"
    "```\ncode\n\nmore code\n```\n\nAfter code.\n\n---\n\nNew section.\nSetext\n======\n\nBody.\n"
)


def test_truth_boundaries_hand_worked() -> None:
    starts = [MARKDOWN.index(s) for s in ("Intro", "## Method", "```\ncode", "After", "New")]
    # Not boundaries: the title (document start), the byline and "Text under method." (right
    # after a heading), the blank line inside the code, the break itself, "Body." (after the
    # setext heading).
    assert truth_boundaries(MARKDOWN) == starts


def test_truth_boundaries_point_at_text_not_indentation() -> None:
    text = "para one\n\n   indented para\n\n- item\n- item two\n\n- loose item"
    starts = [text.index("indented"), text.index("- item"), text.index("- loose")]
    assert truth_boundaries(text) == starts == [13, 28, 47]


def test_no_boundaries_in_one_block_or_nothing() -> None:
    assert truth_boundaries("") == []
    assert truth_boundaries("one paragraph\nover two lines") == []
    assert truth_boundaries("# Heading\n\nand its text") == []


def test_project_hand_worked() -> None:
    # "# " deleted before "Intro": the cut before "Intro" maps to the truth's start, before the
    # markup; the gap before "Text" to the truth's "Text".
    plain = project("# Intro\n\nText here", "Intro\n\nText here")
    assert plain.text == "Intro\n\nText here"
    assert (plain.truth_gap[0], plain.truth_gap[7]) == (0, 9)
    # Inserted text is left out; the rest maps where it stands in the truth.
    inserted = project("abc def", "abc XXX def")
    assert inserted.text == "abc def" and inserted.truth_gap[4] == 4
    # A substitution is kept: it stands for the truth character.
    assert project("abc def", "abd def").text == "abd def"


def test_canonical_breaks_hand_worked() -> None:
    one, blank, two = "a\nb", "a\n\nb", "a \n\t\n\nb"
    assert {canonical_breaks(t).text for t in (one, blank, two)} == {"a\u2029b"}
    assert PARAGRAPH_BREAK == "\u2029"
    # A break stands at the start of its run, the next character where it is.
    assert canonical_breaks(two).source == (0, 1, 6, 7)
    assert canonical_breaks(one).source == (0, 1, 2, 3)
    table = "text\n| a | b |\n|---|---|\n| 1 | 2 |\nafter"
    assert canonical_breaks(table).text == "text\u2029| a | b |\n|---|---|\n| 1 | 2 |\u2029after"
    fenced = "x\n```\ncode\nmore\n```\ny"
    assert canonical_breaks(fenced).text == "x\u2029```\ncode\nmore\n```\u2029y"
    div = "para\n::: {#tab:x}\n| a |\n:::\nnext"
    assert canonical_breaks(div).text == "para\u2029::: {#tab:x}\n| a |\n:::\u2029next"
    math = "we get $$E = m\n\\label{e}$$ and\nmore"
    assert canonical_breaks(math).text == "we get $$E = m\n\\label{e}$$ and\u2029more"
    # an unclosed $$ holds lines together only up to the paragraph's end
    unclosed = "costs $$5\nor more\n\nnext\nline"
    assert canonical_breaks(unclosed).text == "costs $$5\nor more\u2029next\u2029line"


def test_match_is_one_to_one() -> None:
    assert match_boundaries([100, 110], [105], 20) == 1
    assert match_boundaries([105], [100, 110], 20) == 1
    assert match_boundaries([100, 110], [95, 105], 20) == 2
    assert match_boundaries([100], [121], 20) == 0
    assert match_boundaries([100], [120], 20) == 1
    with pytest.raises(ValueError, match="tolerance"):
        match_boundaries([1], [1], -1)


def test_boundary_coherence_hand_worked() -> None:
    truth = "# Head\n\nalpha beta gamma\n\ndelta epsilon\n\nzeta eta theta"
    plain = "Head alpha beta gamma delta epsilon zeta eta theta"
    # Truth boundaries: "delta" (26) and "zeta" (41); "alpha" follows the heading. The plain
    # text, cut at spaces into 20-character chunks, starts chunks at "gamma" (truth 19) and
    # "zeta" (its space stands for the blank line, read as one break: truth 41).
    score = boundary_coherence(truth, plain, tolerance=5, size=20, overlap=0)
    assert (score.truth, score.predicted) == ((26, 41), (19, 41))
    assert (score.value, score.matched, score.n_truth, score.n_pred) == (0.5, 1, 2, 2)
    # The truth's own chunks start at every paragraph: its ceiling is 1.
    assert score.ceiling == 1.0
    assert boundary_coherence(truth, plain, tolerance=7, size=20, overlap=0).value == 1.0


def test_empty_cases() -> None:
    long_paragraph = " ".join(["word"] * 300)  # 1499 characters: four chunks, three cuts
    one_block = boundary_coherence(long_paragraph, long_paragraph)
    assert (one_block.value, one_block.n_truth, one_block.n_pred) == (1.0, 0, 3)
    assert boundary_coherence("", "").value == 1.0
    empty_output = boundary_coherence("one\n\ntwo", "")
    assert (empty_output.value, empty_output.n_truth, empty_output.n_pred) == (0.0, 1, 0)


def test_crlf_truth_and_output_score_like_lf() -> None:
    truth = "# A\n\n" + "\n\n".join(" ".join([w] * 40) for w in ("one", "two", "three"))
    output = truth.replace("# ", "")
    lf = boundary_coherence(truth, output)
    crlf = boundary_coherence(truth.replace("\n", "\r\n"), output.replace("\n", "\r\n"))
    assert crlf == lf


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 300), max_size=25),
    st.lists(st.integers(0, 300), max_size=25),
    st.integers(0, 30),
)
def test_matching_is_maximum(truth: list[int], predicted: list[int], tolerance: int) -> None:
    """Against scipy's maximum bipartite matching on the same edges."""
    expected = 0
    if truth and predicted:
        edges = np.abs(np.subtract.outer(truth, predicted)) <= tolerance
        pairs = maximum_bipartite_matching(csr_matrix(edges.astype(np.int8)), perm_type="column")
        expected = int((pairs >= 0).sum())
    assert match_boundaries(truth, predicted, tolerance) == expected


@settings(max_examples=200, deadline=None)
@given(st.data(), st.lists(st.integers(0, 2000), min_size=1, max_size=30), st.integers(0, 25))
def test_shifts_within_tolerance_keep_every_match(
    data: st.DataObject, truth: list[int], tolerance: int
) -> None:
    shifts = data.draw(st.lists(st.integers(-tolerance, tolerance), min_size=len(truth)))
    predicted = [b + d for b, d in zip(truth, shifts, strict=False)]
    assert match_boundaries(truth, predicted, tolerance) == len(truth)


Step = tuple[str, int, int]  # (op, truth characters, output characters)


def _path(steps: list[Step]) -> list[Step]:
    """Adjacent equal runs merged: the display ops split long ones around an elision."""
    merged: list[Step] = []
    for step in steps:
        if merged and step[0] == merged[-1][0] == "=":
            merged[-1] = ("=", merged[-1][1] + step[1], merged[-1][2] + step[2])
        else:
            merged.append(step)
    return merged


def _display_path(ops: list[list[str | int]]) -> list[Step]:
    steps: list[Step] = []
    for op in ops:
        kind, first = str(op[0]), op[1]
        if kind == "…":
            steps.append(("=", int(first), int(first)))
        else:
            size = len(str(first))
            other = len(str(op[2])) if kind == "S" else size
            steps.append(
                {"=": ("=", size, size), "S": ("S", size, other), "D": ("D", size, 0)}.get(
                    kind, ("I", 0, size)
                )
            )
    return _path(steps)


def _opcode_path(truth: str, output: str) -> list[Step]:
    names = {"equal": "=", "replace": "S", "delete": "D", "insert": "I"}
    return _path(
        [
            (names[op.tag], op.src_end - op.src_start, op.dest_end - op.dest_start)
            for op in Levenshtein.opcodes(truth, output)
        ]
    )


TEXT = st.text(alphabet="ab c\n#", min_size=1, max_size=300).map(str.strip).filter(bool)


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT)
def test_alignment_is_the_one_cer_uses(truth: str, output: str) -> None:
    """`align` maps through the same alignment path as `character_alignment`'s diff (jiwer
    strips its inputs, so the texts here are stripped)."""
    display = character_alignment(truth, output).ops
    assert _opcode_path(truth, output) == _display_path(display)


WORDS = st.sampled_from(["tidal", "caves", "grids", "power", "flows"])
PARAGRAPH = st.lists(WORDS, min_size=1, max_size=12).map(" ".join)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(WORDS, min_size=6, max_size=9).map(" ".join), min_size=2, max_size=8))
def test_identical_texts_score_one_when_every_block_fills_a_chunk(paragraphs: list[str]) -> None:
    # Paragraphs of 35-53 characters: two never fit in 60 and each piece ("\n\n" + paragraph)
    # does, so every paragraph is a chunk of its own and every boundary a cut.
    text = "\n\n".join(paragraphs)
    score = boundary_coherence(text, text, size=60, overlap=10)
    assert (score.value, score.matched, score.n_truth) == (1.0, len(paragraphs) - 1, score.n_pred)


BLOCK = st.one_of(PARAGRAPH, PARAGRAPH.map(lambda p: "## " + p), PARAGRAPH.map(lambda p: "- " + p))
DOCUMENT = st.lists(BLOCK, max_size=12).map("\n\n".join)


@settings(max_examples=80, deadline=None)
@given(DOCUMENT, DOCUMENT, st.integers(0, 30))
def test_score_is_a_fraction_of_the_truth(truth: str, output: str, tolerance: int) -> None:
    score = boundary_coherence(truth, output, tolerance=tolerance, size=80, overlap=10)
    assert 0.0 <= score.value <= 1.0 and 0.0 <= score.ceiling <= 1.0
    assert score.matched <= min(score.n_truth, score.n_pred)
    assert len(score.predicted) == score.n_pred


@settings(max_examples=60, deadline=None)
@given(DOCUMENT, st.integers(0, 4))
def test_letters_substituted_in_place_keep_the_ceiling(truth: str, phase: int) -> None:
    """Same length, same separators: the output's chunks are the truth's, mapped back exactly
    through substitutions (no word holds an "x", so no shifted alignment ties with the
    diagonal). One letter in five substituted is at most 4 edits in any 16 word characters,
    within the anchor's quarter, so the output scores the truth's own BC -- its ceiling."""
    letters = itertools.count()
    output = "".join(
        ch if not ch.isalpha() or (next(letters) + phase) % 5 else ("x" if ch != "x" else "y")
        for ch in truth
    )
    score = boundary_coherence(truth, output, tolerance=0, size=80, overlap=10)
    assert score.value == score.ceiling
    assert list(score.predicted) == chunk_boundaries(split_text(truth, 80, 10))


@pytest.mark.skipif(not (CASES / "papers").is_dir(), reason="the example cases are not here")
def test_plain_text_loses_boundaries_on_the_example_papers() -> None:
    """The seed's point: markdown keeps the blank lines the splitter cuts at, plain text does
    not. On every example paper the truth's markup stripped scores below the truth itself."""
    plain = get_profile("plain-v1")
    for truth_file in sorted((CASES / "papers").glob("*/truth.md")):
        truth = truth_file.read_text(encoding="utf-8")
        itself = boundary_coherence(truth, truth)
        assert itself.value == itself.ceiling > 0
        assert boundary_coherence(truth, plain(truth)).value < itself.value, truth_file


SHIPPED_TRUTHS = sorted(CASES.glob("*/*/truth.md"))


def _truths() -> dict[str, str]:
    return {f"{p.parent.parent.name}/{p.parent.name}": p.read_text("utf-8") for p in SHIPPED_TRUTHS}


@pytest.mark.skipif(len(SHIPPED_TRUTHS) < 2, reason="the example cases are not here")
def test_an_unrelated_document_scores_near_zero() -> None:
    """Issue 19's bar: every shipped truth scored as the output for every other one, mean BC at
    most 0.05 (it was 0.25 before the cuts had to be anchored)."""
    truths = _truths()
    values = [
        boundary_coherence(truth, other).value
        for (name, truth), (other_name, other) in itertools.permutations(truths.items(), 2)
    ]
    assert len(values) >= 30
    assert sum(values) / len(values) <= 0.05


def _degenerate(truth: str) -> dict[str, str]:
    # A sentence is prose of at most 300 characters: in a truth that is mostly a table (few stops)
    # the text between two stops is the whole table, and repeating it is no degenerate output.
    sentences = [
        s for s in re.split(r"(?<=[.!?])\s+", truth)[1:6] if 20 <= len(s) <= 300 and "|" not in s
    ]
    lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod. " * 80
    paragraphs = truth.split("\n\n")
    out = {"lorem": lorem[: len(truth)], "reversed": "\n\n".join(reversed(paragraphs))}
    if sentences:
        sentence = max(sentences, key=len)
        out["repeated"] = " ".join([sentence] * (len(truth) // len(sentence) + 1))[: len(truth)]
    return out


@pytest.mark.skipif(not (CASES / "papers").is_dir(), reason="the example cases are not here")
def test_degenerate_outputs_score_near_zero_and_correct_ones_keep_the_ceiling() -> None:
    for name, truth in _truths().items():
        itself = boundary_coherence(truth, truth)
        assert itself.value == itself.ceiling, name
        bad = {
            kind: boundary_coherence(truth, text).value for kind, text in _degenerate(truth).items()
        }
        assert bad.get("repeated", 0.0) <= 0.1 and bad["lorem"] == 0.0, (name, bad)
        if itself.ceiling > 0:
            assert bad["reversed"] < itself.value, (name, bad)


def test_a_cut_counts_only_with_the_truths_text_on_both_sides() -> None:
    """Hand-worked: the same three paragraphs, chunked alike. In order every cut is anchored;
    with the first two swapped, the cut before "gamma" has the wrong text before it and the
    cut before "alpha" (now second) the wrong text on both sides."""
    alpha, beta, gamma = ("alpha " * 9).strip(), ("beta " * 11).strip(), ("gamma " * 9).strip()
    truth = f"{alpha}\n\n{beta}\n\n{gamma}"
    in_order = boundary_coherence(truth, truth, size=60, overlap=0)
    assert (in_order.value, in_order.anchored) == (1.0, 2)
    swapped = boundary_coherence(truth, f"{beta}\n\n{alpha}\n\n{gamma}", size=60, overlap=0)
    assert (swapped.n_pred, swapped.anchored, swapped.value) == (2, 0, 0.0)


def test_word_characters_ignore_markup_case_and_space() -> None:
    truth = WordCharacters.of("# The Tide\n\n**Storage** is cheap.")
    plain = WordCharacters.of("THE TIDE\nStorage is cheap.")
    assert truth.characters == plain.characters == "thetidestorageischeap"
    assert truth.around(truth.offsets[7], 4) == ("tide", "stor")
    # pandoc's div fences and attributes are markup: a parser shows "References" there
    div = WordCharacters.of("::: thebibliography\nH. Quill {#ref-quill}\n:::")
    assert div.characters == "hquill"


def test_an_anchor_survives_an_insertion_on_either_side_but_not_another_place() -> None:
    """The near window of one text is looked for in the wide window of the other, either way
    round: a citation key that only the truth's markdown has, or a footnote number that only
    the output has, does not lose the cut; the same words elsewhere do."""
    truth_text = (
        "Counts rise in autumn as birds move further north [@nakamura2016].\n\n"
        "## Outlook\n\nTen seasons of counting show the route is stable across years."
    )
    output_text = (
        "Counts rise in autumn as birds move further north12\n"
        "3 Outlook\nTen seasons of counting show the route is stable across years."
    )
    truth, output = WordCharacters.of(truth_text), WordCharacters.of(output_text)
    at_truth, at_output = truth_text.index("## Outlook"), output_text.index("3 Outlook")
    assert is_anchored(truth, output, at_output, at_truth)
    elsewhere = truth_text.index("route")
    assert not is_anchored(truth, output, at_output, elsewhere)
    assert not is_anchored(truth, output, output_text.index("Ten"), at_truth)


# ------------------------------------------------- brute force on small cases, written apart
#
# The definition recomputed for small texts without the module's machinery: B_gt from blocks
# split at blank lines, the line-break reading as one regex (the texts here hold only prose
# paragraphs and headings, so no line is held; a run of newlines is one "|" to the alignment and
# a blank line to the splitter), every optimal Levenshtein alignment enumerated
# from a dynamic programme of its own (rapidfuzz returns one of them; the definition allows any),
# the anchors from lists of word characters, the matching by trying every assignment. The
# module's BC must be the BC of one of those alignments, and when every optimal alignment gives
# the same projection (an output that only adds to the truth) it must be that one.

SMALL_WORD = st.sampled_from(["ab", "cd", "ef", "gh", "ij"])
SMALL_BLOCK = st.one_of(
    st.lists(SMALL_WORD, min_size=1, max_size=3).map(" ".join),
    SMALL_WORD.map(lambda w: "# " + w),
)
TOO_MANY = 3000


def _small_gold(truth: str) -> list[int]:
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=\n\n))\S", truth)]
    heading = [truth.startswith("# ", s) for s in starts]
    return [s for k, s in enumerate(starts) if k and (heading[k] or not heading[k - 1])]


def _optimal_alignments(truth: str, output: str) -> set[tuple[tuple[int, int], ...]] | None:
    """Every optimal alignment as its diagonal pairs (truth index, output index); None when
    there are more than TOO_MANY."""
    n, m = len(truth), len(output)
    cost = [[0] * (m + 1) for _ in range(n + 1)]  # cost[i][j]: truth[i:] against output[j:]
    for i in range(n, -1, -1):
        for j in range(m, -1, -1):
            if i == n or j == m:
                cost[i][j] = (n - i) + (m - j)
            else:
                cost[i][j] = min(
                    cost[i + 1][j] + 1,
                    cost[i][j + 1] + 1,
                    cost[i + 1][j + 1] + (truth[i] != output[j]),
                )
    memo: dict[tuple[int, int], set[tuple[tuple[int, int], ...]]] = {}

    def paths(i: int, j: int) -> set[tuple[tuple[int, int], ...]]:
        if (i, j) in memo:
            return memo[(i, j)]
        found: set[tuple[tuple[int, int], ...]] = set()
        if i == n and j == m:
            found.add(())
        if i < n and j < m and cost[i][j] == cost[i + 1][j + 1] + (truth[i] != output[j]):
            found |= {((i, j), *rest) for rest in paths(i + 1, j + 1)}
        if i < n and cost[i][j] == cost[i + 1][j] + 1:
            found |= paths(i + 1, j)
        if j < m and cost[i][j] == cost[i][j + 1] + 1:
            found |= paths(i, j + 1)
        if len(found) > TOO_MANY:
            raise OverflowError
        memo[(i, j)] = found
        return found

    try:
        return paths(0, 0)
    except OverflowError:
        return None


def _small_words(text: str) -> list[tuple[str, int]]:
    return [(ch.casefold(), k) for k, ch in enumerate(text) if ch.isalnum() or ch == "_"]


def _small_anchored(truth: str, text: str, cut: int, mapped: int) -> bool:
    def sides(chars: list[tuple[str, int]], at: int, width: int) -> tuple[str, str]:
        before = "".join(c for c, k in chars if k < at)
        after = "".join(c for c, k in chars if k >= at)
        return before[-width:], after[:width]

    ours, theirs = _small_words(text), _small_words(truth)
    for side in (0, 1):
        near, wide = sides(ours, cut, 16)[side], sides(ours, cut, 32)[side]
        t_near, t_wide = sides(theirs, mapped, 16)[side], sides(theirs, mapped, 32)[side]

        def found(short: str, long: str) -> bool:
            return fuzz.partial_ratio(short, long) >= 75 if short else not long

        if not (found(near, t_wide) or found(t_near, wide)):
            return False
    return True


def _most_pairs(gold: list[int], predicted: list[int], tolerance: int) -> int:
    if not gold:
        return 0
    best = _most_pairs(gold[1:], predicted, tolerance)  # the first truth boundary unmatched
    for k, p in enumerate(predicted):
        if abs(p - gold[0]) <= tolerance:
            rest = predicted[:k] + predicted[k + 1 :]
            best = max(best, 1 + _most_pairs(gold[1:], rest, tolerance))
    return best


def _small_cuts(text: str, size: int) -> list[int]:
    """The splitter's cuts of `text` with each "|" a blank line, as offsets into `text`."""
    written = text.replace("|", "\n\n")
    chunks = split_text(written, size, 0)
    cuts = sorted({c.start for c in chunks} - {chunks[0].start}) if chunks else []
    # a cut starts a chunk, so it is a word's letter: the same letter in `text`
    return [c - written[:c].count("\n\n") for c in cuts]


def _small_bc(
    truth: str, output: str, pairs: tuple[tuple[int, int], ...], size: int, tolerance: int
) -> float:
    """BC of `output` (read) against `truth` (read) under one alignment."""
    gold = _small_gold(truth.replace("|", "\n\n"))
    gold = [g - truth.replace("|", "\n\n")[:g].count("\n\n") for g in gold]
    text = "".join(output[j] for _, j in pairs)
    after = [0] + [i + 1 for i, _ in pairs]
    kept = [after[c] for c in _small_cuts(text, size) if _small_anchored(truth, text, c, after[c])]
    return _most_pairs(gold, kept, tolerance) / len(gold) if gold else 1.0


@settings(max_examples=150, deadline=None)
@given(
    st.lists(SMALL_BLOCK, min_size=2, max_size=4),
    st.data(),
    st.sampled_from([12, 18, 25]),
    st.integers(0, 4),
)
def test_equal_to_a_brute_force_on_small_texts(
    blocks: list[str], data: st.DataObject, size: int, tolerance: int
) -> None:
    truth = "\n\n".join(blocks)
    how = data.draw(st.sampled_from(["repeat", "drop", "shuffle", "reword"]))
    if how == "repeat":
        times = data.draw(st.lists(st.integers(1, 3), min_size=len(blocks), max_size=len(blocks)))
        out_blocks = [b for b, k in zip(blocks, times, strict=True) for _ in range(k)]
    elif how == "drop":
        out_blocks = data.draw(st.lists(st.sampled_from(blocks), min_size=1, max_size=4))
    elif how == "shuffle":
        out_blocks = data.draw(st.permutations(blocks))
    else:
        out_blocks = [b.replace(data.draw(SMALL_WORD), "zz") for b in blocks]
    output = data.draw(st.sampled_from(["\n", "\n\n", "\n\n\n"])).join(out_blocks)
    # the texts hold no spacing around line breaks and no "|"
    read, truth_read = re.sub(r"\n+", "|", output), truth.replace("\n\n", "|")
    alignments = _optimal_alignments(truth_read, read)
    if alignments is None:
        return  # too many optimal alignments to enumerate
    possible = {_small_bc(truth_read, read, pairs, size, tolerance) for pairs in alignments}
    score = boundary_coherence(truth, output, tolerance=tolerance, size=size, overlap=0)
    assert score.value in possible, (score.value, possible)
    identity = tuple((i, i) for i in range(len(truth_read)))
    assert score.ceiling == _small_bc(truth_read, truth_read, identity, size, tolerance)
    if how == "repeat":  # only additions: one projection, the truth itself
        assert possible == {score.ceiling} and score.value == score.ceiling
