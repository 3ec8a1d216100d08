"""CER and WER with their raw counts (seed 000 section 3.3.1, seed 002 FR-004).

Counts come from jiwer 4 (its rapidfuzz core) and are kept, not just the rate: corpus-level
rates are sums of counts (sum of edits / sum of reference lengths), never means of rates.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import jiwer

# Equal runs longer than twice this are shown only as context around edits in report diffs.
DIFF_CONTEXT = 40
# Report diffs are meant for reading, not archiving: past this many characters they are cut.
DIFF_MAX_CHARS = 200_000


@dataclass(frozen=True)
class ErrorCounts:
    """Levenshtein alignment counts against a reference of `reference_length` units."""

    hits: int
    substitutions: int
    deletions: int
    insertions: int
    reference_length: int

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def rate(self) -> float:
        """(S + D + I) / max(N, 1).

        With a reference of N >= 1 units this is the seed's (S + D + I) / N. A blank page (N = 0:
        the truth is empty after normalisation) is scorable too: nothing can be substituted or
        deleted, so the rate is the number of insertions -- 0.0 when the output is empty as
        well (perfect), 1.0 for one stray character, 40.0 for a hallucinated 40-character line.
        This is jiwer's own rule for an empty reference (``process_characters("", "abc").cer ==
        3``), so a per-case rate here equals ``jiwer.cer``/``jiwer.wer`` on the same strings,
        and it keeps growing with the amount of invented text instead of capping every blank-page
        mistake at 1.0. Corpus rates add the counts (sum of edits / sum of N) and are unaffected.
        """
        return self.errors / max(self.reference_length, 1)

    def __add__(self, other: ErrorCounts) -> ErrorCounts:
        return ErrorCounts(
            self.hits + other.hits,
            self.substitutions + other.substitutions,
            self.deletions + other.deletions,
            self.insertions + other.insertions,
            self.reference_length + other.reference_length,
        )

    def to_dict(self) -> dict[str, int]:
        return {key: int(value) for key, value in asdict(self).items()}


@dataclass(frozen=True)
class CharacterAlignment:
    """Character counts plus the aligned diff used by the HTML report."""

    counts: ErrorCounts
    ops: list[list[str | int]]


def _counts(output: jiwer.CharacterOutput | jiwer.WordOutput, reference_length: int) -> ErrorCounts:
    return ErrorCounts(
        hits=int(output.hits),
        substitutions=int(output.substitutions),
        deletions=int(output.deletions),
        insertions=int(output.insertions),
        reference_length=reference_length,
    )


def character_errors(reference: str, hypothesis: str) -> ErrorCounts:
    """Character-level S/D/I/hits; spaces count as characters (jiwer's default)."""
    return character_alignment(reference, hypothesis, with_diff=False).counts


def character_alignment(
    reference: str, hypothesis: str, *, with_diff: bool = True
) -> CharacterAlignment:
    output = jiwer.process_characters(reference, hypothesis)
    ref_chars = output.references[0] if output.references else []
    counts = _counts(output, len(ref_chars))
    ops = _diff_ops(output) if with_diff else []
    return CharacterAlignment(counts, ops)


def word_errors(reference_tokens: list[str], hypothesis_tokens: list[str]) -> ErrorCounts:
    """Word-level S/D/I/hits over already tokenised text (see `tokenise`)."""
    output = jiwer.process_words(" ".join(reference_tokens), " ".join(hypothesis_tokens))
    return _counts(output, len(reference_tokens))


def _diff_ops(output: jiwer.CharacterOutput) -> list[list[str | int]]:
    """Aligned diff as compact ops: ``["=", text]``, ``["S", ref, hyp]``, ``["D", ref]``,
    ``["I", hyp]`` and ``["…", n]`` for n unchanged characters elided between context."""
    if not output.alignments:
        return []
    ref = "".join(output.references[0])
    hyp = "".join(output.hypotheses[0])
    ops: list[list[str | int]] = []
    budget = DIFF_MAX_CHARS
    chunks = output.alignments[0]
    for index, chunk in enumerate(chunks):
        r = ref[chunk.ref_start_idx : chunk.ref_end_idx]
        h = hyp[chunk.hyp_start_idx : chunk.hyp_end_idx]
        if chunk.type == "equal":
            ops.extend(elide_equal(r, first=index == 0, last=index == len(chunks) - 1))
        elif chunk.type == "substitute":
            ops.append(["S", r, h])
        elif chunk.type == "delete":
            ops.append(["D", r])
        else:
            ops.append(["I", h])
        budget -= len(r) + len(h)
        if budget <= 0:
            remaining = len(ref) - chunk.ref_end_idx
            if remaining:
                ops.append(["…", remaining])
            break
    return ops


def elide_equal(text: str, *, first: bool, last: bool) -> list[list[str | int]]:
    """An equal run as diff ops: kept whole when short, else only `DIFF_CONTEXT` characters
    next to each neighbouring edit (none before the first or after the last) and ``["…", n]``."""
    head = 0 if first else DIFF_CONTEXT
    tail = 0 if last else DIFF_CONTEXT
    if len(text) <= head + tail + 10:
        return [["=", text]]
    ops: list[list[str | int]] = []
    if head:
        ops.append(["=", text[:head]])
    ops.append(["…", len(text) - head - tail])
    if tail:
        ops.append(["=", text[-tail:]])
    return ops
