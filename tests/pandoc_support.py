"""pandoc as the tests' reference reader of markdown: one home for finding it and calling it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

PANDOC = shutil.which("pandoc")
needs_pandoc = pytest.mark.skipif(PANDOC is None, reason="pandoc is not installed")


def pandoc_html(markdown: str, *options: str) -> str:
    """pandoc's HTML of `markdown` (``-f markdown -t html`` unless `options` say otherwise)."""
    assert PANDOC is not None
    done = subprocess.run(
        [PANDOC, *(options or ("-f", "markdown", "-t", "html"))],
        input=markdown,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout
