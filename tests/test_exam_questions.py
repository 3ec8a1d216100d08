"""Loading ``questions.jsonl``: what a valid file gives, and a clear error (file, line, cause)
for every kind of bad input."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.errors import CaseInputError
from pytest_doceval.kinds.exam.questions import (
    QUESTIONS,
    load_questions,
    parse_answer_key,
    png_problem,
)

REALDATA = Path(
    os.environ.get("DOCEVAL_REALDATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "realdata"
)


def png(width: int = 6, height: int = 4) -> bytes:
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, width, height), False)  # type: ignore[no-untyped-call]
    data: bytes = pix.tobytes("png")  # type: ignore[no-untyped-call]
    return data


def question(qid: str = "q1", **overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": qid,
        "image": f"images/{qid}.png",
        "answer": 2,
        "choices": 4,
        "nation": "Korea",
        "task": "civics",
    }
    row.update(overrides)
    return row


def write(root: Path, rows: list[Any], *, images: bool = True) -> Path:
    """A suite folder with `rows` as questions.jsonl (strings written as they are) and a PNG
    for every row's image."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for row in rows:
        lines.append(row if isinstance(row, str) else json.dumps(row, ensure_ascii=False))
        if images and isinstance(row, dict) and isinstance(row.get("image"), str):
            target = root / row["image"]
            inside = ".." not in Path(row["image"]).parts and not Path(row["image"]).is_absolute()
            if inside and not target.is_dir():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(png())
    (root / QUESTIONS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def load_error(root: Path) -> str:
    with pytest.raises(CaseInputError) as info:
        load_questions(root)
    return str(info.value)


# ---------------------------------------------------------------------------------------------
# valid files
# ---------------------------------------------------------------------------------------------


def test_a_valid_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        [
            question("kr-1", answer=3, choices=5, oracle_text="국회의원의 임기는?\n① 2년"),
            "",
            question("ca-1", answer="B", nation="Canada", task="maths", year=2024),
            question("ca-2", answer="d", nation="Canada"),
            question("kr-2", answer="⑤", choices=5),
            question("kr-3", answer="1", choices=5),
        ],
    )
    loaded = load_questions(tmp_path)
    assert [q.id for q in loaded] == ["kr-1", "ca-1", "ca-2", "kr-2", "kr-3"]
    assert [q.answer for q in loaded] == [3, 2, 4, 5, 1]
    assert [q.line for q in loaded] == [1, 3, 4, 5, 6]
    assert loaded[0].oracle_text == "국회의원의 임기는?\n① 2년" and loaded[0].has_oracle
    assert not loaded[1].has_oracle and loaded[1].extra == {"year": 2024}
    assert (loaded[1].nation, loaded[1].task, loaded[1].choices) == ("Canada", "maths", 4)
    assert loaded[0].read_image(tmp_path) == (tmp_path / "images" / "kr-1.png").read_bytes()


def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path) -> None:
    write(tmp_path, [question()])
    path = tmp_path / QUESTIONS
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert load_questions(tmp_path)[0].id == "q1"


# ---------------------------------------------------------------------------------------------
# bad input: one clear error naming the file, the line and the cause
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "cause"),
    [
        (question(answer=5), "answer 5 is outside 1..4 (choices = 4)"),
        (question(answer=0), "answer 0 is outside 1..4"),
        (question(answer="E"), "answer 'E' is outside 1..4"),
        (question(answer="F"), "answer 'F' is not 1-5 or a letter A-E"),
        (question(answer=True), "answer True is not 1-5 or a letter A-E"),
        (question(answer=2.0), "answer 2.0 is not 1-5 or a letter A-E"),
        ({k: v for k, v in question().items() if k != "answer"}, "missing 'answer'"),
        ({k: v for k, v in question().items() if k != "nation"}, "missing 'nation'"),
        ({k: v for k, v in question().items() if k != "task"}, "missing 'task'"),
        (question(nation="  "), "'nation' must be a non-empty string, not '  '"),
        (question(task=3), "'task' must be a non-empty string, not 3"),
        (question(choices=6), "'choices' must be 2-5, not 6"),
        (question(choices="4"), "'choices' must be an integer 2-5, not '4'"),
        (question(id="q 1", image="images/q1.png"), "'id' must be a non-empty string"),
        (question(id="q[1]", image="images/q1.png"), "'id' must be a non-empty string"),
        (question(oracle_text=""), "'oracle_text' must be a non-empty string or absent"),
        ({k: v for k, v in question().items() if k != "image"}, "missing 'image'"),
        ("[1, 2]", "a question is a JSON object, not list"),
        ('{"id": "q1", ', "not valid JSON"),
    ],
)
def test_a_bad_row_names_file_line_and_cause(tmp_path: Path, row: Any, cause: str) -> None:
    write(tmp_path, [question("q0"), row])
    message = load_error(tmp_path)
    assert message.startswith(f"{tmp_path / QUESTIONS}:2")
    assert cause in message


def test_a_missing_image(tmp_path: Path) -> None:
    write(tmp_path, [question("q1"), question("q2")])
    (tmp_path / "images" / "q2.png").unlink()
    message = load_error(tmp_path)
    assert re.match(rf"{re.escape(str(tmp_path / QUESTIONS))}:2 \(question 'q2'\): image", message)
    assert "'images/q2.png' not found" in message


@pytest.mark.parametrize(
    ("content", "cause"),
    [
        (b"GIF89a......", "is not a PNG (wrong signature)"),
        (b"", "is not a PNG (wrong signature)"),
        (png()[:20], "is not a PNG (no IHDR header)"),
    ],
)
def test_an_unreadable_image(tmp_path: Path, content: bytes, cause: str) -> None:
    write(tmp_path, [question("q1")])
    (tmp_path / "images" / "q1.png").write_bytes(content)
    message = load_error(tmp_path)
    assert message.startswith(f"{tmp_path / QUESTIONS}:1 (question 'q1'): image 'images/q1.png'")
    assert cause in message


def test_an_image_path_that_is_a_folder(tmp_path: Path) -> None:
    write(tmp_path, [question("q1", image="images")])
    assert "image 'images' not found" in load_error(tmp_path)


@pytest.mark.parametrize("image", ["../outside.png", "/etc/passwd"])
def test_an_image_outside_the_suite(tmp_path: Path, image: str) -> None:
    write(tmp_path / "suite", [question("q1", image=image)])
    assert f"image {image!r} must be a path inside the suite folder" in load_error(
        tmp_path / "suite"
    )


def test_a_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    write(tmp_path, [question("a"), question("b"), "", question("a", answer=1)])
    assert load_error(tmp_path) == (
        f"{tmp_path / QUESTIONS}:4: duplicate question id 'a' (first on line 1)"
    )


def test_every_problem_is_listed_at_once(tmp_path: Path) -> None:
    write(tmp_path, [question("a", answer=9), question("b", nation=""), question("a")])
    lines = load_error(tmp_path).splitlines()
    assert [line.split(": ", 1)[0].rsplit(":", 1)[-1] for line in lines] == [
        "1 (question 'a')",
        "2 (question 'b')",
        "3",
    ]


def test_a_missing_empty_or_undecodable_file(tmp_path: Path) -> None:
    assert (
        load_error(tmp_path) == f"{tmp_path / QUESTIONS}: missing questions file (an exam "
        "suite lists its questions here)"
    )
    (tmp_path / QUESTIONS).write_text("\n\n", encoding="utf-8")
    assert load_error(tmp_path) == f"{tmp_path / QUESTIONS}: no questions"
    (tmp_path / QUESTIONS).write_bytes(b'{"id": "\xff"}\n')
    # files.read_jsonl decodes line by line: the bad byte is a problem of its line.
    assert load_error(tmp_path) == f"{tmp_path / QUESTIONS}:1: not UTF-8 (byte 0xff at offset 8)"


def test_reading_an_image_that_went_missing_after_loading(tmp_path: Path) -> None:
    write(tmp_path, [question("q1")])
    (loaded,) = load_questions(tmp_path)
    (tmp_path / "images" / "q1.png").unlink()
    with pytest.raises(CaseInputError, match=r"questions\.jsonl:1: question 'q1': cannot read"):
        loaded.read_image(tmp_path)
    (tmp_path / "images" / "q1.png").write_bytes(b"not a png at all, but long enough")
    with pytest.raises(CaseInputError, match="is not a PNG"):
        loaded.read_image(tmp_path)


def test_images_need_not_exist_when_not_checked(tmp_path: Path) -> None:
    write(tmp_path, [question("q1")], images=False)
    assert load_questions(tmp_path, check_images=False)[0].id == "q1"


def test_png_problem() -> None:
    assert png_problem(png()) is None
    assert png_problem(png(1, 1)) is None
    header = bytearray(png())
    header[16:24] = bytes(8)  # width = height = 0
    assert png_problem(bytes(header)) == "is an empty PNG (0x0)"


@given(st.integers(min_value=2, max_value=5), st.data())
@settings(max_examples=60, deadline=None)
def test_answer_key_spellings_agree(choices: int, data: st.DataObject) -> None:
    value = data.draw(st.integers(min_value=1, max_value=choices))
    spellings = [value, str(value), "ABCDE"[value - 1], "abcde"[value - 1], "①②③④⑤"[value - 1]]
    assert {parse_answer_key(s, choices) for s in spellings} == {(value, None)}
    beyond = data.draw(st.integers(min_value=choices + 1, max_value=9))
    number, why = parse_answer_key(beyond, choices)
    assert (
        number is None and why == f"answer {beyond} is outside 1..{choices} (choices = {choices})"
    )


# ---------------------------------------------------------------------------------------------
# real questions (GAOKAO-MM geography, Apache-2.0): letter answers, typed text as oracle
# ---------------------------------------------------------------------------------------------


@pytest.mark.skipif(not (REALDATA / "gaokao-mm").is_dir(), reason="real data not present")
def test_real_gaokao_rows_load_with_letter_answers(tmp_path: Path) -> None:
    source = REALDATA / "gaokao-mm"
    real = [json.loads(line) for line in (source / QUESTIONS).read_text("utf-8").splitlines()]
    rows = []
    for item in real:
        picture = Path(item["pictures"][0])
        (tmp_path / picture).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / picture, tmp_path / picture)
        rows.append(
            {
                "id": item["id"],
                "image": str(picture),
                "answer": item["answer"],
                "choices": 4,
                "nation": "China",
                "task": "geography",
                "oracle_text": item["question"],
                "year": item["year"],
            }
        )
    # Some of the dataset's ".png" figures are JPEG files (JFIF magic bytes): sent as
    # image/png they would be misdeclared, so the loader must name each of them.
    jpeg = [
        i for i, r in enumerate(rows) if (tmp_path / r["image"]).read_bytes()[:2] == b"\xff\xd8"
    ]
    assert jpeg, "the real data changed: no JPEG among the figures"
    write(tmp_path, rows, images=False)
    message = load_error(tmp_path)
    named = [int(m) for m in re.findall(r"questions\.jsonl:(\d+) \(question", message)]
    assert named == [i + 1 for i in jpeg]
    assert all("is not a PNG (wrong signature)" in line for line in message.splitlines())

    kept = [r for i, r in enumerate(rows) if i not in jpeg]
    write(tmp_path, kept, images=False)
    loaded = load_questions(tmp_path)
    assert len(loaded) == len(kept)
    assert [q.answer for q in loaded] == ["ABCD".index(r["answer"]) + 1 for r in kept]
    assert all(q.oracle_text and q.extra["year"] for q in loaded)


def test_options_are_kept_and_checked(tmp_path: Path) -> None:
    write(tmp_path, [question("q-1", answer=2, choices=3, options=["Rome", "Paris", "Oslo"])])
    assert load_questions(tmp_path)[0].options == ("Rome", "Paris", "Oslo")
    write(tmp_path, [question("q-1", answer=2, choices=3, options=["Rome", "Paris"])])
    with pytest.raises(
        CaseInputError, match=r"jsonl:1 \(question 'q-1'\): 'options' must be a list of 3"
    ):
        load_questions(tmp_path)
    from pytest_doceval.kinds.exam.scoring import score_output

    write(tmp_path, [question("q-1", answer=2, choices=3, options=["Rome", "Paris", "Oslo"])])
    loaded = load_questions(tmp_path)[0]
    assert score_output(loaded, "2. Paris", "robust-v1").parsed.answer == 2
