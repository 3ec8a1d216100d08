"""Exceptions that carry a user-facing cause.

Every error that reaches a test report names the file (or case) and the cause, so that a
reviewer reading CI output knows what to fix without opening the code.
"""

from __future__ import annotations

import os
from pathlib import Path


def relative_paths(text: str, *roots: Path) -> str:
    """`text` with the paths under any of `roots` (the doceval project's root, pytest's
    rootdir) written relative to it: a message, hint or report attached to a pull request
    must not carry the CI machine's folders. The deepest root first, so a path under both is
    relative to the nearer one."""
    for root in sorted({str(r) for r in roots}, key=len, reverse=True):
        text = text.replace(f"{root}{os.sep}", "")
    return text


class DocevalError(Exception):
    """Base class of every error pytest-doceval reports on a test or at collection."""


class SuiteConfigError(DocevalError):
    """A `suite.toml` (or `[tool.doceval]`) that cannot be used as written."""


class CaseInputError(DocevalError):
    """A case input (PDF, truth file, precomputed output) that cannot be evaluated."""


class SystemRunError(DocevalError):
    """A system (parser, OCR engine, model) that failed on a case."""


class SystemUnavailable(DocevalError):
    """A system that cannot run here as configured (no model for a two-stage parser): its
    tests are skipped with this message, which says how to make it available."""


class OmniDocBenchInputError(CaseInputError):
    """An OmniDocBench annotation page (or its prediction) not in the benchmark's format."""


class OmniDocBenchReferenceError(DocevalError):
    """OmniDocBench's own code (an ``omnidocbench`` suite's ``reference`` checkout) cannot score
    a page here: a Python module it imports is not installed, or it failed on the page."""
