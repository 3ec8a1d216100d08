"""A score is a stage: the last stage of every test's plan calls its kind's ``evaluate``.

The framework appends it to the plan the kind made (`score_stage`): it needs the stages whose
results the plan names, is keyed by `run.score_key`'s recipe, and keeps its `CaseResult` in
the run's store (`RESULT`), so a warm run's stored score is an ordinary store hit. Like any CPU
stage it runs where the engine puts it: in the test's own thread while its suite's scores are
cheap, on the run's executor -- a process pool, the xdist controller's shared pool, a Dask
cluster -- once they cost more than the hand-off (`engine.placement`).

Another process gets the stage pickled: the reference of the test, the engine's information on
the results it scores, the run context, and a `SuiteHandle` -- the suite file, the kind's name
and the project it belongs to -- from which it makes the suite once per process
(`SuiteHandle.suite`), the way the run's catalogue made it, with the project's ``conftest.py``
files imported for kinds and systems registered there. A suite that cannot be made there (a
system registered by a conftest's hook, a kind whose module does not import in another
process) raises `StaysHome`: the engine scores its tests in the pytest process instead, and the
run says so once.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_doceval.engine import CpuStage, Plan, StageResults, StaysHome, info_of
from pytest_doceval.errors import DocevalError
from pytest_doceval.kinds import CaseRef, RunContext, Suite
from pytest_doceval.results import CaseResult
from pytest_doceval.rows import plain
from pytest_doceval.store import Codec, Store

_FIELDS = tuple(f.name for f in dataclasses.fields(CaseResult))


class ResultCodec(Codec[CaseResult]):
    """A `CaseResult` as JSON, key order kept, such that the decoded result fills the row the
    fresh one fills (`CaseResult.fill_row` makes both plain): a report made from a stored result
    is the report made from the fresh one. NaN and infinite metrics survive (JSON's
    extension); numpy scalars and keys are written as `pytest_doceval.rows.plain` makes them."""

    name = "result"
    in_table = True  # one a test: a file each cost more than the rest of the test's overhead

    def encode(self, value: CaseResult) -> str:
        data = {name: getattr(value, name) for name in _FIELDS}
        data["metrics"] = {str(k): float(v) for k, v in value.metrics.items()}
        try:
            # json's C encoder on the result as it is (`plain` walked it in Python first: a
            # third of storing a result); `plain` makes only what json cannot write (numpy
            # scalars) builtin.
            return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=plain)
        except (TypeError, ValueError):  # e.g. a numpy-typed key, an array: plain first
            plain_data = {name: plain(field) for name, field in data.items()}
            plain_data["metrics"] = data["metrics"]
            return json.dumps(plain_data, ensure_ascii=False, separators=(",", ":"))

    def decode(self, text: str) -> CaseResult:
        data = json.loads(text)
        if not isinstance(data, dict) or set(data) != set(_FIELDS):
            raise ValueError("not a stored CaseResult of this version")
        metrics = data["metrics"]
        if not isinstance(metrics, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in metrics.values()
        ):
            raise ValueError("metrics must map names to numbers")
        data["metrics"] = {k: float(v) for k, v in metrics.items()}
        return CaseResult(**data)


RESULT = ResultCodec()


@dataclass(frozen=True)
class SuiteHandle:
    """How any process gets the suite a score stage scores with: in the run's process the
    suite itself (`local`, never pickled); elsewhere made from the suite file as the run's
    catalogue makes it."""

    file: Path  # the suite.toml, resolved
    kind: str
    project_root: Path
    store: Store
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # The suite file's digest: a long-lived process (a Dask worker) makes an edited suite anew.
    digest: str = ""
    local: Suite | None = field(default=None, compare=False, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        state = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        state["local"] = None  # another process makes its own
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    def suite(self) -> Suite:
        if self.local is not None:
            return self.local
        return _made_here(self)


_SUITES: dict[tuple[Path, str, Path, str], Suite] = {}
_MAKING = threading.Lock()


def _made_here(handle: SuiteHandle) -> Suite:
    """The suite of `handle` in this (worker) process, made once; `StaysHome` when it cannot be
    made here."""
    key = (handle.file, handle.kind, handle.project_root, handle.digest)
    found = _SUITES.get(key)
    if found is not None:
        return found
    with _MAKING:
        found = _SUITES.get(key)
        if found is None:
            found = _SUITES[key] = _make(handle)
    return found


def _make(handle: SuiteHandle) -> Suite:
    from pytest_doceval.config import load_suite_spec
    from pytest_doceval.kinds.registry import import_conftests, make_suite
    from pytest_doceval.models.config import load_models
    from pytest_doceval.models.runtime import ModelRuntime
    from pytest_doceval.systems import build_registry

    try:
        # Kinds and systems a conftest.py registers with decorators, as `doceval merge` finds
        # them; what a conftest's hook registers exists only in the pytest session.
        import_conftests(handle.project_root, handle.file.parent)
        pyproject = handle.project_root / "pyproject.toml"
        models = ModelRuntime(
            load_models(pyproject), store=handle.store, workers=1, source=str(pyproject)
        )
        return make_suite(load_suite_spec(handle.file), build_registry(), models, handle.defaults)
    except Exception as exc:  # any reason at all: the pytest process scores it instead
        raise StaysHome(f"suite {handle.file.parent.name} cannot be made here: {exc}") from exc


def score_case(
    handle: SuiteHandle,
    ref: CaseRef,
    names: Sequence[tuple[str, int]],
    infos: Sequence[Any],
    ctx: RunContext,
    *outputs: Any,
) -> CaseResult:
    """The score stage's call (module-level: pickled by name): the kind's ``evaluate`` on the
    plan's results (`names`: each result's name and the index of the output it is), every
    metric it returns declared by the kind."""
    suite = handle.suite()
    results = StageResults(
        {name: outputs[index] for name, index in names},
        {name: infos[index] for name, index in names},
    )
    result = suite.evaluate(ref, results, ctx)
    if not isinstance(result, CaseResult):
        raise DocevalError(
            f"{type(suite).__name__}.evaluate returned {type(result).__name__}, not a CaseResult"
        )
    for metric in result.metrics:
        suite.metric_spec(metric)  # a kind must declare what it measures
    return result


def score_stage(
    handle: SuiteHandle, ref: CaseRef, plan: Plan, ctx: RunContext, key: str | None, row: str
) -> CpuStage:
    """The stage scoring test `row` (``suite/case[system]``): after the stages of the results
    `plan` names, keyed `key` -- or, when no key can be made (no store), a key of its own that
    is never stored."""
    needs = tuple(dict.fromkeys(plan.results.values()))
    index = {stage_key: n for n, stage_key in enumerate(needs)}
    names = tuple((name, index[stage_key]) for name, stage_key in plan.results.items())
    infos = tuple(info_of(plan.stage_of(stage_key)) for stage_key in needs)
    return CpuStage(
        key=key if key is not None else f"unstored score of {row}",
        label=f"scoring {row}",
        call=score_case,
        args=(handle, ref, names, infos, ctx),
        needs=needs,
        fingerprint=None if key is None else {"score": row},
        scoring=True,
        codec=RESULT,
        measured=str(handle.file),
        verdict=True,
    )
