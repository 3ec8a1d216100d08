"""The line a ``--doceval`` run adds to pytest's header: the suites it evaluates.

``pytest --doceval`` without paths runs the folders of ``[tool.doceval] suites``, not
``testpaths``; pytest's header, which names ``testpaths`` when the arguments came from them,
said ``testpaths: tests`` above a run of ``cases``. The plugin marks the suites as the run's
arguments (pytest then names no ``testpaths``) and this line says what runs instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

# Set when `pytest --doceval` runs the folders of [tool.doceval] suites (no paths given).
SUITES_FROM_PROJECT: pytest.StashKey[bool] = pytest.StashKey()


def suites_line(args: Sequence[str], invoked: Path, *, configured: bool) -> str:
    """``doceval suites: cases ([tool.doceval] suites)``: `args` (pytest's arguments: suite
    folders, files or node ids) as the user would type them from `invoked`; `configured` when
    they came from ``[tool.doceval] suites``."""
    shown = []
    for arg in args:
        path, sep, rest = arg.partition("::")
        try:
            relative = (
                Path(os.path.relpath(path, invoked)).as_posix()
                if Path(path).is_absolute()
                else path
            )
        except ValueError:  # another drive
            relative = path
        shown.append(relative + sep + rest)
    source = " ([tool.doceval] suites)" if configured else ""
    return f"doceval suites: {', '.join(shown) or 'none'}{source}"
