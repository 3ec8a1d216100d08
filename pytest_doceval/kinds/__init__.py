"""Suite kinds: the interface (`Suite`) and the registry of kinds."""

from pytest_doceval.kinds.base import Analysis, CaseRef, RunContext, Suite, case_row
from pytest_doceval.kinds.registry import kind_class, known_kinds, suite_kind

__all__ = [
    "Analysis",
    "CaseRef",
    "RunContext",
    "Suite",
    "case_row",
    "kind_class",
    "known_kinds",
    "suite_kind",
]
