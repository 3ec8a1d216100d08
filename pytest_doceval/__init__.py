"""pytest-doceval: document-AI evaluation as an ordinary pytest suite.

Run ``pytest --doceval``: every (case, system) of every ``suite.toml`` becomes a test whose
metrics are recorded, gated against committed baselines and reported with confidence intervals.

The public API for extending it:

* `register_parser` -- register a parser (``name``, ``fingerprint()``, ``parse(pdf)``) from a
  conftest.py or any module; or implement the hook ``pytest_doceval_register_systems``; or
  publish an entry point in the group ``pytest_doceval.systems``.
* `Parser` -- the protocol a parser satisfies.
* `Suite`, `suite_kind`, `CaseRef`, `RunContext`, `CaseResult` -- to add a suite kind.
"""

from importlib.metadata import PackageNotFoundError, version

from pytest_doceval.results import CaseResult
from pytest_doceval.suites.base import CaseRef, RunContext, Suite, suite_kind
from pytest_doceval.systems import Parser, SystemRegistry, register_parser

try:
    __version__ = version("pytest-doceval")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "CaseRef",
    "CaseResult",
    "Parser",
    "RunContext",
    "Suite",
    "SystemRegistry",
    "__version__",
    "register_parser",
    "suite_kind",
]
