"""The omnidocbench kind with ``reference`` set: ``text_edit``, ``formula_edit`` and
``reading_order_edit`` from OmniDocBench's own code, one page at a time (`reference.Reference`).

Each page's three numbers (and the leaderboard over the pages) must equal the reference run as
tests/omnidocbench_reference.py runs it, over the whole dataset at once with ``End2EndEval``: on
the 18 demo pages with the shipped predictions and with predictions generated here (blocks
dropped, merged, split, reordered, invented; display math as ``$$``, ``\\[`` and inline; an empty
page). Also: the suite key (a bad folder is a load error), the scoring id and notes of each path,
the missing-dependency error (in a fresh process), and ``pytest --doceval`` end to end.

Skipped cleanly when ../shared/peers or the reference's dependencies are absent. The reference's
GPL/LGPL imports are stood in for by the harness (`omnidocbench_reference.load`), never by the
package.
"""

from __future__ import annotations

import copy
import json
import math
import random
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import omnidocbench_reference as harness
import pytest

from pytest_doceval.errors import OmniDocBenchReferenceError, SuiteConfigError
from pytest_doceval.kinds.omnidocbench.reference import (
    METRIC_OF_ELEMENT,
    Reference,
    checkout_of,
)
from pytest_doceval.kinds.omnidocbench.scoring import (
    SCORING_ID,
    PageScore,
    leaderboard,
    score_page,
)
from tests.conftest import read_report
from tests.test_omnidocbench_suite import build

pytest_plugins = ["pytester"]

try:
    harness.load()
except harness.Unavailable as exc:  # pragma: no cover - depends on the machine
    pytest.skip(str(exc), allow_module_level=True)

TOLERANCE = 1e-9
TEXT_METRICS = tuple(METRIC_OF_ELEMENT.values())
REFERENCE = checkout_of(str(harness.ODB), Path("."), Path("suite.toml"))
assert REFERENCE is not None


def _assert_equal_to_the_reference(
    pages: Sequence[Mapping[str, Any]], predictions: Mapping[str, str]
) -> list[PageScore]:
    theirs = harness.run(pages, predictions)
    ours = []
    for page in pages:
        name = harness.image_name(page)
        score = score_page(page, predictions[name], REFERENCE)
        expected = theirs.pages.get(name, {})
        for metric in TEXT_METRICS:
            assert (metric in score.metrics) == (metric in expected), f"{name}: {metric} presence"
            if metric in expected:
                assert math.isclose(
                    score.metrics[metric], expected[metric], rel_tol=0, abs_tol=TOLERANCE
                ), f"{name}: {metric} ours {score.metrics[metric]!r}, theirs {expected[metric]!r}"
                edits, longest = score.counts[metric]
                assert math.isclose(edits / longest, score.metrics[metric], abs_tol=TOLERANCE)
        _assert_sums_are_the_references(name, score, theirs.samples)
        ours.append(score)
    board = leaderboard(ours)
    for metric in TEXT_METRICS:
        assert (metric in board) == (metric in theirs.leaderboard), f"leaderboard {metric}"
        if metric in board:
            assert math.isclose(
                board[metric], theirs.leaderboard[metric], rel_tol=0, abs_tol=TOLERANCE
            ), f"leaderboard {metric}: {board[metric]!r} vs {theirs.leaderboard[metric]!r}"
    return ours


def _assert_sums_are_the_references(
    name: str, score: PageScore, samples: Mapping[str, Sequence[Mapping[str, Any]]]
) -> None:
    """The row's sums and pairs, against the whole run's samples of the page (their
    ``Edit_num`` and ``upper_len``, summed here)."""
    for element, metric in METRIC_OF_ELEMENT.items():
        mine = [s for s in samples[element] if s.get("image_name", s.get("img_id")) == name]
        if metric in score.counts:
            edits = sum(s["Edit_num"] for s in mine if "Edit_num" in s)
            assert score.counts[metric] == (float(edits), float(sum(s["upper_len"] for s in mine)))
        if element != "reading_order":
            blocks = [b for b in score.blocks if b.category == element]
            assert [b.edit for b in blocks] == [int(s.get("Edit_num") or 0) for s in mine], name


def _predictions(pages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    return {harness.image_name(p): harness.demo_prediction(p) or "" for p in pages}


def test_demo_pages_with_the_shipped_predictions() -> None:
    pages = harness.demo_pages()
    ours = _assert_equal_to_the_reference(pages, _predictions(pages))
    # The demo set exercises every one of the three metrics.
    assert all(any(m in s.metrics for s in ours) for m in TEXT_METRICS)


# -- generated predictions ----------------------------------------------------------------------


def _blocks(page: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The page's truth as markdown blocks in reading order: (kind, markdown)."""
    out = []
    for d in sorted(page["layout_dets"], key=lambda d: d.get("order") or 0):
        kind = d["category_type"]
        if kind == "equation_isolated" and d.get("latex"):
            out.append(("math", str(d["latex"]).strip("$ \n")))
        elif kind == "table" and d.get("html"):
            out.append(("table", str(d["html"])))
        elif kind == "title" and d.get("text"):
            out.append(("text", "# " + str(d["text"])))
        elif d.get("text") and kind != "figure":
            out.append(("text", str(d["text"])))
    return out


def _render(blocks: Sequence[tuple[str, str]], math_as: str = "$$", sep: str = "\n\n") -> str:
    def one(kind: str, text: str) -> str:
        if kind != "math":
            return text
        if math_as == "$$":
            return f"$$\n{text}\n$$"
        if math_as == "\\[":
            return f"\\[ {text} \\]"
        return f"${text}$"

    return sep.join(one(kind, text) for kind, text in blocks)


def _edited(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(max(1, len(chars) // 15)):
        if chars:
            chars[rng.randrange(len(chars))] = rng.choice("xyz ")
    return "".join(chars)


def _split(blocks: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out = []
    for kind, text in blocks:
        middle = len(text) // 2
        if kind == "text" and middle > 20:
            out += [(kind, text[:middle]), (kind, text[middle:])]
        else:
            out.append((kind, text))
    return out


INVENTED = ("text", "An invented paragraph that no annotation holds, about ferries at nine.")
Variant = Callable[[list[tuple[str, str]], random.Random], str]
VARIANTS: Mapping[str, Variant] = {
    "edited": lambda b, r: _render([(k, _edited(t, r)) for k, t in b]),
    "dropped": lambda b, r: _render([x for i, x in enumerate(b) if i % 3 != 1]),
    "merged": lambda b, r: _render(b, sep="\n"),
    "split": lambda b, r: _render(_split(b)),
    "reordered": lambda b, r: _render(list(reversed(b))),
    "invented": lambda b, r: _render([INVENTED, *b[:2], INVENTED, *b[2:]]),
    "bracket-math": lambda b, r: _render(b, math_as="\\["),
    "inline-math": lambda b, r: _render(b, math_as="$"),
    "empty": lambda b, r: "",
}


@pytest.mark.slow
def test_generated_predictions() -> None:
    rng = random.Random(25)
    pages, predictions = [], {}
    for variant, make in VARIANTS.items():
        for page in harness.demo_pages():
            renamed = copy.deepcopy(page)
            name = f"{variant}--{harness.image_name(page)}"
            renamed["page_info"]["image_path"] = name
            pages.append(renamed)
            predictions[name] = make(_blocks(page), rng)
    ours = _assert_equal_to_the_reference(pages, predictions)
    assert sum("formula_edit" in s.metrics for s in ours) >= len(VARIANTS)


def test_an_image_name_with_a_long_extension_scores_its_prediction() -> None:
    # The reference cuts four characters off the image name for its first tries (the
    # prediction is written under the name it tries last, which fits every extension), and
    # keys its per-page values by "" for this name (the text before its last "_"): the page
    # scores as under its own name.
    page = harness.demo_pages()[0]
    prediction = harness.demo_prediction(page) or ""
    renamed = copy.deepcopy(page)
    renamed["page_info"]["image_path"] = "folder/renamed.jpeg"
    expected = score_page(page, prediction, REFERENCE)
    found = score_page(renamed, prediction, REFERENCE)
    assert "text_edit" in expected.metrics and expected.metrics["text_edit"] < 1.0
    assert found.metrics == expected.metrics and found.counts == expected.counts


# -- the suite key, the scoring id, the notes ---------------------------------------------------


def _suite_toml(folder: Path, reference: str | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pages = harness.demo_pages()[:2]
    (folder / "OmniDocBench.json").write_text(json.dumps(pages), encoding="utf-8")
    outputs = folder / "outputs" / "demo"
    outputs.mkdir(parents=True, exist_ok=True)
    for page in pages:
        stem = Path(harness.image_name(page)).stem
        (outputs / f"{stem}.md").write_text(harness.demo_prediction(page) or "", "utf-8")
    line = "" if reference is None else f"reference = {json.dumps(reference)}\n"
    toml = f'[suite]\nkind = "omnidocbench"\nsystems = ["demo"]\n{line}'
    (folder / "suite.toml").write_text(toml, encoding="utf-8")
    return folder / "suite.toml"


def test_scoring_id_and_notes_name_the_path_that_made_the_numbers(tmp_path: Path) -> None:
    plain = build(_suite_toml(tmp_path / "plain", None))
    assert plain.reference is None
    assert plain.scoring_id.startswith(SCORING_ID + "/r1;text=native;")
    assert not any("OmniDocBench's own code" in n for n in plain.notes())
    with_reference = build(_suite_toml(tmp_path / "ref", str(harness.ODB)))
    assert with_reference.scoring_id.startswith(SCORING_ID + "/r1;text=reference;")
    notes = with_reference.notes()
    (note,) = [n for n in notes if "OmniDocBench's own code" in n]
    # Outside the project, the checkout is shown as the suite.toml gives it (here absolute).
    assert f"OmniDocBench's own code at {harness.ODB} (" in note


def test_a_relative_reference_is_read_from_the_suite_folder(tmp_path: Path) -> None:
    checkout = tmp_path / "checkouts" / "OmniDocBench"
    (checkout / "src" / "dataset").mkdir(parents=True)
    (checkout / "src" / "dataset" / "end2end_dataset.py").write_text("", encoding="utf-8")
    suite = build(_suite_toml(tmp_path / "suite", "../checkouts/OmniDocBench"))
    assert suite.reference == Reference(checkout.resolve(), None)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"no/such/folder"', "does not hold OmniDocBench's code (expected src/dataset/"),
        ('"."', "does not hold OmniDocBench's code (expected src/dataset/end2end_dataset.py"),
        ("3", "reference must be a path (text)"),
        ('""', "reference must be a path (text)"),
    ],
)
def test_a_bad_reference_is_a_load_error(tmp_path: Path, value: str, message: str) -> None:
    file = _suite_toml(tmp_path, None)
    file.write_text(file.read_text("utf-8") + f"reference = {value}\n", encoding="utf-8")
    with pytest.raises(SuiteConfigError) as caught:
        build(file)
    assert message in str(caught.value) and str(file) in str(caught.value)
    assert "9dc1dec" in str(caught.value)


def test_a_checkout_at_another_commit_gets_its_own_scoring_id(tmp_path: Path) -> None:
    assert Reference(tmp_path, "9dc1dec" + "0" * 33).identity == "reference"
    other = Reference(tmp_path, "abcdef0123456789")
    assert other.identity == "reference@abcdef0"
    assert "not the pinned 9dc1dec" in other.note()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_commit_is_read_from_a_git_checkout_only(tmp_path: Path) -> None:
    checkout = tmp_path / "OmniDocBench"
    (checkout / "src" / "dataset").mkdir(parents=True)
    (checkout / "src" / "dataset" / "end2end_dataset.py").write_text("", encoding="utf-8")
    assert checkout_of(str(checkout), tmp_path, tmp_path / "suite.toml") == Reference(
        checkout, None
    )
    git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    found = checkout_of(str(checkout), tmp_path, tmp_path / "suite.toml")
    assert found == Reference(checkout, head)
    # A folder inside a repository is not a checkout of its own: no commit.
    inner = checkout / "src"
    (inner / "src" / "dataset").mkdir(parents=True)
    (inner / "src" / "dataset" / "end2end_dataset.py").write_text("", encoding="utf-8")
    assert checkout_of(str(inner), tmp_path, tmp_path / "suite.toml") == Reference(inner, None)


def test_a_second_checkout_in_one_process_is_a_clear_error(tmp_path: Path) -> None:
    # OmniDocBench's package is named `src`: the harness has imported one already.
    other = Reference(tmp_path, None)
    page = harness.demo_pages()[0]
    for _ in range(2):  # and again on the next page: the cause is kept
        with pytest.raises(OmniDocBenchReferenceError, match="another 'src' is already"):
            score_page(page, "text", other)


# -- a missing dependency, in a fresh process ---------------------------------------------------

MISSING_DEPENDENCY = """
import sys
sys.path.insert(0, {tests!r})
sys.modules["Levenshtein"] = None  # as if not installed: importing it fails
import omnidocbench_reference
omnidocbench_reference._stand_in_modules()  # the others, as the harness stands in for them
"""


def test_a_missing_dependency_is_an_error_of_each_test_naming_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    tests = Path(__file__).resolve().parent
    pytester.makeconftest(MISSING_DEPENDENCY.format(tests=str(tests)))
    _suite_toml(pytester.path / "cases" / "odb", str(harness.ODB))
    result = pytester.runpytest_subprocess("--doceval", "-rE")
    result.assert_outcomes(errors=2)
    cause = (
        f"OmniDocBench's code at {harness.ODB} imports the Python module 'Levenshtein', which "
        "is not installed here: pip install Levenshtein"
    )
    lines = [line for line in result.stdout.lines if cause in line]
    assert len(lines) >= 2, result.stdout.str()


# -- end to end ---------------------------------------------------------------------------------


STAND_INS = """
import sys
sys.path.insert(0, {tests!r})
import omnidocbench_reference
omnidocbench_reference._stand_in_modules()  # its GPL/LGPL imports, as the harness stands in
"""


def test_omnidocbench_warnings_do_not_reach_the_users_output(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its modules compiled afresh (invalid escapes) and run (deprecated calls): nothing of it
    in the run's output (issue 37)."""
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    pytester.makeconftest(STAND_INS.format(tests=str(Path(__file__).resolve().parent)))
    _suite_toml(pytester.path / "cases" / "odb", str(harness.ODB))
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(pytester.path / "pycache"))
    result = pytester.runpytest_subprocess("--doceval", "-W", "always::DeprecationWarning")
    result.assert_outcomes(passed=2)
    output = result.stdout.str() + result.stderr.str()
    assert "warnings summary" not in output and "DeprecationWarning" not in output, output


def test_pytest_doceval_rows_carry_the_references_numbers(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    _suite_toml(pytester.path / "cases" / "odb", str(harness.ODB))
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(passed=2)
    section = read_report(pytester.path / "doceval-report.json")["suites"]["odb"]
    assert section["scoring_id"].startswith(SCORING_ID + "/r1;text=reference;")
    pages = harness.demo_pages()[:2]
    theirs = harness.run(pages, _predictions(pages))
    rows = {r["case"]: r for r in section["results"]}
    for page in pages:
        name = harness.image_name(page)
        row = rows[Path(name).stem]
        expected = {m: v for m, v in theirs.pages[name].items() if m in TEXT_METRICS}
        assert expected and {m: row["metrics"][m] for m in expected} == pytest.approx(
            expected, abs=TOLERANCE
        )
        assert set(expected) <= {k.removesuffix("/page") for k in row["counts"]}
        categories = {b["category"] for b in row["views"]["blocks"]["blocks"]}
        assert "text_block" in categories
    board = section["omnidocbench"]["demo"]["leaderboard"]
    for metric in TEXT_METRICS:
        if metric in theirs.leaderboard:
            assert board[metric] == pytest.approx(theirs.leaderboard[metric], abs=TOLERANCE)
