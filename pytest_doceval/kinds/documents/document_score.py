"""One output scored against its truth as text: CER, NED, WER, raw CER, Body CER and what the
references add, markdown structure (seeds 000 and 002), with the counts behind every rate."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_doceval.kinds.documents.insertions import INSERTIONS_EXCEED_TRUTH, insertion_note
from pytest_doceval.kinds.documents.scope import split_body_references
from pytest_doceval.kinds.documents.structure import structure_score
from pytest_doceval.metrics.ned import ned_counts
from pytest_doceval.metrics.text import (
    ErrorCounts,
    character_alignment,
    character_errors,
    word_errors,
)
from pytest_doceval.text.normalise import RAW, Profile, get_profile
from pytest_doceval.text.tokenise import tokeniser_for


@dataclass(frozen=True)
class DocumentScore:
    metrics: dict[str, float]
    counts: dict[str, dict[str, int]]
    structure_counts: dict[str, dict[str, int]]
    diff: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    flags: dict[str, list[str]] = field(default_factory=dict)


def score_document(truth: str, output: str, *, language: str, normalization: str) -> DocumentScore:
    """Every documents metric for one output against its truth (seeds 000 and 002).

    ``cer``/``wer`` after the profile; ``cer_raw`` after unified line endings and NFC only;
    ``body_cer`` on both texts cut before their references section (split before normalising,
    since normalising removes the markers); ``refs_delta`` = cer - body_cer; ``ned`` = CER's
    edits over the longer normalised text (`metrics.ned`); structure P/R/F1 on the markdown
    itself. A truth empty after normalisation is scored: see `ErrorCounts.rate`; insertions
    beyond the truth's length get a note and a ``cer`` flag (`insertions`).
    """
    profile = get_profile(normalization)
    tokenise = tokeniser_for(language)
    truth_norm, output_norm = profile(truth), profile(output)
    chars = character_alignment(truth_norm, output_norm)
    words = word_errors(tokenise(truth_norm), tokenise(output_norm))
    truth_raw, output_raw = RAW(truth), RAW(output)
    raw = character_errors(truth_raw.strip(), output_raw.strip())
    body = _body_errors(truth, output, profile, full=chars.counts, truth_norm=truth_norm)
    structure = structure_score(truth_raw, output_raw)
    ned = ned_counts(chars.counts, len(output_norm))
    metrics = {
        "cer": chars.counts.rate,
        "ned": ned.rate,
        "wer": words.rate,
        "cer_raw": raw.rate,
        "body_cer": body.rate,
        "refs_delta": chars.counts.rate - body.rate,
        **structure.metrics(),
    }
    counts = {
        "cer": chars.counts.to_dict(),
        "ned": ned.to_dict(),
        "wer": words.to_dict(),
        "cer_raw": raw.to_dict(),
        "body_cer": body.to_dict(),
    }
    structure_counts = {
        "all": structure.overall.to_dict(),
        **{kind: c.to_dict() for kind, c in structure.by_type.items()},
    }
    diff = {"metric": "cer", "ops": chars.ops}
    note = insertion_note(chars.counts)
    if note is None:
        return DocumentScore(metrics, counts, structure_counts, diff)
    flags = {"cer": [INSERTIONS_EXCEED_TRUTH]}
    return DocumentScore(metrics, counts, structure_counts, diff, [note], flags)


def _body_errors(
    truth: str, output: str, profile: Profile, *, full: ErrorCounts, truth_norm: str
) -> ErrorCounts:
    """Body CER counts: both texts cut before their references. When neither text has a
    references section the bodies are the full texts, and so are the counts."""
    truth_split, output_split = split_body_references(truth), split_body_references(output)
    if not truth_split.has_references and not output_split.has_references:
        return full
    truth_body = profile(truth_split.body) or truth_norm
    return character_errors(truth_body, profile(output_split.body))
