"""The facts kind's parts: fact files read into cases, page outputs, verdicts against the
baseline, the pass_rate analysis and its HTML, checked against hand-worked examples."""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape

from pytest_doceval.config import StatsConfig, load_suite_spec
from pytest_doceval.engine import Engine, StageFailed, StageNotPlanned
from pytest_doceval.engine.executors import ExecutorSlot, parse_executor
from pytest_doceval.engine.plan import gather
from pytest_doceval.errors import CaseInputError, SuiteConfigError, SystemUnavailable
from pytest_doceval.html.codec import Chunk
from pytest_doceval.html.model import SuiteView
from pytest_doceval.kinds.base import CaseRef, RunContext, case_row, evaluate_alone
from pytest_doceval.kinds.facts import FACT_TYPES, FactError
from pytest_doceval.kinds.facts import html as html_facts
from pytest_doceval.kinds.facts.analyses import PassRateAnalysis
from pytest_doceval.kinds.facts.checks import SHORTER_OUTPUT
from pytest_doceval.kinds.facts.entries import load_entries
from pytest_doceval.kinds.facts.paper import pass_rates
from pytest_doceval.kinds.facts.suite import FactsSuite
from pytest_doceval.kinds.registry import make_suite
from pytest_doceval.report.analysis import analyse_suite
from pytest_doceval.store import Store, cache_key
from pytest_doceval.systems import SystemRegistry, build_registry
from tests.conftest import make_pdf


def line(fid: str, kind: str = "present", pdf: str = "a.pdf", page: int = 1, **fields: Any) -> str:
    if kind in ("present", "absent") and "text" not in fields:
        fields["text"] = "some words"
    return json.dumps({"pdf": pdf, "page": page, "id": fid, "type": kind, **fields})


def write(folder: Path, files: dict[str, list[str]], toml: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, lines in files.items():
        (folder / name).write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    if toml is not None:
        (folder / "suite.toml").write_text(toml, encoding="utf-8")
    return folder


def suite_toml(systems: list[str], extra: str = "") -> str:
    return f'[suite]\nkind = "facts"\nsystems = {json.dumps(systems)}\n{extra}'


def build(folder: Path, registry: SystemRegistry | None = None) -> FactsSuite:
    suite = make_suite(load_suite_spec(folder / "suite.toml"), registry or build_registry())
    assert isinstance(suite, FactsSuite)
    return suite


def outputs(folder: Path, system: str, pages: dict[str, list[str]]) -> None:
    """pages: {"<stem>_pg<N>": [repeat1 text, repeat2 text, ...]}."""
    for page, texts in pages.items():
        for n, text in enumerate(texts, start=1):
            path = folder / system / f"{page}_repeat{n}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


def ctx(tmp_path: Path, baseline: dict[str, float] | None = None) -> RunContext:
    return RunContext(Store(tmp_path / "cache"), baseline=baseline)


# -- fact files into cases ------------------------------------------------------------------


def test_entries_keep_file_then_line_order_and_add_implicit_baselines_last(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "b.jsonl": [line("b1"), "", line("b2", pdf="dir/c.pdf")],
            "a.jsonl": [line("a1", "baseline", pdf="x.pdf"), line("a2", pdf="x.pdf")],
        },
    )
    loaded = load_entries(tmp_path)
    assert list(loaded.entries) == ["a1", "a2", "b1", "b2", "a.pdf_baseline", "dir/c.pdf_baseline"]
    assert loaded.entries["b2"].labels == {"type": "present", "file": "b.jsonl"}
    implicit = loaded.entries["dir/c.pdf_baseline"]
    assert implicit.labels == {"type": "baseline", "file": "baseline"}
    assert not isinstance(implicit.fact, FactError) and implicit.fact.page == 1
    assert loaded.notes == []


def test_each_bad_line_is_its_own_case_and_the_others_load(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_bytes(
        b"\n".join(
            [
                line("ok1").encode(),
                line("u1", "sparkle").encode(),
                json.dumps({"pdf": "a.pdf", "page": 1, "id": "m1", "type": "present"}).encode(),
                b"{not json",
                b'{"id": "z", "text": "caf\xe9"}',
                line("ok1").encode(),
                line("esc", pdf="../secret.pdf").encode(),
                line("ok2", page=0).encode(),
            ]
        )
    )
    write(tmp_path, {"good.jsonl": [line("g1")]})
    entries = load_entries(tmp_path).entries
    bad = {name: e.fact for name, e in entries.items() if isinstance(e.fact, FactError)}
    assert sorted(bad) == ["bad.jsonl:4", "bad.jsonl:5", "bad.jsonl:6", "esc", "m1", "ok2", "u1"]
    assert "unknown fact type" in str(bad["u1"]) and "bad.jsonl:2" in str(bad["u1"])
    assert "missing required field 'text'" in str(bad["m1"])
    assert "not valid JSON" in str(bad["bad.jsonl:4"])
    assert "not UTF-8 (byte 0xe9" in str(bad["bad.jsonl:5"])
    assert "duplicate id (first used in bad.jsonl:1)" in str(bad["bad.jsonl:6"])
    assert "relative path inside pdfs/" in str(bad["esc"])
    assert "field 'page' must be a positive integer" in str(bad["ok2"])
    assert entries["u1"].labels == {"type": "sparkle", "file": "bad.jsonl"}
    assert entries["bad.jsonl:4"].labels == {"type": "?", "file": "bad.jsonl"}
    assert {"ok1", "g1", "a.pdf_baseline"} <= set(entries)


def test_an_unreadable_fact_file_is_one_bad_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, {"good.jsonl": [line("g1")], "locked.jsonl": [line("l1")]})
    read_bytes = Path.read_bytes

    def refuse(path: Path) -> bytes:
        if path.name == "locked.jsonl":
            raise PermissionError(13, "Permission denied")
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    entries = load_entries(tmp_path).entries
    assert isinstance(entries["locked.jsonl"].fact, FactError)
    # files.read_text/read_jsonl's one wording, under the fact's file name.
    assert f"{tmp_path / 'locked.jsonl'}: fact file cannot be read: Permission denied" in str(
        entries["locked.jsonl"].fact
    )
    assert not isinstance(entries["g1"].fact, FactError)


def test_implicit_baseline_whose_id_is_taken_is_left_out_with_a_note(tmp_path: Path) -> None:
    write(tmp_path, {"a.jsonl": [line("a.pdf_baseline")]})
    loaded = load_entries(tmp_path)
    assert list(loaded.entries) == ["a.pdf_baseline"]
    assert loaded.entries["a.pdf_baseline"].labels["type"] == "present"
    assert "no implicit baseline fact for a.pdf" in loaded.notes[0]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.builds(lambda i: line(f"id{i}"), st.integers(0, 8)),
            st.builds(lambda i: line(f"id{i}", "nope"), st.integers(0, 8)),
            st.text(alphabet='{}[]":,ab ', max_size=12),
            st.just(""),
        ),
        max_size=20,
    )
)
def test_every_non_blank_line_is_one_case_with_a_unique_name(lines: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        folder = write(Path(tmp), {"f.jsonl": lines})
        entries = load_entries(folder).entries
    good = [e for e in entries.values() if not isinstance(e.fact, FactError)]
    implicit = [e for e in good if e.labels["file"] == "baseline"]
    assert len(entries) - len(implicit) == sum(1 for x in lines if x.strip())
    assert len(implicit) == (1 if len(good) > len(implicit) else 0)
    for name, entry in entries.items():
        if not isinstance(entry.fact, FactError):
            assert name == entry.fact.id


# -- suite definition -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (suite_toml([]), "systems must be a non-empty list"),
        (suite_toml(["ghost"]), "unknown system 'ghost'"),
        (suite_toml(["pdfs"]), "'pdfs' cannot be a system name"),
        (suite_toml(["vlm", "vlm"]), "systems listed twice: vlm"),
        (suite_toml(["vlm"], 'language = "klingon"\n'), "language 'klingon' is not one of"),
        (suite_toml(["vlm"], 'profile = "lenient"\n'), "profile 'lenient' is not one of"),
        (suite_toml(["vlm"], "repeats = 3\n"), "unknown key(s) repeats"),
        (suite_toml(["vlm"], "[systems.pymupdf]\ntables = false\n"), "configures a system not"),
    ],
)
def test_suite_definition_mistakes(tmp_path: Path, toml: str, message: str) -> None:
    write(tmp_path, {"f.jsonl": [line("f1")]}, toml)
    (tmp_path / "vlm").mkdir()
    with pytest.raises(SuiteConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build(tmp_path)


def test_a_suite_without_facts_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, {}, suite_toml(["pymupdf"]))
    with pytest.raises(SuiteConfigError, match="has no facts"):
        build(tmp_path)


def test_refs_scoring_id_and_a_parser_folder_note(tmp_path: Path) -> None:
    write(tmp_path, {"f.jsonl": [line("f1"), line("f2")]}, suite_toml(["pymupdf", "vlm"]))
    (tmp_path / "vlm").mkdir()
    (tmp_path / "pymupdf").mkdir()
    suite = build(tmp_path)
    assert [r.key for r in suite.case_refs()] == [
        "f1[pymupdf]",
        "f1[vlm]",
        "f2[pymupdf]",
        "f2[vlm]",
        "a.pdf_baseline[pymupdf]",
        "a.pdf_baseline[vlm]",
    ]
    assert suite.scoring_id == "olmocr-facts@r2:en"
    assert suite.describe() == {"language": "en", "latin_only": True, "profile": "olmocr"}
    assert any("pymupdf is a registered parser" in n for n in suite.notes())


# -- verdicts -------------------------------------------------------------------------------


def repeats_suite(tmp_path: Path, texts: list[str], **fact: Any) -> FactsSuite:
    write(tmp_path, {"f.jsonl": [line("f1", **fact)]}, suite_toml(["vlm"]))
    outputs(tmp_path, "vlm", {"a_pg1": texts})
    return build(tmp_path)


@pytest.mark.parametrize(
    ("holds", "passed", "fraction"),
    [
        ([True], 1.0, 1.0),
        ([False], 0.0, 0.0),
        ([True, False], 0.0, 0.5),  # exactly half is not more than half
        ([True, True, False], 1.0, 2 / 3),
        ([True, False, False], 0.0, 1 / 3),
        ([False, True, True, True], 1.0, 0.75),
    ],
)
def test_repeats_pass_when_more_than_half_pass(
    tmp_path: Path, holds: list[bool], passed: float, fraction: float
) -> None:
    texts = ["it says some words here" if h else "it says other things" for h in holds]
    suite = repeats_suite(tmp_path, texts)
    result = evaluate_alone(suite, CaseRef("f1", "vlm"), ctx(tmp_path, {"pass": passed}))
    assert result.metrics == {"pass": passed}
    assert result.details["pass_fraction"] == pytest.approx(fraction)
    assert result.details["repeats"] == len(holds)
    assert result.fingerprint == {
        "system": "vlm",
        "kind": "precomputed",
        "repeats": len(holds),
        # The repeats' digest, computed here independently: each text length-prefixed, in order.
        "output_sha256": hashlib.sha256(
            b"".join(b"%d:%s" % (len(t.encode()), t.encode()) for t in texts)
        ).hexdigest(),
    }
    # The labels ride on the suite's CaseRef (not copied into the result) and reach the row.
    ref = next(r for r in suite.case_refs() if r.key == "f1[vlm]")
    assert result.labels == {}
    assert case_row("facts", ref, result)["labels"] == {"type": "present", "file": "f.jsonl"}
    assert result.failures == []  # the baseline agrees: nothing new


def test_a_failing_fact_fails_unless_the_baseline_failed_it_too(tmp_path: Path) -> None:
    suite = repeats_suite(tmp_path, ["nothing relevant"])
    ref = CaseRef("f1", "vlm")
    new = evaluate_alone(suite, ref, ctx(tmp_path))
    assert len(new.failures) == 1
    assert new.failures[0].startswith("present fact 'f1' fails for vlm: 'some words' not found")
    assert "threshold 1.000" in new.failures[0] and "(f.jsonl:1)" in new.failures[0]
    assert "no baseline records it" in new.failures[0]
    regressed = evaluate_alone(suite, ref, ctx(tmp_path, {"pass": 1.0}))
    assert "it passed in the baseline" in regressed.failures[0]
    known = evaluate_alone(suite, ref, ctx(tmp_path, {"pass": 0.0}))
    assert known.failures == [] and known.metrics == {"pass": 0.0}
    assert known.notes[0].startswith("known failure (it failed in the baseline too): ")


def test_the_view_shows_the_fact_as_written_and_each_repeat(tmp_path: Path) -> None:
    suite = repeats_suite(tmp_path, ["some words", "none"], case_sensitive=False, max_diffs=1)
    view = evaluate_alone(suite, CaseRef("f1", "vlm"), ctx(tmp_path)).views["fact_check"]
    assert view["fact"] == {
        "pdf": "a.pdf",
        "page": 1,
        "id": "f1",
        "max_diffs": 1,
        "type": "present",
        "text": "some words",
        "case_sensitive": False,
    }
    assert [r["passed"] for r in view["repeats"]] == [True, False]
    assert view["explanation"].startswith("passed in 1/2 repeats")


def test_latin_only_follows_the_language(tmp_path: Path) -> None:
    write(tmp_path, {"f.jsonl": [line("b", "baseline")]}, suite_toml(["vlm"]))
    outputs(tmp_path, "vlm", {"a_pg1": ["Hello 世界"]})
    assert (
        evaluate_alone(build(tmp_path), CaseRef("b", "vlm"), ctx(tmp_path)).metrics["pass"] == 0.0
    )
    (tmp_path / "suite.toml").write_text(suite_toml(["vlm"], 'language = "mixed"\n'))
    suite = build(tmp_path)
    assert suite.scoring_id == "olmocr-facts@r2:mixed"
    assert evaluate_alone(suite, CaseRef("b", "vlm"), ctx(tmp_path)).metrics["pass"] == 1.0


def test_a_pass_on_a_blank_output_is_flagged_and_the_strict_profile_fails_it(
    tmp_path: Path,
) -> None:
    """olmOCR-bench passes `present` on a page that is only a newline (its issue #461): the
    verdict is kept, with a note and a flag on ``pass`` that the pass rate shows as a dagger."""
    suite = repeats_suite(tmp_path, ["\n"])
    kept = evaluate_alone(suite, CaseRef("f1", "vlm"), ctx(tmp_path))
    assert kept.metrics == {"pass": 1.0} and kept.failures == []
    assert kept.flags == {"pass": [SHORTER_OUTPUT]}
    assert any("(blank) is shorter than the text" in n and "strict" in n for n in kept.notes)
    assert kept.views["fact_check"]["caveat"].startswith(SHORTER_OUTPUT)
    (tmp_path / "suite.toml").write_text(suite_toml(["vlm"], 'profile = "strict"\n'))
    strict_suite = build(tmp_path)
    assert strict_suite.scoring_id == "olmocr-facts@r2+strict:en"
    strict = evaluate_alone(strict_suite, CaseRef("f1", "vlm"), ctx(tmp_path))
    assert strict.metrics == {"pass": 0.0} and strict.flags == {}
    assert "the strict profile fails it" in strict.failures[0]
    # the row's flag reaches the pass rate (counted per reason) and its HTML dagger
    flagged = row("f1", "vlm", "f.jsonl", "present", 1.0)
    flagged["flags"] = {"pass": [SHORTER_OUTPUT]}
    rows = [flagged, row("f2", "vlm", "f.jsonl", "present", 1.0)]
    analysis = PassRateAnalysis()(rows, {}, StatsConfig(resamples=50))
    assert analysis["vlm"]["flagged"] == {SHORTER_OUTPUT: 1}
    page = html_facts.pass_rate("pass_rate", analysis, SuiteView(0, "facts", {}, 0.95))
    assert "100.0%\u2020" in page and escape(f"{SHORTER_OUTPUT} (1 of 2 cases)") in page
    [table] = pass_rates({"pass_rate": analysis, "systems": ["vlm"], "results": rows})
    assert table.rows[0][1].flagged and f"\u2020 pass: {SHORTER_OUTPUT}" in table.notes


def test_a_math_fact_that_cannot_be_decided_is_skipped(tmp_path: Path) -> None:
    suite = repeats_suite(tmp_path, ["$$x^{2}$$"], kind="math", math="x^2")
    with pytest.raises(SystemUnavailable, match=r"fact 'f1' skipped \(f.jsonl:1\): no equation"):
        evaluate_alone(suite, CaseRef("f1", "vlm"), ctx(tmp_path))
    assert any("math facts compare LaTeX as text" in n for n in suite.notes())


def test_missing_output_and_bad_fact_errors_name_the_fact(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"f.jsonl": [line("f1"), line("f2", page=2), line("bad", "sparkle")]},
        suite_toml(["vlm"]),
    )
    outputs(tmp_path, "vlm", {"a_pg1": ["some words"]})
    (tmp_path / "vlm" / "a_pg1_repeat2.md").write_bytes(b"caf\xe9")
    suite = build(tmp_path)
    # A saved output is read by its stage: the file and the stage are named.
    with pytest.raises(
        StageFailed, match=r"a_pg1_repeat2.md: precomputed output is not UTF-8 .*\(stage vlm/a_pg1"
    ):
        evaluate_alone(suite, CaseRef("f1", "vlm"), ctx(tmp_path))
    with pytest.raises(CaseInputError, match=r"a_pg2_repeat1.md: missing output of vlm"):
        evaluate_alone(suite, CaseRef("f2", "vlm"), ctx(tmp_path))
    depths = []
    for _ in range(5):  # the same clear error each time, its traceback not growing
        with pytest.raises(FactError, match=r"f.jsonl:3: fact 'bad': unknown fact type") as exc:
            evaluate_alone(suite, CaseRef("bad", "vlm"), ctx(tmp_path))
        depths.append(len(list(_frames(exc.value.__traceback__))))
    assert len(set(depths)) == 1


def _frames(tb: Any) -> Any:
    while tb is not None:
        yield tb
        tb = tb.tb_next


# -- parsed pages ---------------------------------------------------------------------------


def counting_registry(calls: list[tuple[str, int, str]]) -> SystemRegistry:
    class Counting:
        name = "counter"

        def __init__(self, settings: Any, env: Any) -> None:
            pass

        def fingerprint(self) -> dict[str, Any]:
            return {"system": "counter", "version": "1"}

        def parse(self, pdf: Path) -> str:
            with pymupdf.open(pdf) as doc:
                text = "\n".join(page.get_text() for page in doc)
                calls.append((pdf.name, doc.page_count, text))
            return text

    registry = build_registry()
    registry.register("counter", Counting)
    return registry


def test_each_page_is_cut_parsed_once_and_cached(tmp_path: Path) -> None:
    make_pdf(tmp_path / "pdfs" / "a.pdf", ["first page words", "second page words"])
    facts = [line(f"p1-{i}", text="first page") for i in range(3)]
    facts += [line(f"p2-{i}", page=2, text="second page") for i in range(3)]
    facts += [line("p2-absent", "absent", page=2, text="first page words")]
    write(tmp_path, {"f.jsonl": facts}, suite_toml(["counter"]))
    calls: list[tuple[str, int, str]] = []
    suite = build(tmp_path, counting_registry(calls))
    results = [evaluate_alone(suite, ref, ctx(tmp_path)) for ref in suite.case_refs()]
    assert all(r.metrics["pass"] == 1.0 for r in results)
    assert [(name, pages) for name, pages, _ in calls] == [("a_pg1.pdf", 1), ("a_pg2.pdf", 1)]
    assert "second" not in calls[0][2] and "first" not in calls[1][2]
    assert len({r.cache_key for r in results}) == 2
    # Another run (a new suite object) finds both pages in the cache.
    again = build(tmp_path, counting_registry(calls))
    for ref in again.case_refs():
        evaluate_alone(again, ref, ctx(tmp_path))
    assert len(calls) == 2


def test_a_parser_crash_is_an_error_naming_system_and_page(tmp_path: Path) -> None:
    make_pdf(tmp_path / "pdfs" / "a.pdf", ["one"])
    write(tmp_path, {"f.jsonl": [line("f1")]}, suite_toml(["boom"]))
    registry = build_registry()

    class Boom:
        name = "boom"

        def __init__(self, settings: Any, env: Any) -> None:
            pass

        def fingerprint(self) -> dict[str, Any]:
            return {"system": "boom"}

        def parse(self, pdf: Path) -> str:
            raise RuntimeError("kaput")

    registry.register("boom", Boom)
    suite = build(tmp_path, registry)
    with pytest.raises(Exception, match=r"boom failed on a.pdf#page=1: RuntimeError: kaput") as e:
        evaluate_alone(suite, CaseRef("f1", "boom"), ctx(tmp_path))
    assert isinstance(e.value.__cause__, RuntimeError)  # kept for --tb=long


def shout_registry(calls: list[tuple[str, int, str]], refined: list[str]) -> SystemRegistry:
    """`counting_registry` plus ``shout``: a two-stage system upper-casing counter's page."""
    registry = counting_registry(calls)

    class Shout:
        name = "shout"
        stage1 = "counter"

        def __init__(self, settings: Any, env: Any) -> None:
            pass

        def fingerprint(self) -> dict[str, Any]:
            return {"system": "shout", "version": "1"}

        def requests(self, stage1_text: str, *, case: str) -> list[Any]:
            return [(case, stage1_text)]

        def refine(self, stage1_text: str, *, case: str) -> str:
            refined.append(case)
            return stage1_text.upper()

    registry.register("shout", Shout)
    return registry


def test_a_two_stage_system_refines_the_cached_page_parse(tmp_path: Path) -> None:
    make_pdf(tmp_path / "pdfs" / "a.pdf", ["first page words", "second page words"])
    facts = [line("f1", text="FIRST PAGE"), line("f2", text="FIRST PAGE WORDS")]
    write(tmp_path, {"f.jsonl": facts}, suite_toml(["counter", "shout"]))
    calls: list[tuple[str, int, str]] = []
    refined: list[str] = []
    suite = build(tmp_path, shout_registry(calls, refined))
    refs = [r for r in suite.case_refs() if r.system == "shout"]
    # Its stages: the page parse, then the refine (a CPU stage: it has no model() and
    # combine()), one key for every fact of the page.
    stages = [suite.plan(ref).stages for ref in refs]
    assert [s.label for s in stages[0]] == ["counter on a.pdf#page=1", "shout on a.pdf#page=1"]
    assert [s.key for s in stages[0]] == [s.key for s in stages[1]]
    results = [evaluate_alone(suite, ref, ctx(tmp_path)) for ref in refs]
    assert [r.metrics["pass"] for r in results] == [1.0, 1.0, 1.0]
    assert [name for name, _, _ in calls] == ["a_pg1.pdf"] and refined == ["a.pdf#page=1"]
    # Evaluated alone, the stage-1 parser reuses the same cached page parse.
    evaluate_alone(suite, CaseRef("f1", "counter"), ctx(tmp_path))
    assert len(calls) == 1


# -- the plan: the only description of the work --------------------------------------------


def test_the_plan_keys_a_page_parse_as_the_output_cache_always_has(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "pdfs" / "a.pdf", ["first page words", "second page words"])
    write(tmp_path, {"f.jsonl": [line("f1", page=2), line("f2", page=2)]}, suite_toml(["counter"]))
    suite = build(tmp_path, counting_registry([]))
    plan = suite.plan(CaseRef("f1", "counter"))
    # The key of before plans: SHA-256 over the fingerprint and "<PDF digest>:page:<n>",
    # written out here rather than through the kind's helpers.
    digest = hashlib.sha256(pdf.read_bytes()).hexdigest()
    page = hashlib.sha256(f"{digest}:page:2".encode()).hexdigest()
    assert plan.results == {"output": cache_key({"system": "counter", "version": "1"}, page)}
    assert plan.stage("output").fingerprint == {"system": "counter", "version": "1"}
    assert suite.plan(CaseRef("f2", "counter")).results == plan.results  # one parse a page
    row = evaluate_alone(suite, CaseRef("f1", "counter"), ctx(tmp_path))
    assert row.cache_key == plan.results["output"]
    assert row.fingerprint == {"system": "counter", "version": "1"}


def test_the_plan_reads_each_saved_repeat_as_a_stage_keyed_by_its_content(tmp_path: Path) -> None:
    suite = repeats_suite(tmp_path, ["one", "two", "three"])
    plan = suite.plan(CaseRef("f1", "vlm"))
    assert list(plan.results) == ["output", "repeat2", "repeat3"]
    assert [s.label for s in plan.stages] == [f"vlm/a_pg1_repeat{n}.md" for n in (1, 2, 3)]
    assert all(s.fingerprint is None for s in plan.stages)  # nothing stored: the file is there
    (tmp_path / "vlm" / "a_pg1_repeat2.md").write_text("two, edited")
    edited = build(tmp_path).plan(CaseRef("f1", "vlm"))
    assert [edited.results[n] == plan.results[n] for n in plan.results] == [True, False, True]


def test_a_result_whose_stage_was_never_run_errors_and_nothing_is_computed(
    tmp_path: Path,
) -> None:
    make_pdf(tmp_path / "pdfs" / "a.pdf", ["first page words"])
    write(tmp_path, {"f.jsonl": [line("f1", text="FIRST PAGE")]}, suite_toml(["shout"]))
    calls: list[tuple[str, int, str]] = []
    refined: list[str] = []
    suite = build(tmp_path, shout_registry(calls, refined))
    plan = suite.plan(CaseRef("f1", "shout"))
    engine = Engine(ExecutorSlot(parse_executor("threads", workers=1)), Store(None, "off"))
    try:
        engine.add(plan.stages[:1])  # the page parse, not the refine that makes the output
        with pytest.raises(
            StageNotPlanned,
            match=r"^facts/f1\[shout\]: stage shout on a.pdf#page=1 was never planned",
        ):
            gather(plan, engine.output, engine.knows, "facts/f1[shout]")
    finally:
        engine.close()
    assert refined == []  # not refined in its place


@pytest.mark.parametrize(
    ("prepare", "message"),
    [
        (lambda p: p.write_bytes(b"%PDF-1.4 not really"), "not a readable PDF"),
        (lambda p: p.unlink(), "missing PDF"),
        (lambda p: None, "the fact is on page 3 but the PDF has 2 pages"),
    ],
)
def test_a_page_that_cannot_be_parsed_is_the_plan_error_of_each_of_its_facts(
    tmp_path: Path, prepare: Callable[[Path], None], message: str
) -> None:
    prepare(make_pdf(tmp_path / "pdfs" / "a.pdf", ["one", "two"]))
    write(tmp_path, {"f.jsonl": [line("f1", page=3), line("f2", page=3)]}, suite_toml(["counter"]))
    calls: list[tuple[str, int, str]] = []
    suite = build(tmp_path, counting_registry(calls))
    for n in (1, 2):
        fact = rf"^fact 'f{n}' \(counter, f.jsonl:{n}\): .*{message}"
        with pytest.raises(CaseInputError, match=fact):
            suite.plan(CaseRef(f"f{n}", "counter"))
    with pytest.raises(CaseInputError, match=message):  # the test's error, whoever runs it
        evaluate_alone(suite, CaseRef("f1", "counter"), ctx(tmp_path))
    assert calls == []  # nothing was parsed


# -- the pass_rate analysis -----------------------------------------------------------------


def row(case: str, system: str, file: str, kind: str, passed: float | None, **extra: Any) -> dict:
    outcome = "skipped" if passed is None else "passed" if passed else "failed"
    return {
        "case": case,
        "system": system,
        "labels": {"file": file, "type": kind},
        "outcome": extra.pop("outcome", outcome),
        "metrics": {} if passed is None else {"pass": passed},
        "details": extra.pop("details", {}),
        "baseline": extra.pop("baseline", None),
    }


def test_pass_rate_is_the_mean_of_file_means_with_breakdowns() -> None:
    rows = [
        row("a1", "s", "a.jsonl", "present", 1.0),
        row("a2", "s", "a.jsonl", "present", 0.0, details={"pass_fraction": 1 / 3}),
        row("a3", "s", "a.jsonl", "order", 1.0, details={"pass_fraction": 2 / 3}),
        row("a4", "s", "a.jsonl", "math", None),  # skipped: out of pass_rate
        row("b1", "s", "b.jsonl", "table", 0.0),
        row("e1", "s", "b.jsonl", "table", 1.0, outcome="error"),  # measured nothing
    ]
    result = PassRateAnalysis()(rows, {}, StatsConfig(resamples=200))["s"]
    assert result["pass_rate"] == pytest.approx((2 / 3 + 0) / 2)  # worked by hand
    # olmOCR-bench's overall_score: every decided fact's fraction of repeats, one mean.
    assert result["micro_mean"] == pytest.approx((1 + 1 / 3 + 2 / 3 + 0) / 4)
    assert (result["n_files"], result["n_facts"]) == (2, 4)
    assert result["by_file"]["a.jsonl"] == {
        "mean": pytest.approx(2 / 3),
        "passed": 2,
        "failed": 1,
        "skipped": 1,
        "total": 4,
    }
    assert result["by_type"]["present"]["mean"] == pytest.approx((1 + 1 / 3) / 2)
    assert result["by_type"]["math"] == {
        "mean": None,
        "passed": 0,
        "failed": 0,
        "skipped": 1,
        "total": 1,
    }
    assert result["ci_low"] <= result["pass_rate"] <= result["ci_high"]
    assert result["baseline_pass_rate"] is None


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["a.jsonl", "b.jsonl", "c.jsonl", "baseline"]),
        st.lists(st.booleans(), min_size=1, max_size=12),
        min_size=1,
    ),
    st.randoms(use_true_random=False),
)
def test_pass_rate_matches_an_independent_mean_of_file_means(
    files: dict[str, list[bool]], rng: random.Random
) -> None:
    rows = [
        row(f"{file}-{i}", "s", file, "present", float(v), baseline={"pass": float(not v)})
        for file, verdicts in files.items()
        for i, v in enumerate(verdicts)
    ]
    expected = sum(sum(v) / len(v) for v in files.values()) / len(files)
    result = PassRateAnalysis()(rows, {}, StatsConfig(resamples=100))["s"]
    assert result["pass_rate"] == pytest.approx(expected)
    assert result["baseline_pass_rate"] == pytest.approx(1 - expected)
    # Through analyse_suite (which sorts rows), any arrival order gives the same interval.
    shuffled = list(rows)
    rng.shuffle(shuffled)
    config = StatsConfig(resamples=100)
    meta: dict[str, Any] = {"metrics": {}}
    one = analyse_suite(meta, rows, config, [PassRateAnalysis()])["pass_rate"]
    other = analyse_suite(meta, shuffled, config, [PassRateAnalysis()])["pass_rate"]
    assert one == other


def test_pass_rate_ci_resamples_within_files() -> None:
    """A file whose facts all agree has no spread: one passing and one failing file of equal
    weight give exactly 0.5 in every resample, however many facts each holds."""
    rows = [row(f"a{i}", "s", "a.jsonl", "present", 1.0) for i in range(5)]
    rows += [row(f"b{i}", "s", "b.jsonl", "present", 0.0) for i in range(50)]
    result = PassRateAnalysis()(rows, {}, StatsConfig(resamples=300))["s"]
    assert result["pass_rate"] == result["ci_low"] == result["ci_high"] == 0.5
    assert not math.isnan(result["pass_rate"])


# -- HTML ------------------------------------------------------------------------------------


def test_html_renders_the_view_and_the_analysis_escaped() -> None:
    view = {
        "fact": {"id": "<f1>", "type": "present", "text": "a & b"},
        "passed": False,
        "score": 0.5,
        "explanation": "not found",
        "repeats": [{"passed": True, "explanation": "ok"}, {"passed": False, "explanation": "x"}],
    }
    chunk = Chunk()
    [block] = html_facts.fact_check("fact_check", [view], chunk)
    assert block["t"] == "table" and chunk.size > 0
    assert ["verdict", "failed (score 0.500)"] in block["rows"]
    assert ["repeat 2", "failed: x"] in block["rows"]
    analysis = PassRateAnalysis()(
        [row("a", "<sys>", "f.jsonl", "present", 1.0), row("b", "<sys>", "g.jsonl", "table", 0.0)],
        {},
        StatsConfig(resamples=100),
    )
    suite_view = SuiteView(index=0, name="facts", data={}, confidence=0.95)
    page = html_facts.pass_rate("pass_rate", analysis, suite_view)
    assert "&lt;sys&gt;" in page and "<sys>" not in page
    assert "50.0%" in page and "g.jsonl" in page and "0/1" in page
    assert "micro mean (not the headline)" in page


def test_example_suite_covers_every_fact_type() -> None:
    folder = Path(__file__).resolve().parents[1] / "cases" / "facts"
    entries = load_entries(folder).entries
    kinds: dict[str, int] = defaultdict(int)
    for entry in entries.values():
        assert not isinstance(entry.fact, FactError)
        kinds[entry.fact.type] += 1
    assert set(kinds) == set(FACT_TYPES)
    assert set(FACT_TYPES) == {
        *("present", "absent", "order", "table", "baseline", "math", "format", "footnote")
    }
