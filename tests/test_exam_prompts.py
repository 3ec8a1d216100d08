"""The tracks' prompts: seed 001's verbatim, versioned, hashed, and built into chat messages."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from pytest_doceval.kinds.exam.prompts import (
    EXAM_IMAGE_TEXT,
    EXAM_TEXT,
    GENERATION,
    SEED_IMAGE,
    TRACK_SPECS,
    TRACKS,
    ExamPrompt,
    build_messages,
    get_track,
    prompt_report,
    scoring_id,
)
from pytest_doceval.models.config import ModelConfig
from pytest_doceval.models.requests import ChatRequest

SEEDS = Path(
    os.environ.get("DOCEVAL_SEEDS")
    or Path(__file__).resolve().parents[1].parent / "shared" / "seeds"
)
SEED_001 = next(iter(sorted(SEEDS.glob("001_*.txt"))), None) if SEEDS.is_dir() else None
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def seed_block(title: str) -> str:
    """The lines under ``[<title>]`` in seed 001's prompt block, up to a blank line or fence."""
    assert SEED_001 is not None
    lines = SEED_001.read_text("utf-8").splitlines()
    start = lines.index(f"[{title}]") + 1
    end = start
    while end < len(lines) and lines[end].strip() and not lines[end].startswith("```"):
        end += 1
    return "\n".join(lines[start:end])


@pytest.mark.skipif(SEED_001 is None, reason="seed 001 not present")
def test_track_a_sends_the_seeds_prompts_verbatim() -> None:
    assert SEED_IMAGE.system == seed_block("System Prompt")
    # The seed's user prompt is "<image>" then the question: the image part comes first.
    assert seed_block("User Prompt") == "<image>\n" + SEED_IMAGE.user
    system, user = build_messages("A", image=PNG)
    assert system == {"role": "system", "content": seed_block("System Prompt")}
    assert user["content"][0] == {"type": "image", "png": PNG}
    assert user["content"][1] == {"type": "text", "text": "What is the correct answer?"}


def test_the_seeds_generation_settings() -> None:
    assert dict(GENERATION) == {"temperature": 0.0, "max_tokens": 10, "top_p": 1.0}


def test_tracks() -> None:
    assert TRACKS == ("A", "B1", "B2", "C") == tuple(TRACK_SPECS)
    a, b1, b2, c = (TRACK_SPECS[t] for t in TRACKS)
    assert (a.image, a.text, a.model) == (True, None, "vlm")
    assert (b1.image, b1.text, b1.model) == (False, "ocr", "llm")
    assert (b2.image, b2.text, b2.model) == (False, "oracle", "llm")
    assert (c.image, c.text, c.model) == (True, "ocr", "vlm")
    # B1 and B2 differ only in their text, so that B2 - B1 measures the OCR and nothing else.
    assert b1.prompt is b2.prompt
    assert [t.runs_on(False) for t in (a, b1, b2, c)] == [True, True, False, True]
    assert all(t.runs_on(True) for t in (a, b1, b2, c))
    with pytest.raises(ValueError, match="unknown track 'D'"):
        get_track("D")


def test_text_tracks_put_the_text_in_the_user_message() -> None:
    text = "Which year? {not a placeholder}\n① 1948\n② 1950"
    system, user = build_messages("B2", text=text)
    assert "Read the exam question text carefully" in system["content"]
    assert user == {"role": "user", "content": f"{text}\n\nWhat is the correct answer?"}
    system, user = build_messages("C", image=PNG, text="OCR words")
    assert system["content"] == SEED_IMAGE.system
    assert user["content"][0]["png"] == PNG
    assert user["content"][1]["text"].startswith("Text extracted from the image by OCR:\nOCR words")


@pytest.mark.parametrize(
    ("track", "image", "text", "needs"),
    [
        ("A", None, None, "needs image"),
        ("A", PNG, "text", "takes no text"),
        ("B1", PNG, "text", "takes no image"),
        ("B1", None, None, "needs text"),
        ("C", PNG, None, "needs text"),
    ],
)
def test_a_missing_or_extra_input_is_an_error(
    track: str, image: bytes | None, text: str | None, needs: str
) -> None:
    with pytest.raises(ValueError, match=needs):
        build_messages(track, image=image, text=text)


def test_hashes_cover_everything_a_prompt_sends() -> None:
    payload = {
        "image": True,
        "name": "seed-001-image",
        "system": SEED_IMAGE.system,
        "user": SEED_IMAGE.user,
        "version": 1,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert SEED_IMAGE.hash == hashlib.sha256(canonical.encode()).hexdigest()
    assert SEED_IMAGE.tag == f"seed-001-image-v1@{SEED_IMAGE.hash[:12]}"
    prompts = [SEED_IMAGE, EXAM_TEXT, EXAM_IMAGE_TEXT]
    assert len({p.hash for p in prompts}) == 3
    # A word changed without a version bump still changes the hash.
    edited = ExamPrompt(SEED_IMAGE.name, 1, SEED_IMAGE.system + " ", SEED_IMAGE.user, True)
    assert edited.id == SEED_IMAGE.id and edited.hash != SEED_IMAGE.hash


def test_report_and_scoring_id() -> None:
    assert prompt_report(["A", "B2"]) == {
        "A": {"prompt": "seed-001-image-v1", "hash": SEED_IMAGE.hash},
        "B2": {"prompt": "exam-text-v1", "hash": EXAM_TEXT.hash},
    }
    sid = scoring_id("seed-001", ["A", "B1"])
    assert sid.startswith("seed-001@") and len(sid) == len("seed-001@") + 12
    assert scoring_id("seed-001", ["B1", "A"]) == sid  # the order tracks are listed in
    assert scoring_id("robust-v1", ["A", "B1"]) != sid
    assert scoring_id("seed-001", ["A", "B1", "C"]) != sid
    assert scoring_id("seed-001", ["A", "B1"], {**GENERATION, "max_tokens": 512}) != sid


def test_the_prompt_tag_goes_into_the_request_cache_key() -> None:
    config = ModelConfig(name="vlm", base_url="http://localhost:8000/v1", model="qwen")
    messages = build_messages("A", image=PNG)
    request = ChatRequest.build(config, messages, prompt_version=SEED_IMAGE.tag, **GENERATION)
    other = ChatRequest.build(config, messages, prompt_version="seed-001-image-v2@0", **GENERATION)
    assert request.key_payload()["prompt_version"] == SEED_IMAGE.tag
    assert request.generation["max_tokens"] == 10
    assert request.cache_key() != other.cache_key()
