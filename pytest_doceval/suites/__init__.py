"""Suite kinds: one module per kind, each registered with `suite_kind`."""

from pytest_doceval.suites.base import CaseRef, RunContext, Suite, make_suite, suite_kind

__all__ = ["CaseRef", "RunContext", "Suite", "make_suite", "suite_kind"]
