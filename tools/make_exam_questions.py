"""Render the example exam suite: twelve questions written for this project, as PNG images plus
``questions.jsonl`` with their keys and oracle (typed) text.

Three invented exam systems -- a mock Korean provincial grade-9 civil-service paper (Korean,
options ①-⑤, one question with four), a mock Canadian federal entry test (English, four
choices A-D) and a mock Australian state administrative-officer exam (English, five choices
1-5) -- each with civics, maths and geography questions. Nine have ``oracle_text`` (track
B2's subset); three do not.

Each question is laid out as HTML and placed with PyMuPDF's ``insert_htmlbox`` (its built-in
CJK fallback font covers Hangul, so no font is installed), the page is cropped to the text and
rendered with ``get_pixmap`` to a PNG. The PNG is the case input: the exam kind sends its bytes
unchanged.

    python tools/make_exam_questions.py cases/civil-exams [--dpi 144]
"""

# PyMuPDF ships partial annotations (as for the package's own PDF modules in pyproject.toml).
# mypy: disallow-untyped-calls=False

from __future__ import annotations

import argparse
import html
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pymupdf

PAGE_WIDTH = 480.0  # points: a narrow column, like one question cut from an exam paper
MARGIN = 24.0
CSS = """
* { font-family: sans-serif; font-size: 12pt; line-height: 1.35; }
.head { font-size: 10pt; color: #333; border-bottom: 1px solid #888; padding-bottom: 3pt; }
.stem { margin-top: 8pt; margin-bottom: 6pt; }
.option { margin: 2pt 0 2pt 10pt; }
"""


@dataclass(frozen=True)
class ExampleQuestion:
    id: str
    nation: str
    task: str
    exam: str
    language: str
    number: int
    stem: str
    options: tuple[str, ...]
    answer: int | str  # as written in questions.jsonl: 1-5, or a letter
    oracle: bool = True

    def labels(self) -> list[str]:
        """How the paper numbers its options: ①-⑤ (Korea), A.-D. (Canada), 1)-5) (Australia)."""
        if self.language == "ko":
            return ["①②③④⑤"[i] for i in range(len(self.options))]
        if self.nation == "Canada":
            return [f"{'ABCDE'[i]}." for i in range(len(self.options))]
        return [f"{i + 1})" for i in range(len(self.options))]

    def text(self) -> str:
        """The oracle transcription: the stem and the options exactly as printed."""
        pairs = zip(self.labels(), self.options, strict=True)
        return "\n".join([self.stem, *(f"{lab} {opt}" for lab, opt in pairs)])

    def html(self) -> str:
        if self.language == "ko":
            head = f"{self.exam} · {KO_SUBJECTS[self.task]} · 문 {self.number}"
        else:
            head = f"{self.exam} · {self.task} · Q{self.number}"
        options = "".join(
            f'<p class="option">{html.escape(lab)} {html.escape(opt)}</p>'
            for lab, opt in zip(self.labels(), self.options, strict=True)
        )
        return (
            f'<p class="head"><b>{html.escape(head)}</b></p>'
            f'<p class="stem">{html.escape(self.stem)}</p>{options}'
        )


KO_SUBJECTS = {"civics": "사회", "maths": "수학", "geography": "지리"}
KR = "2024 모의 지방공무원 9급"
CA = "Federal Public Service Entry Test (mock, 2024)"
AU = "State Administrative Officer Exam (mock, 2024)"

EXAMPLES: tuple[ExampleQuestion, ...] = (
    ExampleQuestion(
        "kr-civics-01", "Korea", "civics", KR, "ko", 1,
        "대한민국 헌법상 국회의원의 임기는?",
        ("2년", "3년", "4년", "5년", "6년"), 3,
    ),
    ExampleQuestion(
        "kr-civics-02", "Korea", "civics", KR, "ko", 2,
        "대한민국 헌법상 대통령의 임기와 중임에 관한 설명으로 옳은 것은?",
        (
            "임기는 5년이며, 중임할 수 없다.",
            "임기는 4년이며, 1차에 한하여 중임할 수 있다.",
            "임기는 4년이며, 중임할 수 없다.",
            "임기는 5년이며, 1차에 한하여 중임할 수 있다.",
            "임기는 6년이며, 중임할 수 없다.",
        ),
        "①", oracle=False,
    ),
    ExampleQuestion(
        "kr-maths-01", "Korea", "maths", KR, "ko", 3,
        "x에 대한 일차방정식 3x − 7 = 14의 해는?",
        ("4", "5", "6", "7", "8"), 4,
    ),
    ExampleQuestion(
        "kr-geography-01", "Korea", "geography", KR, "ko", 4,
        "독도가 속한 광역 행정 구역은?",
        ("강원특별자치도", "경상북도", "경상남도", "울산광역시"), 2,
    ),
    ExampleQuestion(
        "ca-civics-01", "Canada", "civics", CA, "en", 1,
        "How many provinces does Canada have?",
        ("8", "10", "12", "13"), "B",
    ),
    ExampleQuestion(
        "ca-civics-02", "Canada", "civics", CA, "en", 2,
        "Who is Canada's head of state?",
        (
            "The Prime Minister",
            "The Governor General",
            "The Sovereign (the King or Queen of Canada)",
            "The Chief Justice of Canada",
        ),
        "C",
    ),
    ExampleQuestion(
        "ca-maths-01", "Canada", "maths", CA, "en", 3,
        "A printer prints 45 pages per minute. How long does it take to print 900 pages?",
        ("15 minutes", "18 minutes", "20 minutes", "25 minutes"), "C",
    ),
    ExampleQuestion(
        "ca-geography-01", "Canada", "geography", CA, "en", 4,
        "Which ocean lies along the coast of British Columbia?",
        ("Atlantic Ocean", "Arctic Ocean", "Indian Ocean", "Pacific Ocean"), "D",
        oracle=False,
    ),
    ExampleQuestion(
        "au-civics-01", "Australia", "civics", AU, "en", 1,
        "How many states does the Commonwealth of Australia have?",
        ("5", "6", "7", "8", "10"), 2,
    ),
    ExampleQuestion(
        "au-maths-01", "Australia", "maths", AU, "en", 2,
        "What is 15% of 240?",
        ("24", "30", "32", "36", "40"), 4,
    ),
    ExampleQuestion(
        "au-maths-02", "Australia", "maths", AU, "en", 3,
        "A rectangle is 12 m long and 5 m wide. How long is its diagonal?",
        ("11 m", "13 m", "15 m", "17 m", "60 m"), 2, oracle=False,
    ),
    ExampleQuestion(
        "au-geography-01", "Australia", "geography", AU, "en", 4,
        "What is the capital city of Australia?",
        ("Sydney", "Melbourne", "Brisbane", "Perth", "Canberra"), 5,
    ),
)  # fmt: skip


def layout_question(question: ExampleQuestion) -> tuple[pymupdf.Document, pymupdf.Rect]:
    """A one-page document with the question laid out, and the part of the page it uses."""
    doc = pymupdf.open()
    page = doc.new_page(width=PAGE_WIDTH, height=2000)
    box = pymupdf.Rect(MARGIN, MARGIN, PAGE_WIDTH - MARGIN, 2000 - MARGIN)
    spare, scale = page.insert_htmlbox(box, question.html(), css=CSS)
    if spare < 0 or scale < 1:
        doc.close()
        raise RuntimeError(f"{question.id}: the question does not fit one page")
    used = box.height - spare
    return doc, pymupdf.Rect(0, 0, PAGE_WIDTH, MARGIN + used + MARGIN)


def render_question(question: ExampleQuestion, dpi: int = 144) -> bytes:
    """The question as PNG bytes: HTML on a tall page, cropped to what the text used."""
    doc, clip = layout_question(question)
    try:
        png: bytes = doc[0].get_pixmap(dpi=dpi, clip=clip).tobytes("png")
        return png
    finally:
        doc.close()


def question_row(question: ExampleQuestion) -> dict[str, object]:
    row: dict[str, object] = {
        "id": question.id,
        "image": f"images/{question.id}.png",
        "answer": question.answer,
        "choices": len(question.options),
        "nation": question.nation,
        "task": question.task,
    }
    if question.oracle:
        row["oracle_text"] = question.text()
    row["exam"] = question.exam
    row["language"] = question.language
    return row


def write_suite(out: Path, dpi: int = 144) -> list[dict[str, object]]:
    """Write ``questions.jsonl`` and ``images/*.png`` into `out` (created if needed)."""
    (out / "images").mkdir(parents=True, exist_ok=True)
    rows = []
    for question in EXAMPLES:
        (out / "images" / f"{question.id}.png").write_bytes(render_question(question, dpi))
        rows.append(question_row(question))
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    (out / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="the suite folder (e.g. cases/civil-exams)")
    parser.add_argument("--dpi", type=int, default=144, help="rendering resolution (144)")
    args = parser.parse_args(argv)
    rows = write_suite(args.out, args.dpi)
    # Read the result back the way the exam kind will, so a bad row fails here, not in CI.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pytest_doceval.kinds.exam.questions import load_questions

    questions = load_questions(args.out)
    print(f"wrote {len(rows)} questions ({sum(q.has_oracle for q in questions)} with oracle text)")
    print(f"  {args.out / 'questions.jsonl'}")
    print(f"  {args.out / 'images'}/*.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
