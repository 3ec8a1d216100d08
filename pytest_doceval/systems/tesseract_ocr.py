"""`tesseract`: pages rendered to pixels and read by the Tesseract OCR engine.

The engine is the system's ``tesseract`` program (Debian/Ubuntu: ``apt-get install
tesseract-ocr tesseract-ocr-kor``; English comes with it), run once per page with the page as
a PNG on its standard input and the text read from its standard output, so no Python binding is
needed. Settings: ``lang`` (default ``eng``; ``kor+eng`` for Korean with English, any
``+``-joined names of installed language data), ``dpi`` (default 300, what Tesseract is tuned
for) and ``psm`` (page segmentation mode, default 3: automatic).

Without the program, or without the data of a language ``lang`` names, the system cannot run
here: its tests are skipped (`SystemUnavailable`) with the command that installs what is
missing, and its metrics are absent. A page Tesseract fails on (an exit status other than 0) is
an error of that test naming the page and Tesseract's own message; so is an image file that is
none of the formats Tesseract reads (Tesseract would take its bytes for a list of file names).

The fingerprint holds Tesseract's version and a digest of each language's data file: an
upgrade of either changes the output, so cached outputs and baselines do not outlive it.
Tesseract runs one thread per page (``OMP_THREAD_LIMIT=1``): the engine already runs one page
per core, and its own threads would compete with the other worker for the same cores. Its CPU
time and peak memory count in the stage's cost (`metrics.cost`): it is the process that parsed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pytest_doceval.engine.stages import child_finished
from pytest_doceval.errors import SystemRunError, SystemUnavailable
from pytest_doceval.systems.base import BuiltinParser
from pytest_doceval.systems.pdf import open_pdf

PROGRAM = "tesseract"
# A suite language's Tesseract data (`languages`).
_SUITE_LANGUAGES = {"en": "eng", "ko": "kor"}
INSTALL = "apt-get install tesseract-ocr tesseract-ocr-kor"
_LANGUAGE = re.compile(r"^[A-Za-z_]+$")
# The image formats Leptonica reads, by their first bytes (WebP: RIFF....WEBP).
_IMAGE_MAGIC = (
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"II*\x00",
    b"MM\x00*",
    b"BM",
    b"GIF8",
    b"RIFF",
    b"\x00\x00\x00\x0cjP",
    *(f"P{n}".encode() for n in range(1, 7)),
)


def _program() -> str:
    program = shutil.which(PROGRAM)
    if program is None:
        raise SystemUnavailable(
            f"tesseract is not installed (no {PROGRAM!r} on PATH): {INSTALL} (Debian/Ubuntu)"
        )
    return program


def _run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([_program(), *args], capture_output=True, check=False)


def _recognise(args: list[str], image: bytes) -> tuple[int, bytes, bytes]:
    """Tesseract on `image` (its standard input): exit status, standard output and error. It
    is reaped with ``os.wait4`` so that its peak memory counts as the stage's
    (`engine.stages.child_finished`)."""
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    pipe = subprocess.PIPE
    with subprocess.Popen(
        [_program(), *args], stdin=pipe, stdout=pipe, stderr=pipe, env=env
    ) as run:
        stderr = run.stderr
        assert run.stdin is not None and run.stdout is not None and stderr is not None
        errors: list[bytes] = []
        reader = threading.Thread(target=lambda: errors.append(stderr.read()))
        reader.start()
        with contextlib.suppress(BrokenPipeError):  # it may stop reading and fail
            run.stdin.write(image)
            run.stdin.close()
        output = run.stdout.read()
        reader.join()
        _, status, usage = os.wait4(run.pid, 0)
        run.returncode = os.waitstatus_to_exitcode(status)
    child_finished(usage.ru_maxrss)  # KiB on Linux
    return run.returncode, output, b"".join(errors)


@functools.cache
def installation() -> tuple[str, Path, frozenset[str]]:
    """Tesseract's version, its language data folder and the languages there (once per
    process)."""
    version_run = _run("--version")
    first = (version_run.stdout or version_run.stderr).decode("utf-8", "replace").splitlines()
    version = first[0].removeprefix("tesseract").strip() if first else "unknown"
    listed = _run("--list-langs").stdout.decode("utf-8", "replace").splitlines()
    # 'List of available languages in "/usr/share/tesseract-ocr/5/tessdata/" (3):'
    folder = re.search(r'"([^"]+)"', listed[0]) if listed else None
    return version, Path(folder.group(1) if folder else "."), frozenset(listed[1:])


@functools.cache
def _data_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def language_data(lang: str) -> dict[str, str]:
    """{language: digest of its data file} of each language `lang` names; `SystemUnavailable`
    naming the package to install for one that is not installed."""
    _, folder, installed = installation()
    found = {}
    for name in lang.split("+"):
        if name not in installed:
            package = f"tesseract-ocr-{name.lower().replace('_', '-')}"
            raise SystemUnavailable(
                f"tesseract has no {name!r} language data here (installed: "
                f"{', '.join(sorted(installed)) or 'none'}): apt-get install {package} "
                "(Debian/Ubuntu)"
            )
        data = folder / f"{name}.traineddata"
        found[name] = _data_digest(data) if data.is_file() else "unknown"
    return found


def ocr_image(image: bytes, *, lang: str, psm: int, what: str) -> str:
    """The text Tesseract reads in an encoded image (PNG, JPEG); `what` names it in errors."""
    language_data(lang)  # a missing language is a skip, not Tesseract's own error
    if not image.startswith(_IMAGE_MAGIC):
        raise SystemRunError(f"tesseract cannot read {what}: not an image (PNG, JPEG, TIFF, ...)")
    status, output, errors = _recognise(["stdin", "stdout", "-l", lang, "--psm", str(psm)], image)
    if status != 0:
        lines = errors.decode("utf-8", "replace").strip().splitlines()
        raise SystemRunError(
            f"tesseract failed on {what} (exit status {status}): "
            f"{'; '.join(lines[-3:]) or 'no message'}"
        )
    # Tesseract ends each page with a form feed.
    return output.decode("utf-8", "replace").replace("\f", "").strip()


class TesseractParser(BuiltinParser):
    """OCR of every page rendered at ``dpi`` (default 300) by Tesseract in ``lang``."""

    name = "tesseract"
    revision = 1
    defaults: ClassVar[Mapping[str, Any]] = {"lang": "eng", "dpi": 300, "psm": 3}

    def check(self) -> None:
        if not 50 <= self.settings["dpi"] <= 1200:
            raise ValueError(
                f"tesseract dpi must be between 50 and 1200, got {self.settings['dpi']}"
            )
        if not 0 <= self.settings["psm"] <= 13:
            raise ValueError(f"tesseract psm must be between 0 and 13, got {self.settings['psm']}")
        if not all(_LANGUAGE.match(name) for name in self.settings["lang"].split("+")):
            raise ValueError(
                f"tesseract lang {self.settings['lang']!r} is not language names joined by + "
                "(eng, kor+eng)"
            )

    def fingerprint(self) -> dict[str, Any]:
        version, _, _ = installation()
        data = language_data(self.settings["lang"])
        return {**super().fingerprint(), "tesseract": version, "tessdata": data}

    @property
    def languages(self) -> frozenset[str]:
        """What it reads (`systems.sources.cannot_read`): the suite languages of its data."""
        names = self.settings["lang"].split("+")
        return frozenset(code for code, data in _SUITE_LANGUAGES.items() if data in names)

    @property
    def reads(self) -> str:
        lang = self.settings["lang"]
        return f'{lang!r} here: set [systems.tesseract] lang = "kor+eng" for Korean text'

    def read_image(self, image: bytes) -> str:
        """An image's text (an exam question's PNG), as Tesseract gives it."""
        return self._read(image, "an image")

    def _read(self, image: bytes, what: str) -> str:
        return ocr_image(image, lang=self.settings["lang"], psm=self.settings["psm"], what=what)

    def parse(self, pdf: Path) -> str:
        with open_pdf(pdf) as doc:
            pages = [
                self._read(
                    page.get_pixmap(dpi=self.settings["dpi"]).tobytes("png"), f"{pdf} page {n}"
                )
                for n, page in enumerate(doc, start=1)
            ]
        return "\n\n".join(pages).strip()

    def parse_image(self, image: Path) -> str:
        """A page image read as it is (``dpi`` applies to rendered PDF pages only)."""
        return self._read(image.read_bytes(), str(image))
