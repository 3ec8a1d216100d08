"""The ``facts`` kind: olmOCR-bench fact files checked against each system's page outputs.

Layout (an olmOCR-bench folder with a ``suite.toml`` added)::

    cases/<suite>/suite.toml
    cases/<suite>/*.jsonl                         fact files, one fact per line
    cases/<suite>/pdfs/<path>.pdf                 a fact's ``pdf`` is a path inside pdfs/
    cases/<suite>/<system>/<dir>/<stem>_pg<page>_repeat<N>.md   a precomputed system

``[suite]`` keys: ``kind = "facts"``, ``systems`` (required: registered parsers, which parse
each fact's page themselves, or folders of precomputed outputs), ``language`` (``en``, the
default, is a Latin-script suite: a baseline fact fails on CJK or emoji; ``ko`` and ``mixed``
allow any script).

One test per (fact, system): the case is the fact's id (unique across the suite's files, as
olmOCR-bench requires), labelled with its ``type`` and ``file``; a line that cannot be read is a
case too (its id, or ``<file>:<line>`` when it has none), which errors naming the cause.
olmOCR-bench's implicit baseline facts (one per PDF without one, in the pseudo file
``baseline``) are cases like the others. Metric ``pass`` is 1 when the fact passes -- in more
than half of the repeats when a precomputed system has several (olmOCR-bench's rule; the fraction
is ``details["pass_fraction"]``); pass_rate and its breakdowns are `PassRateAnalysis`.

A fact that does not pass fails its test with the check's explanation, unless the baseline
records it failing too: a known failure passes, with a note (not xfail: an xfailed row would be
"skipped" and drop out of pass_rate). A failing fact with no baseline entry therefore fails until
``--doceval-update`` accepts it. ``[gates]`` apply as for any kind (``pass = "+0"`` would also
fail passing facts that have no baseline yet), and ``[gates.suite] pass = "significant:-2pp"``
fails the run on a significant paired drop in the facts passed. A pass on an output shorter than
the text (olmOCR-bench's verdict under the default profile) gets a note and a flag on ``pass``
(the report marks the pass rate it is in with a dagger).

A math fact whose equations differ from it only as text is skipped (olmOCR-bench compares KaTeX
renderings; no renderer ships here), and a skipped fact is left out of pass_rate.

A test's plan (`pages.PagePlans`) is its system's parse of the fact's page -- a parser gets the
page cut into a one-page PDF, its output cached by (PDF digest, page) -- or the saved repeat
files; every fact of a page plans the same stages, so a page is read or parsed once per system
however many facts it has. ``evaluate`` only checks the fact against the finished outputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, ClassVar

from pytest_doceval.config import SuiteSpec
from pytest_doceval.engine import Plan, StageResults
from pytest_doceval.errors import SuiteConfigError, SystemUnavailable
from pytest_doceval.html.analysis import AnalysisRenderer
from pytest_doceval.html.views import ViewRenderer
from pytest_doceval.kinds.base import (
    CaseRef,
    RunContext,
    Suite,
    check_system_settings,
    system_list,
)
from pytest_doceval.kinds.facts import (
    Fact,
    FactError,
    FactResult,
    MathFact,
    PageOutput,
    check,
    check_repeats,
    html,
)
from pytest_doceval.kinds.facts.analyses import PassRateAnalysis
from pytest_doceval.kinds.facts.checks import SHORTER_OUTPUT
from pytest_doceval.kinds.facts.entries import Entry, load_entries
from pytest_doceval.kinds.facts.layout import PDF_DIR
from pytest_doceval.kinds.facts.pages import (
    OUTPUT,
    PagePlans,
    repeat_results,
    where,
)
from pytest_doceval.kinds.facts.paper import pass_rates
from pytest_doceval.metrics.spec import MetricSpec
from pytest_doceval.paper import TableBuilder
from pytest_doceval.results import CaseResult
from pytest_doceval.systems import SystemEnv
from pytest_doceval.systems.sources import SavedOutputs, precomputed_fingerprint, resolve_sources
from pytest_doceval.text.tokenise import LANGUAGES

# [suite] profile: olmOCR-bench's verdicts, or those with a present pass on an output shorter
# than its text failed (`checks.SHORTER_OUTPUT`).
PROFILES = ("olmocr", "strict")

# Bump when a check, the repeat rule or the page cutting changes what a verdict is: baselines
# made before then stop comparing instead of drifting. r2: verdicts equal olmOCR-bench's at
# f7cfe4c (invisible characters kept, no length guard, fuzzysearch order, BeautifulSoup tables,
# headings by olmOCR's walk) and the format and footnote types.
SCORING_REVISION = 2


class FactsSuite(Suite):
    kind = "facts"
    paper_tables: ClassVar[tuple[TableBuilder, ...]] = (pass_rates,)
    html_views: ClassVar[Mapping[str, ViewRenderer]] = {"fact_check": html.fact_check}
    html_analyses: ClassVar[Mapping[str, AnalysisRenderer]] = {"pass_rate": html.pass_rate}
    suite_keys = frozenset({"kind", "systems", "language", "profile"})
    metrics: ClassVar[Mapping[str, MetricSpec]] = {
        "pass": MetricSpec(
            "higher",
            binary=True,
            description="1 when the fact holds in the output (in more than half of the repeats)",
            bounds=(0.0, 1.0),
        ),
    }
    analyses = (PassRateAnalysis(),)

    def __init__(self, spec: SuiteSpec, systems_env: SystemEnv) -> None:
        super().__init__(spec, systems_env)
        self.language = spec.table.get("language", "en")
        if self.language not in LANGUAGES:
            raise SuiteConfigError(
                f"{spec.file}: language {self.language!r} is not one of {', '.join(LANGUAGES)}"
            )
        # olmOCR-bench always refuses CJK and emoji in a baseline fact; here only in Latin suites.
        self.latin_only = self.language == "en"
        self.profile = spec.table.get("profile", "olmocr")
        if self.profile not in PROFILES:
            raise SuiteConfigError(
                f"{spec.file}: profile {self.profile!r} is not one of {', '.join(PROFILES)}"
            )
        self.fail_shorter = self.profile == "strict"
        loaded = load_entries(spec.path)
        if not loaded.entries:
            raise SuiteConfigError(f"{spec.file}: the suite has no facts (no *.jsonl beside it)")
        self.entries: dict[str, Entry] = loaded.entries
        self._notes = loaded.notes
        self.systems = self._check_names(spec.table.get("systems"))
        self.sources, notes = resolve_sources(
            systems_env, self.systems, self._saved, reads="parses the pages"
        )
        self._notes += notes
        self._refs = [
            CaseRef(case, system, entry.labels)
            for case, entry in self.entries.items()
            for system in self.systems
        ]
        self.pages = PagePlans(spec.path, systems_env, self.sources, lambda: self.store)
        self._page_outputs: dict[str, PageOutput] = {}  # stage key -> its text, normalised once

    def _check_names(self, systems: object) -> list[str]:
        """The suite's systems: a system's folder of saved pages is named after it."""
        file = self.spec.file
        names = system_list(systems, file)
        for name in names:
            if name == PDF_DIR or any(ch in name for ch in "[]/\\ "):
                raise SuiteConfigError(f"{file}: {name!r} cannot be a system name")
        check_system_settings(self.spec.system_settings, names, file)
        return names

    def _saved(self, system: str) -> SavedOutputs:
        return SavedOutputs(
            (self.spec.path / system).is_dir(), f"folder {system}/ beside the suite"
        )

    @property
    def scoring_id(self) -> str:
        """The checks' revision, the profile when not olmOCR-bench's, and the script rule of
        baseline facts (the language): a strict baseline never compares with a default one."""
        profile = "" if self.profile == "olmocr" else f"+{self.profile}"
        return f"olmocr-facts@r{SCORING_REVISION}{profile}:{self.language}"

    def case_refs(self) -> list[CaseRef]:
        return list(self._refs)

    def system_names(self) -> list[str]:
        return list(self.systems)

    def describe(self) -> dict[str, object]:
        return {"language": self.language, "latin_only": self.latin_only, "profile": self.profile}

    def notes(self) -> list[str]:
        notes = list(self._notes)
        if any(isinstance(e.fact, MathFact) for e in self.entries.values()):
            notes.append(
                "math facts compare LaTeX as text: an equation written differently (x^2, x^{2}) "
                "is skipped, not failed, since olmOCR-bench's rendering comparison (KaTeX in a "
                "browser) does not ship here"
            )
        return notes

    # -- one test ------------------------------------------------------------------------------

    def plan(self, ref: CaseRef) -> Plan:
        """The stages making `ref`'s system's output(s) of its fact's page (`PagePlans`: a
        parse of the page, or the saved repeat files), shared by every fact of the page."""
        return self.pages.plan(ref.system, self._fact(ref))

    def evaluate(self, ref: CaseRef, results: StageResults, ctx: RunContext) -> CaseResult:
        fact = self._fact(ref)
        outputs = [self._page_output(results, name) for name in repeat_results(results)]
        result = (
            check(fact, outputs[0], latin_only=self.latin_only, fail_shorter=self.fail_shorter)
            if len(outputs) == 1
            else check_repeats(
                fact, outputs, latin_only=self.latin_only, fail_shorter=self.fail_shorter
            )
        )
        location = where(fact)
        if result.passed is None:
            raise SystemUnavailable(f"fact {fact.id!r} skipped ({location}): {result.explanation}")
        fingerprint, key, notes = self._provenance(ref.system, results, outputs)
        flags: dict[str, list[str]] = {}
        if result.caveat:
            notes.append(f'{result.caveat}; profile = "strict" fails it')
            flags["pass"] = [SHORTER_OUTPUT]
        failures = []
        if not result.passed:
            before = (ctx.baseline or {}).get("pass")
            if before is not None and before < 1.0:
                notes.append(f"known failure (it failed in the baseline too): {result.explanation}")
            else:
                why = (
                    "it passed in the baseline"
                    if before is not None
                    else "no baseline records it; pytest --doceval --doceval-update accepts it "
                    "as a known failure"
                )
                failures.append(
                    f"{fact.type} fact {fact.id!r} fails for {ref.system}: "
                    f"{result.explanation} ({location})\n({why})"
                )
        return CaseResult(
            metrics={"pass": 1.0 if result.passed else 0.0},
            details={
                "pdf": fact.pdf,
                "page": fact.page,
                "line": fact.line,
                "score": result.score,
                "pass_fraction": result.pass_fraction,
                "repeats": len(outputs),
            },
            views={"fact_check": _view(fact, result)},
            fingerprint=fingerprint,
            cache_key=key,
            notes=notes,
            failures=failures,
            flags=flags,
        )

    def _fact(self, ref: CaseRef) -> Fact:
        fact = self.entries[ref.case].fact
        if isinstance(fact, FactError):
            raise fact.with_traceback(None)  # one instance per line: each raise starts afresh
        return fact

    def _page_output(self, results: StageResults, name: str) -> PageOutput:
        """Result `name` as one `PageOutput` per stage for the whole run: every fact of a page
        checks the same text, normalised once."""
        key = results.key(name)
        found = self._page_outputs.get(key)
        if found is None:
            found = self._page_outputs[key] = PageOutput(results[name])
        return found

    def _provenance(
        self, system: str, results: StageResults, outputs: list[PageOutput]
    ) -> tuple[dict[str, Any], str | None, list[str]]:
        """The row's fingerprint and cache key of the output scored, and notes on it: a
        parser's stored parse, or (no cache key) the digest of a precomputed system's repeats."""
        texts = [output.text for output in outputs]
        saved = results.stages[OUTPUT].saved_file
        if saved is None:  # parsed by the system
            notes = [] if texts[0].strip() else [f"{system} returned no text for this page"]
            return dict(results.fingerprint(OUTPUT) or {}), results.key(OUTPUT), notes
        notes = [] if any(t.strip() for t in texts) else [f"{saved.name} is empty"]
        return precomputed_fingerprint(system, *texts, repeats=True), None, notes


def _fact_fields(fact: Fact) -> dict[str, Any]:
    """The fact as its file gives it: fields that differ from their defaults."""
    out: dict[str, Any] = {}
    for f in fields(fact):
        value = getattr(fact, f.name)
        if f.name in ("file", "line") or (f.name != "type" and value == f.default):
            continue
        out[f.name] = value
    return out


def _view(fact: Fact, result: FactResult) -> dict[str, Any]:
    """``fact_check``: the fact, the verdict and its explanation (each repeat's, if several)."""
    view: dict[str, Any] = {
        "fact": _fact_fields(fact),
        "passed": result.passed,
        "score": result.score,
        "explanation": result.explanation,
    }
    if result.caveat:
        view["caveat"] = result.caveat
    if len(result.repeats) > 1:
        view["repeats"] = [
            {"passed": r.passed, "score": r.score, "explanation": r.explanation}
            for r in result.repeats
        ]
    return view
