"""pytest-doceval: document-AI evaluation as an ordinary pytest suite.

Run ``pytest --doceval``: every (case, system) of every ``suite.toml`` becomes a test whose
metrics are recorded, gated against committed baselines and reported with confidence intervals.

The public API for extending it:

* `register_parser` -- register a parser factory, called ``factory(settings, env)`` (env: a
  `SystemEnv`), that builds a parser (``name``, ``fingerprint()``, ``parse(pdf)``), from a
  conftest.py or any module; or implement the hook ``pytest_doceval_register_systems``; or
  publish an entry point in the group ``pytest_doceval.systems``. `BuiltinParser` holds the
  settings and fingerprint boilerplate.
* `Suite`, `suite_kind`, `MetricSpec`, `CaseRef`, `RunContext`, `CaseResult`, `Analysis` -- to
  add a suite kind (or publish one in the entry-point group ``pytest_doceval.kinds``);
  `Plan`, `CpuStage`, `ModelStage`, `chat_stage`, `saved_output_stage` -- what its
  `Suite.plan` declares for the engine to run, each under a key made by `cache_key` (over a
  fingerprint and an input digest, e.g. `file_digest`); `StageResults` -- what its `evaluate`
  then scores; `evaluate_alone` -- one test planned, run and scored outside a run.

Names are imported on first use: the pytest plugin loads this package in every pytest run,
with or without ``--doceval``, and must stay light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_doceval.engine import (
        CpuStage,
        ModelStage,
        Plan,
        StageNotPlanned,
        StageResults,
        chat_stage,
        saved_output_stage,
    )
    from pytest_doceval.kinds.analyses import AllPairs
    from pytest_doceval.kinds.base import Analysis, CaseRef, RunContext, Suite, evaluate_alone
    from pytest_doceval.kinds.registry import suite_kind
    from pytest_doceval.metrics.spec import MetricSpec
    from pytest_doceval.results import CaseResult
    from pytest_doceval.store import cache_key, file_digest
    from pytest_doceval.systems import (
        BuiltinParser,
        Parser,
        SystemEnv,
        SystemRegistry,
        register_parser,
    )

_EXPORTS = {
    "AllPairs": "pytest_doceval.kinds.analyses",
    "Analysis": "pytest_doceval.kinds.base",
    "BuiltinParser": "pytest_doceval.systems",
    "CaseRef": "pytest_doceval.kinds.base",
    "CaseResult": "pytest_doceval.results",
    "CpuStage": "pytest_doceval.engine",
    "ModelStage": "pytest_doceval.engine",
    "Plan": "pytest_doceval.engine",
    "StageNotPlanned": "pytest_doceval.engine",
    "StageResults": "pytest_doceval.engine",
    "evaluate_alone": "pytest_doceval.kinds.base",
    "saved_output_stage": "pytest_doceval.engine",
    "MetricSpec": "pytest_doceval.metrics.spec",
    "Parser": "pytest_doceval.systems",
    "RunContext": "pytest_doceval.kinds.base",
    "Suite": "pytest_doceval.kinds.base",
    "SystemEnv": "pytest_doceval.systems",
    "SystemRegistry": "pytest_doceval.systems",
    "cache_key": "pytest_doceval.store",
    "chat_stage": "pytest_doceval.engine",
    "file_digest": "pytest_doceval.store",
    "register_parser": "pytest_doceval.systems",
    "suite_kind": "pytest_doceval.kinds.registry",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("pytest-doceval")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0.0.0"
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "AllPairs",
    "Analysis",
    "BuiltinParser",
    "CaseRef",
    "CaseResult",
    "CpuStage",
    "MetricSpec",
    "ModelStage",
    "Parser",
    "Plan",
    "RunContext",
    "StageNotPlanned",
    "StageResults",
    "Suite",
    "SystemEnv",
    "SystemRegistry",
    "__version__",
    "cache_key",
    "chat_stage",
    "evaluate_alone",
    "file_digest",
    "register_parser",
    "saved_output_stage",
    "suite_kind",
]
