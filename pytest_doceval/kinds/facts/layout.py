"""The folder layout of an olmOCR-bench suite: fact files, PDFs, and each system's page outputs.

::

    suite/
      *.jsonl                      fact files (top level only)
      pdfs/<path>.pdf              each fact's ``pdf`` is a path inside pdfs/
      <system>/<dir of path>/<stem>_pg<page>_repeat<N>.md

olmOCR-bench's ``convert.py`` writes ``{stem}_pg{page}_repeat{N}.md`` with N from 1, keeping the
PDF's folder below ``pdfs/``; ``benchmark.py`` finds a page's repeats by matching
``^{stem}_pg\\d+_repeat\\d+\\.md$`` on the path relative to the system folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

__all__ = [
    "PDF_DIR",
    "SystemOutputs",
    "fact_files",
    "find_repeat_outputs",
    "output_path",
    "system_dirs",
]

PDF_DIR = "pdfs"


def _split(pdf: str) -> tuple[PurePosixPath, str]:
    path = PurePosixPath(pdf)
    stem = os.path.splitext(path.name)[0]  # benchmark.py: os.path.splitext(pdf_name)[0]
    return path.parent, stem


def output_path(system_dir: str | os.PathLike[str], pdf: str, page: int, repeat: int) -> Path:
    """Where `system_dir` keeps its output of `pdf` page `page` (1-based), repeat `repeat`."""
    if page < 1 or repeat < 1:
        raise ValueError(f"page and repeat count from 1, got page={page}, repeat={repeat}")
    folder, stem = _split(pdf)
    return Path(system_dir, *folder.parts, f"{stem}_pg{page}_repeat{repeat}.md")


def find_repeat_outputs(system_dir: str | os.PathLike[str], pdf: str, page: int) -> list[Path]:
    """Every repeat output of one page, in repeat order (repeat1, repeat2, ..., repeat10)."""
    return SystemOutputs(system_dir).repeats(pdf, page)


# benchmark.py's ``^{stem}_pg\d+_repeat\d+\.md$``, read backwards: the suffix is unique, so
# each name belongs to exactly one (stem, page).
_OUTPUT_NAME = re.compile(r"(.*)_pg(\d+)_repeat(\d+)\.md")


class SystemOutputs:
    """One system folder's page outputs, each folder listed once: a suite asks for every page
    of every system, and listing the folder each time made finding them quadratic (700 pages
    x 10 systems: 4.9 million names matched)."""

    def __init__(self, system_dir: str | os.PathLike[str]) -> None:
        self.system_dir = Path(system_dir)
        self._listed: dict[Path, dict[tuple[str, str], list[tuple[int, str]]]] = {}

    def repeats(self, pdf: str, page: int) -> list[Path]:
        """Every repeat output of one page, in repeat order (as `find_repeat_outputs`)."""
        folder, stem = _split(pdf)
        directory = Path(self.system_dir, *folder.parts)
        listing = self._listed.get(directory)
        if listing is None:
            listing = self._listed[directory] = _list_outputs(directory)
        return [directory / name for _, name in sorted(listing.get((stem, str(page)), ()))]


def _list_outputs(directory: Path) -> dict[tuple[str, str], list[tuple[int, str]]]:
    """(stem, page as written) -> [(repeat, file name)] of a folder's output files."""
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    listing: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for name in names:
        if match := _OUTPUT_NAME.fullmatch(name):
            stem, page, repeat = match.groups()
            listing.setdefault((stem, page), []).append((int(repeat), name))
    return listing


def fact_files(suite_dir: str | os.PathLike[str]) -> list[Path]:
    """The suite's fact files, sorted by name (olmOCR reads ``*.jsonl`` at the top level)."""
    return sorted(p for p in Path(suite_dir).glob("*.jsonl") if p.is_file())


def system_dirs(suite_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Each precomputed system's folder by name: every subfolder except ``pdfs``."""
    return {
        p.name: p
        for p in sorted(Path(suite_dir).iterdir())
        if p.is_dir() and p.name != PDF_DIR and not p.name.startswith(".")
    }
